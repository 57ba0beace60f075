package rebuild_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
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
			cfg := shapeConfig([]sim.Shape{sim.ShapeAppLoop, sim.ShapeAgent}, 400, seed)
			cfg.Faults = sim.DefaultFaults().Scale(3)
			st, truth := generated(t, cfg)
			got := loadRequests(t, st)
			compareTruth(t, truth, got)
			checkWorkload(t, truth, got)
			// The storm must produce the shapes this test is about: tries
			// abandoned and re-sent, and agent tasks of several steps.
			abandoned, stepsPerTask := 0, map[string]int{}
			for _, r := range truth.Requests {
				if r.Shape == sim.ShapeAppLoop && slices.Contains(r.Triggers, "abandoned") {
					abandoned++
				}
				if r.Shape == sim.ShapeAgent {
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
func checkWorkload(t *testing.T, truth sim.Truth, got map[string]*rebuilt) {
	t.Helper()
	var g, w splitFigures
	for _, r := range got {
		g.counts.Add(r.attempts, r.outcome == "ok")
	}
	for _, r := range truth.Requests {
		w.counts.Add(r.Attempts, r.Outcome == "ok")
	}
	if g.counts != w.counts {
		t.Errorf("workload counts %+v, truth %+v", g.counts, w.counts)
	}
	gr, gs, gf := g.rates()
	wr, ws, wf := w.rates()
	if math.Abs(gr-truth.Workload.RetryRate) > 1e-9 || math.Abs(gs-truth.Workload.RetrySuccessRate) > 1e-9 ||
		math.Abs(gf-truth.Workload.FinalFailureRate) > 1e-9 || gr != wr || gs != ws || gf != wf {
		t.Errorf("workload rates retry/success/failure %.4f/%.4f/%.4f, truth %.4f/%.4f/%.4f",
			gr, gs, gf, truth.Workload.RetryRate, truth.Workload.RetrySuccessRate, truth.Workload.FinalFailureRate)
	}
}
