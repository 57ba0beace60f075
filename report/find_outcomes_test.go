package report

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// truthKey groups truth requests the way findings name segments.
type truthKey struct{ service, operation, route string }

func segmentOf(f analysis.Finding) truthKey {
	return truthKey{f.Segment["service"], f.Segment["operation"], f.Segment["route"]}
}

// truthBySegment groups the truth requests that keep says count.
func truthBySegment(truth sim.Truth, keep func(sim.Request) bool) map[truthKey][]sim.Request {
	out := map[truthKey][]sim.Request{}
	for _, r := range truth.Requests {
		if keep(r) {
			k := truthKey{r.Service, r.Operation, r.Route}
			out[k] = append(out[k], r)
		}
	}
	return out
}

// findingsOf builds the report of a generated workload and returns its
// findings of one kind by segment, and the truth.
func findingsByTruthKey(t *testing.T, cfg sim.Config, kind string) (map[truthKey]analysis.Finding, sim.Truth) {
	t.Helper()
	st, truth := workload.Rebuilt(t, cfg)
	rep, err := Build(context.Background(), st, Options{Baseline: "none"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[truthKey]analysis.Finding{}
	for _, f := range segmentFindings(rep, kind) {
		out[segmentOf(f)] = f
	}
	return out, truth
}

func evidenceOf(t *testing.T, f analysis.Finding, name string) float64 {
	t.Helper()
	for _, e := range f.Evidence {
		if e.Name == name {
			return e.Value
		}
	}
	t.Fatalf("%s: no evidence %q", f.Kind, name)
	return 0
}

// checkSegments: a finding for every truth segment with at least
// minWasted requests, none for the others; check compares the figures.
func checkSegments(t *testing.T, found map[truthKey]analysis.Finding, want map[truthKey][]sim.Request, check func(analysis.Finding, []sim.Request)) {
	t.Helper()
	fired := 0
	for seg, reqs := range want {
		f, ok := found[seg]
		if ok != (len(reqs) >= analysis.MinWasted) {
			t.Errorf("%v: %d truth requests, finding %v", seg, len(reqs), ok)
			continue
		}
		if ok {
			fired++
			check(f, reqs)
		}
	}
	if len(found) != fired {
		t.Errorf("%d findings, %d expected", len(found), fired)
	}
	if fired == 0 {
		t.Fatal("weak workload: no segment with enough requests")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*max(1, math.Abs(b)) }

// TestDeadlineExhaustedTruth: a deadline that cuts explicit requests; the
// finding's counts, attempts and time equal the truth's, per segment.
func TestDeadlineExhaustedTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes, cfg.Deadline = 600, []sim.Shape{sim.ShapeExplicit}, 4*time.Second
	cfg.Faults = sim.DefaultFaults().Scale(2.5)
	found, truth := findingsByTruthKey(t, cfg, "deadline_exhausted")
	want := truthBySegment(truth, func(r sim.Request) bool { return r.Exhausted == "deadline" })
	checkSegments(t, found, want, func(f analysis.Finding, reqs []sim.Request) {
		var attempts int64
		var ms float64
		for _, r := range reqs {
			attempts += int64(r.Attempts)
			ms += r.LatencyMs
		}
		if n := evidenceOf(t, f, "requests ended by the deadline"); n != float64(len(reqs)) {
			t.Errorf("%v: %v requests, truth %d", segmentOf(f), n, len(reqs))
		}
		if f.Cost.Attempts != attempts || !near(f.Cost.TimeMs, ms) {
			t.Errorf("%v: cost %d attempts %.3fms, truth %d attempts %.3fms", segmentOf(f), f.Cost.Attempts, f.Cost.TimeMs, attempts, ms)
		}
		t.Logf("%v: %d requests, %d attempts, %.0fms", segmentOf(f), len(reqs), attempts, ms)
	})
}

// TestAbandonedStreamsTruth: clients that stop reading streams part-way;
// the finding's streams, wasted tokens and time equal the truth's.
func TestAbandonedStreamsTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes, cfg.StreamShare, cfg.AbandonStreams = 800, []sim.Shape{sim.ShapeExplicit}, 1, 0.5
	found, truth := findingsByTruthKey(t, cfg, "abandoned_streams")
	want := truthBySegment(truth, func(r sim.Request) bool { return r.Exhausted == "cancelled" })
	checkSegments(t, found, want, func(f analysis.Finding, reqs []sim.Request) {
		var tokens int64
		var ms float64
		for _, r := range reqs {
			last := r.AttemptList[len(r.AttemptList)-1]
			tokens += int64(last.OutputTokens)
			ms += float64(last.EndNs-last.StartNs) / 1e6
		}
		if f.Cost.Attempts != int64(len(reqs)) || f.Cost.Tokens != tokens || !near(f.Cost.TimeMs, ms) {
			t.Errorf("%v: %d streams, %d tokens, %.3fms; truth %d, %d, %.3fms", segmentOf(f),
				f.Cost.Attempts, f.Cost.Tokens, f.Cost.TimeMs, len(reqs), tokens, ms)
		}
		t.Logf("%v: %d streams, %d tokens wasted, %.0fms", segmentOf(f), len(reqs), tokens, ms)
	})
}

// TestNestedRetryLoopsTruth: an app loop of 3 tries around SDK calls of 3
// attempts; the finding says up to 9 attempts per call, and its observed
// amplification equals the truth's.
func TestNestedRetryLoopsTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes, cfg.Nested = 800, []sim.Shape{sim.ShapeWrapped}, true
	cfg.Policy.AppTries, cfg.Policy.MaxAttempts = 3, 3
	cfg.Faults = sim.DefaultFaults().Scale(4)
	found, truth := findingsByTruthKey(t, cfg, "nested_retry_loops")
	want := truthBySegment(truth, func(r sim.Request) bool { return len(r.LayerCounts) >= 2 })
	for seg, reqs := range want {
		app, sdk := 0, 0
		for _, r := range reqs {
			app = max(app, r.LayerCounts[0])
			sdk = max(sdk, slices.Max(r.InnerTries))
		}
		if app < 2 || sdk < 2 {
			delete(want, seg) // the loops never both retried here
		}
	}
	nine := 0
	checkSegments(t, found, want, func(f analysis.Finding, reqs []sim.Request) {
		app, sdk, attempts := 0, 0, 0
		for _, r := range reqs {
			app = max(app, r.LayerCounts[0])
			sdk = max(sdk, slices.Max(r.InnerTries))
			attempts += r.Attempts
		}
		amp := float64(attempts) / float64(len(reqs))
		worst := evidenceOf(t, f, "worst case attempts per call")
		if worst != float64(app*sdk) || !near(evidenceOf(t, f, "observed amplification"), amp) {
			t.Errorf("%v: worst %v, amplification %v; truth %d × %d, %v", segmentOf(f), worst,
				evidenceOf(t, f, "observed amplification"), app, sdk, amp)
		}
		if worst == 9 {
			nine++
		}
		t.Logf("%v: %s", segmentOf(f), f.Problem)
	})
	if nine == 0 {
		t.Error("no segment shows the 3 × 3 = 9 worst case")
	}
}

