package report

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit/workload"
	"github.com/retryscope/retryscope/model"
)

// truthYield is the marginal yield of truth requests: per attempt n, the
// requests that made it, those it answered, and the p99 capped at n.
func truthYield(reqs []sim.Request) (reached, cleared []int, p99 []*float64) {
	most := 0
	for _, r := range reqs {
		most = max(most, r.Attempts)
	}
	reached, cleared = make([]int, most), make([]int, most)
	for _, r := range reqs {
		for k := range r.Attempts {
			reached[k]++
		}
		if r.Outcome == "ok" {
			for k, a := range r.AttemptList {
				if a.Trigger == "" {
					cleared[k]++
					break
				}
			}
		}
	}
	for n := 1; n <= most; n++ {
		var lat []float64
		for _, r := range reqs {
			l := r.LatencyMs
			if r.Attempts > n {
				l = float64(r.AttemptList[n-1].EndNs-r.StartNs) / 1e6
			}
			lat = append(lat, l)
		}
		slices.Sort(lat)
		p99 = append(p99, model.Percentile(lat, 99))
	}
	return reached, cleared, p99
}

func buildReport(t *testing.T, st *store.Store) *Report {
	t.Helper()
	rep, err := Build(context.Background(), st, Options{Baseline: "none"})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func checkCurve(t *testing.T, name string, c analysis.YieldCurve, reqs []sim.Request) {
	t.Helper()
	reached, cleared, p99 := truthYield(reqs)
	if c.Requests != len(reqs) || len(c.Rows) != len(reached) {
		t.Fatalf("%s: %d requests, %d attempts at most; truth %d, %d", name, c.Requests, len(c.Rows), len(reqs), len(reached))
	}
	done := 0
	for k, r := range c.Rows {
		done += cleared[k]
		wantC, wantc := float64(done)/float64(len(reqs)), float64(cleared[k])/float64(reached[k])
		if r.Reached != reached[k] || r.Cleared != cleared[k] || math.Abs(r.Cumulative-wantC) > 1e-12 || math.Abs(r.Conditional-wantc) > 1e-12 {
			t.Errorf("%s attempt %d: reached %d cleared %d c %.6f C %.6f; truth %d %d %.6f %.6f", name, k+1,
				r.Reached, r.Cleared, r.Conditional, r.Cumulative, reached[k], cleared[k], wantc, wantC)
		}
		if (r.P99Ms == nil) != (p99[k] == nil) || r.P99Ms != nil && math.Abs(*r.P99Ms-*p99[k]) > 1e-3 {
			t.Errorf("%s attempt %d: p99 capped %v, truth %v", name, k+1, r.P99Ms, p99[k])
		}
	}
}

// TestMarginalYieldTruth: on a generated workload of every shape, C(n),
// c(n) and the capped p99 of the workload and of each segment equal the
// truth's.
func TestMarginalYieldTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed = 3000, 3
	cfg.Policy.MaxAttempts = 5
	st, truth := workload.Rebuilt(t, cfg)
	rep := buildReport(t, st)
	my := rep.MarginalYield
	checkCurve(t, "workload", my.Workload, truth.Requests)
	if len(my.Workload.Rows) < 5 {
		t.Errorf("the workload's curve has %d attempts; the test needs 5 or more", len(my.Workload.Rows))
	}
	for _, s := range my.Segments {
		var reqs []sim.Request
		for _, r := range truth.Requests {
			if r.Service == s.Segment["service"] && r.Operation == s.Segment["operation"] && r.Route == s.Segment["route"] {
				reqs = append(reqs, r)
			}
		}
		checkCurve(t, analysis.SegmentName(s.Segment), s.YieldCurve, reqs)
	}
	if len(my.Segments) < 5 {
		t.Errorf("%d segments have a curve; the test needs several", len(my.Segments))
	}
	w := my.Workload.Rows
	t.Logf("workload: C(n) %.4f %.4f %.4f, c(n) %.4f %.4f %.4f", w[0].Cumulative, w[1].Cumulative, w[2].Cumulative,
		w[0].Conditional, w[1].Conditional, w[2].Conditional)
}

// stormConfig is a storm: a high request rate on routes whose incidents
// multiply the fault rates, with attempts in flight counted by the
// simulation per second.
func stormConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Requests, cfg.Rate = 11, 3000, 60
	cfg.Shapes = []sim.Shape{sim.ShapeExplicit, sim.ShapeResend, sim.ShapeGRPC}
	cfg.FlightBucket = time.Second
	return cfg
}

