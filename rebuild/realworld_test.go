package rebuild_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/storetest"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/rebuild"
)

// expectedFixture is testdata/fixtures/*/expected.json (see the README there).
type expectedFixture struct {
	// Ambiguous, when set, says the grouping cannot be told exactly from
	// the spans (attempts split across traces under concurrency): the
	// rebuild is judged by the workload figures within these tolerances
	// and by its plausible ranges holding the truth.
	Ambiguous *struct {
		LogicalRequestsPct float64 `json:"logical_requests_pct"`
		RetryRate          float64 `json:"retry_rate"`
		FinalFailureRate   float64 `json:"final_failure_rate"`
	} `json:"ambiguous"`
	Requests []struct {
		Key        string    `json:"key"`
		AltKeys    []string  `json:"alt_keys"`
		Attempts   int       `json:"attempts"`
		Layers     []float64 `json:"layers"`
		Outcome    string    `json:"outcome"`
		LatencyMs  float64   `json:"latency_ms"`
		Triggers   []string  `json:"triggers"`
		Route      *string   `json:"route"`
		FinalRoute *string   `json:"final_route"`
		TTFTMs     *float64  `json:"ttft_ms"`
	} `json:"requests"`
}

// TestRealInstrumentations rebuilds the hand-built exports of real client
// libraries and instrumentations in testdata/fixtures, with no
// configuration, and compares each logical request with expected.json.
func TestRealInstrumentations(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "fixtures", "*", "expected.json"))
	if len(dirs) == 0 {
		t.Fatal("no fixtures in testdata/fixtures")
	}
	for _, exp := range dirs {
		dir := filepath.Dir(exp)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			raw, err := os.ReadFile(exp)
			if err != nil {
				t.Fatal(err)
			}
			var want expectedFixture
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			st := storetest.Open(t)
			ctx := context.Background()
			if _, err := ingest.Run(ctx, st, []string{filepath.Join(dir, "traces.jsonl")}, ingest.Options{}); err != nil {
				t.Fatal(err)
			}
			if err := rebuild.Rebuild(ctx, st); err != nil {
				t.Fatal(err)
			}
			if want.Ambiguous != nil {
				checkAmbiguousFixture(t, want, rebuiltFigures(t, st))
				return
			}
			got := loadRequests(t, st)
			if len(got) != len(want.Requests) {
				t.Errorf("%d logical requests, want %d", len(got), len(want.Requests))
			}
			for _, w := range want.Requests {
				var g *rebuilt
				for _, k := range append([]string{w.Key}, w.AltKeys...) {
					if g = got[k]; g != nil {
						break
					}
				}
				if g == nil {
					t.Errorf("%s: not rebuilt", w.Key)
					continue
				}
				if g.attempts != w.Attempts || !slices.Equal(g.layers, w.Layers) || g.outcome != w.Outcome || !slices.Equal(g.triggers, w.Triggers) {
					t.Errorf("%s: got %s %d attempts %v %s %v, want %d %v %s %v", w.Key, g.linkage, g.attempts, g.layers, g.outcome, g.triggers,
						w.Attempts, w.Layers, w.Outcome, w.Triggers)
				}
				if math.Abs(g.latency-w.LatencyMs) > msTolerance {
					t.Errorf("%s: latency %.3f ms, want %.3f", w.Key, g.latency, w.LatencyMs)
				}
				if w.Route != nil && (g.route != *w.Route || w.FinalRoute != nil && g.finalRoute != *w.FinalRoute) {
					t.Errorf("%s: route %s -> %s, want %s -> %v", w.Key, g.route, g.finalRoute, *w.Route, fmtStr(w.FinalRoute))
				}
				if w.TTFTMs != nil && (g.ttft == nil || math.Abs(*g.ttft-*w.TTFTMs) > msTolerance) {
					t.Errorf("%s: ttft %s, want %.3f", w.Key, fmtPtr(g.ttft), *w.TTFTMs)
				}
				if math.Abs(g.residual) >= 1 {
					t.Errorf("%s: residual %.3f ms", w.Key, g.residual)
				}
			}
		})
	}
}

// checkAmbiguousFixture compares the workload figures with those of the
// expected requests, within the fixture's tolerances, and checks that the
// plausible ranges hold them.
func checkAmbiguousFixture(t *testing.T, want expectedFixture, got splitFigures) {
	t.Helper()
	var c model.Counts
	for _, r := range want.Requests {
		c.Add(r.Attempts, r.Outcome == "ok")
	}
	truth := splitFigures{counts: c}
	wr, ws, wf := truth.rates()
	gr, _, gf := got.rates()
	tol := want.Ambiguous
	t.Logf("logical requests %d (truth %d) range %v; retry rate %.4f (truth %.4f) range %.4f; final failure %.4f (truth %.4f) range %.4f",
		got.counts.Requests, c.Requests, got.ranges.LogicalRequests, gr, wr, got.ranges.RetryRate, gf, wf, got.ranges.FinalFailureRate)
	if got.counts.Attempts != c.Attempts {
		t.Errorf("%d attempts, want %d", got.counts.Attempts, c.Attempts)
	}
	if d := 100 * math.Abs(float64(got.counts.Requests-c.Requests)) / float64(c.Requests); d > tol.LogicalRequestsPct {
		t.Errorf("logical requests %d, want %d (%.1f%% off)", got.counts.Requests, c.Requests, d)
	}
	if math.Abs(gr-wr) > tol.RetryRate {
		t.Errorf("retry rate %.4f, want %.4f", gr, wr)
	}
	if math.Abs(gf-wf) > tol.FinalFailureRate {
		t.Errorf("final failure rate %.4f, want %.4f", gf, wf)
	}
	rg := got.ranges
	for name, v := range map[string]struct {
		r model.Range
		v float64
	}{
		"logical_requests": {rg.LogicalRequests, float64(c.Requests)}, "retry_rate": {rg.RetryRate, wr},
		"retry_success_rate": {rg.RetrySuccessRate, ws}, "final_failure_rate": {rg.FinalFailureRate, wf},
		"amplification": {rg.Amplification, float64(c.Attempts) / float64(c.Requests)},
	} {
		if !within(v.r, v.v) {
			t.Errorf("%s range %v does not hold %.4f", name, v.r, v.v)
		}
	}
}

func fmtStr(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}
