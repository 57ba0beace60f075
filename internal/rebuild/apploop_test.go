package rebuild_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/gen"
)

// TestAppLoopInvisibleFailures rebuilds application retry loops during a
// storm, whose streamed tries stall after HTTP 200 and are abandoned by the
// app's watchdog (spans that look successful), whose SDK spans are lost
// when a call throws, and whose last try falls back to another provider;
// beside them, agent tasks whose steps call the same model with a growing
// context, which are not retries. Every request must equal the truth.
func TestAppLoopInvisibleFailures(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			cfg := shapeConfig([]gen.Shape{gen.ShapeAppLoop, gen.ShapeAgent}, 400, seed)
			cfg.Faults = gen.DefaultFaults().Scale(3)
			st, truth := generated(t, cfg)
			got := loadRequests(t, st)
			compareTruth(t, truth, got)
			checkWorkload(t, truth, got)
			// The storm must produce the shapes this test is about: tries
			// abandoned and re-sent, and agent tasks of several steps.
			abandoned, stepsPerTask := 0, map[string]int{}
			for _, r := range truth.Requests {
				if r.Shape == gen.ShapeAppLoop && slices.Contains(r.Triggers, "abandoned") {
					abandoned++
				}
				if r.Shape == gen.ShapeAgent {
					stepsPerTask[strings.Split(r.Key, ":")[0]]++
				}
			}
			multiStep := 0
			for _, n := range stepsPerTask {
				if n >= 2 {
					multiStep++
				}
			}
			w := truth.Workload
			t.Logf("%d requests (%d with an abandoned try, %d agent tasks of several steps), %d attempts; retry rate %.4f, final failure rate %.4f",
				w.LogicalRequests, abandoned, multiStep, w.Attempts, w.RetryRate, w.FinalFailureRate)
			if abandoned < 5 || multiStep < 10 {
				t.Fatalf("weak workload: %d requests with an abandoned try, %d agent tasks of several steps", abandoned, multiStep)
			}
		})
	}
}

// checkWorkload compares the workload figures of the rebuilt requests with
// the truth's: counts exactly, rates to rounding.
func checkWorkload(t *testing.T, truth gen.Truth, got map[string]*rebuilt) {
	t.Helper()
	var attempts, retried, retriedOK, failed int
	for _, r := range got {
		attempts += r.attempts
		if r.outcome != "ok" {
			failed++
		}
		if r.attempts > 1 {
			retried++
			if r.outcome == "ok" {
				retriedOK++
			}
		}
	}
	w, n := truth.Workload, float64(len(got))
	if len(got) != w.LogicalRequests || attempts != w.Attempts {
		t.Errorf("workload: %d requests, %d attempts; truth %d, %d", len(got), attempts, w.LogicalRequests, w.Attempts)
	}
	rates := []struct {
		name      string
		got, want float64
	}{
		{"retry_rate", float64(retried) / n, w.RetryRate},
		{"final_failure_rate", float64(failed) / n, w.FinalFailureRate},
		{"retry_success_rate", float64(retriedOK) / float64(max(1, retried)), w.RetrySuccessRate},
	}
	for _, r := range rates {
		if math.Abs(r.got-r.want) > 1e-9 {
			t.Errorf("workload: %s %.4f, truth %.4f", r.name, r.got, r.want)
		}
	}
}