// TestCapacityTruth: on a generated storm, the offered load λ·S with and
// without retries per second, the peak attempts in flight per second and
// overall equal the simulation's own counters; the storm's spike windows
// are named by a retry_storm finding and lie in the truth's incidents.
func TestCapacityTruth(t *testing.T) {
	st, truth := workload.Rebuilt(t, stormConfig())
	reqs, err := analysis.LoadRequests(context.Background(), st, model.Window{})
	if err != nil {
		t.Fatal(err)
	}
	fl := truth.Flight
	c := analysis.MeasureCapacity(reqs, time.Duration(fl.BucketNs), 0)
	if c.PeakAttemptsInFlight != fl.PeakAttemptsInFlight || c.PeakFirstAttemptsInFlight != fl.PeakFirstAttemptsInFlight {
		t.Errorf("peak in flight %d (%d first attempts), simulation %d (%d)", c.PeakAttemptsInFlight, c.PeakFirstAttemptsInFlight,
			fl.PeakAttemptsInFlight, fl.PeakFirstAttemptsInFlight)
	}
	if len(c.Buckets) != len(fl.Buckets) {
		t.Fatalf("%d buckets, simulation %d", len(c.Buckets), len(fl.Buckets))
	}
	for i, b := range c.Buckets {
		w := fl.Buckets[i]
		if b.StartNs != w.StartNs || b.OfferedLoad != w.OfferedLoad || b.OfferedLoadFirstAttempts != w.OfferedLoadFirstAttempts ||
			b.PeakInFlight != w.PeakInFlight {
			t.Errorf("bucket %s: λ·S %v/%v peak %d; simulation %v/%v peak %d", b.Start, b.OfferedLoad, b.OfferedLoadFirstAttempts,
				b.PeakInFlight, w.OfferedLoad, w.OfferedLoadFirstAttempts, w.PeakInFlight)
		}
	}
	if t.Failed() {
		return
	}
	rep := buildReport(t, st)
	if rep.Capacity.PeakAttemptsInFlight != fl.PeakAttemptsInFlight {
		t.Errorf("the report's peak %d, simulation %d", rep.Capacity.PeakAttemptsInFlight, fl.PeakAttemptsInFlight)
	}
	f := findingsOf(rep, "retry_storm")
	if len(f) != 1 || len(rep.Capacity.Spikes) == 0 {
		t.Fatalf("%d retry_storm findings, %d spikes; want one finding naming the spikes", len(f), len(rep.Capacity.Spikes))
	}
	var cost analysis.Cost
	for _, s := range rep.Capacity.Spikes {
		from, _ := time.Parse(time.RFC3339Nano, s.Start)
		to, _ := time.Parse(time.RFC3339Nano, s.End)
		in := slices.ContainsFunc(truth.Incidents, func(iv sim.Incident) bool {
			return iv.StartNs < to.UnixNano() && iv.EndNs > from.UnixNano()-int64(10*time.Second)
		})
		if !in {
			t.Errorf("spike %s to %s (%.2fx) meets no incident of the truth", s.Start, s.End, s.Amplification)
		}
		// The spike's figures are the truth's requests that started in it:
		// their amplification, and their retries with the time of each
		// and the wait before it.
		var requests, attempts, retries int64
		var ms float64
		for _, r := range truth.Requests {
			if r.StartNs < from.UnixNano() || r.StartNs >= to.UnixNano() {
				continue
			}
			requests++
			attempts += int64(len(r.AttemptList))
			for i, a := range r.AttemptList[1:] {
				retries++
				ms += float64(a.EndNs-a.StartNs+max(gapBefore(r.AttemptList, i+1), 0)) / 1e6
			}
		}
		if int64(s.Requests) != requests || math.Abs(s.Amplification-float64(attempts)/float64(requests)) > 1e-9 ||
			s.ExtraAttempts != retries || !sameMs(s.ExtraMs, ms) {
			t.Errorf("spike %s to %s: %d requests at %.4fx, %d retries taking %.6f ms; truth %d at %.4fx, %d taking %.6f ms",
				s.Start, s.End, s.Requests, s.Amplification, s.ExtraAttempts, s.ExtraMs, requests,
				float64(attempts)/float64(requests), retries, ms)
		}
		cost.Attempts += retries
		cost.TimeMs += ms
	}
	if c := f[0].Cost; c.Attempts != cost.Attempts || !sameMs(c.TimeMs, cost.TimeMs) {
		t.Errorf("retry_storm costs %+v, the truth's retries in the spikes %+v", c, cost)
	}
	t.Logf("peak %d in flight; λ·S %.2f with retries, %.2f without; %s", c.PeakAttemptsInFlight, c.OfferedLoad,
		c.OfferedLoadFirstAttempts, f[0].Problem)
}

