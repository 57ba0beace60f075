package baseline

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit/workload"
	"github.com/retryscope/retryscope/model"
)

// generated ingests and rebuilds a generated workload with counterfactuals
// and returns the store and the truth by request key. It skips the test
// when the rebuild fails, since these tests judge the baselines, not it.
func generated(t *testing.T, cfg sim.Config) (*store.Store, map[string]sim.Request) {
	t.Helper()
	if testing.Short() {
		t.Skip("generates, ingests and rebuilds a workload")
	}
	cfg.Counterfactual = true
	st, tr := workload.Rebuilt(t, cfg)
	truth := make(map[string]sim.Request, len(tr.Requests))
	for _, r := range tr.Requests {
		truth[r.Key] = r
	}
	return st, truth
}

// comparison is one kind's mean added latency against the truth's
// (latency minus counterfactual), over the retried requests that have a
// baseline and whose rebuilt request is in the truth.
type comparison struct {
	est, want float64 // mean added latency, ms
	l0        float64 // mean counterfactual, ms
	n         int
}

func (c comparison) bias() float64   { return c.est - c.want }
func (c comparison) relErr() float64 { return math.Abs(c.bias()) / math.Abs(c.want) }

func versusTruth(t *testing.T, st *store.Store, truth map[string]sim.Request, kind string) comparison {
	t.Helper()
	return compare(t, kind, truth, estimates(t, st, kind), nil)
}

// estimates returns each retried request's added latency against kind,
// where it has a baseline.
func estimates(t *testing.T, st *store.Store, kind string) map[string]float64 {
	t.Helper()
	rows, err := st.QueryText(context.Background(),
		`SELECT request_id, added_ms FROM baselines WHERE kind = $1 AND l0_ms IS NOT NULL ORDER BY request_id`, kind)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var id string
		var added float64
		if err := rows.Scan(&id, &added); err != nil {
			t.Fatal(err)
		}
		out[id] = added
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// compare averages the estimates and the truth over the requests in both
// (and in only, when only is not nil).
func compare(t *testing.T, kind string, truth map[string]sim.Request, est map[string]float64, only map[string]float64) comparison {
	t.Helper()
	var c comparison
	for id, added := range est {
		tr, ok := truth[id]
		if !ok || tr.CounterfactualMs == nil {
			continue
		}
		if _, in := only[id]; only != nil && !in {
			continue
		}
		c.est += added
		c.want += tr.LatencyMs - *tr.CounterfactualMs
		c.l0 += *tr.CounterfactualMs
		c.n++
	}
	if c.n == 0 {
		t.Fatalf("%s: no retried request with a baseline", kind)
	}
	n := float64(c.n)
	c.est, c.want, c.l0 = c.est/n, c.want/n, c.l0/n
	return c
}

func logComparison(t *testing.T, workload, kind string, c comparison) {
	t.Helper()
	t.Logf("%s %-10s mean added %7.1f ms, truth %7.1f ms: %+6.1f ms, error %4.1f%% (n=%d, true mean L0 %.1f ms)",
		workload, kind, c.est, c.want, c.bias(), 100*c.relErr(), c.n, c.l0)
}

func computeOrFail(t *testing.T, st *store.Store, opt Options) {
	t.Helper()
	if err := Compute(context.Background(), st, opt); err != nil {
		t.Fatal(err)
	}
}

// naiveOptions make the healthy baseline a naive one: every first-attempt
// success of the operation, model, route and stream in the run, whatever
// its size or time.
func naiveOptions() Options {
	return Options{Cohort: []string{DimOperation, DimModel, DimRoute, DimStream}, Window: Unbounded}
}

func calmConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed = 7
	cfg.Requests = 6000
	cfg.Faults = sim.DefaultFaults().Scale(0.5)
	cfg.Rate = 10
	return cfg
}

