package rebuild

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Attempts split across traces (docs/requests.md). With no trace open, each
// attempt is the root CLIENT span of a trace of its own, and concurrent
// requests to one target interleave: nothing but time links an attempt to
// the failure it retries. The joiner learns the dump's retry signature and
// then solves an assignment problem per target:
//
//   - which failure classes (HTTP status, else trigger) are retried: after a
//     failure of a retried class, same-target attempts start at backoff-like
//     gaps more often than after the successes nearest to it in time (the
//     background); a class whose excess is nil is never retried, and
//     nothing is joined after it;
//   - the backoff gap distribution and its growth with the attempt number:
//     first a histogram of that excess, then, per attempt number and per
//     failure class (or per captured Retry-After), a nearest-neighbour
//     density of the gaps the previous round joined. Waits without jitter
//     pile up on exact values; a wait the class takes whatever the attempt
//     number (a Retry-After no span records) is a mode of its own;
//   - the attempt cap: the max=M the same service's counters state
//     (amz-sdk-request), else the first attempt number at which failures
//     find a plausible retry hardly more often than successes would;
//   - the background rate of unrelated attempts on the target, around the
//     time of each candidate.
//
// A join of failure F to a later attempt A on the same target weighs
// log(p·f(gap) / ((1-p)·λ)): p the chance F's class is retried at F's
// attempt number (0 at the cap), f the gap density, λ the background rate.
// A maximum-weight matching (each failure retried at most once, each attempt
// retrying at most one failure) over the positive weights picks the joins;
// a success is never retried, so no chain crosses one. Joins are inferred.
//
// Targets on which attempts never overlap are worked by one client at a
// time: there an attempt after a failure of a retried class, within the
// split window and below the cap, is its retry.
//
// Where the evidence is weak, the joiner records alternatives: a join that
// was less than joinDoubt times likelier than leaving F unretried, a
// candidate nearly as likely as the chosen one, a join nearly as likely as
// none, a failure that should have been retried but has no candidate. Each alternative's effect on the request counts is stored with the
// request, and the report bounds every figure by the sum of the
// alternatives that lower it and of those that raise it.

// joinDoubt: a decision is doubtful when its alternative is at least
// 1/joinDoubt times as likely.
const joinDoubt = 20.0

// splitAttempt is an attempt of the split pool and its place in the join.
type splitAttempt struct {
	s          *span
	class      string // "" for a success; else the HTTP status or trigger
	next, prev int    // joined neighbours within the target, -1 for none
	pos        int    // attempt number within its chain, from 1
}

// alternative is the change in request counts had one doubtful decision
// gone the other way, booked on the request holding the failure.
type alternative struct {
	request *span // first attempt of the request, as built
	delta   countDelta
}

// countDelta: how many more logical requests, retried requests, retried
// requests that succeeded, and failed requests.
type countDelta struct{ requests, retried, retriedOK, failed int }

// splitSignature is what the joiner learned about the retry policy.
type splitSignature struct {
	retried map[string]float64 // class -> chance a failure is retried below the cap
	caps    map[string]int     // service -> attempt cap (explicit evidence)
	bins    []float64          // excess starts after a failure per log-gap bin, where significant
	gaps    map[string][]float64
}

const (
	binsPerOctave = 48
	minGapNs      = 1e6 // 1 ms: the first bin holds everything below
)

func gapBin(g int64) int {
	if g < minGapNs {
		return 0
	}
	return int(binsPerOctave * math.Log2(float64(g)/minGapNs))
}

func binWidthSeconds(k int) float64 {
	lo := minGapNs * math.Pow(2, float64(k)/binsPerOctave)
	hi := minGapNs * math.Pow(2, float64(k+1)/binsPerOctave)
	return (hi - lo) / 1e9
}

// failureClass names what kind of failure an attempt is, "" for a success.
func failureClass(s *span) string {
	switch {
	case !s.failedItself() && s.hasResponse:
		return ""
	case s.httpStatus != nil:
		return strconv.FormatInt(*s.httpStatus, 10)
	case s.trigger != "":
		return s.trigger
	}
	return "no_response"
}

