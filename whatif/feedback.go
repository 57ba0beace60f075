package whatif

import (
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
)

// feedbackPasses is how many times the replay with feedback runs again on
// the load its previous pass modeled; the figures settle within a few.
const feedbackPasses = 3

// loadTriggers are the failures load alone brings about: an overloaded
// server sheds with 429s, and queueing pushes attempts past the timeout.
var loadTriggers = map[string]bool{"rate_limited": true, "timeout": true}

// feedback is the recorded relation, per route, between the attempts in
// flight when an attempt started (the server's view: an abandoned attempt
// occupies it until its hidden work ends) and how it went; and the load each
// recorded attempt met, recorded and as the previous pass modeled it.
type feedback struct {
	curves   map[string]*loadCurve
	recorded map[[2]int]float64 // [request, attempt]: attempts in flight at its start
	modeled  map[[2]int]float64
}

// loadCurve holds a route's attempts in buckets of equal count by load.
type loadCurve struct {
	buckets []loadBucket
	tokens  float64 // mean tokens of a served attempt
	// rejected is the share of served attempts whose answer the caller
	// turned down (rejected_output).
	rejected float64
}

type loadBucket struct {
	load float64            // mean attempts in flight
	fail map[string]float64 // share failed by each load trigger
	okMs float64            // mean duration of the served attempts
	// failMs and hiddenMs are the mean duration of each load trigger's
	// failures and of the server's work on them after the client gave up.
	failMs, hiddenMs map[string]float64
}

// interval is one attempt on a route, in Unix ns, with its key.
type interval struct {
	key        [2]int
	route      string
	start, end int64
}

// inFlight counts, for every interval, the others on its route running at
// its start.
func inFlight(ivs []interval) map[[2]int]float64 {
	byRoute := map[string][]interval{}
	for _, iv := range ivs {
		byRoute[iv.route] = append(byRoute[iv.route], iv)
	}
	out := make(map[[2]int]float64, len(ivs))
	for _, list := range byRoute {
		starts, ends := make([]int64, len(list)), make([]int64, len(list))
		for i, iv := range list {
			starts[i], ends[i] = iv.start, iv.end
		}
		slices.Sort(starts)
		slices.Sort(ends)
		for _, iv := range list {
			begun := sort.Search(len(starts), func(i int) bool { return starts[i] >= iv.start })
			done := sort.Search(len(ends), func(i int) bool { return ends[i] > iv.start })
			out[iv.key] = float64(begun - done)
		}
	}
	return out
}

// fitFeedback measures each route's curve from the recorded attempts (but
// those of bad requests, whose failures are not load's).
func fitFeedback(reqs []*recRequest) *feedback {
	var ivs []interval
	for i, r := range reqs {
		for j, a := range r.attempts {
			ivs = append(ivs, interval{[2]int{i, j}, a.route, r.startNs + int64(a.startMs*1e6), r.startNs + int64((a.endMs+a.hiddenMs)*1e6)})
		}
	}
	fb := &feedback{curves: map[string]*loadCurve{}, recorded: inFlight(ivs)}
	byRoute := map[string][][2]int{}
	for _, iv := range ivs {
		if reqs[iv.key[0]].attempts[iv.key[1]].trigger != "client_error" {
			byRoute[iv.route] = append(byRoute[iv.route], iv.key)
		}
	}
	for route, keys := range byRoute {
		slices.SortFunc(keys, func(a, b [2]int) int {
			la, lb := fb.recorded[a], fb.recorded[b]
			if la != lb {
				if la < lb {
					return -1
				}
				return 1
			}
			return 0
		})
		fb.curves[route] = fitCurve(reqs, keys, fb.recorded)
	}
	return fb
}

