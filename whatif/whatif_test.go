package whatif

import (
	"context"
	"math"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// calm is a calm workload of explicit and resend requests with common
// random numbers, under the given change of gen's default policy; 3% of
// its requests are bad (4xx), and 30% of its clients are naive (they
// retry 4xx and ignore Retry-After).
func calm(change func(*sim.Policy)) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes, cfg.CRN = 3000, []sim.Shape{sim.ShapeExplicit, sim.ShapeResend}, true
	cfg.Faults.ClientError, cfg.Policy.NaiveShare = 0.03, 0.3
	change(&cfg.Policy)
	return cfg
}

func replayOf(t *testing.T, st *store.Store, p Policy) *Result {
	t.Helper()
	res, err := Replay(context.Background(), st, p, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// near reports whether got is within rel of want, or within abs.
func near(got, want, rel, abs float64) bool {
	d := math.Abs(got - want)
	return d <= abs || d <= rel*math.Abs(want)
}

// figureChecks lists the figures a prediction is held to: amplification
// and final failure rate within rel (or abs), p99 within p99Rel.
func checkPrediction(t *testing.T, name string, pred, rerun Figures, rel, abs, p99Rel float64) {
	t.Helper()
	if !near(pred.Amplification, rerun.Amplification, rel, abs) {
		t.Errorf("%s: predicted amplification %.4f, the re-run's %.4f", name, pred.Amplification, rerun.Amplification)
	}
	if !near(pred.FinalFailureRate, rerun.FinalFailureRate, rel, abs) {
		t.Errorf("%s: predicted final failure rate %.4f, the re-run's %.4f", name, pred.FinalFailureRate, rerun.FinalFailureRate)
	}
	if pred.P99 == nil || rerun.P99 == nil || !near(*pred.P99, *rerun.P99, p99Rel, 0) {
		t.Errorf("%s: predicted p99 %v ms, the re-run's %v ms", name, deref(pred.P99), deref(rerun.P99))
	}
	t.Logf("%s: amplification %.4f vs %.4f, final failure %.4f vs %.4f, p99 %.1f vs %.1f ms", name,
		pred.Amplification, rerun.Amplification, pred.FinalFailureRate, rerun.FinalFailureRate, deref(pred.P99), deref(rerun.P99))
}

func nearOrBothNil(got, want *float64, rel float64) bool {
	if got == nil || want == nil {
		return got == nil && want == nil
	}
	return near(*got, *want, rel, 0)
}

func deref(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// TestIdentity: replaying the recorded policy, as the zero Policy or as
// its own cap, reproduces the recorded figures, overall and per segment.
func TestIdentity(t *testing.T) {
	st, _ := workload.Rebuilt(t, calm(func(*sim.Policy) {}))
	for _, p := range []Policy{{}, {Inner: 3}} {
		res := replayOf(t, st, p)
		for _, row := range append([]Row{res.Overall}, res.Segments...) {
			rec, mod := row.Recorded, row.Modeled
			if rec.Attempts != mod.Attempts || rec.Tokens != mod.Tokens || !near(mod.FinalFailureRate, rec.FinalFailureRate, 0.01, 0) ||
				!near(mod.OfferedLoad, rec.OfferedLoad, 0.01, 0) || !nearOrBothNil(mod.P99, rec.P99, 0.01) {
				t.Errorf("%s, segment %v: modeled %+v, recorded %+v", p, row.Segment, mod, rec)
			}
		}
	}
}

// TestPredictsCalmRerun: on a calm workload recorded under gen's default
// policy (full jitter, 3 attempts), the
// replay without feedback predicts the re-run of the same seed, with common
// random numbers, under another policy: amplification and final failure
// rate within 5% relative (or 0.005 absolute), p99 within 10%.
func TestPredictsCalmRerun(t *testing.T) {
	recorded, _ := workload.Rebuilt(t, calm(func(*sim.Policy) {}))
	for _, c := range []struct {
		name   string
		policy Policy
		rerun  func(*sim.Policy)
	}{
		{"cap 3→1", Policy{Inner: 1}, func(p *sim.Policy) { p.MaxAttempts = 1 }},
		{"cap 3→2", Policy{Inner: 2}, func(p *sim.Policy) { p.MaxAttempts = 2 }},
		{"no retry on 4xx", Policy{NoRetryOn: []string{"client_error"}}, func(p *sim.Policy) { p.NoRetry4xx = true }},
		{"retry budget 0.1", Policy{Budget: &Budget{Ratio: 0.1, Window: DefaultBudget.Window, Floor: DefaultBudget.Floor}},
			func(p *sim.Policy) { p.Budget = 0.1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rerun, _ := workload.Rebuilt(t, calm(c.rerun))
			pred, want := replayOf(t, recorded, c.policy).Overall.Modeled, replayOf(t, rerun, Policy{}).Overall.Recorded
			checkPrediction(t, c.name, pred, want, 0.05, 0.005, 0.10)
			checkPrediction(t, c.name+", feedback", replayFeedback(t, recorded, c.policy).Overall.Modeled, want, 0.05, 0.005, 0.10)
		})
	}
}

// nested is a calm workload of wrapped requests, every one an application
// loop (3 tries, the last on a fallback provider) around SDK calls (3
// attempts each), with common random numbers.
func nested(change func(*sim.Policy)) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Rate, cfg.Shapes, cfg.Nested, cfg.CRN = 3000, 4, []sim.Shape{sim.ShapeWrapped}, true, true
	change(&cfg.Policy)
	return cfg
}

// TestPredictsNestedRerun: the same for nested app × SDK loops with
// fallback, cutting the SDK's cap from 3 to 1, the app's, and both.
func TestPredictsNestedRerun(t *testing.T) {
	recorded, _ := workload.Rebuilt(t, nested(func(*sim.Policy) {}))
	for _, c := range []struct {
		name   string
		policy Policy
		rerun  func(*sim.Policy)
	}{
		{"sdk 3→1", Policy{Inner: 1}, func(p *sim.Policy) { p.MaxAttempts = 1 }},
		{"app 3→1", Policy{App: 1}, func(p *sim.Policy) { p.AppTries = 1 }},
		{"app 3→1, sdk 3→1", Policy{Inner: 1, App: 1}, func(p *sim.Policy) { p.MaxAttempts, p.AppTries = 1, 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rerun, _ := workload.Rebuilt(t, nested(c.rerun))
			pred, want := replayOf(t, recorded, c.policy).Overall.Modeled, replayOf(t, rerun, Policy{}).Overall.Recorded
			checkPrediction(t, c.name, pred, want, 0.05, 0.005, 0.10)
			checkPrediction(t, c.name+", feedback", replayFeedback(t, recorded, c.policy).Overall.Modeled, want, 0.05, 0.005, 0.10)
		})
	}
}

// storm is a workload of nested wrapped requests at 8 a second: the LLM
// route runs near its capacity, and the retries push it over, so it sheds
// 429s and slows down under their load. As in the calm workload, 3% of its
// requests are bad (4xx) and 30% of its clients are naive.
func storm(change func(*sim.Policy)) sim.Config {
	cfg := nested(func(*sim.Policy) {})
	cfg.Rate = 8
	cfg.Faults.ClientError, cfg.Policy.NaiveShare = 0.03, 0.3
	change(&cfg.Policy)
	return cfg
}

func replayFeedback(t *testing.T, st *store.Store, p Policy) *Result {
	t.Helper()
	res, err := Replay(context.Background(), st, p, Options{Seed: 1, Feedback: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "replay with load feedback" {
		t.Errorf("model %q", res.Model)
	}
	return res
}

// TestFeedbackIdentity: with feedback, replaying the recorded policy still
// reproduces the recorded figures: the load it models is the load recorded.
func TestFeedbackIdentity(t *testing.T) {
	st, _ := workload.Rebuilt(t, storm(func(*sim.Policy) {}))
	res := replayFeedback(t, st, Policy{})
	if rec, mod := res.Overall.Recorded, res.Overall.Modeled; rec.Attempts != mod.Attempts || rec.FinalFailureRate != mod.FinalFailureRate ||
		!nearOrBothNil(mod.P99, rec.P99, 0.01) || !near(mod.OfferedLoad, rec.OfferedLoad, 0.01, 0) {
		t.Errorf("modeled %+v, recorded %+v", mod, rec)
	}
}

// TestFeedbackPredictsStorm: in the storm, every policy that lightens the
// load changes how the servers answer. With feedback the replay predicts
// the re-runs: amplification and final failure rate within 10% (or 0.005),
// p99 within 10%. Without it, the replay keeps the recorded 429s and
// slowdowns: for the retry budget and for cutting the app's loop (alone or
// with the SDK's) its final failure rate is more than 10% too high.
func TestFeedbackPredictsStorm(t *testing.T) {
	recorded, _ := workload.Rebuilt(t, storm(func(*sim.Policy) {}))
	for _, c := range []struct {
		name   string
		policy Policy
		rerun  func(*sim.Policy)
		// wrongWithout: the replay without feedback gets the final
		// failure rate more than 10% wrong.
		wrongWithout bool
	}{
		{"sdk 3→1", Policy{Inner: 1}, func(p *sim.Policy) { p.MaxAttempts = 1 }, false},
		{"sdk 3→2", Policy{Inner: 2}, func(p *sim.Policy) { p.MaxAttempts = 2 }, false},
		{"app 3→1", Policy{App: 1}, func(p *sim.Policy) { p.AppTries = 1 }, true},
		{"app 3→1, sdk 3→1", Policy{Inner: 1, App: 1}, func(p *sim.Policy) { p.MaxAttempts, p.AppTries = 1, 1 }, true},
		{"retry budget 0.1", Policy{Budget: &Budget{Ratio: 0.1, Window: DefaultBudget.Window, Floor: DefaultBudget.Floor}},
			func(p *sim.Policy) { p.Budget = 0.1 }, true},
		{"no retry on 4xx", Policy{NoRetryOn: []string{"client_error"}}, func(p *sim.Policy) { p.NoRetry4xx = true }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rerun, _ := workload.Rebuilt(t, storm(c.rerun))
			want := replayOf(t, rerun, Policy{}).Overall.Recorded
			checkPrediction(t, "storm, "+c.name+", feedback", replayFeedback(t, recorded, c.policy).Overall.Modeled, want, 0.10, 0.005, 0.10)
			without := replayOf(t, recorded, c.policy).Overall.Modeled
			t.Logf("storm, %s, no feedback: amplification %.4f, final failure %.4f, p99 %.1f ms", c.name,
				without.Amplification, without.FinalFailureRate, deref(without.P99))
			if c.wrongWithout {
				if near(without.FinalFailureRate, want.FinalFailureRate, 0.10, 0.005) {
					t.Errorf("without feedback the final failure rate %.4f is within 10%% of %.4f: the storm is too calm to test feedback",
						without.FinalFailureRate, want.FinalFailureRate)
				}
			}
		})
	}
}
