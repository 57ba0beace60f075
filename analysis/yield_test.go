package analysis

import (
	"math"
	"testing"

	"github.com/retryscope/retryscope/internal/texttab"
)

// TestYieldArithmeticSeed: the seed's marginal yield table (chapter
// "Choosing the ceiling from the marginal yield curve"), from conditional
// pass rates 78%, 55%, 38%: C(n+1) = C(n) + (1 − C(n))·c(n+1) gives the
// cumulative column 78.0, 90.1 and rescued per 1,000 121 beside the jump
// from 78.0 to 90.1. The third row is 93.862% exactly, 93.9 at one
// decimal, rescuing 37.62 per 1,000: the seed prints 93.8 (and 6.2%
// exhausted), which its own rounded 38.0% cannot give; its later rows
// (95.3, 96.0, 7 per 1,000) come from conditional rates it does not print.
func TestYieldArithmeticSeed(t *testing.T) {
	rows := yieldArithmetic([]float64{0.78, 0.55, 0.38}, nil)
	wantCum := []float64{0.78, 0.901, 0.93862}
	wantRescued := []float64{0, 121, 37.62}
	wantText := [][2]string{{"78.0%", ""}, {"90.1%", "121"}, {"93.9%", "38"}}
	for i, r := range rows {
		if math.Abs(r.Cumulative-wantCum[i]) > 1e-12 {
			t.Errorf("C(%d) = %v, want %v", i+1, r.Cumulative, wantCum[i])
		}
		if i == 0 {
			if r.RescuedPer1000 != nil {
				t.Errorf("attempt 1 rescues %v, want none", *r.RescuedPer1000)
			}
		} else if math.Abs(*r.RescuedPer1000-wantRescued[i]) > 1e-9 {
			t.Errorf("rescued per 1,000 by attempt %d = %v, want %v", i+1, *r.RescuedPer1000, wantRescued[i])
		}
		got := [2]string{texttab.Value(texttab.Share, r.Cumulative).String(), ""}
		if r.RescuedPer1000 != nil {
			got[1] = texttab.Value(texttab.Count, *r.RescuedPer1000).String()
		}
		if got != wantText[i] {
			t.Errorf("row %d reads %q, want %q", i+1, got, wantText[i])
		}
	}
}

// TestCeiling: the ceiling is the most attempts whose capped p99 and
// amplification keep to the budgets.
func TestCeiling(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	rows := []YieldRow{{Attempt: 1, P99Ms: p(400), Amplification: 1}, {Attempt: 2, P99Ms: p(1000), Amplification: 1.15},
		{Attempt: 3, P99Ms: p(1200), Amplification: 1.2}, {Attempt: 4, P99Ms: p(1900), Amplification: 1.21}}
	for _, c := range []struct {
		budget YieldBudget
		want   int
	}{{YieldBudget{P99Ms: p(1500)}, 3}, {YieldBudget{Amplification: p(1.18)}, 2}, {YieldBudget{P99Ms: p(1500), Amplification: p(1.1)}, 1},
		{YieldBudget{P99Ms: p(300)}, 0}, {YieldBudget{}, 0}} {
		got, why := ceiling(rows, c.budget)
		if (got == nil) != (c.want == 0) || got != nil && *got != c.want {
			t.Errorf("budget %+v: ceiling %v (%s), want %d", c.budget, got, why, c.want)
		}
	}
}
