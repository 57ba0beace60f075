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
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// genReport generates cfg's workload, ingests and rebuilds it and builds
// its report (no segments asked for: the findings segment on their own).
func genReport(t *testing.T, cfg sim.Config) (*Report, sim.Truth) {
	t.Helper()
	st, truth := workload.Rebuilt(t, cfg)
	ctx := context.Background()
	rep, err := Build(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep, truth
}

// truthSegment names a truth request's findings segment as findings do.
func truthSegment(r sim.Request) string {
	return analysis.SegmentName(map[string]string{"service": r.Service, "operation": r.Operation, "route": r.Route})
}

// findingsBySegment returns the findings of one kind by segment name, a
// finding of several segments as one of each (segmentFindings).
func findingsBySegment(rep *Report, kind string) map[string]analysis.Finding {
	out := map[string]analysis.Finding{}
	for _, f := range segmentFindings(rep, kind) {
		out[analysis.SegmentName(f.Segment)] = f
	}
	return out
}

// segmentFindings are the findings of one kind a segment to a finding:
// each of a finding's segments with its own figures and cost, and the
// finding's change.
func segmentFindings(rep *Report, kind string) []analysis.Finding {
	var out []analysis.Finding
	for _, f := range rep.Findings {
		if f.Kind != kind {
			continue
		}
		for _, s := range f.Segments {
			out = append(out, analysis.Finding{Kind: f.Kind, Segment: s.Segment, Problem: s.Problem, Evidence: s.Evidence, Cost: s.Cost, Change: f.Change})
		}
	}
	return out
}

// evidence returns the value of the named evidence, NaN when absent.
func evidence(f analysis.Finding, name string) float64 {
	for _, e := range f.Evidence {
		if e.Name == name {
			return e.Value
		}
	}
	return math.NaN()
}

// sameMs compares sums of milliseconds, which the report and the truth add
// in different orders.
func sameMs(a, b float64) bool { return math.Abs(a-b) <= 1e-6*max(1, math.Abs(b)) }

// gapBefore is the truth's gap before attempt i: its start minus the
// latest end of the attempts before it.
func gapBefore(atts []sim.Attempt, i int) int64 {
	var latest int64
	for _, a := range atts[:i] {
		latest = max(latest, a.EndNs)
	}
	return atts[i].StartNs - latest
}

// TestRetryOnClientErrorTruth: with one service's client retrying 4xx
// (--pathology retry-4xx=checkout) and no naive clients, the finding
// retry_on_client_error fires on exactly the segments where the truth has
// at least five such retries, with the truth's retries, time (each retry's
// elapsed time and the gap before it), tokens and retries per status.
func TestRetryOnClientErrorTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed = 1500, 7
	cfg.Policy.NaiveShare = 0
	cfg.Pathologies.Retry4xx = "checkout"
	rep, truth := genReport(t, cfg)

	type want struct {
		retries, tokens int64
		ms              float64
		byStatus        map[int]int64
	}
	wants := map[string]*want{}
	for _, r := range truth.Requests {
		for i := 1; i < len(r.AttemptList); i++ {
			if r.AttemptList[i-1].Trigger != "client_error" {
				continue
			}
			w := wants[truthSegment(r)]
			if w == nil {
				w = &want{byStatus: map[int]int64{}}
				wants[truthSegment(r)] = w
			}
			a := r.AttemptList[i]
			w.retries++
			w.ms += float64(a.EndNs-a.StartNs+gapBefore(r.AttemptList, i)) / 1e6
			w.tokens += int64(a.OutputTokens)
			w.byStatus[r.ClientErrorStatus]++
		}
	}
	got := findingsBySegment(rep, "retry_on_client_error")
	fired := 0
	for seg, w := range wants {
		f, ok := got[seg]
		if w.retries < analysis.MinWasted {
			if ok {
				t.Errorf("%s: fired on %d retries, fewer than %d", seg, w.retries, analysis.MinWasted)
			}
			continue
		}
		fired++
		if !ok {
			t.Errorf("%s: no finding for %d retries after a client error", seg, w.retries)
			continue
		}
		if f.Cost.Attempts != w.retries || !sameMs(f.Cost.TimeMs, w.ms) || f.Cost.Tokens != w.tokens {
			t.Errorf("%s: cost %+v, truth %d retries, %.6f ms, %d tokens", seg, f.Cost, w.retries, w.ms, w.tokens)
		}
		for status, n := range w.byStatus {
			if v := evidence(f, fmt.Sprintf("retries after HTTP %d", status)); v != float64(n) {
				t.Errorf("%s: %v retries after HTTP %d, truth %d", seg, v, status, n)
			}
		}
		t.Logf("%s: %d retries, %.1f ms, by status %v", seg, w.retries, w.ms, w.byStatus)
	}
	if fired == 0 || len(got) != fired {
		t.Errorf("%d findings, truth has %d segments with at least %d retries after a client error", len(got), fired, analysis.MinWasted)
	}
	checkOneFinding(t, rep, "retry_on_client_error", fired)
	for seg := range got {
		if !strings.Contains(seg, "service=checkout,") {
			t.Errorf("finding on %s, which retries no 4xx", seg)
		}
	}
}

