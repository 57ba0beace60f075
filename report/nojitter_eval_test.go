package report

import (
	"testing"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/sim"
)

// TestNoJitterLeavesEvaluatorLoops: with a fixed backoff everywhere and
// evaluators that reject most outputs, the gaps no_jitter counts are only
// those of retries after a failure whose wait the client chose (not after
// a Retry-After, not after an evaluator's rejection, which backoff does
// nothing for: seed 004): on every segment it fires on, its count of
// retries timed by the client is the truth's count of such retries.
func TestNoJitterLeavesEvaluatorLoops(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed = 800, 3
	cfg.Shapes = []sim.Shape{sim.ShapeExplicit}
	cfg.Policy.Kind = sim.PolicyFixed
	cfg.Faults.Reject = 0.6
	rep, truth := genReport(t, cfg)
	timed := map[string]int{}
	rejections := 0
	for _, r := range truth.Requests {
		for i := 1; i < len(r.AttemptList); i++ {
			prev := r.AttemptList[i-1]
			if gapBefore(r.AttemptList, i) < 0 || prev.RetryAfterS > 0 {
				continue
			}
			if prev.Trigger == "rejected_output" {
				rejections++
				continue
			}
			timed[truthSegment(r)]++
		}
	}
	if rejections < 50 {
		t.Fatalf("weak workload: %d re-prompts after a rejection", rejections)
	}
	fired := 0
	for seg, f := range findingsBySegment(rep, "no_jitter") {
		fired++
		if got := evidence(f, "retries timed by the client"); int(got) != timed[seg] {
			t.Errorf("%s: no_jitter counts %v retries timed by the client, truth %d (re-prompts after a rejection left out)", seg, got, timed[seg])
		}
	}
	for seg, n := range timed {
		if n >= 2*analysis.MinGaps && findingsBySegment(rep, "no_jitter")[seg].Kind == "" {
			t.Errorf("%s: %d fixed-backoff retries and no no_jitter finding", seg, n)
		}
	}
	t.Logf("%d re-prompts after a rejection, %d no_jitter findings", rejections, fired)
}
