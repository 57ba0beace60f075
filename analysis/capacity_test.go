package analysis

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestCapacityPeaks: the peaks of attempts in flight are those counted
// attempt by attempt at every start, an attempt in flight over [start,
// end): one ending as the next begins is not in flight beside it.
func TestCapacityPeaks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 50 {
		var reqs []*Request
		for range 1 + rng.IntN(40) {
			// Instants on a coarse grid, so that starts and ends meet.
			at := rng.Int64N(20) * 1e9
			r := &Request{startNs: at, attempts: 1 + rng.IntN(3)}
			for range r.attempts {
				end := at + (1+rng.Int64N(4))*1e9
				r.at = append(r.at, yieldAttempt{startNs: at, endNs: end})
				at = end + rng.Int64N(2)*1e9
			}
			reqs = append(reqs, r)
		}
		want, wantFirst := 0, 0
		for _, q := range reqs {
			for _, a := range q.at {
				n, first := 0, 0
				for _, r := range reqs {
					for k, b := range r.at {
						if b.startNs <= a.startNs && a.startNs < b.endNs {
							n++
							if k == 0 {
								first++
							}
						}
					}
				}
				want, wantFirst = max(want, n), max(wantFirst, first)
			}
		}
		c := MeasureCapacity(reqs, time.Second, 0)
		if c.PeakAttemptsInFlight != want || c.PeakFirstAttemptsInFlight != wantFirst {
			t.Fatalf("trial %d: peaks %d and %d first, counted %d and %d", trial,
				c.PeakAttemptsInFlight, c.PeakFirstAttemptsInFlight, want, wantFirst)
		}
	}
	back := []*Request{{attempts: 2, at: []yieldAttempt{{startNs: 0, endNs: 1e9}, {startNs: 1e9, endNs: 2e9}}}}
	if c := MeasureCapacity(back, time.Second, 0); c.PeakAttemptsInFlight != 1 {
		t.Errorf("two attempts back to back: peak %d in flight, want 1", c.PeakAttemptsInFlight)
	}
}
