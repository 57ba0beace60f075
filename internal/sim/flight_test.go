package sim

import (
	"slices"
	"testing"
	"time"
)

// TestFlightCounts: the simulation's own count of attempts in flight
// agrees with the attempts it reports: its attempt-nanoseconds add up to
// the attempts' lengths, and its peak is the most attempts whose
// [start, end) overlap; off, the truth has no flight block.
func TestFlightCounts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Requests, cfg.Rate, cfg.FlightBucket = 2000, 60, time.Second
	res := generate(t, cfg)
	fl := res.Truth.Flight
	if fl == nil || len(fl.Buckets) < 10 {
		t.Fatalf("flight %+v; want a bucket per second of the run", fl)
	}
	var busy, busyFirst, counted, countedFirst int64
	type edge struct {
		at int64
		d  int
	}
	var edges []edge
	for _, r := range res.Truth.Requests {
		for k, a := range r.AttemptList {
			busy += a.EndNs - a.StartNs
			if k == 0 {
				busyFirst += a.EndNs - a.StartNs
			}
			edges = append(edges, edge{a.StartNs, 1}, edge{a.EndNs, -1})
		}
	}
	for i, b := range fl.Buckets {
		counted += b.AttemptNs
		countedFirst += b.FirstAttemptNs
		if i > 0 && b.StartNs != fl.Buckets[i-1].StartNs+int64(time.Second) {
			t.Fatalf("bucket %d starts at %d, after %d", i, b.StartNs, fl.Buckets[i-1].StartNs)
		}
	}
	if counted != busy || countedFirst != busyFirst {
		t.Errorf("counted %d (%d first) attempt-ns in flight; the attempts last %d (%d)", counted, countedFirst, busy, busyFirst)
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.d - b.d
	})
	peak, n := 0, 0
	for _, e := range edges {
		n += e.d
		peak = max(peak, n)
	}
	if fl.PeakAttemptsInFlight != peak {
		t.Errorf("peak %d in flight, the attempts overlap %d deep", fl.PeakAttemptsInFlight, peak)
	}
	cfg.FlightBucket = 0
	if res := generate(t, cfg); res.Truth.Flight != nil {
		t.Error("a flight block without --flight-bucket")
	}
}