func findingsOf(rep *Report, kind string) []analysis.Finding {
	var out []analysis.Finding
	for _, f := range rep.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

// fallbackConfig is nested LLM requests whose application loop's last try
// goes to the fallback provider, which fails far less often than the
// primary (and never has the primary's incidents).
func fallbackConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Requests, cfg.Rate = 5, 3000, 40
	cfg.Shapes, cfg.Nested = []sim.Shape{sim.ShapeWrapped}, true
	return cfg
}

// TestRouteRetriesTruth: retries on the first attempt's route and on the
// fallback, their success and time, equal the truth's attempts; the
// fallback rescues more, and prefer_fallback says so.
func TestRouteRetriesTruth(t *testing.T) {
	st, truth := workload.Rebuilt(t, fallbackConfig())
	var same, sameOK, alt, altOK int64
	var sameMs, altMs float64
	for _, r := range truth.Requests {
		var latest int64 // the latest end of the attempts before
		for k, a := range r.AttemptList {
			prev := latest
			latest = max(latest, a.EndNs)
			if k == 0 {
				continue
			}
			// The attempt and the wait before it (none when it overlapped).
			ms := float64(a.EndNs-min(a.StartNs, prev)) / 1e6
			if a.Route == r.AttemptList[0].Route {
				same++
				sameMs += ms
				if a.Trigger == "" {
					sameOK++
				}
			} else {
				alt++
				altMs += ms
				if a.Trigger == "" {
					altOK++
				}
			}
		}
	}
	rep := buildReport(t, st)
	rr := rep.Workload.RouteRetries
	if rr.SameRouteRetries != same || rr.AlternateRouteRetries != alt {
		t.Fatalf("retries same/alternate %d/%d, truth %d/%d", rr.SameRouteRetries, rr.AlternateRouteRetries, same, alt)
	}
	near := func(name string, got *float64, want float64) {
		if got == nil || math.Abs(*got-want) > 1e-3*max(1, want) {
			t.Errorf("%s %v, truth %v", name, got, want)
		}
	}
	near("same-route success", rr.SameRouteRetrySuccessRate, float64(sameOK)/float64(same))
	near("alternate-route success", rr.AlternateRouteRetrySuccessRate, float64(altOK)/float64(alt))
	near("same-route time per retry", rr.SameRouteRetryAddedMs, sameMs/float64(same))
	near("alternate-route time per retry", rr.AlternateRouteRetryAddedMs, altMs/float64(alt))
	f := findingsOf(rep, "prefer_fallback")
	if len(f) != 1 {
		t.Fatalf("%d prefer_fallback findings, want 1", len(f))
	}
	checkFallbackSegments(t, rep, truth)
	t.Logf("same route %d retries, %.1f%% ok; alternate %d, %.1f%% ok; %s", same, 100*float64(sameOK)/float64(same), alt,
		100*float64(altOK)/float64(alt), f[0].Change)
}

// TestCapAttempts: with six attempts allowed, the late attempts of the
// largest segment rescue a handful of requests per 1,000 and stretch the
// p99; cap_attempts names the ceiling, with the figures of the marginal
// yield table.
func TestCapAttempts(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Requests, cfg.Rate = 2, 3000, 30
	cfg.Shapes = []sim.Shape{sim.ShapeResend}
	cfg.Policy.MaxAttempts = 6
	st, truth := workload.Rebuilt(t, cfg)
	rep := buildReport(t, st)
	var found bool
	for _, f := range segmentFindings(rep, "cap_attempts") {
		var curve *analysis.YieldCurve
		for i, s := range rep.MarginalYield.Segments {
			if analysis.SegmentName(s.Segment) == analysis.SegmentName(f.Segment) {
				curve = &rep.MarginalYield.Segments[i].YieldCurve
			}
		}
		if curve == nil {
			t.Fatalf("cap_attempts on %s, which has no marginal yield curve", analysis.SegmentName(f.Segment))
		}
		n := 0
		for _, r := range curve.Rows {
			if strings.HasPrefix(f.Change, fmt.Sprintf("cap attempts at %d ", r.Attempt)) {
				n = r.Attempt
			}
		}
		if n == 0 || n >= len(curve.Rows) {
			t.Fatalf("cap_attempts: %q names no attempt of the curve", f.Change)
		}
		next := curve.Rows[n]
		if *next.RescuedPer1000 >= analysis.CapMaxRescuedPer1000 || *next.AddedP99Ms < analysis.CapMinAddedP99Ms ||
			f.Evidence[1].Value != *next.RescuedPer1000 || f.Evidence[2].Value != *next.AddedP99Ms {
			t.Errorf("cap at %d: attempt %d rescues %v per 1,000 and adds %v ms; evidence %v", n, n+1,
				*next.RescuedPer1000, *next.AddedP99Ms, f.Evidence)
		}
		if p99 := f.Evidence[3]; p99.CI95 == nil || p99.CI95.Lo > p99.Value || p99.CI95.Hi < p99.Value {
			t.Errorf("the capped p99 %v should carry a 95%% interval around it, got %+v", p99.Value, p99.CI95)
		}
		if f.Segment["service"] == "checkout" {
			found = true
		}
		checkCapCost(t, f, n, truth)
		t.Log(f.Change)
	}
	if !found {
		t.Errorf("no cap_attempts finding on service checkout; findings %v", rep.Findings)
	}
}