// TestHealthyNoOutcomeFindings: a healthy workload (no faults) of every
// shape, nested loops included, fires none of these findings.
func TestHealthyNoOutcomeFindings(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Faults, cfg.Nested = 600, sim.FaultMix{}, true
	cfg.Shapes = append(sim.AllShapes(), sim.OptInShapes()...)
	st, _ := workload.Rebuilt(t, cfg)
	rep, err := Build(context.Background(), st, Options{Baseline: "none"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		switch f.Kind {
		case "deadline_exhausted", "abandoned_streams", "nested_retry_loops":
			t.Errorf("healthy workload: %s %s: %s", f.Kind, analysis.SegmentName(f.Segment), f.Problem)
		}
	}
}

// TestTasksTruth: agent tasks whose steps share a trace; the tasks of
// several requests, the most calls and attempts in one, equal the truth.
func TestTasksTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes = 600, []sim.Shape{sim.ShapeAgent, sim.ShapeAppLoop}
	cfg.Faults = sim.DefaultFaults().Scale(3)
	st, truth := workload.Rebuilt(t, cfg)
	rep, err := Build(context.Background(), st, Options{Baseline: "none"})
	if err != nil {
		t.Fatal(err)
	}
	calls, attempts := map[string]int{}, map[string]int64{}
	perRequest := 0
	for _, r := range truth.Requests {
		trace := r.Key[:32]
		calls[trace]++
		attempts[trace] += int64(r.Attempts)
		perRequest = max(perRequest, r.Attempts)
	}
	tasks, callsMax, attemptsMax := 0, 0, int64(0)
	for trace, n := range calls {
		if n >= 2 {
			tasks++
			callsMax = max(callsMax, n)
			attemptsMax = max(attemptsMax, attempts[trace])
		}
	}
	w := rep.Workload.Measures
	if w.Tasks != tasks || w.TaskCallsMax != callsMax || w.TaskAttemptsMax != attemptsMax ||
		w.TaskWorstAttempts != int64(callsMax*perRequest) {
		t.Errorf("tasks %d, most calls %d, most attempts %d, worst %d; truth %d, %d, %d, %d × %d",
			w.Tasks, w.TaskCallsMax, w.TaskAttemptsMax, w.TaskWorstAttempts, tasks, callsMax, attemptsMax, callsMax, perRequest)
	}
	t.Logf("%d tasks of several requests, up to %d calls and %d attempts in one; worst case %d", tasks, callsMax, attemptsMax, w.TaskWorstAttempts)
	if tasks < 10 {
		t.Fatalf("weak workload: %d tasks", tasks)
	}
}
