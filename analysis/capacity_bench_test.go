package analysis

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkMeasureCapacity measures the capacity timeline of the 1M-span
// bench's size of workload: 292,000 requests over an hour, one in seven
// retried (go test ./analysis -bench MeasureCapacity -run '^$').
func BenchmarkMeasureCapacity(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const hour = int64(3600e9)
	reqs := make([]*Request, 292_000)
	for i := range reqs {
		start := 1_760_000_000e9 + rng.Int64N(hour)
		r := &Request{startNs: start, attempts: 1}
		if rng.IntN(7) == 0 {
			r.attempts += 1 + rng.IntN(3)
		}
		at := start
		for range r.attempts {
			end := at + 1e6 + rng.Int64N(2e9)
			r.at = append(r.at, yieldAttempt{startNs: at, endNs: end, hiddenMs: 1})
			at = end + rng.Int64N(1e9)
		}
		reqs[i] = r
	}
	step := CapacityStep(reqs)
	b.ReportAllocs()
	for b.Loop() {
		MeasureCapacity(reqs, step, 0)
	}
}
