package analysis

import (
	"fmt"

	"github.com/retryscope/retryscope/segment"
)

// deadlineExhausted finds requests that a deadline ended while they were
// still retrying: the loop spent the time and ended with nothing.
func deadlineExhausted(s *segment.Segment) *Finding {
	o := s.Outcomes
	if o.Deadline < MinWasted {
		return nil
	}
	return &Finding{Kind: "deadline_exhausted",
		Problem: fmt.Sprintf("%d requests ran out of their deadline and failed, after %d attempts in all", o.Deadline, o.DeadlineAttempts),
		Evidence: []Evidence{counted("requests ended by the deadline", float64(o.Deadline)),
			shareOf("share of the segment's requests", float64(o.Deadline)/float64(s.LogicalRequests)),
			counted("their attempts", float64(o.DeadlineAttempts)), inMs("their latency", o.DeadlineMs)},
		Cost: Cost{Attempts: o.DeadlineAttempts, TimeMs: o.DeadlineMs},
		Change: "before each retry check the time left: do not start an attempt the deadline will cut, and " +
			"make the per-attempt timeout and backoff fit in the deadline (or raise the deadline)",
	}
}

// abandonedStreams finds streams the client stopped reading part-way:
// the tokens it read and the time it spent were thrown away.
func abandonedStreams(s *segment.Segment) *Finding {
	n := s.AbandonedStreams
	if n < MinWasted {
		return nil
	}
	return &Finding{Kind: "abandoned_streams",
		Problem: fmt.Sprintf("%d streams were cancelled part-way by the client, which threw away the %d output tokens it had read",
			n, s.AbandonedStreamTokens),
		Evidence: []Evidence{counted("abandoned streams", float64(n)), shareOf("share of the segment's requests", float64(n)/float64(s.LogicalRequests)),
			counted("output tokens read and thrown away", float64(s.AbandonedStreamTokens)),
			inMs("client time in the abandoned streams", s.AbandonedStreamMs)},
		Cost: Cost{Attempts: int64(n), TimeMs: s.AbandonedStreamMs, Tokens: s.AbandonedStreamTokens},
		Change: "find why clients give up mid-stream (a UI that navigates away, a watchdog); pass the cancellation on " +
			"so the server stops generating, and cap max_tokens at what is read",
	}
}

// minNestedAmplification is the fewest attempts per nested request for
// nested loops to be a finding: loops that seldom retry multiply little,
// and the worst case they allow is said only where it is being paid.
const minNestedAmplification = 1.25

// nestedRetryLoops finds requests retried by two loops one inside the
// other, whose caps multiply.
func nestedRetryLoops(s *segment.Segment) *Finding {
	if s.NestedRequests < MinWasted || s.AppTriesMax < 2 || s.SDKAttemptsMax < 2 {
		return nil
	}
	worst := s.AppTriesMax * s.SDKAttemptsMax
	amp := float64(s.NestedAttempts) / float64(s.NestedRequests)
	if amp < minNestedAmplification {
		return nil
	}
	return &Finding{Kind: "nested_retry_loops",
		Problem: fmt.Sprintf("app loop × SDK loop = up to %d attempts per call (%d tries × %d attempts); observed amplification %.2fx",
			worst, s.AppTriesMax, s.SDKAttemptsMax, amp),
		Evidence: []Evidence{counted("requests with nested loops", float64(s.NestedRequests)),
			counted("most app tries seen", float64(s.AppTriesMax)), counted("most SDK attempts in one try seen", float64(s.SDKAttemptsMax)),
			counted("worst case attempts per call", float64(worst)), ratioOf("observed amplification", amp)},
		Cost:   Cost{Attempts: s.NestedAttempts - int64(s.NestedRequests), TimeMs: s.NestedDuplicatedMs, Tokens: s.NestedDuplicatedTokens},
		Change: "cap one layer: retry in the SDK only (app tries 1) or in the app loop only (SDK max_retries 0)",
	}
}
