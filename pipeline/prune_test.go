package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/pipeline"
)

func TestKeepCutoff(t *testing.T) {
	clock := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		keep, now string
		want      int64 // -1: an error
	}{
		{"", "", 0},
		{"", "2026-12-01T00:00:00Z", -1},
		{"30d", "", clock.AddDate(0, 0, -30).UnixNano()},
		{"24h", "2026-12-01T00:00:00Z", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).UnixNano()},
		{"30s", "", -1},
		{"36501d", "", -1},
		{"30d", "9999-01-01T00:00:00Z", -1},
		{"36500d", "1980-01-01T00:00:00Z", 1},
	} {
		got, err := pipeline.KeepCutoff(c.keep, c.now, clock)
		if c.want == -1 {
			if err == nil {
				t.Errorf("--keep %q --now %q: cutoff %d, want an error", c.keep, c.now, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("--keep %q --now %q: %d, %v; want %d", c.keep, c.now, got, err, c.want)
		}
	}
}

// Prune drops the traces that ended before the cutoff, and only those.
func TestPruneDropsOnlyOldTraces(t *testing.T) {
	ctx := context.Background()
	st := testkit.Open(t)
	if _, err := ingest.Run(ctx, st, []string{"../testdata/sample/traces.jsonl"}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	spans := testkit.Count(t, st, `SELECT count(*) FROM spans`)
	if spans == 0 {
		t.Fatal("the sample gave no spans")
	}
	resources := testkit.Count(t, st, `SELECT count(*) FROM resources`)
	if resources == 0 {
		t.Fatal("the sample gave no resources")
	}
	if n, err := pipeline.Prune(ctx, st, testkit.Count(t, st, `SELECT min(start_ns) FROM spans`)); err != nil || n != 0 {
		t.Fatalf("a cutoff at the first span: %d spans dropped, %v; want none", n, err)
	}
	if n := testkit.Count(t, st, `SELECT count(*) FROM resources`); n != resources {
		t.Errorf("%d resources after dropping no span, want the %d", n, resources)
	}
	cutoff := testkit.Count(t, st, `SELECT max(start_ns) FROM spans`) + 1
	n, err := pipeline.Prune(ctx, st, cutoff)
	if err != nil || n != spans {
		t.Fatalf("a cutoff after the last span: %d spans dropped, %v; want all %d", n, err, spans)
	}
	if left := testkit.Count(t, st, `SELECT count(*) FROM spans`); left != 0 {
		t.Errorf("%d spans left", left)
	}
	if left := testkit.Count(t, st, `SELECT count(*) FROM resources`); left != 0 {
		t.Errorf("%d resources left with no span", left)
	}
}
