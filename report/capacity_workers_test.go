package report

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// splitWorkersConfig is four concurrent go-retryablehttp workers, each
// making its calls one after another: never more than four attempts in
// flight, and, at this rate, all four busy at some moment of nearly every
// bucket (the backoffs between retries keep the mean load well under
// four).
func splitWorkersConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes, cfg.SplitWorkers, cfg.Seed, cfg.Rate = 1200, []sim.Shape{sim.ShapeSplit}, 4, 2, 200
	return cfg
}

func buildWith(t *testing.T, st *store.Store, workers int) *Report {
	t.Helper()
	rep, err := Build(context.Background(), st, Options{Baseline: "none", Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// truthBusy is the attempt-nanoseconds in flight per bucket of width w
// from first, from the simulation's attempts, and the buckets' count:
// from the bucket of the first start to that of the last end.
func truthBusy(reqs []sim.Request, w int64) (busy []int64, first int64) {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, r := range reqs {
		for _, a := range r.AttemptList {
			lo, hi = min(lo, a.StartNs), max(hi, a.EndNs)
		}
	}
	// Start times are after 1970: division floors them.
	first = lo / w * w
	busy = make([]int64, (hi/w*w-first)/w+1)
	for _, r := range reqs {
		for _, a := range r.AttemptList {
			for b := range busy {
				from, to := first+int64(b)*w, first+int64(b+1)*w
				if o := min(to, a.EndNs) - max(from, a.StartNs); o > 0 {
					busy[b] += o
				}
			}
		}
	}
	return busy, first
}

// TestCapacityWorkersTruth: four sequential workers are estimated at no
// more than four, and at the most in flight since their peaks plateau
// there;
// against --workers N the utilisation is the simulation's attempt time
// over the timeline's length times N, overall and per bucket, and the
// buckets over capacity are those above 1.
func TestCapacityWorkersTruth(t *testing.T) {
	st, truth := workload.Rebuilt(t, splitWorkersConfig())
	est := buildWith(t, st, 0).Capacity
	if est.WorkersSource != analysis.WorkersEstimated || est.Workers < 1 || est.Workers > 4 {
		t.Errorf("estimated %d workers (%s), want 1 to 4", est.Workers, est.WorkersSource)
	}
	if est.Workers != est.PeakAttemptsInFlight || est.PeakAttemptsInFlight != 4 {
		t.Errorf("plateau: estimated %d workers, %d attempts in flight at most; want both 4", est.Workers, est.PeakAttemptsInFlight)
	}
	if est.Utilisation == nil || *est.Utilisation > 1+1e-9 {
		t.Errorf("utilisation %v against the estimate: four workers cannot be above capacity", est.Utilisation)
	}

	w := int64(est.BucketMs * 1e6)
	busy, first := truthBusy(truth.Requests, w)
	if len(busy) != len(est.Buckets) || est.Buckets[0].StartNs != first {
		t.Fatalf("%d buckets from %d, truth %d from %d", len(est.Buckets), est.Buckets[0].StartNs, len(busy), first)
	}
	var total int64
	for _, b := range busy {
		total += b
	}
	for _, n := range []int{1, 2, 3, 4, 100} {
		c := buildWith(t, st, n).Capacity
		if c.Workers != n || c.WorkersSource != analysis.WorkersFlag || c.Utilisation == nil {
			t.Fatalf("--workers %d: %d workers (%s), utilisation %v", n, c.Workers, c.WorkersSource, c.Utilisation)
		}
		want := float64(total) / (float64(int64(len(busy))*w) * float64(n))
		if rel := math.Abs(*c.Utilisation-want) / want; rel > 1e-9 {
			t.Errorf("--workers %d: utilisation %.12f, truth %.12f", n, *c.Utilisation, want)
		}
		over := 0
		for i, b := range c.Buckets {
			u := float64(busy[i]) / float64(w) / float64(n)
			if b.Utilisation == nil || math.Abs(*b.Utilisation-u) > 1e-9*max(u, 1) {
				t.Errorf("--workers %d, bucket %s: utilisation %v, truth %.12f", n, b.Start, b.Utilisation, u)
			}
			if u > 1 {
				over++
			}
		}
		if c.BucketsOverCapacity != over {
			t.Errorf("--workers %d: %d buckets over capacity, truth %d", n, c.BucketsOverCapacity, over)
		}
		if n == 1 && (over == 0 || over == len(busy)) {
			t.Errorf("--workers 1: %d of %d buckets over capacity; the test needs some over and some not", over, len(busy))
		}
		t.Logf("--workers %d: utilisation %.4f, %d of %d buckets over", n, want, over, len(busy))
	}
}

// TestCapacityUnfinished: requests the rebuild marks unfinished (the
// simulation makes none, so the store is told so of a few failed ones)
// are counted, and the worker time they held is their attempts' time,
// read apart from the report.
func TestCapacityUnfinished(t *testing.T) {
	ctx := context.Background()
	st, _ := workload.Rebuilt(t, splitWorkersConfig())
	if c := buildWith(t, st, 0).Capacity; c.UnfinishedRequests != 0 || c.UnfinishedWorkMs != 0 {
		t.Fatalf("%d unfinished requests (%v ms) before any is marked", c.UnfinishedRequests, c.UnfinishedWorkMs)
	}
	if _, err := st.ExecText(ctx, `UPDATE requests SET outcome_detail = 'unfinished' WHERE request_id IN
		(SELECT request_id FROM requests WHERE outcome = 'error' ORDER BY request_id LIMIT 3)`); err != nil {
		t.Fatal(err)
	}
	var n int
	var ms float64
	if err := st.QueryRowText(ctx, `SELECT count(DISTINCT r.request_id), sum(a.end_ns - a.start_ns) / 1e6
		FROM requests r JOIN attempts a USING (request_id) WHERE r.outcome_detail = 'unfinished'`).Scan(&n, &ms); err != nil {
		t.Fatal(err)
	}
	if n != 3 || ms <= 0 {
		t.Fatalf("%d unfinished requests marked, %v ms; the test needs three failed requests", n, ms)
	}
	rep := buildWith(t, st, 0)
	c := rep.Capacity
	if c.UnfinishedRequests != n || math.Abs(c.UnfinishedWorkMs-ms) > 1e-9*ms {
		t.Errorf("%d unfinished requests holding %.6f ms, truth %d holding %.6f ms", c.UnfinishedRequests, c.UnfinishedWorkMs, n, ms)
	}
	if note := workersNote(c); !strings.Contains(note, "3 unfinished requests held") {
		t.Errorf("the capacity table's note lacks them: %q", note)
	}
}

// TestPlateauWorkers: the estimate is the 95th percentile (nearest rank)
// of the buckets' peaks, those with attempts in flight: a burst in one
// bucket of twenty-one does not raise it, and never saturated the
// estimate is the most seen.
func TestPlateauWorkers(t *testing.T) {
	peaks := func(ps ...int) []analysis.CapacityBucket {
		var bs []analysis.CapacityBucket
		for _, p := range ps {
			bs = append(bs, analysis.CapacityBucket{PeakInFlight: p})
		}
		return bs
	}
	plateau := make([]int, 20)
	for i := range plateau {
		plateau[i] = 4
	}
	for _, tc := range []struct {
		buckets []analysis.CapacityBucket
		want    int
	}{
		{peaks(append(plateau, 9)...), 4},
		{peaks(0, 0, 3, 0), 3},
		{peaks(1, 2, 3), 3},
		{peaks(0, 0), 0},
		{nil, 0},
	} {
		if got := analysis.PlateauWorkers(tc.buckets); got != tc.want {
			t.Errorf("peaks %v: %d workers, want %d", tc.buckets, got, tc.want)
		}
	}
	c := &analysis.Capacity{OfferedLoad: 1, Buckets: peaks(0, 0)}
	if c.AgainstWorkers(0); c.Workers != 0 || c.Utilisation != nil || workersNote(c) != "" {
		t.Errorf("without attempts: %d workers, utilisation %v, note %q", c.Workers, c.Utilisation, workersNote(c))
	}
}
