package report

import (
	"testing"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// TestHealthyWorkloadHasNoFindings: clients that retry well (full jitter,
// Retry-After honoured, no retries of client errors, attempts capped at
// three) against servers that rarely fail give no finding at all, of any
// kind, while the workload still retries.
func TestHealthyWorkloadHasNoFindings(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Requests, cfg.Rate = 4, 3000, 20
	cfg.Faults = sim.FaultMix{RateLimited: 0.005, ServerError: 0.005, Reset: 0.002, Timeout: 0.002}
	cfg.Shapes = append(sim.AllShapes(), sim.ShapeAppLoop)
	cfg.Policy.NaiveShare = 0
	st, _ := workload.Rebuilt(t, cfg)
	rep := buildReport(t, st)
	for _, f := range rep.Findings {
		t.Errorf("%s on %s: %s", f.Kind, analysis.SegmentName(f.Segment), f.Problem)
	}
	if rep.Workload.Retried < 50 || len(rep.Capacity.Buckets) == 0 || len(rep.MarginalYield.Workload.Rows) < 2 {
		t.Errorf("%d retried requests, %d capacity buckets, %d attempts at most: the test needs retries over time and every detector (analysis.TestDetectors)",
			rep.Workload.Retried, len(rep.Capacity.Buckets), len(rep.MarginalYield.Workload.Rows))
	}
}