// TestIgnoresRetryAfterTruth: with one service's client ignoring
// Retry-After (--pathology ignore-retry-after=support-bot) and no naive
// clients, ignores_retry_after fires on exactly the segments where the
// truth counts at least five retries sent before their Retry-After, with
// the truth's count and time early; the segment measures hold the same
// figures, and the workload's add up over every request.
func TestIgnoresRetryAfterTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed = 1500, 8
	cfg.Policy.NaiveShare = 0
	cfg.Faults.RateLimited = 0.15
	cfg.Pathologies.IgnoreRetryAfter = "support-bot"
	rep, truth := genReport(t, cfg)

	type want struct {
		ignored        int64
		earlyMs, retMs float64
	}
	wants := map[string]*want{}
	var total want
	for _, r := range truth.Requests {
		if r.RetryAfterIgnored == 0 {
			continue
		}
		w := wants[truthSegment(r)]
		if w == nil {
			w = &want{}
			wants[truthSegment(r)] = w
		}
		w.ignored += int64(r.RetryAfterIgnored)
		w.earlyMs += r.RetryAfterEarlyMs
		for i := 1; i < len(r.AttemptList); i++ {
			a := r.AttemptList[i]
			ra, gap := int64(r.AttemptList[i-1].RetryAfterS)*1e9, gapBefore(r.AttemptList, i)
			if ra > 0 && gap >= 0 && gap < ra {
				w.retMs += float64(a.EndNs-a.StartNs) / 1e6
			}
		}
		total.ignored += int64(r.RetryAfterIgnored)
		total.earlyMs += r.RetryAfterEarlyMs
	}
	if m := rep.Workload.Measures; m.RetryAfterIgnored != total.ignored || !sameMs(m.RetryAfterEarlyMs, total.earlyMs) {
		t.Errorf("workload: %d retries %.6f ms early, truth %d, %.6f ms", m.RetryAfterIgnored, m.RetryAfterEarlyMs, total.ignored, total.earlyMs)
	}
	got := findingsBySegment(rep, "ignores_retry_after")
	fired := 0
	for seg, w := range wants {
		f, ok := got[seg]
		if w.ignored < analysis.MinWasted {
			if ok {
				t.Errorf("%s: fired on %d retries, fewer than %d", seg, w.ignored, analysis.MinWasted)
			}
			continue
		}
		fired++
		if !ok {
			t.Errorf("%s: no finding for %d retries before Retry-After", seg, w.ignored)
			continue
		}
		if f.Cost.Attempts != w.ignored || !sameMs(evidence(f, "time early in all"), w.earlyMs) || !sameMs(f.Cost.TimeMs, w.retMs) {
			t.Errorf("%s: %d retries %.6f ms early taking %.6f ms, truth %d, %.6f ms, %.6f ms", seg, f.Cost.Attempts,
				evidence(f, "time early in all"), f.Cost.TimeMs, w.ignored, w.earlyMs, w.retMs)
		}
		if !strings.HasPrefix(f.Change, "honour Retry-After on ") {
			t.Errorf("%s: change %q", seg, f.Change)
		}
		t.Logf("%s: %d retries, %.1f ms early", seg, w.ignored, w.earlyMs)
	}
	if fired == 0 || len(got) != fired {
		t.Errorf("%d findings, truth has %d segments with at least %d retries before Retry-After", len(got), fired, analysis.MinWasted)
	}
	checkOneFinding(t, rep, "ignores_retry_after", fired)
}

