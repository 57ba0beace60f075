package sim

import "math/rand/v2"

// DeadlineAttribute is the anchor-span attribute that states a request's
// deadline, in milliseconds from its start (Config.Deadline).
const DeadlineAttribute = "retryscope.deadline_ms"

// planOutcomePathologies marks a request for the opt-in outcome pathologies
// (a deadline, abandoned streams). Its draws
// come from a random stream of its own, so a workload without them is
// unchanged.
func (p *planner) planOutcomePathologies(r *simRequest) {
	if p.cfg.Deadline > 0 && r.shape == ShapeExplicit {
		r.deadline = int64(p.cfg.Deadline)
	}
	if p.cfg.AbandonStreams > 0 && r.stream && r.tokensOnAttempts {
		rng := rand.New(rand.NewPCG(uint64(p.cfg.Seed), 0x9e3779b97f4a7c15^uint64(r.idx)))
		if rng.Float64() < p.cfg.AbandonStreams {
			// The client stops reading between 20% and 80% of the way
			// through the stream.
			r.abandonAt = 0.2 + 0.6*rng.Float64()
		}
	}
}

// pathologies change what the client makes of an attempt the server has
// answered: a stream abandoned part-way, an attempt the deadline cuts.
func (r *simRequest) pathologies(a *attempt) {
	if r.abandonAt > 0 && a.fault == faultNone && a.firstToken > 0 && a.end > a.firstToken {
		// The client stops reading: it keeps the tokens it read and
		// cancels the call; the server generates the rest in vain.
		cut := a.firstToken + int64(float64(a.end-a.firstToken)*r.abandonAt)
		a.outTokens = tokensBy(a.serverOut, a.firstToken, a.end, cut)
		a.fault, a.end = faultCancelled, cut
	}
	if dl := r.start + r.deadline; r.deadline > 0 && a.end > dl {
		// The deadline cancels the attempt in flight.
		if a.fault == faultNone {
			a.uncutMs = float64(a.end-a.start) / 1e6
		}
		a.fault, a.end, a.httpStatus, a.retryAfterS = faultTimeout, dl, 0, 0
		if a.firstToken >= dl {
			a.firstToken = 0
		}
		a.outTokens = 0
		if a.firstToken > 0 && r.tokensOnAttempts {
			a.outTokens = tokensBy(a.serverOut, a.firstToken, a.serverEnd, dl)
		}
	}
}

// endedByPathology ends the request when the attempt that just ended was
// the client's own cancellation or ran into the deadline.
func (s *simulation) endedByPathology(r *simRequest, a *attempt, now int64) bool {
	switch {
	case a.fault == faultCancelled:
		s.finish(r, a, false, "cancelled", now)
	case r.deadline > 0 && now >= r.start+r.deadline:
		s.finish(r, a, false, "deadline", now)
	default:
		return false
	}
	return true
}

// pastDeadline: the retry that would start at t comes at or after the
// deadline, so the wait before it is cut short there and the request fails.
func (s *simulation) pastDeadline(r *simRequest, a *attempt, t int64) bool {
	dl := r.start + r.deadline
	if r.deadline == 0 {
		return false
	}
	if s.cfg.Policy.DeadlineAdmit && float64(dl-t) < s.served.median(r.clientKey(a))*1e6 {
		// A deadline-aware client does not start a retry that cannot
		// finish in time, nor wait for it: the request fails when the
		// attempt before it ended.
		if n := len(r.waits); n > 0 && r.waits[n-1].after == a {
			r.waits = r.waits[:n-1]
		}
		s.finish(r, a, false, "deadline", a.end)
		return true
	}
	if t < dl {
		return false
	}
	for i := range r.waits {
		r.waits[i].end = max(min(r.waits[i].end, dl), r.waits[i].start)
	}
	s.finish(r, a, false, "deadline", dl)
	return true
}

// markDeadline states the request's deadline on its anchor span.
func (r *simRequest) markDeadline(anchor *span) {
	if r.deadline > 0 {
		anchor.set(DeadlineAttribute, nsToMs(r.deadline))
	}
}
