package whatif

import (
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// hedges is a workload of hedged requests (gen's hedge shape: pricing-web
// get_quote, a second attempt once the first has run the hedge delay)
// with common random numbers; storm has four times the default faults at
// twice the rate.
func hedges(stormy bool, delay time.Duration, off bool) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes, cfg.CRN = 3000, []sim.Shape{sim.ShapeHedge}, true
	cfg.Policy.HedgeDelay = delay
	if off {
		cfg.Policy.Kind = sim.PolicyNone
	}
	if stormy {
		cfg.Rate *= 2
		f := &cfg.Faults
		f.RateLimited, f.ServerError, f.Reset, f.Timeout = 4*f.RateLimited, 4*f.ServerError, 4*f.Reset, 4*f.Timeout
	}
	return cfg
}

// TestPredictsHedgeDelay: a hedge workload recorded with a 50 ms hedge
// delay, replayed with 100 ms and with hedging off, against gen's re-run
// with that delay (or none) and common random numbers: amplification and
// final failure within 5% (or 0.005) calm and 10% in the storm, p50 and
// p99 within 10%. The replay without the hedging logic (the recorded
// attempts as they stand) misses.
func TestPredictsHedgeDelay(t *testing.T) {
	for _, c := range []struct {
		name        string
		stormy      bool
		from, delay time.Duration
		off         bool
		rel         float64
	}{
		{"calm, 50ms → 100ms", false, 50 * time.Millisecond, 100 * time.Millisecond, false, 0.05},
		{"calm, 50ms → off", false, 50 * time.Millisecond, 0, true, 0.05},
		{"calm, 100ms → 50ms", false, 100 * time.Millisecond, 50 * time.Millisecond, false, 0.05},
		{"storm, 50ms → 100ms", true, 50 * time.Millisecond, 100 * time.Millisecond, false, 0.10},
		{"storm, 50ms → off", true, 50 * time.Millisecond, 0, true, 0.10},
		{"storm, 100ms → 50ms", true, 100 * time.Millisecond, 50 * time.Millisecond, false, 0.10},
	} {
		t.Run(c.name, func(t *testing.T) {
			recorded, _ := workload.Rebuilt(t, hedges(c.stormy, c.from, false))
			rerun, _ := workload.Rebuilt(t, hedges(c.stormy, c.delay, c.off))
			want := replayOf(t, rerun, Policy{}).Overall.Recorded
			policy := Policy{HedgeDelay: c.delay, NoHedge: c.off}
			res := replayOf(t, recorded, policy)
			if c.stormy {
				res = replayFeedback(t, recorded, policy)
			}
			pred := res.Overall.Modeled
			checkPrediction(t, c.name, pred, want, c.rel, 0.005, 0.10)
			if pred.P50 == nil || want.P50 == nil || !near(*pred.P50, *want.P50, 0.10, 0) {
				t.Errorf("%s: predicted p50 %v ms, the re-run's %v ms", c.name, deref(pred.P50), deref(want.P50))
			}
			t.Logf("%s: p50 %.1f vs %.1f ms", c.name, deref(pred.P50), deref(want.P50))
			if !strings.Contains(res.Policy, "--hedge-delay") {
				t.Errorf("policy %q does not name the hedge delay", res.Policy)
			}
			naive := replayOf(t, recorded, Policy{}).Overall.Modeled
			if near(naive.Amplification, want.Amplification, c.rel, 0.005) && naive.P99 != nil && near(*naive.P99, *want.P99, 0.10, 0) {
				t.Errorf("%s: the replay without hedging (amplification %.4f, p99 %.1f) meets the re-run (%.4f, %.1f): the test cannot fail",
					c.name, naive.Amplification, deref(naive.P99), want.Amplification, deref(want.P99))
			}
			t.Logf("%s: without hedging: amplification %.4f, p99 %.1f ms", c.name, naive.Amplification, deref(naive.P99))
		})
	}
}

// TestHedgeIdentity: replaying a hedge workload with no policy, or with
// the recorded hedge delay (with feedback too), gives the recorded
// figures exactly (attempts, failure, p50, p99, offered load), and its
// failures keep their recorded reasons.
func TestHedgeIdentity(t *testing.T) {
	st, _ := workload.Rebuilt(t, hedges(true, 50*time.Millisecond, false))
	for _, p := range []Policy{{}, {HedgeDelay: 50 * time.Millisecond}} {
		for _, res := range []*Result{replayOf(t, st, p), replayFeedback(t, st, p)} {
			rec, mod := res.Overall.Recorded, res.Overall.Modeled
			if rec.Attempts != mod.Attempts || rec.FinalFailureRate != mod.FinalFailureRate || !nearOrBothNil(mod.P99, rec.P99, 0) ||
				!nearOrBothNil(mod.P50, rec.P50, 0) || rec.OfferedLoad != mod.OfferedLoad || !maps.Equal(rec.FailedBy, mod.FailedBy) {
				t.Errorf("%s, %s: modeled %+v, recorded %+v", p, res.Model, mod, rec)
			}
		}
	}
}

// TestHedgeMechanics: one request recorded with a 50 ms hedge delay, its
// first attempt (0–200 ms uncut) cancelled at 120 ms when the hedge
// (50–120 ms) won. At 100 ms the hedge (70 ms) starts at 100 and wins at
// 170, the first cancelled then with 30 ms of hidden work; at 250 ms, or
// off, the first attempt alone ends at 200.
func TestHedgeMechanics(t *testing.T) {
	seg := Segment{"pricing-web", "get_quote", "quote-svc"}
	r := &recRequest{id: "h", seg: seg, latencyMs: 121, ok: true, attempts: []recAttempt{
		{tries: []int{1}, startMs: 0, endMs: 120, route: "quote-svc", trigger: "cancelled", hiddenMs: 80},
		{tries: []int{2}, startMs: 50, endMs: 120, route: "quote-svc", ok: true},
	}}
	for _, c := range []struct {
		policy   Policy
		attempts int
		latency  float64
		hidden   float64
	}{
		{Policy{HedgeDelay: 100 * time.Millisecond}, 2, 171, 30},
		{Policy{HedgeDelay: 250 * time.Millisecond}, 1, 201, 0},
		{Policy{NoHedge: true}, 1, 201, 0},
		{Policy{HedgeDelay: 50 * time.Millisecond}, 2, 121, 80},
	} {
		reqs := []*recRequest{r}
		s := runPass(reqs, c.policy, Options{Seed: 1}, newPools(reqs), nil)[0]
		hidden := 0.0
		for _, a := range s.kept {
			hidden += a.hiddenMs
		}
		if len(s.kept) != c.attempts || !s.ok || math.Abs(s.latencyMs-c.latency) > 1e-9 || math.Abs(hidden-c.hidden) > 1e-9 {
			t.Errorf("%s: %d attempts %+v, ok %v, latency %.3f ms, hidden %.3f ms; want %d, %.0f ms, %.0f ms",
				c.policy, len(s.kept), s.kept, s.ok, s.latencyMs, hidden, c.attempts, c.latency, c.hidden)
		}
	}
}
