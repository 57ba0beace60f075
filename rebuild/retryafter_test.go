package rebuild_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// TestRetryAfterSplitsGap: in a real instrumentation's export that
// captures the Retry-After response header (undici, Anthropic SDK), the
// gap before a retry that waited out a captured Retry-After splits into
// backoff (the Retry-After) and overhead (the rest), as docs/recognition.md,
// "Latency decomposition" asks; a gap after a response without Retry-After
// stays whole (backoff null).
func TestRetryAfterSplitsGap(t *testing.T) {
	var f testkit.Fixture
	for _, fx := range testkit.Fixtures(t) {
		if fx.Name == "anthropic-node-undici-retry-after" {
			f = fx
		}
	}
	if f.Name == "" {
		t.Fatal("no fixture anthropic-node-undici-retry-after")
	}
	raw, err := os.ReadFile(f.Expected)
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Requests []struct {
			Key            string   `json:"key"`
			Desc           string   `json:"desc"`
			SplitBackoffMS *float64 `json:"split_backoff_ms"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	st := testkit.Open(t)
	ctx := context.Background()
	if _, err := ingest.Run(ctx, st, []string{f.Traces}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := rebuild.Rebuild(ctx, st); err != nil {
		t.Fatal(err)
	}
	got := loadRequests(t, st)
	split := 0
	for _, w := range want.Requests {
		g := got[w.Key]
		if g == nil {
			t.Errorf("%s (%s): not rebuilt", w.Key, w.Desc)
			continue
		}
		switch {
		case w.SplitBackoffMS == nil:
			if g.backoff != nil {
				t.Errorf("%s: backoff %.3f ms, want the gap whole (%s)", w.Desc, *g.backoff, fmtPtr(g.overhead))
			}
		case g.backoff == nil || g.overhead == nil:
			t.Errorf("%s: gap %.3f ms not split, want backoff %.3f ms", w.Desc, g.gap, *w.SplitBackoffMS)
		default:
			if math.Abs(*g.backoff-*w.SplitBackoffMS) > 1e-9 || math.Abs(*g.backoff+*g.overhead-g.gap) > 1e-9 {
				t.Errorf("%s: backoff %.6f + overhead %.6f ms of gap %.6f, want backoff %.3f", w.Desc, *g.backoff, *g.overhead, g.gap, *w.SplitBackoffMS)
			}
			if *w.SplitBackoffMS > 0 {
				split++
			}
		}
	}
	if split != 2 {
		t.Errorf("%d requests with a Retry-After wait, want 2", split)
	}
}
