package analysis

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/texttab"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/segment"
)

// Thresholds of the retry-hygiene findings. A finding needs enough
// retries to be a policy rather than an accident.
const (
	// MinGaps is the fewest self-timed retry gaps no_jitter looks at, and
	// fixedShare the share of them on at most three values that makes
	// the backoff fixed.
	MinGaps    = 10
	fixedShare = 0.8
	// MinWave is the fewest retries in 100 ms that retry_lockstep calls a
	// wave, and waveFactor how far above the segment's mean rate per
	// 100 ms they must be.
	MinWave    = 10
	waveFactor = 10
)

// ignoredRetryAfter finds retries sent sooner than the Retry-After of the
// response before them (429s, some 503s): the server said when it would
// take the request again, and the client came back earlier.
func ignoredRetryAfter(s *segment.Segment) *Finding {
	n := s.RetryAfterIgnored
	if n < MinWasted {
		return nil
	}
	return &Finding{Kind: "ignores_retry_after",
		Problem: fmt.Sprintf("%d retries came back sooner than the Retry-After the server had sent", n),
		Evidence: []Evidence{counted("retries before Retry-After", float64(n)),
			shareOf("share of retries after a Retry-After", float64(n)/float64(s.RetryAfterRetries)),
			inMs("time early in all", s.RetryAfterEarlyMs), inMs("time early per retry", s.RetryAfterEarlyMs/float64(n))},
		Cost:   Cost{Attempts: n, TimeMs: s.RetryAfterIgnoredMs},
		Change: "honour Retry-After on " + SegmentName(s.By) + ": wait at least what it says before the next attempt",
	}
}

// noJitter finds retry waits piled on a few exact values: a fixed or
// unjittered backoff, which sends every client that failed together back
// together.
func noJitter(s *segment.Segment) *Finding {
	if s.RetryGaps < MinGaps || s.RetryGapFixedShare == nil || *s.RetryGapFixedShare < fixedShare {
		return nil
	}
	ev := []Evidence{counted("retries timed by the client", float64(s.RetryGaps)),
		shareOf(fmt.Sprintf("share of their gaps within ±%g%% of the gap values", segment.GapTolerance*100), *s.RetryGapFixedShare)}
	var values []string
	for i, v := range s.RetryGapValuesMs {
		ev = append(ev, inMs(fmt.Sprintf("gap value %d", i+1), v))
		values = append(values, texttab.Value(texttab.Ms, v).String())
	}
	return &Finding{Kind: "no_jitter",
		Problem: fmt.Sprintf("%.0f%% of %d retries waited one of %s: the backoff has no jitter",
			*s.RetryGapFixedShare*100, s.RetryGaps, strings.Join(values, ", ")),
		Evidence: ev, Cost: Cost{Attempts: s.RetryGaps, TimeMs: s.RetryGapsCostMs},
		Change: "add full jitter on " + SegmentName(s.By) + ": sleep a random time between 0 and the backoff",
	}
}

// retryLockstep finds a wave of retries: many requests' retries starting
// in the same 100 ms, far above the segment's usual rate, as after an
// outage that failed them all at once under a backoff without jitter.
func retryLockstep(s *segment.Segment) *Finding {
	p := s.RetryPeak
	if p == nil || p.Retries < MinWave || float64(p.Retries) < waveFactor*p.MeanPer100ms {
		return nil
	}
	at := time.Unix(0, p.StartNs).UTC()
	return &Finding{Kind: "retry_lockstep",
		Problem: fmt.Sprintf("%d retries started within %s of each other at %s (%.0f per second, against %.2f per 100 ms on average)",
			p.Retries, texttab.Value(texttab.Ms, p.SpreadMs), at.Format(time.RFC3339Nano), p.PerSecond, p.MeanPer100ms),
		Evidence: []Evidence{counted("retries in the wave", float64(p.Retries)), inMs("wave start (Unix ms)", float64(p.StartNs)/1e6),
			inMs("spread", p.SpreadMs), counted("peak retries per second", p.PerSecond), counted("mean retries per 100 ms", p.MeanPer100ms)},
		Cost:   Cost{Attempts: p.Retries, TimeMs: p.CostMs},
		wave:   [2]int64{p.StartNs, p.StartNs + int64(math.Round(p.SpreadMs*1e6))},
		Change: "add full jitter on " + SegmentName(s.By) + " so that retries after an outage spread out instead of arriving as one wave",
	}
}

// statusCount is how many retries followed a client error of one status
// on one route, how many of them succeeded, and their time and tokens.
type statusCount struct {
	route, status string
	retries, ok   int64
	ms            float64
	tokens        int64
}

// clientErrorStatuses counts, per findings segment, the retries made right
// after a client error by that error's HTTP status.
func clientErrorStatuses(ctx context.Context, st *store.Store, win model.Window) (map[string][]statusCount, error) {
	lo, hi := win.Bounds()
	rows, err := st.Query(ctx, "find_client_error_statuses", lo, hi, segment.Unset)
	if err != nil {
		return nil, fmt.Errorf("client error statuses: %w", err)
	}
	defer rows.Close()
	out := map[string][]statusCount{}
	for rows.Next() {
		var service, operation string
		var c statusCount
		if err := rows.Scan(&service, &operation, &c.route, &c.status, &c.retries, &c.ok, &c.ms, &c.tokens); err != nil {
			return nil, fmt.Errorf("client error statuses: %w", err)
		}
		key := SegmentName(map[string]string{string(segment.KindService): service,
			string(segment.KindOperation): operation, string(segment.KindRoute): c.route})
		out[key] = append(out[key], c)
	}
	return out, rows.Err()
}