// fitCurve buckets a route's attempts, sorted by load, ten to a curve (at
// least 50 attempts a bucket).
func fitCurve(reqs []*recRequest, keys [][2]int, load map[[2]int]float64) *loadCurve {
	c := &loadCurve{}
	size := max(50, len(keys)/10)
	var okTokens, oks, rejected float64
	for lo := 0; lo < len(keys); {
		hi := min(len(keys), lo+size)
		if len(keys)-hi < size/2 {
			hi = len(keys)
		}
		b := loadBucket{fail: map[string]float64{}, failMs: map[string]float64{}, hiddenMs: map[string]float64{}}
		var nOK float64
		for _, k := range keys[lo:hi] {
			a := reqs[k[0]].attempts[k[1]]
			b.load += load[k]
			switch {
			case a.served():
				nOK++
				b.okMs += a.endMs - a.startMs
				okTokens += float64(a.tokens)
				oks++
				if !a.ok {
					rejected++
				}
			case loadTriggers[a.trigger]:
				b.fail[a.trigger]++
				b.failMs[a.trigger] += a.endMs - a.startMs
				b.hiddenMs[a.trigger] += a.hiddenMs
			}
		}
		n := float64(hi - lo)
		b.load /= n
		for t := range loadTriggers {
			b.failMs[t] /= max(b.fail[t], 1)
			b.hiddenMs[t] /= max(b.fail[t], 1)
			b.fail[t] /= n
		}
		b.okMs /= max(nOK, 1)
		c.buckets = append(c.buckets, b)
		lo = hi
	}
	if oks > 0 {
		c.tokens, c.rejected = okTokens/oks, rejected/oks
	}
	// Load cannot make a server faster or shed less: where the recorded
	// curve falls as load rises, something else varied with it (an
	// incident fails attempts fast and so empties the server), and the
	// buckets are pooled until each figure rises or holds.
	for t := range loadTriggers {
		monotone(c.buckets, func(b *loadBucket) float64 { return b.fail[t] }, func(b *loadBucket, v float64) { b.fail[t] = v })
	}
	monotone(c.buckets, func(b *loadBucket) float64 { return b.okMs }, func(b *loadBucket, v float64) { b.okMs = v })
	return c
}

// monotone makes a figure of the buckets non-decreasing in load by pooling
// adjacent violators (each bucket weighing the same, as they hold equal
// counts).
func monotone(bs []loadBucket, get func(*loadBucket) float64, set func(*loadBucket, float64)) {
	type block struct {
		sum float64
		n   int
	}
	var blocks []block
	for i := range bs {
		blocks = append(blocks, block{get(&bs[i]), 1})
		for len(blocks) > 1 {
			a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
			if a.sum/float64(a.n) <= b.sum/float64(b.n) {
				break
			}
			blocks = append(blocks[:len(blocks)-2], block{a.sum + b.sum, a.n + b.n})
		}
	}
	i := 0
	for _, b := range blocks {
		for range b.n {
			set(&bs[i], b.sum/float64(b.n))
			i++
		}
	}
}

// at interpolates the curve's bucket figures at load, clamped to the
// loads recorded.
func (c *loadCurve) at(load float64, figure func(loadBucket) float64) float64 {
	bs := c.buckets
	if load <= bs[0].load {
		return figure(bs[0])
	}
	for i := 1; i < len(bs); i++ {
		if load <= bs[i].load {
			w := (load - bs[i-1].load) / (bs[i].load - bs[i-1].load)
			return figure(bs[i-1])*(1-w) + figure(bs[i])*w
		}
	}
	return figure(bs[len(bs)-1])
}

// nearest is the bucket whose load is closest.
func (c *loadCurve) nearest(load float64) loadBucket {
	best := c.buckets[0]
	for _, b := range c.buckets {
		if abs(b.load-load) < abs(best.load-load) {
			best = b
		}
	}
	return best
}

func abs(v float64) float64 { return max(v, -v) }

