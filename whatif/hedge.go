package whatif

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/retryscope/retryscope/model"
)

// HedgeOff is the --hedge-delay value that removes the recorded hedges
// ("0" says the same).
const HedgeOff = "off"

// ParseHedgeDelay reads --hedge-delay D, e.g. "100ms", or off (HedgeOff
// or 0): no hedging.
func ParseHedgeDelay(s string) (d time.Duration, off bool, err error) {
	if s == HedgeOff || s == "0" {
		return 0, true, nil
	}
	d, err = model.ParseDuration(s)
	if err != nil || d <= 0 || d > MaxWait {
		return 0, false, fmt.Errorf("hedge delay %q: want a duration above 0, at most %s, e.g. 100ms, or off", s, model.FormatDuration(MaxWait))
	}
	return d, false, nil
}

// hedging reports whether the policy sets the hedge delay
// (Policy.HedgeDelay or Policy.NoHedge).
func (p Policy) hedging() bool { return p.HedgeDelay > 0 || p.NoHedge }

// hedgedSegments are the segments whose recorded requests hedge (at least
// one of them made a second attempt while its first was still running),
// each with its client's timeout: the median duration of its recorded
// attempts that timed out, 0 when none did.
func hedgedSegments(reqs []*recRequest) map[Segment]float64 {
	out := map[Segment]float64{}
	for _, r := range reqs {
		if hedged(r) {
			out[r.seg] = 0
		}
	}
	timeouts := map[Segment][]float64{}
	for _, r := range reqs {
		if _, ok := out[r.seg]; !ok {
			continue
		}
		for _, a := range r.attempts {
			if a.trigger == "timeout" {
				timeouts[r.seg] = append(timeouts[r.seg], a.endMs-a.startMs)
			}
		}
	}
	for seg, d := range timeouts {
		slices.Sort(d)
		out[seg] = d[len(d)/2]
	}
	return out
}

// hedged: r's second attempt started while its first was running.
func hedged(r *recRequest) bool {
	return len(r.attempts) == 2 && r.attempts[1].startMs < r.attempts[0].endMs
}

// hedgeable: the policy's hedge delay applies to r, a request of a
// segment that hedges, with one attempt or a first attempt and its hedge.
func (r *replayer) hedgeable(s *replayed) bool {
	_, ok := r.pools.hedges[s.req.seg]
	return r.policy.hedging() && ok && (len(s.req.attempts) == 1 || hedged(s.req))
}

// uncut is recorded attempt a as it would have ended had the client not
// cancelled it: a cancelled attempt (a hedge's loser) runs on for its
// hidden work and is taken to succeed then, unless that passes the
// client's timeout (timeoutMs, when above 0): then it times out there,
// its server working on. Any other attempt stands as recorded.
func uncut(a recAttempt, timeoutMs float64) modAttempt {
	m := modAttempt{rec: -1, route: a.route, tries: a.tries, startMs: a.startMs, endMs: a.endMs, ok: a.ok, trigger: a.trigger,
		tokens: a.tokens, hiddenMs: a.hiddenMs, retryAfterMs: a.retryAfterMs}
	if a.trigger == "cancelled" {
		m.endMs, m.ok, m.trigger, m.hiddenMs = a.endMs+a.hiddenMs, true, "", 0
		if timeoutMs > 0 && m.endMs-m.startMs > timeoutMs {
			m.hiddenMs = m.endMs - m.startMs - timeoutMs
			m.endMs, m.ok, m.trigger = m.startMs+timeoutMs, false, "timeout"
		}
	}
	m.recEndMs = m.endMs
	return m
}

