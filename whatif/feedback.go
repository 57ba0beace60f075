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
	tokens  float64 // mean tokens of a successful attempt
}

type loadBucket struct {
	load   float64 // mean attempts in flight
	fail   float64 // share failed by a load trigger
	okMs   float64 // mean duration of the successful attempts
	failMs float64 // mean duration of the load-triggered failures
	fails  map[string]int
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
	var okTokens, oks float64
	for lo := 0; lo < len(keys); {
		hi := min(len(keys), lo+size)
		if len(keys)-hi < size/2 {
			hi = len(keys)
		}
		b := loadBucket{fails: map[string]int{}}
		var nOK, nFail float64
		for _, k := range keys[lo:hi] {
			a := reqs[k[0]].attempts[k[1]]
			b.load += load[k]
			switch {
			case a.ok:
				nOK++
				b.okMs += a.endMs - a.startMs
				okTokens += float64(a.tokens)
				oks++
			case loadTriggers[a.trigger]:
				nFail++
				b.failMs += a.endMs - a.startMs
				b.fails[a.trigger]++
			}
		}
		n := float64(hi - lo)
		b.load /= n
		b.fail = nFail / n
		b.okMs /= max(nOK, 1)
		b.failMs /= max(nFail, 1)
		c.buckets = append(c.buckets, b)
		lo = hi
	}
	if oks > 0 {
		c.tokens = okTokens / oks
	}
	return c
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
// pass modeled: its duration scales as the route's successful attempts'
// mean duration does between the recorded load and the modeled one, and
// a load-driven failure turns into a success (or a success into one) with
// the probability that makes the share of such failures follow the curve.
// The draw is fixed per attempt, so passes agree. It reports whether m
// changed.
func (fb *feedback) adjust(s *replayed, a recAttempt, m *modAttempt) bool {
	key := [2]int{s.idx, m.rec}
	c := fb.curves[a.route]
	modeled, ok := fb.modeled[key]
	if c == nil || !ok || a.trigger == "client_error" {
		return false
	}
	recorded := fb.recorded[key]
	if modeled == recorded {
		return false
	}
	failShare := func(b loadBucket) float64 { return b.fail }
	pRec, pMod := c.at(recorded, failShare), c.at(modeled, failShare)
	okRec, okMod := c.at(recorded, func(b loadBucket) float64 { return b.okMs }), c.at(modeled, func(b loadBucket) float64 { return b.okMs })
	u := uniform(s.req.id, m.rec)
	dur := a.endMs - a.startMs
	switch {
	case loadTriggers[a.trigger] && pMod < pRec && u < 1-pMod/pRec:
		m.ok, m.trigger, m.tokens = true, "", int64(c.tokens)
		dur = okMod
	case a.ok && pMod > pRec && u < (pMod-pRec)/(1-pRec):
		b := c.nearest(modeled)
		m.ok, m.trigger, m.tokens = false, commonest(b.fails), 0
		dur = b.failMs
	case a.ok && okRec > 0:
		dur *= okMod / okRec
	}
	m.endMs = m.startMs + dur
	return true
}

func commonest(counts map[string]int) string {
	best, n := "rate_limited", -1
	for k, v := range counts {
		if v > n || v == n && k < best {
			best, n = k, v
		}
	}
	return best
}

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
			ivs = append(ivs, interval{key, m.route, s.req.startNs + int64(m.startMs*1e6), s.req.startNs + int64((m.endMs+m.hiddenMs)*1e6)})
		}
	}
	return inFlight(ivs)
}

// feedbackAssumptions replace the first assumption of the replay without
// feedback.
func feedbackAssumptions() []string {
	return []string{
		"load feedback: per route, attempt latency and the share of load-driven failures (429 sheds, timeouts) follow their recorded relation to the attempts in flight at the attempt's start (counting the server's hidden work after the client gave up), fitted in ten buckets of equal count and interpolated, clamped to the loads recorded",
		"an attempt's duration scales as the route's mean successful duration between its recorded load and the modeled one; a load-driven failure becomes a success, or a success one, with the probability that keeps the share on the curve; other failures stand",
		"the replay runs " + strconv.Itoa(feedbackPasses) + " more times, each on the load the previous one modeled",
	}
}
