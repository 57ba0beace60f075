package rebuild_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
)

// splitFigures are the workload figures the cross-trace joiner decides,
// with the ranges the report prints for them.
type splitFigures struct {
	counts     model.Counts
	retriedP50 float64
	ranges     model.WorkloadRanges
}

func (f splitFigures) rates() (retry, success, failure float64) {
	n := float64(f.counts.Requests)
	return float64(f.counts.Retried) / n, float64(f.counts.RetriedOK) / float64(f.counts.Retried), float64(f.counts.Failed) / n
}

func rebuiltFigures(t *testing.T, st *store.Store) splitFigures {
	t.Helper()
	ctx := context.Background()
	var f splitFigures
	c := &f.counts
	err := st.QueryRowText(ctx, `SELECT count(*), sum(attempts), count(*) FILTER (WHERE attempts > 1),
		count(*) FILTER (WHERE attempts > 1 AND outcome = 'ok'), count(*) FILTER (WHERE outcome = 'error') FROM requests`).
		Scan(&c.Requests, &c.Attempts, &c.Retried, &c.RetriedOK, &c.Failed)
	if err != nil {
		t.Fatal(err)
	}
	var s model.CountShifts
	err = st.QueryRow(ctx, "report_ranges", int64(math.MinInt64), int64(math.MaxInt64)).Scan(
		&s.Down.Requests, &s.Down.Retried, &s.Down.RetriedOK, &s.Down.Failed, &s.Up.Requests, &s.Up.Retried, &s.Up.RetriedOK, &s.Up.Failed)
	if err != nil {
		t.Fatal(err)
	}
	f.ranges = s.Ranges(f.counts)
	rows, err := st.QueryText(ctx, `SELECT latency_ms FROM requests WHERE attempts > 1 ORDER BY latency_ms`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lat []float64
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, v)
	}
	if p := model.Percentile(lat, 50); p != nil {
		f.retriedP50 = *p
	}
	return f
}

func truthFigures(truth sim.Truth) splitFigures {
	var f splitFigures
	c := &f.counts
	var lat []float64
	for _, r := range truth.Requests {
		c.Add(r.Attempts, r.Outcome == "ok")
		if r.Attempts > 1 {
			lat = append(lat, r.LatencyMs)
		}
	}
	slices.Sort(lat)
	if p := model.Percentile(lat, 50); p != nil {
		f.retriedP50 = *p
	}
	return f
}

func within(r model.Range, v float64) bool { return r[0]-1e-9 <= v && v <= r[1]+1e-9 }

// TestSplitConcurrent is issue 10's acceptance for attempts that are each a
// trace of their own under concurrency: go-retryablehttp workers (2, 4, 8
// and 16) on four paths of three hosts, five seeds each (three for 2 and
// 8). Logical requests within 2% of the
// truth, retry and final failure rates within 0.01, the retried requests'
// p50 latency within 5%, and every printed range holds the truth.
func TestSplitConcurrent(t *testing.T) {
	for _, workers := range []int{2, 4, 8, 16} {
		seeds := int64(5)
		if workers == 2 || workers == 8 {
			seeds = 3
		}
		for seed := int64(1); seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("workers=%d/seed=%d", workers, seed), func(t *testing.T) {
				t.Parallel()
				cfg := shapeConfig([]sim.Shape{sim.ShapeSplit}, 2000, seed)
				cfg.SplitWorkers = workers
				st, truth := generated(t, cfg)
				checkSplitFigures(t, truthFigures(truth), rebuiltFigures(t, st))
			})
		}
	}
}

// TestSplitConcurrentShortWaits is TestSplitConcurrent with the settings
// of the go-retryablehttp corpus in testdata/corpora (split-a): up to 6
// attempts, waits of 30 ms doubling to at most 1 s, so that a Retry-After
// of 1 s on a 429 or 503 is as long as the longest wait and an outage
// pushes chains to attempt numbers few joins reach.
func TestSplitConcurrentShortWaits(t *testing.T) {
	for _, workers := range []int{2, 4, 8, 16} {
		for seed := int64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("workers=%d/seed=%d", workers, seed), func(t *testing.T) {
				t.Parallel()
				cfg := shapeConfig([]sim.Shape{sim.ShapeSplit}, 2000, seed)
				cfg.SplitWorkers = workers
				cfg.SplitRetry = sim.RetryableSettings{RetryMax: 5, WaitMin: 30 * time.Millisecond, WaitMax: time.Second}
				st, truth := generated(t, cfg)
				checkSplitFigures(t, truthFigures(truth), rebuiltFigures(t, st))
			})
		}
	}
}

func checkSplitFigures(t *testing.T, want, got splitFigures) {
	t.Helper()
	wr, ws, wf := want.rates()
	gr, gs, gf := got.rates()
	rg := got.ranges
	t.Logf("%s: logical requests %d (truth %d) range %v; retry rate %.4f (truth %.4f) range %.4f; retry success %.4f (truth %.4f) range %.4f; "+
		"final failure %.4f (truth %.4f) range %.4f; amplification %.4f (truth %.4f) range %.4f; retried p50 %.1f ms (truth %.1f)",
		t.Name(), got.counts.Requests, want.counts.Requests, rg.LogicalRequests, gr, wr, rg.RetryRate, gs, ws, rg.RetrySuccessRate,
		gf, wf, rg.FinalFailureRate, float64(got.counts.Attempts)/float64(got.counts.Requests),
		float64(want.counts.Attempts)/float64(want.counts.Requests), rg.Amplification, got.retriedP50, want.retriedP50)
	if got.counts.Attempts != want.counts.Attempts {
		t.Errorf("%d attempts, truth %d", got.counts.Attempts, want.counts.Attempts)
	}
	if d := math.Abs(float64(got.counts.Requests-want.counts.Requests)) / float64(want.counts.Requests); d > 0.02 {
		t.Errorf("logical requests %d, truth %d (%.1f%% off)", got.counts.Requests, want.counts.Requests, 100*d)
	}
	if math.Abs(gr-wr) > 0.01 {
		t.Errorf("retry rate %.4f, truth %.4f", gr, wr)
	}
	if math.Abs(gf-wf) > 0.01 {
		t.Errorf("final failure rate %.4f, truth %.4f", gf, wf)
	}
	if d := math.Abs(got.retriedP50-want.retriedP50) / want.retriedP50; d > 0.05 {
		t.Errorf("retried p50 %.1f ms, truth %.1f ms (%.1f%% off)", got.retriedP50, want.retriedP50, 100*d)
	}
	for name, c := range map[string]struct {
		r model.Range
		v float64
	}{
		"logical_requests": {rg.LogicalRequests, float64(want.counts.Requests)}, "retry_rate": {rg.RetryRate, wr},
		"retry_success_rate": {rg.RetrySuccessRate, ws}, "final_failure_rate": {rg.FinalFailureRate, wf},
		"amplification": {rg.Amplification, float64(want.counts.Attempts) / float64(want.counts.Requests)},
	} {
		if !within(c.r, c.v) {
			t.Errorf("%s range %v does not hold the truth %.4f", name, c.r, c.v)
		}
	}
}
