package model

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPercentileOfEqualsSorted: on values in any order, with ties, runs
// and sorted or reversed input, PercentileOf gives what Percentile gives
// of the sorted values, at every rank the rule reports.
func TestPercentileOfEqualsSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	shapes := map[string]func(n int) []float64{
		"uniform": func(n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = rng.Float64() * 1000
			}
			return v
		},
		"few distinct": func(n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(rng.IntN(4)) * 100
			}
			return v
		},
		"sorted": func(n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(i)
			}
			return v
		},
		"reversed": func(n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(n - i)
			}
			return v
		},
		"all equal": func(n int) []float64 { return slices.Repeat([]float64{42}, n) },
	}
	for name, make := range shapes {
		for _, n := range []int{0, 1, 9, 10, 17, 100, 499, 500, 1000, 4099, 65537} {
			values := make(n)
			sorted := slices.Sorted(slices.Values(values))
			for _, pct := range []int{1, 50, 95, 99, 100} {
				want := DefaultRule.Percentile(sorted, pct)
				got := DefaultRule.PercentileOf(slices.Clone(values), pct)
				if (want == nil) != (got == nil) || want != nil && *want != *got {
					t.Fatalf("%s, n=%d, p%d: got %v, want %v", name, n, pct, deref(got), deref(want))
				}
			}
			for k := 0; k < n; k += max(1, n/37) {
				v := slices.Clone(values)
				if got := nthSmallest(v, k); got != sorted[k] {
					t.Fatalf("%s, n=%d: rank %d is %v, want %v", name, n, k, got, sorted[k])
				}
				for i := range v {
					if i < k && v[i] > v[k] || i > k && v[i] < v[k] {
						t.Fatalf("%s, n=%d: after selecting rank %d, v[%d]=%v is on the wrong side of %v", name, n, k, i, v[i], v[k])
					}
				}
			}
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
