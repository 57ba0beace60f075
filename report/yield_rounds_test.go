package report

import (
	"math"
	"slices"
	"testing"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
	"github.com/retryscope/retryscope/model"
)

// truthRounds are the truth's rounds of r: the first attempt of each
// prompt, a new one after each rejected output.
func truthRounds(r sim.Request) []int {
	starts := []int{0}
	for k := range len(r.AttemptList) - 1 {
		if r.AttemptList[k].Trigger == "rejected_output" {
			starts = append(starts, k+1)
		}
	}
	return starts
}

// TestTransportAndEvaluatorCurves: on a workload of every shape, where
// evaluators reject 30% of the outputs they check (explicit and nested
// requests), the evaluator curve (per prompt of a request)
// and the transport curve (per try of one prompt) count what the truth
// counts, with the p99 had each been capped; without re-prompts there are
// neither.
func TestTransportAndEvaluatorCurves(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed = 1500, 9
	st, truth := workload.Rebuilt(t, cfg)
	my := buildReport(t, st).MarginalYield
	if my.Transport == nil || my.Evaluator == nil {
		t.Fatal("no transport and evaluator curves on a workload with re-prompts")
	}
	end := func(r sim.Request, k int) float64 { return float64(r.AttemptList[k].EndNs-r.StartNs) / 1e6 }
	used := func(r sim.Request) int { // 0-based, -1 when failed
		if r.Outcome == "ok" {
			for k, a := range r.AttemptList {
				if a.Trigger == "" {
					return k
				}
			}
		}
		return -1
	}
	var evReached, evCleared, trReached, trCleared []int
	grow := func(s *[]int, n int) {
		for len(*s) < n {
			*s = append(*s, 0)
		}
	}
	prompts := 0
	for _, r := range truth.Requests {
		s := truthRounds(r)
		prompts += len(s)
		grow(&evReached, len(s))
		grow(&evCleared, len(s))
		for m := range s {
			evReached[m]++
			e := len(r.AttemptList)
			if m+1 < len(s) {
				e = s[m+1]
			}
			grow(&trReached, e-s[m])
			grow(&trCleared, e-s[m])
			for j := range e - s[m] {
				trReached[j]++
			}
			if u := used(r); u >= s[m] && u < e {
				trCleared[u-s[m]]++
			} else if r.AttemptList[e-1].Trigger == "rejected_output" {
				trCleared[e-1-s[m]]++
			}
		}
		if u := used(r); u >= 0 {
			m := 0
			for m+1 < len(s) && s[m+1] <= u {
				m++
			}
			evCleared[m]++
		}
	}
	evP99 := func(m int) *float64 {
		var lat []float64
		for _, r := range truth.Requests {
			l, s := r.LatencyMs, truthRounds(r)
			if len(s) > m {
				l = end(r, s[m]-1)
			}
			lat = append(lat, l)
		}
		slices.Sort(lat)
		return model.Percentile(lat, 99)
	}
	trP99 := func(j int) *float64 {
		var lat []float64
		for _, r := range truth.Requests {
			l, s := r.LatencyMs, truthRounds(r)
			for m, first := range s {
				e := len(r.AttemptList)
				if m+1 < len(s) {
					e = s[m+1]
				}
				if e-first > j {
					l = end(r, first+j-1)
					break
				}
			}
			lat = append(lat, l)
		}
		slices.Sort(lat)
		return model.Percentile(lat, 99)
	}
	check := func(name string, c *analysis.YieldCurve, units int, reached, cleared []int, p99 func(int) *float64) {
		t.Helper()
		if c.Requests != units || len(c.Rows) != len(reached) {
			t.Fatalf("%s: %d units, %d rows; truth %d, %d", name, c.Requests, len(c.Rows), units, len(reached))
		}
		for k, r := range c.Rows {
			if r.Reached != reached[k] || r.Cleared != cleared[k] {
				t.Errorf("%s row %d: reached %d cleared %d, truth %d %d", name, k+1, r.Reached, r.Cleared, reached[k], cleared[k])
			}
			if p99 == nil {
				continue
			}
			if want := p99(k + 1); (r.P99Ms == nil) != (want == nil) || want != nil && math.Abs(*r.P99Ms-*want) > 1e-3 {
				t.Errorf("%s row %d: p99 capped %v, truth %v", name, k+1, r.P99Ms, want)
			}
		}
	}
	check("evaluator", my.Evaluator, len(truth.Requests), evReached, evCleared, evP99)
	check("transport", my.Transport, prompts, trReached, trCleared, trP99)
	if len(evReached) < 3 || len(trReached) < 2 {
		t.Errorf("weak workload: %d prompts and %d tries at most", len(evReached), len(trReached))
	}
	t.Logf("evaluator: reached %v cleared %v; transport: reached %v cleared %v", evReached, evCleared, trReached, trCleared)

	cfg.Shapes = []sim.Shape{sim.ShapeGRPC}
	st, _ = workload.Rebuilt(t, cfg)
	if my := buildReport(t, st).MarginalYield; my.Transport != nil || my.Evaluator != nil {
		t.Error("curves of re-prompts on a workload without any")
	}
}
