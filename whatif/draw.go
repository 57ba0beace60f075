package whatif

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
)

// poolKey is a segment, a try number per layer (outermost first), the
// trigger of the failure before the attempt ("" for any) and whether the
// attempt is of the fallback try.
type poolKey struct {
	seg      Segment
	tries    string
	after    string
	fallback bool
}

func keyOf(seg Segment, tries []int, after string, fallback bool) poolKey {
	return poolKey{seg, fmt.Sprint(tries), after, fallback}
}

// pools holds the recorded attempts by segment and tries, to draw the
// attempts a policy makes that the recorded requests never made; and, per
// segment and depth of nesting, the highest try recorded in each layer: the
// recorded caps (the app loop's before the fallback try).
type pools struct {
	attempts map[poolKey][]recAttempt
	caps     map[Segment]map[int][]int
	// fallbacks counts, per segment, the requests whose fallback try was
	// each app try: the segment's fallback try is the commonest.
	fallbacks map[Segment]map[int]int
	// served are the durations of the served attempts by segment and
	// route (sorted), and by route alone under an empty segment.
	served map[Segment]map[string][]float64
	// firsts are each segment's first attempts (but bad requests'), in
	// start order, to draw a moved closed-loop request's first attempt.
	firsts map[Segment][]recAttempt
	// loops are the segments whose client is a closed loop.
	loops loops
	// quotas are the retry quotas the recorded clients showed, by
	// service (RecordedQuota).
	quotas map[string]*RecordedQuota
	// hedges are the segments whose recorded requests hedge, with their
	// client's timeout (hedgedSegments).
	hedges map[Segment]float64
}

// medianMs is the median duration of the segment's served attempts on
// route (of the route's, if the segment has none there; 0 if it has none).
func (p pools) medianMs(seg Segment, route string) float64 {
	d := p.served[seg][route]
	if len(d) == 0 {
		d = p.served[Segment{}][route]
	}
	if len(d) == 0 {
		return 0
	}
	return d[len(d)/2]
}

// nearWindow is how many recorded attempts, nearest in time, a draw
// chooses among: faults come in incidents, so an attempt's fate depends on
// when it is made.
const nearWindow = 20

// nearInTime draws one of the nearWindow attempts of pool (in start order)
// that started nearest to atNs.
func nearInTime(pool []recAttempt, atNs int64, rng *rand.Rand) recAttempt {
	lo, hi := nearRange(pool, atNs)
	return pool[lo+rng.IntN(hi-lo)]
}

// nearRange is the range of the nearWindow attempts of pool (in start
// order) that started nearest to atNs.
func nearRange(pool []recAttempt, atNs int64) (lo, hi int) {
	i, _ := slices.BinarySearchFunc(pool, atNs, func(a recAttempt, t int64) int { return cmp.Compare(a.atNs, t) })
	lo = max(0, min(i-nearWindow/2, len(pool)-nearWindow))
	return lo, min(len(pool), lo+nearWindow)
}

func newPools(reqs []*recRequest) pools {
	p := pools{attempts: map[poolKey][]recAttempt{}, caps: map[Segment]map[int][]int{}, served: map[Segment]map[string][]float64{},
		fallbacks: map[Segment]map[int]int{}, firsts: map[Segment][]recAttempt{}, loops: closedLoops(reqs), hedges: hedgedSegments(reqs)}
	for _, r := range reqs {
		if a := r.attempts[0]; a.trigger != "client_error" {
			p.firsts[r.seg] = append(p.firsts[r.seg], a)
		}
		if n := r.fallbackTry(); n > 0 {
			if p.fallbacks[r.seg] == nil {
				p.fallbacks[r.seg] = map[int]int{}
			}
			p.fallbacks[r.seg][n]++
		}
		for i, a := range r.attempts {
			if a.served() {
				for _, seg := range []Segment{r.seg, {}} {
					if p.served[seg] == nil {
						p.served[seg] = map[string][]float64{}
					}
					p.served[seg][a.route] = append(p.served[seg][a.route], a.endMs-a.startMs)
				}
			}
			caps := p.recordedCaps(r.seg, len(a.tries))
			for i, n := range a.tries {
				if i > 0 || !a.fallback {
					caps[i] = max(caps[i], n)
				}
			}
			if a.trigger == "client_error" || slices.Equal(a.tries, r.attempts[0].tries) {
				continue
			}
			for _, k := range []poolKey{keyOf(r.seg, a.tries, "", a.fallback), keyOf(r.seg, a.tries, r.attempts[i-1].trigger, a.fallback)} {
				p.attempts[k] = append(p.attempts[k], a)
			}
		}
	}
	for _, pool := range p.firsts {
		slices.SortStableFunc(pool, func(a, b recAttempt) int { return cmp.Compare(a.atNs, b.atNs) })
	}
	for _, pool := range p.attempts {
		slices.SortStableFunc(pool, func(a, b recAttempt) int { return cmp.Compare(a.atNs, b.atNs) })
	}
	for _, byRoute := range p.served {
		for _, d := range byRoute {
			slices.Sort(d)
		}
	}
	return p
}

