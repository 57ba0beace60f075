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
	"github.com/retryscope/retryscope/internal/rebuild"
	"github.com/retryscope/retryscope/internal/storetest"
)

// expectedFixture is testdata/fixtures/*/expected.json (see the README there).
type expectedFixture struct {
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
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "fixtures", "*", "expected.json"))
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

func fmtStr(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}
