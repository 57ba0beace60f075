package rebuild_test

import (
	"fmt"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
)

// TestOutcomeBudgetTruth: under a retry budget (seed 001's: retries up to
// a share of successes per window) that turns many retries away, the
// requests the budget stopped are typed retry_budget, and the requests
// that failed on a deterministic error are typed not_retryable. The
// budget's requests are told by the evidence only (a retryable failure
// below the cap seen, of a kind its route's clients or its own client
// retry elsewhere). Where the budget starved every such retry (no request
// of the route or client was retried after a timeout, say, or none reached
// the loop's real cap) the evidence is not in the dump and a stop is left
// untyped or called attempt_cap: at least 85% found, and 95% of what is
// typed retry_budget right. Before this rule, one of 196 such requests was
// typed at all.
func TestOutcomeBudgetTruth(t *testing.T) {
	for seed := int64(5); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			cfg := shapeConfig(nil, 700, seed)
			cfg.Policy.Budget = 0.1
			cfg.Faults = sim.DefaultFaults().Scale(5)
			st, truth := generated(t, cfg)
			details := outcomeDetails(t, st)
			var budget, found, typed, deterministic int
			for _, r := range truth.Requests {
				got := details[r.Key]
				if r.Exhausted == "budget" {
					budget++
					if got == "retry_budget" {
						found++
					}
				}
				if got == "retry_budget" {
					typed++
					if r.Exhausted != "budget" {
						t.Logf("%s: retry_budget, truth %q %v", r.Key, r.Exhausted, r.Triggers)
					}
				}
				last := ""
				if len(r.Triggers) > 0 {
					last = r.Triggers[len(r.Triggers)-1]
				}
				if r.Exhausted == "not_retryable" && last == "client_error" {
					deterministic++
					if got != "not_retryable" {
						t.Errorf("%s: deterministic failure typed %q, want not_retryable", r.Key, got)
					}
				}
			}
			t.Logf("budget stops %d, typed retry_budget %d (%d of them right); deterministic failures %d", budget, typed, found, deterministic)
			if budget < 100 || deterministic < 10 {
				t.Fatalf("weak workload: %d budget stops, %d deterministic failures", budget, deterministic)
			}
			if float64(found) < 0.85*float64(budget) {
				t.Errorf("retry_budget on %d of %d budget stops, want at least 85%%", found, budget)
			}
			if float64(found) < 0.95*float64(typed) {
				t.Errorf("%d of %d retry_budget are budget stops, want at least 95%%", found, typed)
			}
		})
	}
}
