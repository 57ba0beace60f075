package whatif

import (
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// llm is a workload of LLM calls whose retries carry tokens: explicit
// GenAI attempts (half of them with an evaluator that rejects outputs and
// retries them, so a retried attempt has spent its prompt and output) and
// wrapped SDK calls, nested-eval app loops among them.
func llm(change func(*sim.Policy)) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Rate, cfg.Shapes, cfg.CRN = 3000, 4, []sim.Shape{sim.ShapeExplicit, sim.ShapeWrapped}, true
	change(&cfg.Policy)
	return cfg
}

// TestPredictsTokenCap: a per-request token cap, replayed on a workload
// recorded without one, against gen's re-run with the cap and common
// random numbers: calm within 5% (or 0.005), the storm within 10% with
// feedback, p99 within 10%; the requests the cap stopped are typed
// token_cap, as many as the re-run's within 10% (or 5). Ignoring the cap
// misses the re-run.
func TestPredictsTokenCap(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      func(func(*sim.Policy)) sim.Config
		cap      int
		rel      float64
		feedback bool
	}{
		{"calm, 2000 tokens", calm, 2000, 0.05, false},
		{"llm, 2500 tokens", llm, 2500, 0.05, false},
		{"storm, 2000 tokens", storm, 2000, 0.10, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			change := func(p *sim.Policy) { p.TokenCap = c.cap }
			policy := Policy{TokenCap: int64(c.cap)}
			predictRerun(t, c.name, c.cfg, change, policy, c.rel, c.feedback)
			recorded, _ := workload.Rebuilt(t, c.cfg(func(*sim.Policy) {}))
			rerun, truth := workload.Rebuilt(t, c.cfg(change))
			want := 0
			for _, r := range truth.Requests {
				if r.Exhausted == StopTokenCap {
					want++
				}
			}
			res := replayOf(t, recorded, policy)
			if c.feedback {
				res = replayFeedback(t, recorded, policy)
			}
			got := res.Overall.Modeled.FailedBy[StopTokenCap]
			if stated := replayOf(t, rerun, Policy{}).Overall.Recorded.FailedBy[StopTokenCap]; stated == 0 {
				t.Errorf("%s: the re-run's requests stopped by the cap are not read as token_cap (its clients state it)", c.name)
			}
			t.Logf("%s: %d requests stopped by the cap, re-run %d", c.name, got, want)
			if want == 0 || abs(float64(got-want)) > max(5, 0.10*float64(want)) {
				t.Errorf("%s: %d requests stopped by the cap, re-run %d", c.name, got, want)
			}
			// A model that ignores the cap misses the re-run.
			naive, rr := replayOf(t, recorded, Policy{}).Overall.Modeled, replayOf(t, rerun, Policy{}).Overall.Recorded
			if near(naive.Amplification, rr.Amplification, c.rel, 0.005) && near(naive.FinalFailureRate, rr.FinalFailureRate, c.rel, 0.005) {
				t.Errorf("%s: ignoring the cap predicts amplification %.4f and final failure %.4f, the re-run's %.4f and %.4f: the test cannot fail",
					c.name, naive.Amplification, naive.FinalFailureRate, rr.Amplification, rr.FinalFailureRate)
			}
		})
	}
}

func TestParseTokenCap(t *testing.T) {
	for _, in := range []string{"0", "-1", "abc", "1.5", "1000000001"} {
		if _, err := ParseTokenCap(in); err == nil || !strings.Contains(err.Error(), "token cap") {
			t.Errorf("ParseTokenCap(%q): error %v", in, err)
		}
	}
	if n, err := ParseTokenCap("4000"); n != 4000 || err != nil {
		t.Errorf("ParseTokenCap(4000) = %d, %v", n, err)
	}
	if got := (Policy{TokenCap: 4000}).String(); got != "--token-cap 4000" {
		t.Errorf("String() = %q", got)
	}
}

// TestTokenCapIdentity: a cap no request reaches replays the recording
// exactly.
func TestTokenCapIdentity(t *testing.T) {
	st, _ := workload.Rebuilt(t, calm(func(*sim.Policy) {}))
	res := replayOf(t, st, Policy{TokenCap: MaxTokenCap})
	if rec, mod := res.Overall.Recorded, res.Overall.Modeled; rec.Attempts != mod.Attempts || rec.FinalFailureRate != mod.FinalFailureRate ||
		!nearOrBothNil(mod.P99, rec.P99, 0) || rec.Tokens != mod.Tokens || mod.FailedBy[StopTokenCap] != 0 {
		t.Errorf("modeled %+v, recorded %+v", mod, rec)
	}
}
