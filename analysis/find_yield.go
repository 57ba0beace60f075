package analysis

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/texttab"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/segment"
)

// An attempt is not worth allowing when it rescues fewer than
// CapMaxRescuedPer1000 requests per 1,000 and adds at least CapMinAddedP99Ms
// to the p99.
const (
	CapMaxRescuedPer1000 = 10
	CapMinAddedP99Ms     = 100
)

// capAttempts finds segments whose later attempts rescue almost nothing
// and cost the tail a lot: the ceiling the marginal yield curve supports.
func capAttempts(ctx context.Context, st *store.Store, win model.Window, _ *segment.Measures, _ []segment.Segment) ([]Finding, error) {
	reqs, err := yieldRequests(ctx, st, win)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, g := range bySegment(reqs) {
		c := yieldCurve(g.reqs, model.DefaultRule, YieldBudget{})
		n, ok := capAt(c.Rows)
		if !ok {
			continue
		}
		next := c.Rows[n]
		capped := make([]float64, len(g.reqs))
		cappedLatencies(g.reqs, n, capped)
		var p99CI *model.Interval
		if ci := segment.Bootstrap(capped, model.DefaultRule, segment.DefaultSeed, "cap_attempts/"+SegmentName(g.seg)); ci != nil {
			p99CI = ci.P99
		}
		f := Finding{Kind: "cap_attempts", Segment: g.seg, group: fmt.Sprint(n),
			Problem: fmt.Sprintf("attempt %d rescues %.0f per 1,000 requests and adds %s to their p99", n+1, *next.RescuedPer1000, texttab.FormatMs(*next.AddedP99Ms)),
			Evidence: []Evidence{
				{Name: fmt.Sprintf("requests that made attempt %d", n+1), Value: float64(next.Reached), Unit: "count"},
				{Name: fmt.Sprintf("rescued per 1,000 by attempt %d", n+1), Value: *next.RescuedPer1000, Unit: "count"},
				{Name: fmt.Sprintf("p99 added by attempt %d", n+1), Value: *next.AddedP99Ms, Unit: "ms"},
				{Name: fmt.Sprintf("p99 capped at %d", n), Value: *c.Rows[n-1].P99Ms, Unit: "ms", CI95: p99CI},
				{Name: fmt.Sprintf("success by attempt %d", n), Value: c.Rows[n-1].Cumulative, Unit: "share"},
			},
			Change: fmt.Sprintf("cap attempts at %d on %s because attempt %d rescues %.0f per 1,000 and adds %s of p99",
				n, SegmentName(g.seg), n+1, *next.RescuedPer1000, texttab.FormatMs(*next.AddedP99Ms)),
		}
		for _, r := range g.reqs {
			for k := n; k < r.attempts; k++ {
				f.Cost.Attempts++
				f.Cost.TimeMs += r.at[k].costMs
				f.Cost.Tokens += r.at[k].tokens
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// capAt is the smallest ceiling n such that attempt n+1 adds at least
// CapMinAddedP99Ms of p99 and it and every attempt after it rescue fewer
// than CapMaxRescuedPer1000 per 1,000.
func capAt(rows []YieldRow) (int, bool) {
	for n := len(rows) - 1; n >= 1; n-- {
		if *rows[n].RescuedPer1000 >= CapMaxRescuedPer1000 {
			break
		}
		if a := rows[n].AddedP99Ms; a != nil && *a >= CapMinAddedP99Ms && rows[n-1].P99Ms != nil {
			best := n
			for m := n - 1; m >= 1 && *rows[m].RescuedPer1000 < CapMaxRescuedPer1000; m-- {
				if a := rows[m].AddedP99Ms; a != nil && *a >= CapMinAddedP99Ms {
					best = m
				}
			}
			return best, true
		}
	}
	return 0, false
}

// retryStorm finds the windows where amplification spiked.
func retryStorm(ctx context.Context, st *store.Store, win model.Window, all *segment.Measures, _ []segment.Segment) ([]Finding, error) {
	reqs, err := yieldRequests(ctx, st, win)
	if err != nil {
		return nil, err
	}
	c := MeasureCapacity(reqs, CapacityStep(reqs), all.HiddenWorkMs)
	if len(c.Spikes) == 0 {
		return nil, nil
	}
	f := Finding{Kind: "retry_storm", Segment: map[string]string{},
		Change: "bound retries by a budget (retries as a share of successes per window) and a concurrency limit, " +
			"and jitter the backoff, so a failing server is not hit harder"}
	var names []string
	for _, s := range c.Spikes {
		names = append(names, fmt.Sprintf("%s to %s at %s (%s attempts/s)", s.Start, s.End, texttab.Format(texttab.Times, s.Amplification),
			texttab.Format(texttab.Decimal, s.AttemptsPerS)))
		f.Evidence = append(f.Evidence, Evidence{Name: "amplification from " + s.Start + " to " + s.End, Value: s.Amplification, Unit: "ratio"})
		f.Cost.Attempts += s.ExtraAttempts
		f.Cost.TimeMs += s.ExtraMs
		f.Cost.Tokens += s.ExtraTokens
	}
	f.Evidence = append(f.Evidence, Evidence{Name: "peak attempts in flight", Value: float64(c.PeakAttemptsInFlight), Unit: "count"},
		Evidence{Name: "offered load λ·S with retries", Value: c.OfferedLoad, Unit: "decimal"},
		Evidence{Name: "offered load λ·S without retries", Value: c.OfferedLoadFirstAttempts, Unit: "decimal"})
	f.Problem = fmt.Sprintf("retry storm: amplification spiked in %d window(s): %s", len(c.Spikes), strings.Join(names, "; "))
	return []Finding{f}, nil
}

// A fallback is preferred when at least MinRouteRetries retries went each
// way and the alternate route's retries succeeded at least
// MinFallbackGain (a share) more often.
const (
	MinRouteRetries = 20
	MinFallbackGain = 0.2
)

// preferFallback finds segments whose retries on another route succeeded
// far more often than those that stayed on the first route.
func preferFallback(s *segment.Segment) *Finding {
	rr := s.RouteRetries
	if rr.SameRouteRetries < MinRouteRetries || rr.AlternateRouteRetries < MinRouteRetries {
		return nil
	}
	same, alt := *rr.SameRouteRetrySuccessRate, *rr.AlternateRouteRetrySuccessRate
	if alt-same < MinFallbackGain {
		return nil
	}
	failed := rr.SameRouteRetries - int64(math.Round(same*float64(rr.SameRouteRetries)))
	return &Finding{Kind: "prefer_fallback",
		Problem: fmt.Sprintf("retries on another route succeeded %s of the time, retries on the same route %s",
			texttab.Format(texttab.Share, alt), texttab.Format(texttab.Share, same)),
		Evidence: []Evidence{counted("alternate-route retries", float64(rr.AlternateRouteRetries)),
			shareOf("alternate-route retry success", alt), inMs("alternate-route time per retry", *rr.AlternateRouteRetryAddedMs),
			counted("same-route retries", float64(rr.SameRouteRetries)), shareOf("same-route retry success", same),
			inMs("same-route time per retry", *rr.SameRouteRetryAddedMs)},
		Cost: Cost{Attempts: failed, TimeMs: rr.SameRouteFailedMs, Tokens: rr.SameRouteFailedTokens},
		Change: fmt.Sprintf("fail over sooner on %s: the fallback rescued %s vs %s on the same route",
			SegmentName(s.By), texttab.Format(texttab.Share, alt), texttab.Format(texttab.Share, same)),
	}
}
