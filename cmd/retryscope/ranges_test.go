package main

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
)

// TestReportRanges: on attempts split across traces under concurrency,
// every format carries the plausible ranges of the figures that rest on
// inferred joins, beside the contract's workload keys (docs/report.md, "The
// JSON report"), and the ranges hold the truth; the --explain linkage table
// gives the inferred share.
func TestReportRanges(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes, cfg.SplitWorkers, cfg.Seed = 800, []sim.Shape{sim.ShapeSplit}, 4, 2
	cfg.Faults = sim.DefaultFaults().Scale(2.5)
	db, truth := reportDB(t, cfg)

	code, out, stderr := runCLI(t, "report", "--db", db, "--format", "json", "--by", "none", "--baseline", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Workload map[string]any   `json:"workload"`
		Linkage  []map[string]any `json:"linkage"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"logical_requests", "attempts", "amplification", "retry_rate", "retry_success_rate",
		"final_failure_rate", "latency_ms", "ttft_ms", "duplicated_output_tokens", "range_method"} {
		if _, ok := rep.Workload[key]; !ok {
			t.Errorf("workload lacks %q", key)
		}
	}
	ranges, _ := rep.Workload["ranges"].(map[string]any)
	want := map[string]float64{"logical_requests": float64(truth.Workload.LogicalRequests), "amplification": truth.Workload.Amplification,
		"retry_rate": truth.Workload.RetryRate, "retry_success_rate": truth.Workload.RetrySuccessRate,
		"final_failure_rate": truth.Workload.FinalFailureRate}
	for key, v := range want {
		r, _ := ranges[key].([]any)
		if len(r) != 2 {
			t.Errorf("workload.ranges.%s = %v, want [lo, hi]", key, ranges[key])
			continue
		}
		lo, hi := r[0].(float64), r[1].(float64)
		if point := rep.Workload[key].(float64); lo > point || point > hi {
			t.Errorf("%s %.4f outside its range [%.4f, %.4f]", key, point, lo, hi)
		}
		if lo-1e-9 > v || v > hi+1e-9 {
			t.Errorf("%s range [%.4f, %.4f] does not hold the truth %.4f", key, lo, hi, v)
		}
	}
	inferred := false
	for _, l := range rep.Linkage {
		if l["linkage"] == "split_inferred" {
			inferred = l["inferred_share"].(float64) > 0
		}
	}
	if !inferred {
		t.Errorf("no inferred share for split_inferred in %v", rep.Linkage)
	}

	for _, format := range []string{"table", "markdown", "html"} {
		code, out, stderr := runCLI(t, "report", "--db", db, "--format", format, "--by", "none", "--baseline", "none", "--explain")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		for _, s := range []string{"plausible range", "inferred share"} {
			if !strings.Contains(out, s) {
				t.Errorf("%s report lacks %q", format, s)
			}
		}
	}
	code, out, stderr = runCLI(t, "report", "--db", db, "--format", "csv", "--baseline", "none")
	if code != 0 {
		t.Fatalf("csv: exit %d: %s", code, stderr)
	}
	records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range records[0] {
		col[h] = i
	}
	for key := range want {
		for _, side := range []string{"_lo", "_hi"} {
			i, ok := col[key+side]
			if !ok || records[1][i] == "" {
				t.Errorf("CSV workload row lacks %s%s", key, side)
			}
		}
	}
}