// joinSplit groups the split pool into requests. Attempts with an id or a
// counter chain exactly as siblings do; the rest go through the joiner.
func joinSplit(pool []*span, window int64) (chains [][]*span, inferred []bool, alts []alternative) {
	var explicit, implicit []*span
	caps := map[string]int{}
	for _, a := range pool {
		if a.requestKey != "" || a.retryIndex != nil {
			explicit = append(explicit, a)
			if a.attemptMax != nil && *a.attemptMax > 0 {
				caps[a.service] = max(caps[a.service], int(*a.attemptMax))
			}
			continue
		}
		implicit = append(implicit, a)
	}
	for _, c := range chainSiblings(explicit, window) {
		chains, inferred = append(chains, c), append(inferred, false)
	}
	targets := splitTargets(implicit)
	// A retry policy belongs to a client: learn one signature per service.
	byService := map[string][][]*splitAttempt{}
	var services []string
	for _, t := range targets {
		svc := serviceOf(t)
		if byService[svc] == nil {
			services = append(services, svc)
		}
		byService[svc] = append(byService[svc], t)
	}
	for _, svc := range services {
		sig := learnSignature(byService[svc], window, caps)
		var concurrent [][]*splitAttempt
		for _, t := range byService[svc] {
			if sequential(t) {
				joinSequential(t, sig, window)
			} else {
				concurrent = append(concurrent, t)
			}
		}
		alts = append(alts, joinConcurrent(concurrent, sig, window)...)
	}
	for _, t := range targets {
		for _, c := range chainsOf(t) {
			chains, inferred = append(chains, c), append(inferred, len(c) > 1)
		}
	}
	return chains, inferred, alts
}

// splitTargets groups attempts by what they called (opKey, the URL without
// its query: a retry sends the same query, but so may any other request,
// and a query that differs per call, such as a page token or a timestamp,
// would make every attempt a target of its own), each in start order.
func splitTargets(pool []*span) [][]*splitAttempt {
	byKey := map[string][]*splitAttempt{}
	var keys []string
	for _, a := range pool {
		k := a.opKey()
		if u, _, cut := strings.Cut(a.url, "?"); cut && a.requestKey == "" {
			b := *a
			b.url = u
			k = b.opKey()
		}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], &splitAttempt{s: a, class: failureClass(a), next: -1, prev: -1, pos: 1})
	}
	out := make([][]*splitAttempt, 0, len(keys))
	for _, k := range keys {
		t := byKey[k]
		slices.SortStableFunc(t, func(x, y *splitAttempt) int {
			return cmp.Or(cmp.Compare(x.s.start, y.s.start), cmp.Compare(x.s.traceID, y.s.traceID), cmp.Compare(x.s.spanID, y.s.spanID))
		})
		out = append(out, t)
	}
	return out
}

// sequential: no attempt on the target starts while another one is in
// flight, so one client works it, one call at a time.
func sequential(t []*splitAttempt) bool {
	var reach int64
	for i, a := range t {
		if i > 0 && a.s.start < reach {
			return false
		}
		reach = max(reach, a.s.end)
	}
	return true
}

// learnSignature measures, on one service's targets with concurrent
// requests, how many same-target attempts start at each gap after a
// failure of each class and after the successes nearest to each failure,
// and keeps the excess; on its
// targets worked one call at a time, how often each class is followed
// within the window at all.
func learnSignature(targets [][]*splitAttempt, window int64, caps map[string]int) *splitSignature {
	sig := &splitSignature{retried: map[string]float64{}, caps: caps, gaps: map[string][]float64{}}
	nbins := gapBin(window) + 1
	hist := map[string][]float64{}
	events := map[string]float64{}
	seqFollowed, seqEvents := map[string]float64{}, map[string]float64{}
	for _, t := range targets {
		if sequential(t) {
			for i, a := range t {
				if a.class == "" {
					continue
				}
				seqEvents[a.class]++
				if i+1 < len(t) && t[i+1].s.start-a.s.end <= window {
					seqFollowed[a.class]++
				}
			}
			continue
		}
		for i, a := range t {
			if a.class == "" {
				continue
			}
			// The background is what follows the successes nearest in time
			// to each failure: traffic that changes over the dump (an
			// outage that brings failures and retries together) must not
			// look like a long backoff.
			for _, c := range nearestSuccesses(t, i) {
				countFollowers(hist, events, "", t, c, nbins, window, 0.5)
			}
			countFollowers(hist, events, a.class, t, i, nbins, window, 1)
		}
	}
	bg := make([]float64, nbins)
	if n := events[""]; n > 0 {
		for k, c := range hist[""] {
			bg[k] = c / n
		}
	}
	// Bins where failures are followed significantly more often than
	// successes: the backoff gaps.
	var failures float64
	pooled := make([]float64, nbins)
	for c, h := range hist {
		if c == "" {
			continue
		}
		failures += events[c]
		for k := range h {
			pooled[k] += h[k]
		}
	}
	sig.bins = make([]float64, nbins)
	for k := range pooled {
		want := failures * bg[k]
		if failures > 0 && pooled[k]-want > 3*math.Sqrt(want+1) {
			sig.bins[k] = (pooled[k] - want) / failures
		}
	}
	for c, h := range hist {
		if c != "" {
			sig.retried[c] = retriedExcess(h, events[c], bg, sig.bins, events[""])
		}
	}
	for c, n := range seqEvents {
		if _, seen := sig.retried[c]; !seen || seqFollowed[c] > 0 {
			sig.retried[c] = max(sig.retried[c], seqFollowed[c]/n)
		}
	}
	for c := range sig.retried {
		n := events[c] + seqEvents[c]
		sig.retried[c] = retriedShare(sig.retried[c], n)
		if seqFollowed[c] > 0 {
			// On a target one client works alone, any attempt after the
			// failure within the window is its retry: the class is retried,
			// however rarely.
			sig.retried[c] = max(sig.retried[c], 0.05)
		}
	}
	return sig
}