// TestNoJitterTruth: under gen --client-policy fixed (the truth's params say so)
// every wait the client times itself is the fixed base, so on explicit
// requests (no gRPC transparent retries, no hedges) no_jitter fires on
// every segment with at least minGaps such retries: their count is the
// truth's (retries after a response without Retry-After), all of them
// within ±2% of one value, and that value is the base plus the few
// milliseconds of overhead around the wait.
func TestNoJitterTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed = 1500, 9
	cfg.Shapes = []sim.Shape{sim.ShapeExplicit}
	cfg.Policy.Kind, cfg.Policy.NaiveShare = sim.PolicyFixed, 0
	cfg.Faults = sim.DefaultFaults().Scale(2)
	rep, truth := genReport(t, cfg)
	if truth.Params.Policy != "fixed" {
		t.Fatalf("truth policy %q", truth.Params.Policy)
	}
	base := truth.Params.BaseMs
	gaps := map[string]int64{}
	costMs := map[string]float64{}
	for _, r := range truth.Requests {
		for i := 1; i < len(r.AttemptList); i++ {
			// Re-prompts after an evaluator's rejection are no backoff
			// (seed 004): no_jitter leaves them out.
			if r.AttemptList[i-1].RetryAfterS == 0 && r.AttemptList[i-1].Trigger != "rejected_output" {
				gaps[truthSegment(r)]++
				a := r.AttemptList[i]
				costMs[truthSegment(r)] += float64(a.EndNs-a.StartNs+gapBefore(r.AttemptList, i)) / 1e6
			}
		}
	}
	got := findingsBySegment(rep, "no_jitter")
	fired := 0
	for seg, n := range gaps {
		f, ok := got[seg]
		if n < analysis.MinGaps {
			continue
		}
		fired++
		if !ok {
			t.Errorf("%s: no finding for %d retries", seg, n)
			continue
		}
		share := evidence(f, "share of their gaps within ±2% of the gap values")
		v := evidence(f, "gap value 1")
		if f.Cost.Attempts != n || share != 1 || v < base || v > base+8 || !math.IsNaN(evidence(f, "gap value 2")) {
			t.Errorf("%s: %d retries, share %v on value %v ms; truth %d retries, all waiting %v ms", seg, f.Cost.Attempts, share, v, n, base)
		}
		if !sameMs(f.Cost.TimeMs, costMs[seg]) {
			t.Errorf("%s: cost %.6f ms, truth %.6f ms in those retries and the waits before them", seg, f.Cost.TimeMs, costMs[seg])
		}
	}
	if fired == 0 || len(got) != fired {
		t.Errorf("%d findings, truth has %d segments with at least %d retries", len(got), fired, analysis.MinGaps)
	}
	checkOneFinding(t, rep, "no_jitter", fired)
}

// checkOneFinding: the findings of kind are one finding over segments
// segments, whose cost is the sum of theirs.
func checkOneFinding(t *testing.T, rep *Report, kind string, segments int) {
	t.Helper()
	fs := findingsOf(rep, kind)
	if len(fs) != 1 || len(fs[0].Segments) != segments {
		t.Fatalf("%d %s findings, want one over %d segments", len(fs), kind, segments)
	}
	var c analysis.Cost
	for _, s := range fs[0].Segments {
		c.Attempts, c.TimeMs, c.Tokens = c.Attempts+s.Cost.Attempts, c.TimeMs+s.Cost.TimeMs, c.Tokens+s.Cost.Tokens
	}
	if f := fs[0]; f.Cost.Attempts != c.Attempts || !sameMs(f.Cost.TimeMs, c.TimeMs) || f.Cost.Tokens != c.Tokens ||
		segments > 1 && evidence(f, "segments") != float64(segments) {
		t.Errorf("%s: cost %+v, its segments' %+v; evidence %v", kind, f.Cost, c, f.Evidence)
	}
	t.Logf("%s: %s; change: %s", kind, fs[0].Problem, fs[0].Change)
}