// TestAgainstTruthCalm: on a calm workload the healthy and matched
// baselines' mean added latency is within 5% of the truth.
func TestAgainstTruthCalm(t *testing.T) {
	st, truth := generated(t, calmConfig())
	computeOrFail(t, st, Options{})
	for _, kind := range []string{KindHealthy, KindMatched} {
		c := versusTruth(t, st, truth, kind)
		logComparison(t, "calm", kind, c)
		if c.relErr() > 0.05 {
			t.Errorf("calm %s: mean added latency off by %.1f%%, want within 5%%", kind, 100*c.relErr())
		}
	}
}

// TestAgainstTruthExperiment: with a randomized no-retry arm the
// experiment baseline's mean added latency is within 5% of the truth.
func TestAgainstTruthExperiment(t *testing.T) {
	cfg := calmConfig()
	cfg.Requests = 10000
	// Half the traffic in the control arm: its successes are the sample
	// every L0 rests on, and small cohorts make a noisy mean.
	cfg.Experiment = 0.5
	st, truth := generated(t, cfg)
	computeOrFail(t, st, Options{})
	c := versusTruth(t, st, truth, KindExperiment)
	logComparison(t, "calm", KindExperiment, c)
	if c.relErr() > 0.05 {
		t.Errorf("experiment: mean added latency off by %.1f%%, want within 5%%", 100*c.relErr())
	}
	logTable(t, st)
}

// logTable logs the report table of every kind, for the reader of -v.
func logTable(t *testing.T, st *store.Store) {
	t.Helper()
	blocks, err := Summarize(context.Background(), st, "all", model.Window{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(blocks, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b)
}

// TestAgainstTruthStorm states each modeled baseline's error when faults
// are frequent and load high, where retried requests meet worse conditions
// than the requests they are compared with. It asserts nothing about the
// size of the error: that is what the log line is for.
func TestAgainstTruthStorm(t *testing.T) {
	cfg := calmConfig()
	cfg.Faults = sim.DefaultFaults().Scale(3)
	cfg.Rate = 30
	cfg.Experiment = 0.3
	st, truth := generated(t, cfg)
	computeOrFail(t, st, Options{})
	for _, kind := range []string{KindHealthy, KindMatched, KindExperiment} {
		logComparison(t, "storm", kind, versusTruth(t, st, truth, kind))
	}
	computeOrFail(t, st, naiveOptions())
	logComparison(t, "storm naive", KindHealthy, versusTruth(t, st, truth, KindHealthy))
}

// TestSelectionBias: when big requests both take longer and fail more
// often, a naive baseline (all first-attempt successes of the operation,
// model, route and stream, anywhere in the run) overstates the added
// latency; matching on token counts removes most of that bias.
func TestSelectionBias(t *testing.T) {
	cfg := calmConfig()
	cfg.Shapes = []sim.Shape{sim.ShapeWrapped}
	cfg.Rate = 4
	cfg.Requests = 4000
	cfg.BigInputs = 0.2
	// Full default faults, none from an evaluator, which would retry big
	// and small requests alike.
	cfg.Faults = sim.DefaultFaults()
	cfg.Faults.Reject = 0
	st, truth := generated(t, cfg)
	computeOrFail(t, st, naiveOptions())
	naiveEst := estimates(t, st, KindHealthy)
	computeOrFail(t, st, Options{})
	matchedEst := estimates(t, st, KindMatched)
	// Both on the requests that have both baselines, so the truths agree.
	naive := compare(t, "naive", truth, naiveEst, matchedEst)
	matched := compare(t, KindMatched, truth, matchedEst, naiveEst)
	logComparison(t, "selection-bias naive", KindHealthy, naive)
	logComparison(t, "selection-bias", KindMatched, matched)
	t.Logf("selection-bias: %d of %d retried requests matched", len(matchedEst), len(naiveEst))
	// The naive baseline's bias is an error in L0, so it is judged against
	// the true L0, not against the (much larger) added latency.
	if math.Abs(naive.bias()) < 0.05*naive.l0 {
		t.Errorf("little selection bias (naive off by %+.1f ms of a %.1f ms L0): the test proves nothing", naive.bias(), naive.l0)
	}
	if math.Abs(matched.bias()) > 0.5*math.Abs(naive.bias()) {
		t.Errorf("matched removes less than half of the naive bias: %+.1f ms vs %+.1f ms", matched.bias(), naive.bias())
	}
}
