package whatif

import (
	"testing"
)

// TestClosedLoopCorpus: openai-node-storm-b is 64 workers in a closed
// loop, and its re-runs with the SDK cap or the app loop cut finished
// sooner, so their later requests started earlier, more of them inside
// the primary route's brownout. The base is detected as a closed loop of
// 64 workers, which with nothing changed replays as recorded; replayed as
// one under each policy, with and without
// feedback, amplification is within 10% of the re-run's and closer than
// the replay that keeps the recorded starts. The final failure rate and
// p99 are logged (see docs/whatif.md for what they reach).
func TestClosedLoopCorpus(t *testing.T) {
	base := corpusRequests(t, "openai-node-storm-b")
	pl := newPools(base)
	if got := pl.loops.workers[base[0].seg]; got != 64 {
		t.Fatalf("openai-node-storm-b: %d workers detected, want 64", got)
	}
	id := replay(base, Policy{}, Options{Seed: 1}).Overall
	if id.Modeled.Attempts != id.Recorded.Attempts || id.Modeled.FinalFailureRate != id.Recorded.FinalFailureRate || deref(id.Modeled.P99) != deref(id.Recorded.P99) {
		t.Errorf("nothing changed: modeled %+v, recorded %+v", id.Modeled, id.Recorded)
	}
	for _, c := range []struct {
		rerun  string
		policy Policy
	}{
		{"sdk1", Policy{Inner: 2}},
		{"sdk0", Policy{Inner: 1}},
		{"app1", Policy{App: 1}},
	} {
		rerun := corpusRequests(t, "openai-node-storm-b-"+c.rerun)
		want := replay(rerun, Policy{}, Options{Seed: 1, OpenLoop: true}).Overall.Recorded
		for _, fb := range []bool{false, true} {
			pred := replay(base, c.policy, Options{Seed: 1, Feedback: fb}).Overall.Modeled
			open := replay(base, c.policy, Options{Seed: 1, Feedback: fb, OpenLoop: true}).Overall.Modeled
			name := c.rerun
			if fb {
				name += " with feedback"
			}
			t.Logf("%s: amplification %.4f (open loop %.4f) vs the re-run's %.4f; final failure %.4f (%.4f) vs %.4f; p99 %.0f (%.0f) vs %.0f ms",
				name, pred.Amplification, open.Amplification, want.Amplification, pred.FinalFailureRate, open.FinalFailureRate,
				want.FinalFailureRate, deref(pred.P99), deref(open.P99), deref(want.P99))
			if !near(pred.Amplification, want.Amplification, 0.10, 0) {
				t.Errorf("%s: amplification %.4f, the re-run's %.4f", name, pred.Amplification, want.Amplification)
			}
			if abs(pred.Amplification-want.Amplification) >= abs(open.Amplification-want.Amplification) {
				t.Errorf("%s: amplification %.4f no closer to the re-run's %.4f than the open-loop replay's %.4f", name,
					pred.Amplification, want.Amplification, open.Amplification)
			}
		}
	}
}