// fallbackTry is the app try of the segment's fallback, 0 when its
// requests recorded none.
func (p pools) fallbackTry(seg Segment) int {
	best, count := 0, 0
	for n, c := range p.fallbacks[seg] {
		if c > count || c == count && n > best {
			best, count = n, c
		}
	}
	return best
}

// recordedCaps are the highest tries per layer the segment recorded in
// requests with depth layers.
func (p pools) recordedCaps(seg Segment, depth int) []int {
	byDepth := p.caps[seg]
	if byDepth == nil {
		byDepth = map[int][]int{}
		p.caps[seg] = byDepth
	}
	if byDepth[depth] == nil {
		byDepth[depth] = make([]int, depth)
	}
	return byDepth[depth]
}

// draw makes the attempt after last when the policy makes one the recorded
// request did not: past the recorded cap of a one-loop request, or, in a
// nested request whose inner loop the policy cut, the outer loop's retry.
// The attempt is a recorded one of the same segment and tries that followed
// a failure with the same trigger (or, without one, any), drawn at random
// with its outcome, duration, wait before it and tokens (past the highest
// try recorded, one of the highest); a bad request (client_error) fails
// the same way again.
func (r *replayer) draw(s *replayed, last modAttempt, cut cutKind) (modAttempt, bool) {
	tries, ok := r.nextTries(s.req.seg, last, cut)
	if !ok {
		return modAttempt{}, false
	}
	fallback := last.fallback
	pool := r.pools.attempts[keyOf(s.req.seg, tries, last.trigger, fallback)]
	if len(pool) == 0 {
		pool = r.pools.attempts[keyOf(s.req.seg, tries, "", fallback)]
	}
	if len(pool) == 0 && len(tries) == 1 {
		pool = r.pools.attempts[keyOf(s.req.seg, r.pools.recordedCaps(s.req.seg, 1), "", false)]
	}
	if len(pool) == 0 {
		return modAttempt{}, false
	}
	pick := nearInTime(pool, s.startNs+int64(last.endMs*1e6), s.rng)
	start := last.endMs + r.rewait(s, tries, last, max(0, pick.gapMs))
	return r.drawn(s, last, pick, tries, start, fallback), true
}

// fallbackAttempt is the fallback try the policy makes when it ended the
// primary app loop of s failed, unless the policy removes the fallback,
// the segment recorded none or s has made it: the first attempt of the
// request's own recorded fallback try, else one drawn from the segment's
// (its first attempts, numbered as recorded), each after its recorded
// wait (the client falls over without the app loop's backoff). Its SDK
// retries are drawn after it.
func (r *replayer) fallbackAttempt(s *replayed, last modAttempt) (modAttempt, bool) {
	fb := r.pools.fallbackTry(s.req.seg)
	if r.policy.NoFallback || fb == 0 || len(last.tries) < 2 {
		return modAttempt{}, false
	}
	for _, k := range s.kept {
		if k.fallback {
			return modAttempt{}, false
		}
	}
	for o, a := range s.req.attempts {
		if a.fallback {
			s.spare = slices.DeleteFunc(s.spare, func(i int) bool { return i == o })
			m := r.spareAt(s, o, a.tries, last.endMs+max(0, a.gapMs))
			m.fallback = true
			return m, true
		}
	}
	tries := make([]int, len(last.tries))
	tries[0] = fb
	for i := 1; i < len(tries); i++ {
		tries[i] = 1
	}
	pool := r.pools.attempts[keyOf(s.req.seg, tries, last.trigger, true)]
	if len(pool) == 0 {
		pool = r.pools.attempts[keyOf(s.req.seg, tries, "", true)]
	}
	if len(pool) == 0 {
		return modAttempt{}, false
	}
	pick := nearInTime(pool, s.startNs+int64(last.endMs*1e6), s.rng)
	return r.drawn(s, last, pick, tries, last.endMs+max(0, pick.gapMs), true), true
}

