package whatif

// pools holds, per segment, the recorded retries of one-loop requests by
// attempt number, to draw the attempts a higher cap would add; and the
// highest try each segment recorded, its recorded cap.
type pools struct {
	retries map[Segment][][]recAttempt // [n-2]: the attempts numbered n ≥ 2
	caps    map[Segment]int
}

func newPools(reqs []*recRequest) pools {
	p := pools{retries: map[Segment][][]recAttempt{}, caps: map[Segment]int{}}
	for _, r := range reqs {
		for _, a := range r.attempts {
			if len(a.tries) != 1 {
				continue
			}
			n := a.tries[0]
			p.caps[r.seg] = max(p.caps[r.seg], n)
			if n < 2 || a.trigger == "client_error" {
				continue
			}
			byN := p.retries[r.seg]
			for len(byN) < n-1 {
				byN = append(byN, nil)
			}
			byN[n-2] = append(byN[n-2], a)
			p.retries[r.seg] = byN
		}
	}
	return p
}

// at returns the segment's recorded attempts numbered n, or, past the
// highest number recorded, those of the highest.
func (p pools) at(seg Segment, n int) []recAttempt {
	byN := p.retries[seg]
	if len(byN) == 0 {
		return nil
	}
	return byN[min(n, len(byN)+1)-2]
}

// draw makes the attempt after last when the recorded attempts ran out at
// the segment's recorded cap and the policy allows more: a bad request
// (client_error) fails the same way again; any other failure is followed
// by a recorded attempt of that number in the segment, drawn at random
// with its outcome, duration, wait before it and tokens.
func (r *replayer) draw(s *replayed, last modAttempt) (modAttempt, bool) {
	if len(last.tries) != 1 {
		return modAttempt{}, false
	}
	n, seg := last.tries[0], s.req.seg
	if r.policy.Inner <= n || n < r.pools.caps[seg] {
		return modAttempt{}, false
	}
	pool := r.pools.at(seg, n+1)
	if len(pool) == 0 {
		return modAttempt{}, false
	}
	pick := pool[s.rng.IntN(len(pool))]
	start := last.endMs + max(0, pick.gapMs)
	next := modAttempt{tries: []int{n + 1}, startMs: start, endMs: start + pick.endMs - pick.startMs,
		ok: pick.ok, trigger: pick.trigger, tokens: pick.tokens}
	if last.trigger == "client_error" {
		next.endMs = start + last.endMs - last.startMs
		next.ok, next.trigger, next.tokens = false, last.trigger, 0
	}
	next.recEndMs = next.endMs
	s.changed = true
	return next, true
}
