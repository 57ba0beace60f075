package analysis

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/segment"
)

// Finding is one change to a retry policy that the data supports: the
// requests it applies to, the evidence, what it costs now and what to
// change. Findings are ranked by cost.
type Finding struct {
	// Kind names the finding, e.g. retry_on_client_error.
	Kind string `json:"kind"`
	// Segment names the requests it applies to, dimension to value, in
	// the findings' dimensions (FindingDims); empty for every request.
	Segment map[string]string `json:"segment"`
	// Problem says what is wrong, in a sentence.
	Problem string `json:"problem"`
	// Evidence are the figures behind it.
	Evidence []Evidence `json:"evidence"`
	// Cost is what the problem costs in the window.
	Cost Cost `json:"cost"`
	// Change is the change it suggests.
	Change string `json:"change"`
	// Segments are the segments it was found in, most costly first, each
	// with its own figures and cost (Segment holds what they share): a
	// problem of one retry policy found in ten segments is one finding.
	Segments []SegmentFinding `json:"segments"`

	// group tells apart the findings of a kind that are not one problem
	// (two lockstep waves, two ceilings); wave is a lockstep wave's first
	// and last retry start (Unix ns).
	group string
	wave  [2]int64
}

// Evidence is one figure behind a finding, with its unit (as the tables
// name units: count, ms, share, ratio, decimal) and, for a tail figure, its CI.
type Evidence struct {
	Name  string          `json:"name"`
	Value float64         `json:"value"`
	Unit  string          `json:"unit"`
	CI95  *model.Interval `json:"ci95,omitempty"`
}

// Cost is what a finding's problem costs: attempts made, client time
// spent and tokens sent and received in vain.
type Cost struct {
	Attempts int64   `json:"attempts"`
	TimeMs   float64 `json:"time_ms"`
	Tokens   int64   `json:"tokens"`
}

// FindingDims are the dimensions a finding names its requests by: where
// a retry policy lives.
var FindingDims = []segment.Kind{segment.KindService, segment.KindOperation, segment.KindRoute}

// detector finds one kind of problem among the segments of FindingDims
// (every request's measures in all).
type detector func(ctx context.Context, st *store.Store, win model.Window, all *segment.Measures, segs []segment.Segment) ([]Finding, error)

// detectors are every kind of finding, in no particular order: findings
// are ranked by cost.
var detectors = []detector{
	clientErrorRetries,
	capAttempts, retryStorm, perSegment(preferFallback),
	perSegment(ignoredRetryAfter), perSegment(noJitter), lockstepWaves,
	perSegment(deadlineExhausted), perSegment(abandonedStreams), perSegment(nestedRetryLoops),
}

// rule judges one segment of FindingDims: its finding, or nil.
// perSegment fills in the finding's Segment.
type rule func(s *segment.Segment) *Finding

// perSegment is the detector that applies r to every segment.
func perSegment(r rule) detector {
	return func(_ context.Context, _ *store.Store, _ model.Window, _ *segment.Measures, segs []segment.Segment) ([]Finding, error) {
		var out []Finding
		for i := range segs {
			if f := r(&segs[i]); f != nil {
				f.Segment = segs[i].By
				out = append(out, *f)
			}
		}
		return out, nil
	}
}

// Evidence in each unit the tables know.
func counted(name string, v float64) Evidence { return Evidence{Name: name, Value: v, Unit: "count"} }
func inMs(name string, v float64) Evidence    { return Evidence{Name: name, Value: v, Unit: "ms"} }
func shareOf(name string, v float64) Evidence { return Evidence{Name: name, Value: v, Unit: "share"} }
func ratioOf(name string, v float64) Evidence { return Evidence{Name: name, Value: v, Unit: "ratio"} }

// FindingSegmentDims are FindingDims as a segmentation.
func FindingSegmentDims() []segment.Dim {
	var dims []segment.Dim
	for _, k := range FindingDims {
		dims = append(dims, segment.Dim{Kind: k})
	}
	return dims
}

// Findings runs every detector over res, the window's requests segmented
// by FindingDims with every cohort on its own, and ranks what they find by
// cost.
func Findings(ctx context.Context, st *store.Store, win model.Window, res *segment.Result) ([]Finding, error) {
	out := []Finding{}
	for _, d := range detectors {
		f, err := d(ctx, st, win, &res.Workload, res.Segments)
		if err != nil {
			return nil, err
		}
		out = append(out, f...)
	}
	out = groupFindings(out)
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(byCost(a.Cost, b.Cost), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(SegmentName(a.Segment), SegmentName(b.Segment)), cmp.Compare(a.group, b.group))
	})
	return out, nil
}