// drawn is the attempt with these tries, starting at start, that pick
// (drawn from the segment's recorded attempts) gives s after last.
func (r *replayer) drawn(s *replayed, last modAttempt, pick recAttempt, tries []int, start float64, fallback bool) modAttempt {
	if o := s.takeSpare(pick.route, fallback); o >= 0 {
		// The request's own next attempt, which the policy cut, is the
		// draw for this one: the same moment, the same request, the same
		// route; only the wait before it is the loop's. (A loop that
		// falls over to another route draws from the segment.)
		m := r.spareAt(s, o, tries, start)
		m.fallback = fallback
		return m
	}
	next := modAttempt{rec: -1, route: pick.route, tries: tries, startMs: start, endMs: start + pick.endMs - pick.startMs,
		ok: pick.ok, trigger: pick.trigger, tokens: pick.tokens, hiddenMs: pick.hiddenMs, retryAfterMs: pick.retryAfterMs,
		fallback: fallback}
	if last.trigger == "client_error" {
		next.endMs = start + last.endMs - last.startMs
		next.ok, next.trigger, next.tokens, next.hiddenMs = false, last.trigger, 0, last.hiddenMs
	}
	if served, rejected := s.req.verdicts(); served > 0 && (next.ok || next.trigger == "rejected_output") {
		// Whether the caller accepts an answer is the request's own
		// affair (its prompt, its check): a served attempt is turned down
		// as often as this request's were.
		next.ok = s.rng.Float64() >= float64(rejected)/float64(served)
		next.trigger = ""
		if !next.ok {
			next.trigger = "rejected_output"
		}
	}
	next.recEndMs = next.endMs
	s.changed, s.drawn = true, true
	return next
}

// nextTries is the policy's next attempt after last, when the recorded
// request gives none: in a one-loop request, the next try past the
// recorded cap if the policy raises it; in a nested one, after a cut inner
// retry, the outer loop's next try while it has tries left, and after a
// drawn attempt, the inner loop's next try where the segment recorded
// inner retries after that trigger, else the outer loop's. A cut outer
// retry is the end.
func (r *replayer) nextTries(seg Segment, last modAttempt, cut cutKind) ([]int, bool) {
	tries := last.tries
	n := len(tries)
	caps := slices.Clone(r.pools.recordedCaps(seg, n))
	if r.policy.Inner > 0 {
		caps[n-1] = r.policy.Inner
	}
	if r.policy.App > 0 && n > 1 {
		caps[0] = r.policy.App
	}
	next := slices.Clone(tries)
	if n == 1 {
		if tries[0] < caps[0] && (tries[0] >= r.pools.recordedCaps(seg, 1)[0] || cut == cutDrawn) {
			next[0]++
			return next, true
		}
		return nil, false
	}
	if cut == cutDrawn && tries[n-1] < caps[n-1] {
		next[n-1]++
		if len(r.pools.attempts[keyOf(seg, next, last.trigger, last.fallback)]) > 0 {
			return next, true
		}
		next[n-1]--
	}
	if last.fallback {
		// The fallback try is the app loop's last.
		return nil, false
	}
	if (cut == cutInner || cut == cutDrawn) && tries[0] < caps[0] {
		next[0]++
		for i := 1; i < n; i++ {
			next[i] = 1
		}
		return next, true
	}
	return nil, false
}

// spareAt is the attempt with these tries, starting at start, that takes
// the outcome of recorded attempt o of s (one the policy cut); with
// feedback, it answers the modeled load.
func (r *replayer) spareAt(s *replayed, o int, tries []int, start float64) modAttempt {
	b := s.req.attempts[o]
	m := modAttempt{rec: o, route: b.route, tries: tries, startMs: start, endMs: start + b.endMs - b.startMs,
		ok: b.ok, trigger: b.trigger, tokens: b.tokens, hiddenMs: b.hiddenMs, retryAfterMs: b.retryAfterMs}
	if r.feedback != nil {
		r.feedback.adjust(s, b, &m)
	}
	m.recEndMs = m.endMs
	s.changed, s.drawn = true, true
	return m
}

// firstAttempt is s's first attempt at its modeled start. A request that
// starts where it was recorded, or near enough that its recorded first
// attempt is among the nearWindow of the segment's first attempts nearest
// to its new moment (any draw there could have been its own), keeps its
// recorded attempts. One that moved further, a closed-loop request after
// its worker's modeled requests, meets the conditions of its new moment:
// its first attempt is drawn from the segment's first attempts nearest to
// it and the rest of the request is drawn after it. A bad request
// (client_error) keeps its recorded attempts: it fails again.
func (r *replayer) firstAttempt(s *replayed) modAttempt {
	a := s.req.attempts[0]
	pool := r.pools.firsts[s.req.seg]
	at := s.startNs + int64(a.startMs*1e6)
	if s.startNs == s.req.startNs || a.trigger == "client_error" || len(pool) == 0 {
		return r.recorded(s, 0)
	}
	if lo, hi := nearRange(pool, at); a.atNs >= pool[lo].atNs && a.atNs <= pool[hi-1].atNs {
		return r.recorded(s, 0)
	}
	s.moved = true
	return r.drawn(s, modAttempt{}, nearInTime(pool, at, s.rng), a.tries, a.startMs, false)
}
