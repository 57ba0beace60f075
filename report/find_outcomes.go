package report

import (
	"context"
	"fmt"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/segment"
)

// deadlineExhausted finds requests that a deadline ended while they were
// still retrying: the loop spent the time and ended with nothing.
func deadlineExhausted(_ context.Context, _ *store.Store, _ model.Window, _ *segment.Measures, segs []segment.Segment) ([]Finding, error) {
	var out []Finding
	for _, s := range segs {
		o := s.Outcomes
		if o.Deadline < minWasted {
			continue
		}
		out = append(out, Finding{
			Kind:    "deadline_exhausted",
			Segment: s.By,
			Problem: fmt.Sprintf("%d requests ran out of their deadline and failed, after %d attempts in all",
				o.Deadline, o.DeadlineAttempts),
			Evidence: []Evidence{
				{Name: "requests ended by the deadline", Value: float64(o.Deadline), Unit: "count"},
				{Name: "share of the segment's requests", Value: float64(o.Deadline) / float64(s.LogicalRequests), Unit: "share"},
				{Name: "their attempts", Value: float64(o.DeadlineAttempts), Unit: "count"},
				{Name: "their latency", Value: o.DeadlineMs, Unit: "ms"},
			},
			Cost: Cost{Attempts: o.DeadlineAttempts, TimeMs: o.DeadlineMs},
			Change: "before each retry check the time left: do not start an attempt the deadline will cut, and " +
				"make the per-attempt timeout and backoff fit in the deadline (or raise the deadline)",
		})
	}
	return out, nil
}

// abandonedStreams finds streams the client stopped reading part-way:
// the tokens it read and the time it spent were thrown away.
func abandonedStreams(_ context.Context, _ *store.Store, _ model.Window, _ *segment.Measures, segs []segment.Segment) ([]Finding, error) {
	var out []Finding
	for _, s := range segs {
		if s.AbandonedStreams < minWasted {
			continue
		}
		out = append(out, Finding{
			Kind:    "abandoned_streams",
			Segment: s.By,
			Problem: fmt.Sprintf("%d streams were cancelled part-way by the client, which threw away the %d output tokens it had read",
				s.AbandonedStreams, s.AbandonedStreamTokens),
			Evidence: []Evidence{
				{Name: "abandoned streams", Value: float64(s.AbandonedStreams), Unit: "count"},
				{Name: "share of the segment's requests", Value: float64(s.AbandonedStreams) / float64(s.LogicalRequests), Unit: "share"},
				{Name: "output tokens read and thrown away", Value: float64(s.AbandonedStreamTokens), Unit: "count"},
				{Name: "client time in the abandoned streams", Value: s.AbandonedStreamMs, Unit: "ms"},
			},
			Cost: Cost{Attempts: int64(s.AbandonedStreams), TimeMs: s.AbandonedStreamMs, Tokens: s.AbandonedStreamTokens},
			Change: "find why clients give up mid-stream (a UI that navigates away, a watchdog); pass the cancellation on " +
				"so the server stops generating, and cap max_tokens at what is read",
		})
	}
	return out, nil
}

// minNestedAmplification is the fewest attempts per nested request for
// nested loops to be a finding: loops that seldom retry multiply little,
// and the worst case they allow is said only where it is being paid.
const minNestedAmplification = 1.25

// nestedRetryLoops finds requests retried by two loops one inside the
// other, whose caps multiply.
func nestedRetryLoops(_ context.Context, _ *store.Store, _ model.Window, _ *segment.Measures, segs []segment.Segment) ([]Finding, error) {
	var out []Finding
	for _, s := range segs {
		if s.NestedRequests < minWasted || s.AppTriesMax < 2 || s.SDKAttemptsMax < 2 {
			continue
		}
		worst := s.AppTriesMax * s.SDKAttemptsMax
		amp := float64(s.NestedAttempts) / float64(s.NestedRequests)
		if amp < minNestedAmplification {
			continue
		}
		out = append(out, Finding{
			Kind:    "nested_retry_loops",
			Segment: s.By,
			Problem: fmt.Sprintf("app loop × SDK loop = up to %d attempts per call (%d tries × %d attempts); observed amplification %.2fx",
				worst, s.AppTriesMax, s.SDKAttemptsMax, amp),
			Evidence: []Evidence{
				{Name: "requests with nested loops", Value: float64(s.NestedRequests), Unit: "count"},
				{Name: "most app tries seen", Value: float64(s.AppTriesMax), Unit: "count"},
				{Name: "most SDK attempts in one try seen", Value: float64(s.SDKAttemptsMax), Unit: "count"},
				{Name: "worst case attempts per call", Value: float64(worst), Unit: "count"},
				{Name: "observed amplification", Value: amp, Unit: "ratio"},
			},
			Cost:   Cost{Attempts: s.NestedAttempts - int64(s.NestedRequests), TimeMs: s.NestedDuplicatedMs, Tokens: s.NestedDuplicatedTokens},
			Change: "cap one layer: retry in the SDK only (app tries 1) or in the app loop only (SDK max_retries 0)",
		})
	}
	return out, nil
}