// adjust makes m, recorded attempt a of s, answer the load the previous
// pass modeled. A served attempt (a success, or an answer the caller
// rejected) takes the change in the route's mean served duration between
// the recorded load and the modeled one: queueing adds to the time to the
// first byte, whatever the work. A load-driven failure turns into a served
// attempt, or a served attempt into one, with the probability that keeps
// the share of each kind of such failure on the curve; a failure turned
// served is rejected as often as the request's served answers were (the
// route's, if it was never served). When
// the outcome changes, the recorded attempts after it no longer apply: the
// rest of the request is drawn. The draw is fixed per attempt, so passes
// agree. It reports whether m changed.
func (fb *feedback) adjust(s *replayed, a recAttempt, m *modAttempt) bool {
	key := [2]int{s.idx, m.rec}
	c := fb.curves[a.route]
	modeled, ok := fb.modeled[key]
	if c == nil || !ok || !(a.served() || loadTriggers[a.trigger]) {
		return false
	}
	recorded := fb.recorded[key]
	if modeled == recorded {
		return false
	}
	share := func(t string) func(loadBucket) float64 { return func(b loadBucket) float64 { return b.fail[t] } }
	okMs := func(b loadBucket) float64 { return b.okMs }
	okRec, okMod := c.at(recorded, okMs), c.at(modeled, okMs)
	u := uniform(s.req.id, m.rec)
	if loadTriggers[a.trigger] {
		pRec, pMod := c.at(recorded, share(a.trigger)), c.at(modeled, share(a.trigger))
		if flip := 1 - pMod/pRec; pMod < pRec && u < flip {
			m.ok, m.trigger, m.tokens = true, "", int64(c.tokens)
			rejected := c.rejected
			if served, n := s.req.verdicts(); served > 0 {
				rejected = float64(n) / float64(served)
			}
			if u/flip < rejected {
				m.ok, m.trigger = false, "rejected_output"
			}
			m.endMs, m.hiddenMs = m.startMs+okMod, 0
			s.drawn = true
		}
		return true
	}
	// Of the attempts served at the recorded load, the rise in the shares
	// takes its part, each kind in proportion to its own rise.
	okShare, rise := 1.0, 0.0
	rises := map[string]float64{}
	for _, t := range loadTriggerOrder {
		pRec, pMod := c.at(recorded, share(t)), c.at(modeled, share(t))
		okShare -= pRec
		if pMod > pRec {
			rises[t] = pMod - pRec
			rise += pMod - pRec
		}
	}
	if okShare > 0 && u < rise/okShare {
		t := ""
		for _, k := range loadTriggerOrder {
			if t == "" && u < rises[k]/okShare {
				t = k
			}
			u -= rises[k] / okShare
		}
		m.ok, m.trigger, m.tokens = false, t, 0
		b := c.nearest(modeled)
		m.endMs, m.hiddenMs = m.startMs+b.failMs[t], b.hiddenMs[t]
		s.drawn = true
		return true
	}
	m.endMs = m.startMs + max(0, a.endMs-a.startMs+okMod-okRec)
	return true
}

// loadTriggerOrder is loadTriggers in a fixed order, for the draws.
var loadTriggerOrder = func() []string {
	out := make([]string, 0, len(loadTriggers))
	for t := range loadTriggers {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}()

// uniform is a fixed draw in [0, 1) for attempt i of a request.
func uniform(id string, i int) float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	h.Write([]byte(":" + strconv.Itoa(i)))
	return float64(h.Sum64()>>11) / (1 << 53)
}

// modeledLoads counts, for every recorded attempt a pass made, the
// attempts in flight on its route at its start in that pass.
func modeledLoads(reps []*replayed) map[[2]int]float64 {
	var ivs []interval
	drawn := -1
	for i, s := range reps {
		for _, m := range s.kept {
			key := [2]int{i, m.rec}
			if m.rec < 0 {
				key = [2]int{i, drawn}
				drawn--
			}
			ivs = append(ivs, interval{key, m.route, s.startNs + int64(m.startMs*1e6), s.startNs + int64((m.endMs+m.hiddenMs)*1e6)})
		}
	}
	return inFlight(ivs)
}

// feedbackAssumptions replace the first assumption of the replay without
// feedback.
func feedbackAssumptions() []string {
	return []string{
		"load feedback: per route, the mean duration of a served attempt and the share of each load-driven failure (429 sheds, timeouts) follow their recorded relation to the attempts in flight at the attempt's start (counting the server's hidden work after the client gave up), fitted in ten buckets of equal count, made non-decreasing in load (load never makes a server faster or shed less) and interpolated, clamped to the loads recorded",
		"a served attempt takes the change in the mean served duration between its recorded load and the modeled one (queueing adds to the wait for the first byte); a load-driven failure becomes a served attempt, or a served one such a failure, with the probability that keeps each share on its curve; other failures stand; after such a change the rest of the request is drawn",
		"the replay runs " + strconv.Itoa(feedbackPasses) + " more times, each on the load the previous one modeled",
	}
}
