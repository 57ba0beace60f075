package whatif

import (
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// TestPredictsConcurrency: a cap on each client service's attempts in
// flight, an attempt over it waiting for a slot, replayed on a workload
// recorded without one, against gen's re-run with the cap and common
// random numbers: calm within 5% (or 0.005), the storm within 10% with
// feedback, p99 within 10%. Ignoring the cap misses the re-run's p99
// where the queue is felt (calm at 16: 10.8 s against 17.4 s; storm at
// 32); at 20 the cap barely binds, which the replay must also see.
func TestPredictsConcurrency(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      func(func(*sim.Policy)) sim.Config
		n        int
		rel      float64
		feedback bool
	}{
		{"calm, 16 attempts", calm, 16, 0.05, false},
		{"calm, 20 attempts", calm, 20, 0.05, false},
		{"storm, 32 attempts", storm, 32, 0.10, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			change := func(p *sim.Policy) { p.Concurrency = c.n }
			policy := Policy{Concurrency: c.n}
			predictRerun(t, c.name, c.cfg, change, policy, c.rel, c.feedback)
			recorded, _ := workload.Rebuilt(t, c.cfg(func(*sim.Policy) {}))
			rerun, _ := workload.Rebuilt(t, c.cfg(change))
			naive, rr := replayOf(t, recorded, Policy{}).Overall.Modeled, replayOf(t, rerun, Policy{}).Overall.Recorded
			if c.n < 20 && near(*naive.P99, *rr.P99, 0.10, 0) {
				t.Errorf("%s: ignoring the cap predicts p99 %.1f ms, the re-run's %.1f: the test cannot fail", c.name, *naive.P99, *rr.P99)
			}
		})
	}
}

// TestConcurrencyIdentity: a cap no service reaches replays the recording
// exactly.
func TestConcurrencyIdentity(t *testing.T) {
	st, _ := workload.Rebuilt(t, calm(func(*sim.Policy) {}))
	res := replayOf(t, st, Policy{Concurrency: MaxConcurrency})
	if rec, mod := res.Overall.Recorded, res.Overall.Modeled; rec.Attempts != mod.Attempts || rec.FinalFailureRate != mod.FinalFailureRate ||
		!nearOrBothNil(mod.P99, rec.P99, 0) || rec.PeakInFlight != mod.PeakInFlight {
		t.Errorf("modeled %+v, recorded %+v", mod, rec)
	}
}

func TestParseConcurrency(t *testing.T) {
	for _, in := range []string{"0", "-1", "abc", "2.5", "1000001", "first=0", "retry=3"} {
		if _, _, err := ParseConcurrency(in); err == nil || !strings.Contains(err.Error(), "concurrency") {
			t.Errorf("ParseConcurrency(%q): error %v", in, err)
		}
	}
	if n, first, err := ParseConcurrency("16"); n != 16 || first || err != nil {
		t.Errorf("ParseConcurrency(16) = %d, %v, %v", n, first, err)
	}
	if n, first, err := ParseConcurrency("first=8"); n != 8 || !first || err != nil {
		t.Errorf("ParseConcurrency(first=8) = %d, %v, %v", n, first, err)
	}
	if got := (Policy{Concurrency: 8, ConcurrencyFirst: true}).String(); got != "--concurrency first=8" {
		t.Errorf("String() = %q", got)
	}
	if got := (Policy{Concurrency: 16, RetryLane: 4}).String(); got != "--retry-concurrency 4 --concurrency 16" {
		t.Errorf("String() = %q", got)
	}
}

// TestPredictsFirstAttemptLane: separate lanes, as seed 004 has them: a
// first-attempt lane (--concurrency first=N, whose first attempts wait
// for a slot) beside a retry lane (--retry-concurrency M, whose retries
// over it are not made, no_capacity), against gen's re-run with both:
// calm within 5% (or 0.005), the storm within 10% with feedback, p99
// within 10%. Ignoring the lanes misses the re-run; at these caps the
// retry lane does most of it (the first lane alone moves calm's p99 by
// 8%), and where the first lane binds harder (calm at 10) the replay
// over-predicts the queue (docs/whatif.md).
func TestPredictsFirstAttemptLane(t *testing.T) {
	for _, c := range []struct {
		name        string
		cfg         func(func(*sim.Policy)) sim.Config
		first, lane int
		rel         float64
		feedback    bool
	}{
		{"calm, 12 first attempts, 2 retries", calm, 12, 2, 0.05, false},
		{"storm, 24 first attempts, 3 retries", storm, 24, 3, 0.10, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			change := func(p *sim.Policy) { p.Concurrency, p.ConcurrencyFirst, p.RetryLane = c.first, true, c.lane }
			policy := Policy{Concurrency: c.first, ConcurrencyFirst: true, RetryLane: c.lane}
			predictRerun(t, c.name, c.cfg, change, policy, c.rel, c.feedback)
			recorded, _ := workload.Rebuilt(t, c.cfg(func(*sim.Policy) {}))
			rerun, _ := workload.Rebuilt(t, c.cfg(change))
			naive, rr := replayOf(t, recorded, Policy{}).Overall.Modeled, replayOf(t, rerun, Policy{}).Overall.Recorded
			if near(naive.Amplification, rr.Amplification, c.rel, 0.005) && near(naive.FinalFailureRate, rr.FinalFailureRate, c.rel, 0.005) {
				t.Errorf("%s: ignoring the lanes predicts %.4f / %.4f, the re-run's %.4f / %.4f: the test cannot fail",
					c.name, naive.Amplification, naive.FinalFailureRate, rr.Amplification, rr.FinalFailureRate)
			}
		})
	}
}
