package analysis

import "testing"

// TestDetectors: the report's healthy workload (report's
// TestHealthyWorkloadHasNoFindings) is checked against every detector, of
// which there are at least seven.
func TestDetectors(t *testing.T) {
	if len(detectors) < 7 {
		t.Errorf("%d kinds of finding, want at least 7", len(detectors))
	}
}