// SegmentName is a finding's segment as text: "service=a, route=b".
func SegmentName(seg map[string]string) string {
	if len(seg) == 0 {
		return "every request"
	}
	var parts []string
	for _, k := range FindingDims {
		if v, ok := seg[string(k)]; ok {
			parts = append(parts, string(k)+"="+v)
		}
	}
	return strings.Join(parts, ", ")
}

// SegmentValues is a finding's segment as its values in FindingDims
// order, "v1 / v2 / v3"; "(all)" for every request.
func SegmentValues(seg map[string]string) string {
	if len(seg) == 0 {
		return "(all)"
	}
	var vals []string
	for _, k := range FindingDims {
		vals = append(vals, seg[string(k)])
	}
	return strings.Join(vals, " / ")
}

// MinWasted is the fewest retries a finding about wasted retries needs:
// fewer are noise, not a policy.
const MinWasted = 5

// clientErrorRetries finds retries after deterministic failures (400, 401,
// 403, 404, 422, parse and schema errors ...), which no retry fixes, with
// how many followed each status. A status whose retries mostly succeed on
// a route is not deterministic there, whatever its code says (AWS
// services answer throttling with 400, a conflict may clear): its retries
// are left out, and said so, rather than advised against.
func clientErrorRetries(ctx context.Context, st *store.Store, win model.Window, _ *segment.Measures, segs []segment.Segment) ([]Finding, error) {
	byStatus, err := clientErrorStatuses(ctx, st, win)
	if err != nil {
		return nil, err
	}
	retryable := retryableStatuses(byStatus)
	var out []Finding
	for i := range segs {
		s := &segs[i]
		name := SegmentName(s.By)
		var wasted Cost
		var ev, left []Evidence
		for _, c := range byStatus[name] {
			if retryable[[2]string{s.By[string(segment.KindRoute)], c.status}] {
				left = append(left, counted(fmt.Sprintf("retries after %s left out: %d of them succeeded (retryable on this route)", c.status, c.ok),
					float64(c.retries)))
				continue
			}
			wasted.Attempts += c.retries
			wasted.TimeMs += c.ms
			wasted.Tokens += c.tokens
			ev = append(ev, counted("retries after "+c.status, float64(c.retries)))
		}
		if wasted.Attempts < MinWasted {
			continue
		}
		n := wasted.Attempts
		f := Finding{Kind: "retry_on_client_error", Segment: s.By,
			Problem: fmt.Sprintf("%d retries followed a client error (4xx such as 400, 404 or 422, or a parse or schema error) that a retry does not fix", n),
			Evidence: append(append([]Evidence{counted("retries after a client error", float64(n)),
				shareOf("share of the segment's attempts", float64(n)/float64(s.Attempts))}, ev...), left...),
			Cost:   wasted,
			Change: "stop retrying deterministic client errors (400, 401, 403, 404, 422) on " + name + "; fix the request instead",
		}
		out = append(out, f)
	}
	return out, nil
}

// retryableMinRetries and retryableShare: a status is retryable on a
// route when at least retryableMinRetries retries followed it there and
// at least retryableShare of them succeeded. A deterministic failure
// fails again on every retry.
const (
	retryableMinRetries = MinWasted
	retryableShare      = 0.5
)

// retryableStatuses are the (route, status) pairs whose retries, over
// every findings segment of the route, mostly succeeded.
func retryableStatuses(byStatus map[string][]statusCount) map[[2]string]bool {
	type tally struct{ retries, ok int64 }
	sums := map[[2]string]*tally{}
	for _, counts := range byStatus {
		for _, c := range counts {
			k := [2]string{c.route, c.status}
			if sums[k] == nil {
				sums[k] = &tally{}
			}
			sums[k].retries += c.retries
			sums[k].ok += c.ok
		}
	}
	out := map[[2]string]bool{}
	for k, t := range sums {
		if t.retries >= retryableMinRetries && float64(t.ok) >= retryableShare*float64(t.retries) {
			out[k] = true
		}
	}
	return out
}
