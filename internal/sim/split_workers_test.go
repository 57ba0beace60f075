package sim

import (
	"strings"
	"testing"
)

// TestSplitWorkers checks the retryablehttp split variant: the library's
// default policy (at most 5 attempts, 409 never retried, requests that
// exhaust the cap), requests of several workers interleaved on each of
// the three targets, outage windows on their routes, and the same bytes
// for the same seed.
func TestSplitWorkers(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Requests, cfg.Shapes, cfg.SplitWorkers = 1500, []Shape{ShapeSplit}, 4
	cfg.Faults = DefaultFaults().Scale(2.5)
	res, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	exhausted, conflicts := 0, 0
	type window struct{ start, end int64 }
	byTarget := map[string][]window{}
	for _, r := range res.Truth.Requests {
		if r.Variant != variantRetryable || r.Operation != "HTTP GET" {
			t.Fatalf("%s: variant %s, operation %s", r.Key, r.Variant, r.Operation)
		}
		if r.Attempts > 5 {
			t.Errorf("%s: %d attempts, the cap is 5", r.Key, r.Attempts)
		}
		if r.Exhausted == "attempt_cap" {
			exhausted++
			if r.Attempts != 5 {
				t.Errorf("%s: exhausted after %d attempts", r.Key, r.Attempts)
			}
		}
		if len(r.Triggers) > 0 && r.Triggers[0] == "client_error" {
			conflicts++
			if r.Attempts != 1 {
				t.Errorf("%s: a 409 retried", r.Key)
			}
		}
		byTarget[r.Route] = append(byTarget[r.Route], window{r.StartNs, r.EndNs})
	}
	if exhausted == 0 || conflicts == 0 {
		t.Errorf("%d exhausted requests, %d conflicts: want some of each", exhausted, conflicts)
	}
	if len(byTarget) != 3 {
		t.Errorf("targets %d, want 3", len(byTarget))
	}
	for route, ws := range byTarget {
		overlaps := 0
		for i := 1; i < len(ws); i++ {
			if ws[i].start < ws[i-1].end {
				overlaps++
			}
		}
		if overlaps == 0 {
			t.Errorf("%s: no two requests overlap; the workers should interleave", route)
		}
	}
	partner := 0
	for _, in := range res.Truth.Incidents {
		if strings.HasSuffix(in.Route, ".partner.example") {
			partner++
		}
	}
	if partner == 0 {
		t.Error("no outage window on the partner targets")
	}
	again, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Truth.Requests) != len(res.Truth.Requests) || again.Truth.Workload != res.Truth.Workload {
		t.Error("the same seed gave another workload")
	}
}
