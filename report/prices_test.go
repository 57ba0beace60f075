package report

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
	"github.com/retryscope/retryscope/model"
)

func TestPriceLookup(t *testing.T) {
	p := DefaultPrices()
	for name, want := range map[string]float64{"gpt-4o": 2.5, "gpt-4o-2024-08-06": 2.5, "gpt-4o-mini": 0.15,
		"gpt-4o-mini-2024-07-18": 0.15, "claude-3-haiku@20240307": 0.25, "gpt-4": -1, "gpt-4omni": -1, "": -1} {
		got, ok := p.Lookup(name)
		if !ok {
			got.InputPerMTok = -1
		}
		if got.InputPerMTok != want {
			t.Errorf("%q: input price %v, want %v", name, got.InputPerMTok, want)
		}
	}
	if c := (model.Price{InputPerMTok: 2.5, OutputPerMTok: 10}).Cost(1000, 500); math.Abs(c-0.0075) > 1e-12 {
		t.Errorf("cost %v, want 0.0075", c)
	}
}

// TestReadPrices: a price table is laid over the defaults; a table that
// is not one, or prices no list has, is refused.
func TestReadPrices(t *testing.T) {
	p, err := ReadPrices(strings.NewReader(`{"gpt-4o": {"input_per_mtok": 5, "output_per_mtok": 20}, "mine": {"input_per_mtok": 1, "output_per_mtok": 2}}`), "prices.json")
	if err != nil {
		t.Fatal(err)
	}
	if p["gpt-4o"].InputPerMTok != 5 || p["mine"].OutputPerMTok != 2 || p["gpt-4o-mini"].InputPerMTok != 0.15 {
		t.Errorf("prices %v: want the file over the defaults", p)
	}
	for _, bad := range []string{`[1]`, `{"x": {"input_per_mtok": -1}}`, `{`, `{"x": {"output_per_mtok": 10}}`,
		`{"x": {"input_per_mtok": 1e308, "output_per_mtok": 1e308}}`, `{"x": {"input_per_mtok": 1, "output_per_mtok": 2, "cache": 3}}`} {
		if _, err := ReadPrices(strings.NewReader(bad), "prices.json"); err == nil || !strings.Contains(err.Error(), "prices.json") {
			t.Errorf("%s: %v, want an error naming the file", bad, err)
		}
	}
}

// TestSpendTruth: the workload's spend and the spend of its duplicated
// attempts equal the truth's tokens priced by the default table, and
// every LLM request is priced.
func TestSpendTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes = 600, []sim.Shape{sim.ShapeExplicit, sim.ShapeWrapped}
	cfg.Faults = sim.DefaultFaults().Scale(2.5)
	st, truth := workload.Rebuilt(t, cfg)
	rep, err := Build(context.Background(), st, Options{Baseline: "none"})
	if err != nil {
		t.Fatal(err)
	}
	prices := DefaultPrices()
	var spend, dupOut float64
	for _, r := range truth.Requests {
		if r.InputTokens == 0 && r.OutputTokens == 0 {
			continue
		}
		name := r.FinalModel
		if name == "" {
			name = r.Model
		}
		p, ok := prices.Lookup(name)
		if !ok {
			t.Fatalf("%s: model %q not priced", r.Key, name)
		}
		spend += p.Cost(int64(r.InputTokens), int64(r.OutputTokens))
		dupOut += p.Cost(0, int64(r.DuplicatedOutputTokens))
	}
	w := rep.Workload.Measures
	if math.Abs(w.SpendUSD-spend) > 1e-9 || w.UnpricedRequests != 0 {
		t.Errorf("spend $%.6f, %d unpriced; truth $%.6f", w.SpendUSD, w.UnpricedRequests, spend)
	}
	// The duplicated spend holds the duplicated input too, which the truth
	// does not list per request: it is at least the output's.
	if w.DuplicatedSpendUSD < dupOut-1e-9 || w.DuplicatedSpendUSD > w.SpendUSD {
		t.Errorf("duplicated spend $%.6f: want at least the duplicated output's $%.6f and at most $%.6f", w.DuplicatedSpendUSD, dupOut, w.SpendUSD)
	}
	t.Logf("spend $%.4f, of which duplicated attempts $%.4f (duplicated output alone $%.4f)", w.SpendUSD, w.DuplicatedSpendUSD, dupOut)
}
