package report

import (
	"strings"
	"testing"

	"github.com/retryscope/retryscope/analysis"
)

// TestCapacityTableFoldsQuietRuns: runs of two or more buckets in which
// nothing started are one row, their load the run's mean and peak its
// most; a lone quiet bucket keeps its row; the JSON's buckets stay whole.
func TestCapacityTableFoldsQuietRuns(t *testing.T) {
	amp := 1.5
	busy := func(start string) analysis.CapacityBucket {
		return analysis.CapacityBucket{Start: start, Requests: 4, RequestAttempts: 6, Amplification: &amp, AttemptsPerS: 6, OfferedLoad: 3, PeakInFlight: 4}
	}
	quietAt := func(start string, load float64, peak int) analysis.CapacityBucket {
		return analysis.CapacityBucket{Start: start, OfferedLoad: load, PeakInFlight: peak}
	}
	rep := &Report{Capacity: &analysis.Capacity{BucketMs: 1000, Buckets: []analysis.CapacityBucket{
		busy("t0"), quietAt("t1", 3, 3), quietAt("t2", 1, 1), quietAt("t3", 2, 2), busy("t4"), quietAt("t5", 1, 1), busy("t6"),
	}}}
	tab := rep.capacityTable()
	var starts []string
	for _, r := range tab.Rows {
		starts = append(starts, r[0].Text)
	}
	if got, want := strings.Join(starts, ","), "t0,… 3 quiet seconds …,t4,t5,t6"; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	if r := tab.Rows[1]; r[4].V != 2 || r[6].V != 3 || r[1].V != 0 {
		t.Errorf("folded row: λ·S %v, peak %v, requests %v; want 2, 3, 0", r[4].V, r[6].V, r[1].V)
	}
	if len(rep.Capacity.Buckets) != 7 {
		t.Errorf("the report's buckets were changed: %d", len(rep.Capacity.Buckets))
	}
}