// TestRetryLockstepTruth: an outage on api.openai.com (--pathology
// lockstep=api.openai.com) holds every attempt that reaches it and fails
// them together; with a fixed backoff and no other fault their retries
// leave together. retry_lockstep fires on exactly the segments with at
// least minWave of them, naming the truth's wave: its retries, its first
// retry's start and its spread; the waves add up to the attempts the
// outage shed.
func TestRetryLockstepTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed, cfg.Rate = 2000, 10, 40
	cfg.Shapes = []sim.Shape{sim.ShapeExplicit, sim.ShapeWrapped}
	cfg.Policy.Kind, cfg.Policy.NaiveShare = sim.PolicyFixed, 0
	cfg.Faults = sim.FaultMix{}
	cfg.Pathologies.Lockstep = "api.openai.com"
	rep, truth := genReport(t, cfg)

	var shed int
	for _, in := range truth.Incidents {
		if in.Kind == "outage" {
			shed += in.Shed
		}
	}
	waves := map[string][]int64{}
	costMs := map[string]float64{}
	for _, r := range truth.Requests {
		for i, a := range r.AttemptList[1:] {
			waves[truthSegment(r)] = append(waves[truthSegment(r)], a.StartNs)
			costMs[truthSegment(r)] += float64(a.EndNs-a.StartNs+max(gapBefore(r.AttemptList, i+1), 0)) / 1e6
		}
	}
	retries := 0
	for _, w := range waves {
		retries += len(w)
	}
	if shed == 0 || retries != shed {
		t.Fatalf("the outage shed %d attempts, the truth has %d retries", shed, retries)
	}
	got := findingsBySegment(rep, "retry_lockstep")
	fired := 0
	for seg, w := range waves {
		slices.Sort(w)
		f, ok := got[seg]
		if len(w) < analysis.MinWave {
			continue
		}
		fired++
		if !ok {
			t.Errorf("%s: no finding for a wave of %d retries", seg, len(w))
			continue
		}
		spread := float64(w[len(w)-1]-w[0]) / 1e6
		if f.Cost.Attempts != int64(len(w)) || evidence(f, "wave start (Unix ms)") != float64(w[0])/1e6 ||
			!sameMs(evidence(f, "spread"), spread) || evidence(f, "peak retries per second") != float64(len(w))*10 {
			t.Errorf("%s: %+v\ntruth: %d retries from %s, spread %.6f ms", seg, f.Evidence, len(w),
				time.Unix(0, w[0]).UTC().Format(time.RFC3339Nano), spread)
		}
		if !sameMs(f.Cost.TimeMs, costMs[seg]) {
			t.Errorf("%s: cost %.6f ms, truth %.6f ms in the wave's retries and the waits before them", seg, f.Cost.TimeMs, costMs[seg])
		}
		t.Logf("%s: %s", seg, f.Problem)
	}
	if fired == 0 || len(got) != fired {
		t.Errorf("%d findings, truth has %d segments with a wave of at least %d", len(got), fired, analysis.MinWave)
	}
	// One outage, one wave: one finding over its segments.
	checkOneFinding(t, rep, "retry_lockstep", fired)
}

// TestHealthyHygiene: a healthy workload (full jitter, no naive client,
// Retry-After honoured, 4xx not retried, incidents but no outage) gives
// none of the retry-hygiene findings.
func TestHealthyHygiene(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed = 2000, 11
	cfg.Policy.NaiveShare = 0
	cfg.Faults = sim.DefaultFaults().Scale(2)
	rep, _ := genReport(t, cfg)
	for _, f := range rep.Findings {
		switch f.Kind {
		case "retry_on_client_error", "ignores_retry_after", "no_jitter", "retry_lockstep":
			t.Errorf("%s on %s: %s", f.Kind, analysis.SegmentName(f.Segment), f.Problem)
		}
	}
	if m := rep.Workload.Measures; m.RetryGaps == 0 || m.RetryAfterRetries == 0 || m.RetryPeak == nil {
		t.Errorf("the workload should retry on its own schedule and after Retry-After: %+v", m.Hygiene)
	}
}
