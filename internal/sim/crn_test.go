package sim

import (
	"testing"
)

// crnRun generates a calm explicit-shape workload, with common random
// numbers or without, under the given attempt cap, retries of 4xx on or
// off, and retry budget (0: none).
func crnRun(t *testing.T, crn bool, maxAttempts int, noRetry4xx bool, budget float64) Truth {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Requests, cfg.Shapes, cfg.CRN = 2000, []Shape{ShapeExplicit}, crn
	cfg.Policy.MaxAttempts, cfg.Policy.NoRetry4xx, cfg.Policy.Budget = maxAttempts, noRetry4xx, budget
	res, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res.Truth
}

// sameDraws counts the attempts of b that met the same fate as the attempt
// of the same number of the same request in a (matched by start time), how
// many attempts of b there were at all, and how many differed otherwise
// than by load: neither side shed (429) nor timed out.
func sameDraws(a, b Truth) (same, total, unexplained int) {
	byStart := make(map[int64]Request, len(a.Requests))
	for _, r := range a.Requests {
		byStart[r.StartNs] = r
	}
	for _, r := range b.Requests {
		ra, ok := byStart[r.StartNs]
		for n, att := range r.AttemptList {
			total++
			if !ok || n >= len(ra.AttemptList) || ra.Service != r.Service {
				unexplained++
				continue
			}
			switch was := ra.AttemptList[n].Trigger; {
			case was == att.Trigger:
				same++
			case !loadTurns(was) && !loadTurns(att.Trigger):
				unexplained++
			}
		}
	}
	return same, total, unexplained
}

// loadTurns: load alone can give an attempt this trigger (an overloaded
// route sheds with 429s; queueing pushes attempts past the timeout).
func loadTurns(trigger string) bool { return trigger == "rate_limited" || trigger == "timeout" }

// TestCRNSameDrawsUnderAnotherPolicy: with common random numbers, the same
// seed under a lower cap, or without retries of 4xx, starts the same
// requests at the same times, and attempt n of each meets the fault it met
// under the recorded policy, but for the few that load (now lighter) turns:
// 98.1% of attempts with cap 1, 98.1% with cap 2, all without retries of
// 4xx, 97.9% under a retry budget of 0.1; every other one shed or timed
// out on one side.
func TestCRNSameDrawsUnderAnotherPolicy(t *testing.T) {
	a := crnRun(t, true, 3, false, 0)
	for _, c := range []struct {
		name string
		b    Truth
	}{
		{"cap 1", crnRun(t, true, 1, false, 0)},
		{"cap 2", crnRun(t, true, 2, false, 0)},
		{"no retry on 4xx", crnRun(t, true, 3, true, 0)},
		{"retry budget 0.1", crnRun(t, true, 3, false, 0.1)},
	} {
		if len(c.b.Requests) != len(a.Requests) {
			t.Fatalf("%s: %d requests, want %d", c.name, len(c.b.Requests), len(a.Requests))
		}
		same, total, unexplained := sameDraws(a, c.b)
		if share := float64(same) / float64(total); share < 0.975 {
			t.Errorf("%s: %d of %d attempts (%.4f) met the recorded attempt's fate, want at least 97.5%%", c.name, same, total, share)
		}
		t.Logf("%s: %d of %d attempts met the recorded fate", c.name, same, total)
		if unexplained > 0 {
			t.Errorf("%s: %d attempts met another fate that load cannot explain", c.name, unexplained)
		}
	}
}

// TestCRNOffUnchanged: CRN is opt-in; without it the draws are the
// request's one stream, and turning it on changes them.
func TestCRNOffUnchanged(t *testing.T) {
	off, on := crnRun(t, false, 3, false, 0), crnRun(t, true, 3, false, 0)
	if off.Workload == on.Workload {
		t.Errorf("CRN on and off gave the same workload %+v; want other draws", on.Workload)
	}
	if on.Params.CRN != true || off.Params.CRN {
		t.Errorf("params crn = %v (on), %v (off)", on.Params.CRN, off.Params.CRN)
	}
}