// startHedged makes the attempts of s under the policy's hedge delay: its
// first attempt as it would have run uncut; if that runs past the delay, a
// hedge starts then, taking the recorded hedge's outcome and duration
// (uncut) or, where none was recorded, one drawn from the segment's
// recorded hedges (else its first attempts) nearest in time. The first
// success wins and the other attempt is cancelled at that instant, its
// server working on; a failure waits for the other. Without hedging
// (NoHedge, or a cap of one attempt) the first attempt is the request's
// only one.
func (r *replayer) startHedged(s *replayed) {
	atts := s.req.attempts
	timeout := r.pools.hedges[s.req.seg]
	first := uncut(atts[0], timeout)
	first.rec = 0
	r.answerLoad(s, atts[0], &first)
	s.next, s.changed = len(atts), true
	d := ms(r.policy.HedgeDelay)
	at := first.startMs + d
	if r.policy.NoHedge || r.policy.Inner == 1 || first.endMs <= at {
		s.kept = []modAttempt{first}
		r.pushAt(s, first.endMs)
		if s.asRecorded() {
			s.changed = false
		}
		return
	}
	var h modAttempt
	if len(atts) == 2 {
		h = uncut(atts[1], timeout)
		h.rec = 1
	} else {
		pool := r.pools.attempts[keyOf(s.req.seg, []int{2}, "", false)]
		if len(pool) == 0 {
			pool = r.pools.firsts[s.req.seg]
		}
		h = uncut(nearInTime(pool, s.startNs+int64(at*1e6), s.rng), timeout)
		s.drawn = true
	}
	dur := h.endMs - h.startMs
	h.tries, h.startMs, h.endMs = []int{2}, at, at+dur
	if h.rec == 1 {
		r.answerLoad(s, atts[1], &h)
	}
	h.recEndMs = h.endMs
	a, b := &first, &h
	if b.endMs < a.endMs {
		a, b = b, a
	}
	// a ends first; if it won, b is cancelled then.
	if a.ok && b.endMs > a.endMs {
		b.hiddenMs = b.endMs + b.hiddenMs - a.endMs
		b.endMs, b.ok, b.trigger, b.tokens, b.retryAfterMs = a.endMs, false, "cancelled", 0, 0
	}
	asMade(&first, atts[0])
	if h.rec == 1 {
		asMade(&h, atts[1])
	}
	s.kept = []modAttempt{first, h}
	r.pushAt(s, max(first.endMs, h.endMs))
	if s.asRecorded() {
		s.changed = false
	}
}

// asMade gives m, made where recorded attempt a was, a's own times
// when it came out as a did (but for rounding), so that the load it
// offers is the recorded one to the nanosecond.
func asMade(m *modAttempt, a recAttempt) {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-6 }
	if m.ok == a.ok && m.trigger == a.trigger && near(m.startMs, a.startMs) && near(m.endMs, a.endMs) && near(m.endMs+m.hiddenMs, a.endMs+a.hiddenMs) {
		m.startMs, m.endMs, m.hiddenMs, m.tokens = a.startMs, a.endMs, a.hiddenMs, a.tokens
	}
}

// asRecorded: the attempts the hedge delay made for s are the recorded
// ones, with their outcomes and ends.
func (s *replayed) asRecorded() bool {
	if s.drawn || len(s.kept) != len(s.req.attempts) {
		return false
	}
	for i, m := range s.kept {
		a := s.req.attempts[i]
		if m.ok != a.ok || m.trigger != a.trigger || math.Abs(m.endMs-a.endMs) > 1e-3 || math.Abs(m.startMs-a.startMs) > 1e-3 {
			return false
		}
	}
	return true
}

// answerLoad makes m, recorded attempt a of s as it would have run
// uncut, answer the modeled load (with feedback): as a recorded attempt
// with m's outcome and end.
func (r *replayer) answerLoad(s *replayed, a recAttempt, m *modAttempt) {
	if r.feedback == nil {
		return
	}
	a.endMs, a.ok, a.trigger = a.startMs+m.endMs-m.startMs, m.ok, m.trigger
	r.feedback.adjust(s, a, m)
}

// pushAt schedules s's end at endMs after its start.
func (r *replayer) pushAt(s *replayed, endMs float64) {
	r.seq++
	s.hedgedRun = true
	r.queueEnd(endEvent{atNs: s.startNs + int64(endMs*1e6), seq: r.seq, s: s})
}

// endHedged closes s, whose attempts startHedged made: a hedging client
// does not retry, so a request whose attempts all failed stops there
// (attempt_cap; not_retryable when its one attempt failed before the
// hedge delay).
func (r *replayer) endHedged(s *replayed, nowNs int64) {
	ok := false
	for _, a := range s.kept {
		ok = ok || a.ok
		if r.budget != nil {
			r.budget.observe(nowNs, a.ok)
		}
	}
	switch {
	case ok:
	case !s.changed:
		s.stop = cmp.Or(s.req.detail, "unstated")
	default:
		// Without hedging the request has one try (gen's re-run says
		// attempt_cap too); with it, a lone attempt that failed before
		// the delay is not retried.
		s.stop = StopAttemptCap
		if len(s.kept) == 1 && !r.policy.NoHedge && r.policy.Inner != 1 {
			s.stop = StopNotRetried
		}
	}
	r.finish(s)
}