// checkFallbackSegments: in each segment prefer_fallback names, its
// retries each way, their success and its cost (the same-route retries
// that failed, their time with the wait before each) are the truth's;
// every segment whose truth shows the gain is named.
func checkFallbackSegments(t *testing.T, rep *Report, truth sim.Truth) {
	t.Helper()
	type tally struct {
		same, sameOK, alt, altOK int64
		failedMs                 float64
	}
	want := map[string]*tally{}
	for _, r := range truth.Requests {
		seg := truthSegment(r)
		if want[seg] == nil {
			want[seg] = &tally{}
		}
		w := want[seg]
		for k := 1; k < len(r.AttemptList); k++ {
			a := r.AttemptList[k]
			ok := a.Trigger == ""
			if a.Route != r.AttemptList[0].Route {
				w.alt++
				if ok {
					w.altOK++
				}
				continue
			}
			w.same++
			if ok {
				w.sameOK++
			} else {
				w.failedMs += float64(a.EndNs-a.StartNs+max(gapBefore(r.AttemptList, k), 0)) / 1e6
			}
		}
	}
	got := findingsBySegment(rep, "prefer_fallback")
	for seg, w := range want {
		fires := w.same >= analysis.MinRouteRetries && w.alt >= analysis.MinRouteRetries &&
			float64(w.altOK)/float64(w.alt)-float64(w.sameOK)/float64(w.same) >= analysis.MinFallbackGain
		f, ok := got[seg]
		if ok != fires {
			t.Errorf("%s: finding %v, truth %+v", seg, ok, *w)
			continue
		}
		if !ok {
			continue
		}
		if evidence(f, "alternate-route retries") != float64(w.alt) || evidence(f, "same-route retries") != float64(w.same) ||
			math.Abs(evidence(f, "alternate-route retry success")-float64(w.altOK)/float64(w.alt)) > 1e-9 ||
			math.Abs(evidence(f, "same-route retry success")-float64(w.sameOK)/float64(w.same)) > 1e-9 ||
			f.Cost.Attempts != w.same-w.sameOK || !sameMs(f.Cost.TimeMs, w.failedMs) {
			t.Errorf("%s: %+v cost %+v; truth %+v", seg, f.Evidence, f.Cost, *w)
		}
	}
}

// checkCapCost: a cap_attempts finding capping a segment at n counts the
// truth's requests of that segment that made attempt n+1, and costs the
// truth's attempts beyond n, each with the wait before it.
func checkCapCost(t *testing.T, f analysis.Finding, n int, truth sim.Truth) {
	t.Helper()
	var reached, beyond int64
	var ms float64
	for _, r := range truth.Requests {
		if truthSegment(r) != analysis.SegmentName(f.Segment) || len(r.AttemptList) <= n {
			continue
		}
		reached++
		for k := n; k < len(r.AttemptList); k++ {
			a := r.AttemptList[k]
			beyond++
			ms += float64(a.EndNs-a.StartNs+max(gapBefore(r.AttemptList, k), 0)) / 1e6
		}
	}
	if evidence(f, fmt.Sprintf("requests that made attempt %d", n+1)) != float64(reached) || f.Cost.Attempts != beyond || !sameMs(f.Cost.TimeMs, ms) {
		t.Errorf("%s: %v, cost %+v; truth %d requests made attempt %d, %d attempts beyond %d taking %.6f ms",
			analysis.SegmentName(f.Segment), f.Evidence, f.Cost, reached, n+1, beyond, n, ms)
	}
}
