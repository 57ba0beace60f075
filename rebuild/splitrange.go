package rebuild

import "math"

// alternatives lists, for every failure with candidates, the decision that
// was nearly as likely as the one taken: no join where the join was less
// than joinDoubt times likelier than none; the next-best attempt where it
// was nearly as likely as the chosen one; a join where one was nearly as
// likely as none. Each is measured on its own, as the change it makes to
// the request counts.
//
// A failure of a class that is retried, below the cap, with no candidate
// at all was most likely retried where nothing shows it (by an attempt
// counted as a request of its own): that too is an alternative.
func alternatives(t []*splitAttempt, edges []joinEdge, retryChance func(*splitAttempt) float64) []alternative {
	doubt := math.Log(joinDoubt)
	byFrom := map[int][]joinEdge{}
	for _, e := range edges {
		byFrom[e.from] = append(byFrom[e.from], e)
	}
	var out []alternative
	for i, f := range t {
		cands := byFrom[i]
		if len(cands) == 0 {
			if f.next < 0 && retriedHere(f, retryChance(f)) {
				out = append(out, lostRetry(t, i))
			}
			continue
		}
		chosen := math.Inf(-1)
		if f.next >= 0 {
			for _, e := range cands {
				if e.to == f.next {
					chosen = e.w
				}
			}
			if chosen < doubt {
				out = append(out, alternative{headOf(t, i), chainEdit(t, func(l *links) { l.cut(i) })})
			}
		}
		best := -1
		for k, e := range cands {
			if e.to != f.next && (best < 0 || e.w > cands[best].w) {
				best = k
			}
		}
		// A failure left unretried whose candidates are all unlikely was,
		// if its class is retried, most likely retried where nothing shows
		// it, as when it has none.
		lost := f.next < 0 && retriedHere(f, retryChance(f))
		if best < 0 {
			if lost {
				out = append(out, lostRetry(t, i))
			}
			continue
		}
		e := cands[best]
		if f.next < 0 && e.w <= -doubt || f.next >= 0 && e.w <= chosen-doubt {
			if lost {
				out = append(out, lostRetry(t, i))
			}
			continue
		}
		if f.next < 0 && t[e.to].prev >= 0 {
			// Taking it from the failure it retries now is a swap there, not
			// a join: weigh it against that join.
			if old := edgeWeight(byFrom[t[e.to].prev], e.to); e.w <= old-doubt {
				if lost {
					out = append(out, lostRetry(t, i))
				}
				continue
			}
		}
		out = append(out, alternative{headOf(t, i), chainEdit(t, func(l *links) { l.link(i, e.to) })})
	}
	return out
}

// retriedHere: a failure with chance p of being retried is more than
// 1/joinDoubt as likely retried as not.
func retriedHere(f *splitAttempt, p float64) bool {
	return f.class != "" && p > 0 && p/(1-p) >= 1/joinDoubt
}

// lostRetry is the change had failure i been retried by an attempt now
// counted as a request of its own, taken to be a lone success (the common
// case): one request and one failure fewer, one retried success more.
func lostRetry(t []*splitAttempt, i int) alternative {
	d := countDelta{requests: -1, failed: -1, retriedOK: 1}
	if t[i].prev < 0 {
		d.retried = 1
	}
	return alternative{headOf(t, i), d}
}

func edgeWeight(edges []joinEdge, to int) float64 {
	for _, e := range edges {
		if e.to == to {
			return e.w
		}
	}
	return math.Inf(1)
}

func headOf(t []*splitAttempt, i int) *span {
	for t[i].prev >= 0 {
		i = t[i].prev
	}
	return t[i].s
}

// links is the target's joins with some of them changed.
type links struct {
	t          []*splitAttempt
	next, prev map[int]int
	touched    []int
}

func (l *links) nextOf(i int) int {
	if v, ok := l.next[i]; ok {
		return v
	}
	return l.t[i].next
}

func (l *links) prevOf(i int) int {
	if v, ok := l.prev[i]; ok {
		return v
	}
	return l.t[i].prev
}

// cut ends i's chain at i.
func (l *links) cut(i int) {
	if j := l.nextOf(i); j >= 0 {
		l.next[i], l.prev[j] = -1, -1
		l.touched = append(l.touched, i, j)
	}
}

// link makes j the retry of i, taking j from any failure it retried and
// cutting i's current retry loose.
func (l *links) link(i, j int) {
	l.cut(i)
	if p := l.prevOf(j); p >= 0 {
		l.cut(p)
	}
	l.next[i], l.prev[j] = j, i
	l.touched = append(l.touched, i, j)
}

// chainEdit is what change does to the counts of the chains it touches.
func chainEdit(t []*splitAttempt, change func(*links)) countDelta {
	l := &links{t: t, next: map[int]int{}, prev: map[int]int{}}
	change(l)
	before := chainCounts(l.touched, func(i int) int { return t[i].prev }, func(i int) int { return t[i].next }, t)
	after := chainCounts(l.touched, l.prevOf, l.nextOf, t)
	return countDelta{after.requests - before.requests, after.retried - before.retried,
		after.retriedOK - before.retriedOK, after.failed - before.failed}
}

// chainCounts counts the chains through the given attempts: requests,
// retried ones, retried ones that succeeded, failed ones.
func chainCounts(nodes []int, prev, next func(int) int, t []*splitAttempt) countDelta {
	var c countDelta
	seen := map[int]bool{}
	for _, i := range nodes {
		for prev(i) >= 0 {
			i = prev(i)
		}
		if seen[i] {
			continue
		}
		seen[i] = true
		n, last := 1, i
		for next(last) >= 0 {
			last = next(last)
			n++
		}
		c.requests++
		failed := t[last].class != ""
		if failed {
			c.failed++
		}
		if n > 1 {
			c.retried++
			if !failed {
				c.retriedOK++
			}
		}
	}
	return c
}
