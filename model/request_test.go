package model

import "testing"

// TestPercentileRule: nearest rank, and the sample rule of docs/report.md,
// "report" (Percentiles) (at least five observations expected at or above
// pX).
func TestPercentileRule(t *testing.T) {
	for _, c := range []struct {
		n, pct, rank int
		shown        bool
	}{
		{10, 50, 5, true}, {9, 50, 5, false}, {100, 95, 95, true}, {99, 95, 95, false},
		{500, 99, 495, true}, {499, 99, 495, false}, {1000, 99, 990, true}, {1, 50, 1, false},
	} {
		rank, shown := PercentileRank(c.n, c.pct)
		if rank != c.rank || shown != c.shown {
			t.Errorf("n=%d p%d: rank %d shown %v, want %d %v", c.n, c.pct, rank, shown, c.rank, c.shown)
		}
	}
	values := make([]float64, 200)
	for i := range values {
		values[len(values)-1-i] = float64(i + 1) // 200 .. 1, unsorted on purpose
	}
	s := Summarize(values)
	if s.N != 200 || *s.Mean != 100.5 || *s.P50 != 100 || *s.P95 != 190 || s.P99 != nil {
		t.Errorf("summary %+v", s)
	}
	if e := Summarize(nil); e.N != 0 || e.Mean != nil || e.P50 != nil {
		t.Errorf("empty summary %+v", e)
	}
}