// retriedExcess measures how much of the pooled excess (bins, per failure)
// follows a class's failures: the class's own excess over the background
// projected onto the pooled one, each bin weighed by its signal over its
// noise (a matched filter). The narrow gaps where retries stand out above
// little background decide; wide bins at long gaps, where the background
// is large and a few events are noise, hardly count. The result is on the
// scale of the pooled excess's total; it is 0 unless it stands three
// standard errors above nothing (Poisson counts), so that a class of a few
// failures a stray attempt or two happened to follow is not taken as
// retried.
func retriedExcess(h []float64, n float64, bg, bins []float64, controls float64) float64 {
	if n == 0 {
		return 0
	}
	floor := 1 / max(controls, 1)
	var num, den, mass float64
	for k, e := range bins {
		if e <= 0 {
			continue
		}
		w := e / max(bg[k], floor)
		num += w * (h[k]/n - bg[k])
		den += w * e
		mass += e
	}
	if den == 0 || num < 3*math.Sqrt(den/n) {
		return 0
	}
	return num / den * mass
}

// nearestSuccesses are the successes just before and just after attempt i
// in start order.
func nearestSuccesses(t []*splitAttempt, i int) []int {
	// A target that fails for long (an outage) is searched no further
	// than this for a success either way.
	const reach = 1000
	var out []int
	for j := i - 1; j >= max(0, i-reach); j-- {
		if t[j].class == "" {
			out = append(out, j)
			break
		}
	}
	for j := i + 1; j < min(len(t), i+reach); j++ {
		if t[j].class == "" {
			out = append(out, j)
			break
		}
	}
	return out
}

// countFollowers adds, with weight w, the gaps from attempt i's end to the
// starts of the later attempts on the target within the window to class's
// histogram.
func countFollowers(hist map[string][]float64, events map[string]float64, class string, t []*splitAttempt, i, nbins int, window int64, w float64) {
	h := hist[class]
	if h == nil {
		h = make([]float64, nbins)
		hist[class] = h
	}
	events[class] += w
	a := t[i]
	for _, b := range t[i+1:] {
		g := b.s.start - a.s.end
		if g > window {
			break // starts are sorted
		}
		if g >= 0 {
			h[gapBin(g)] += w
		}
	}
}

// retriedShare turns a measured share into the chance the joiner works
// with: nil when the data show the class is not retried (at least three
// failures and almost no excess), else shrunk towards a coin toss when
// there are few failures, and never certain either way.
func retriedShare(measured, n float64) float64 {
	if n >= 3 && measured < 0.1 {
		return 0
	}
	p := (max(0, min(1, measured))*n + 0.5*2) / (n + 2)
	return min(0.95, max(0.05, p))
}

// retryChance is the chance failure a is retried, at its attempt number.
func (sig *splitSignature) retryChance(a *splitAttempt, cap int) float64 {
	if a.class == "" || (cap > 0 && a.pos >= cap) {
		return 0
	}
	p, known := sig.retried[a.class]
	if !known {
		return 0.5
	}
	return p
}

// joinSequential: each attempt retries the attempt just before it when that
// one failed in a retried class, within the window and below the cap.
func joinSequential(t []*splitAttempt, sig *splitSignature, window int64) {
	cap := sig.caps[serviceOf(t)]
	for i := 1; i < len(t); i++ {
		prev, a := t[i-1], t[i]
		if sig.retryChance(prev, cap) > 0 && a.s.start-prev.s.end <= window {
			prev.next, a.prev, a.pos = i, i-1, prev.pos+1
		}
	}
}

func serviceOf(t []*splitAttempt) string { return t[0].s.service }

// chainsOf lists the target's chains, each in start order.
func chainsOf(t []*splitAttempt) [][]*span {
	var out [][]*span
	for _, a := range t {
		if a.prev >= 0 {
			continue
		}
		var c []*span
		for x := a; ; x = t[x.next] {
			c = append(c, x.s)
			if x.next < 0 {
				break
			}
		}
		out = append(out, c)
	}
	return out
}
