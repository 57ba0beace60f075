package rebuild

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// joinRounds: the first round joins by the excess histogram; each later
// one by the gap densities and caps the round before it found.
const joinRounds = 6

// gapDensity is the backoff gap distribution per context: the attempt
// number of the failure ("n1", "n2", ...), "ra" for failures with a
// Retry-After (gaps in units of it), "all" for every gap without one. Each
// holds sorted log-gaps (natural log of seconds).
type gapDensity map[string][]float64

// joinEdge is a candidate join of failure from to the later attempt to.
type joinEdge struct {
	from, to int
	w        float64
}

// joinConcurrent joins the attempts of targets with concurrent requests,
// round after round, and returns the doubtful decisions' alternatives.
func joinConcurrent(targets [][]*splitAttempt, sig *splitSignature, window int64) []alternative {
	if len(targets) == 0 {
		return nil
	}
	var dens gapDensity
	caps := map[string]int{}
	for s, c := range sig.caps {
		caps[s] = c
	}
	var alts []alternative
	for round := range joinRounds {
		for _, t := range targets {
			edges := candidateEdges(t, sig, dens, caps[serviceOf(t)], window)
			for _, a := range t {
				a.next, a.prev = -1, -1
			}
			match(t, edges)
			enforceCap(t, caps[serviceOf(t)])
			if round == joinRounds-1 {
				cap := caps[serviceOf(t)]
				all := append(edges, cappedEdges(t, sig, dens, cap, window)...)
				alts = append(alts, alternatives(t, all, func(f *splitAttempt) float64 { return sig.retryChance(f, cap) })...)
			}
		}
		dens = learnDensity(targets)
		if round > 0 {
			// The first round's gaps come from the histogram, which has no
			// attempt numbers: too coarse to tell where retries stop.
			inferCaps(targets, sig, dens, caps, window)
		}
	}
	return alts
}

// cappedEdges are the candidate joins of the failures the cap left
// unretried, weighed as if there were no cap: a join the round before got
// wrong can push a request's attempt numbers up to the cap, and then a
// plausible retry after it is an alternative.
func cappedEdges(t []*splitAttempt, sig *splitSignature, d gapDensity, cap int, window int64) []joinEdge {
	if cap <= 0 {
		return nil
	}
	var out []joinEdge
	for _, e := range candidateEdges(t, sig, d, 0, window) {
		if f := t[e.from]; f.pos >= cap && f.next < 0 {
			out = append(out, e)
		}
	}
	return out
}

// density is f(gap) per second for a failure, or 0 outside the gaps seen.
func (sig *splitSignature) density(d gapDensity, f *splitAttempt, g int64) float64 {
	sec := max(float64(g), 1e5) / 1e9
	if d == nil {
		k := gapBin(g)
		if k >= len(sig.bins) || sig.bins[k] <= 0 {
			return 0
		}
		var mass float64
		for _, v := range sig.bins {
			mass += v
		}
		return sig.bins[k] / mass / binWidthSeconds(k)
	}
	if ra := f.s.retryAfterS; ra != nil && *ra > 0 && len(d["ra"]) >= 5 {
		return knn(d["ra"], math.Log(sec / *ra)) / sec
	}
	x := math.Log(sec)
	all := knn(d["all"], x)
	base := all
	if ctx, shift := d.forPosition(f.pos); ctx != nil {
		base = knn(ctx, x-shift)
		// A few gaps joined at this very position say more about waits
		// that do not grow (a Retry-After) than the shifted ones.
		if own := d["n"+strconv.Itoa(f.pos)]; shift != 0 && len(own) >= 5 {
			base = 0.5*base + 0.5*knn(own, x)
		}
	}
	if f.class == "" {
		return (0.9*base + 0.1*all) / sec
	}
	if own := d["c"+f.class+"/n"+strconv.Itoa(f.pos)]; len(own) >= enoughGaps {
		base = knn(own, x)
	}
	// A policy may also wait by the failure's class, whatever the attempt
	// number (a Retry-After that no span records, on 429s and 503s only):
	// the class's share of such waits, at the gaps they took.
	if stat := d["s"+f.class]; len(stat) >= 3 {
		share := float64(len(stat)) / float64(len(stat)+len(d["c"+f.class]))
		base = (1-share)*base + share*knn(stat, x)
	}
	return (0.9*base + 0.1*all) / sec
}

// enoughGaps is how many joined gaps an attempt number needs for a
// density of its own.
const enoughGaps = 15

// forPosition returns the gaps after failures at attempt number pos, or,
// when too few joins reached it, those of the highest attempt number
// with enough, shifted by the growth per attempt seen from the first to
// the second, for at most maxGrowthSteps attempt numbers; nil when neither
// is known.
func (d gapDensity) forPosition(pos int) (samples []float64, shift float64) {
	own := d["n"+strconv.Itoa(pos)]
	if len(own) >= enoughGaps {
		return own, 0
	}
	from := pos - 1
	for from > 2 && len(d["n"+strconv.Itoa(from)]) < enoughGaps {
		from--
	}
	// The growth per attempt between the two highest attempt numbers with
	// enough gaps, by their medians; by their lower edges when the waits
	// are exact (their lower halves sharp): each gap is a wait plus an
	// overhead that is never below zero, which shrinks the ratio of the
	// medians of short waits but hardly moves the lower edges.
	hi, lo := d["n"+strconv.Itoa(from)], d["n"+strconv.Itoa(from-1)]
	if from < 2 || len(hi) < enoughGaps || len(lo) < enoughGaps {
		return nil, 0
	}
	growth := hi[len(hi)/2] - lo[len(lo)/2]
	if eh, el := d["edge/n"+strconv.Itoa(from)], d["edge/n"+strconv.Itoa(from-1)]; len(eh) == 1 && len(el) == 1 {
		growth = eh[0] - el[0]
	}
	if growth <= 0 {
		return nil, 0
	}
	return hi, float64(min(pos-from, maxGrowthSteps)) * growth
}

// maxGrowthSteps: how many attempt numbers past the last one with enough
// joins the growth of the waits is carried. Further on the waits stay
// where it put them. Real clients cap their backoff (go-retryablehttp's
// RetryWaitMax, the AWS SDKs' 20 s, openai-node's 8 s), and two steps
// reach the last wait of the common schedules of five attempts, whose
// first two retries are what a dump holds enough of. Grown without an
// end, the waits of chains that a wrong join had already made too long
// reached seconds that no retry in the dump took, where a busy target
// always has an unrelated attempt to join: in a go-retryablehttp corpus
// (6 attempts at most, waits of 30 ms to 1 s), such chains grew to 9
// attempts with joins 3.9 s and 7.6 s apart, and p95 latency was 13% high.
const maxGrowthSteps = 2

// sharpEdge finds the densest wait among the sorted log-gaps (the sample
// whose quarter of the samples nearest to it lie closest) and, when the
// gaps around it are sharp (that quarter within sharpWidth/4), returns its
// lower edge: the 5% quantile of the gaps within sharpWidth/2 of it.
func sharpEdge(s []float64) (float64, bool) {
	k := max(2, len(s)/4)
	if len(s) <= k {
		return 0, false
	}
	best, width := 0, math.Inf(1)
	for i := 0; i+k < len(s); i++ {
		if w := s[i+k] - s[i]; w < width {
			best, width = i+k/2, w
		}
	}
	if width > sharpWidth/4 {
		return 0, false
	}
	lo, _ := slices.BinarySearch(s, s[best]-sharpWidth/2)
	hi, _ := slices.BinarySearch(s, s[best]+sharpWidth/2)
	return s[lo+(hi-lo)/20], true
}

// knn is a nearest-neighbour density of the sorted samples at x, per unit
// of x; 0 well outside the samples. It averages a broad estimate (up to 20
// neighbours) with a sharp one (3): waits without jitter pile their gaps
// on a few exact values, and a rare such value (a Retry-After among
// exponential waits) would drown in the broad one.
func knn(samples []float64, x float64) float64 {
	n := len(samples)
	if n == 0 || x < samples[0]-0.1 || x > samples[n-1]+0.1 {
		return 0
	}
	broad := min(n, max(3, min(20, n/10)))
	return 0.5*knnAt(samples, x, broad) + 0.5*knnAt(samples, x, min(n, 3))
}

// knnAt is the k-nearest-neighbour density of the sorted samples at x.
func knnAt(samples []float64, x float64, k int) float64 {
	n := len(samples)
	i, _ := slices.BinarySearch(samples, x)
	lo, hi := i-1, i
	var dk float64
	for range k {
		switch {
		case lo < 0:
			dk, hi = samples[hi]-x, hi+1
		case hi >= n:
			dk, lo = x-samples[lo], lo-1
		case x-samples[lo] <= samples[hi]-x:
			dk, lo = x-samples[lo], lo-1
		default:
			dk, hi = samples[hi]-x, hi+1
		}
	}
	return float64(k) / (float64(n) * 2 * max(dk, 1e-4))
}

// backgroundRate is the rate (per second) of attempt starts on the target
// around t, other than the one at t: what an unrelated attempt's start
// looks like. The window is as narrow as the traffic allows (from ±1 s,
// widened until it holds enough starts, at most ±30 s), so that a burst of
// failures and retries in an outage is weighed against the traffic of the
// outage, not that of the whole dump.
func backgroundRate(t []*splitAttempt, at int64) float64 {
	const enough = 40
	first, last := t[0].s.start, t[len(t)-1].s.start
	startAt := func(a *splitAttempt, v int64) int { return cmp.Compare(a.s.start, v) }
	for half := int64(1e9); ; half *= 2 {
		half = min(half, int64(30e9))
		lo, _ := slices.BinarySearchFunc(t, at-half, startAt)
		hi, _ := slices.BinarySearchFunc(t, at+half+1, startAt)
		if n := hi - lo - 1; n >= enough || half == int64(30e9) || at-half <= first && at+half >= last {
			span := min(at+half, last) - max(at-half, first)
			return max(0.05, float64(n)/(float64(max(span, int64(1e9)))/1e9))
		}
	}
}

// candidateEdges weighs every join a failure could make: log(p·f(gap) /
// ((1-p)·λ)), kept when above -log(joinDoubt) so that alternatives can be
// found among them.
func candidateEdges(t []*splitAttempt, sig *splitSignature, d gapDensity, cap int, window int64) []joinEdge {
	var edges []joinEdge
	doubt := -math.Log(joinDoubt)
	for i, f := range t {
		p := sig.retryChance(f, cap)
		if p <= 0 {
			continue
		}
		for j := i + 1; j < len(t); j++ {
			a := t[j]
			g := a.s.start - f.s.end
			if a.s.start-f.s.start > window+(f.s.end-f.s.start) {
				break
			}
			if g < 0 || g > window {
				continue
			}
			fg := sig.density(d, f, g)
			if fg <= 0 {
				continue
			}
			w := math.Log(p*fg) - math.Log((1-p)*backgroundRate(t, a.s.start))
			if w > doubt {
				edges = append(edges, joinEdge{i, j, w})
			}
		}
	}
	return edges
}

// match sets next/prev to a maximum-weight matching of the positive edges:
// Hungarian assignment within each connected group of candidates, greedy
// by weight in a group too large for it.
func match(t []*splitAttempt, edges []joinEdge) {
	n := len(t)
	parent := make([]int, 2*n) // out-node i, in-node n+j
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	var pos []joinEdge
	for _, e := range edges {
		if e.w > 0 {
			pos = append(pos, e)
			parent[find(e.from)] = find(n + e.to)
		}
	}
	groups := map[int][]joinEdge{}
	var roots []int
	for _, e := range pos {
		r := find(e.from)
		if groups[r] == nil {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], e)
	}
	for _, r := range roots {
		for _, e := range assign(groups[r]) {
			t[e.from].next, t[e.to].prev = e.to, e.from
		}
	}
	positions(t)
}

// assign picks a maximum-weight set of edges, no two sharing an end.
func assign(edges []joinEdge) []joinEdge {
	rowOf, colOf := map[int]int{}, map[int]int{}
	var rows, cols []int
	for _, e := range edges {
		if _, ok := rowOf[e.from]; !ok {
			rowOf[e.from] = len(rows)
			rows = append(rows, e.from)
		}
		if _, ok := colOf[e.to]; !ok {
			colOf[e.to] = len(cols)
			cols = append(cols, e.to)
		}
	}
	if len(edges) == 1 {
		return edges
	}
	m := len(cols) + len(rows) // a dummy column per row: not retried
	if len(rows)*m > 250_000 {
		return greedyAssign(edges)
	}
	const forbidden = 1e9
	cost := make([][]float64, len(rows))
	for i := range cost {
		cost[i] = make([]float64, m)
		for j := range len(cols) {
			cost[i][j] = forbidden
		}
	}
	for _, e := range edges {
		cost[rowOf[e.from]][colOf[e.to]] = -e.w
	}
	var out []joinEdge
	for i, j := range hungarian(cost) {
		if j < len(cols) && cost[i][j] < 0 {
			out = append(out, joinEdge{rows[i], cols[j], -cost[i][j]})
		}
	}
	return out
}

func greedyAssign(edges []joinEdge) []joinEdge {
	sorted := slices.Clone(edges)
	slices.SortStableFunc(sorted, func(x, y joinEdge) int { return cmp.Compare(y.w, x.w) })
	usedFrom, usedTo := map[int]bool{}, map[int]bool{}
	var out []joinEdge
	for _, e := range sorted {
		if !usedFrom[e.from] && !usedTo[e.to] {
			usedFrom[e.from], usedTo[e.to] = true, true
			out = append(out, e)
		}
	}
	return out
}

// hungarian solves the rectangular assignment problem (rows <= columns),
// minimising total cost; it returns the column of each row.
func hungarian(cost [][]float64) []int {
	n, m := len(cost), len(cost[0])
	u, v := make([]float64, n+1), make([]float64, m+1)
	p, way := make([]int, m+1), make([]int, m+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		minv := make([]float64, m+1)
		used := make([]bool, m+1)
		for j := range minv {
			minv[j] = math.Inf(1)
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], math.Inf(1), 0
			for j := 1; j <= m; j++ {
				if used[j] {
					continue
				}
				if cur := cost[i0-1][j-1] - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= m; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	out := make([]int, n)
	for j := 1; j <= m; j++ {
		if p[j] > 0 {
			out[p[j]-1] = j - 1
		}
	}
	return out
}

// positions numbers the attempts of each chain from 1.
func positions(t []*splitAttempt) {
	for _, a := range t {
		if a.prev >= 0 {
			continue
		}
		n := 1
		for x := a; ; x = t[x.next] {
			x.pos = n
			n++
			if x.next < 0 {
				break
			}
		}
	}
}

// enforceCap cuts every chain at the cap: the attempt after the cap is a
// request of its own.
func enforceCap(t []*splitAttempt, cap int) {
	if cap <= 0 {
		return
	}
	for _, a := range t {
		if a.next >= 0 && a.pos >= cap {
			t[a.next].prev, a.next = -1, -1
		}
	}
	positions(t)
}

// learnDensity collects the gaps of this round's joins, per context: per
// attempt number ("n1", ...), per class and attempt number ("c503/n1"),
// every gap ("all"), and per class the waits that do not grow with the
// attempt number ("s503": gaps the class took at two attempt numbers or
// more, such as a Retry-After no span records), kept out of the others
// ("c503" then holds the class's other gaps).
func learnDensity(targets [][]*splitAttempt) gapDensity {
	d := gapDensity{}
	byClass := map[string][]joinedGap{}
	for _, t := range targets {
		for _, f := range t {
			if f.next < 0 {
				continue
			}
			sec := max(float64(t[f.next].s.start-f.s.end), 1e5) / 1e9
			if ra := f.s.retryAfterS; ra != nil && *ra > 0 {
				d["ra"] = append(d["ra"], math.Log(sec / *ra))
				continue
			}
			byClass[f.class] = append(byClass[f.class], joinedGap{f.pos, math.Log(sec)})
		}
	}
	for class, gaps := range byClass {
		slices.SortFunc(gaps, func(a, b joinedGap) int { return cmp.Compare(a.x, b.x) })
		stat := stationaryWaits(gaps)
		for i, g := range gaps {
			n := "n" + strconv.Itoa(g.pos)
			d["all"] = append(d["all"], g.x)
			if stat[i] {
				d["s"+class] = append(d["s"+class], g.x)
				continue
			}
			for _, ctx := range []string{n, "c" + class, "c" + class + "/" + n} {
				d[ctx] = append(d[ctx], g.x)
			}
		}
	}
	for _, s := range d {
		slices.Sort(s)
	}
	// The lower edges of sharp waits, per attempt number, for forPosition.
	for ctx, s := range d {
		if _, err := strconv.Atoi(strings.TrimPrefix(ctx, "n")); err == nil && strings.HasPrefix(ctx, "n") {
			if e, ok := sharpEdge(s); ok {
				d["edge/"+ctx] = []float64{e}
			}
		}
	}
	return d
}

// joinedGap is a joined gap: the failure's attempt number and the log of
// the gap in seconds.
type joinedGap struct {
	pos int
	x   float64
}

// Sharp waits: gaps within stationaryTolerance of the next one belong to
// one wait, and a wait spread wider than sharpWidth (in log units) is
// jitter, not one exact value.
const (
	stationaryTolerance = 0.01
	sharpWidth          = 0.1
)

// stationaryWaits marks the gaps (sorted by length) of sharp waits that do
// not grow with the attempt number: the class took that exact wait at
// other attempt numbers than the commonest one at least twice, and about
// as often as at the commonest one or in at least half the share of the
// class's joins that are at other numbers (retries thin out with the
// attempt number, so a Retry-After taken at every one still piles up at
// the first). An exponential schedule's waits each belong to one attempt
// number, but for a few joins the round before got the number wrong.
func stationaryWaits(gaps []joinedGap) []bool {
	out := make([]bool, len(gaps))
	total := map[int]int{}
	for _, g := range gaps {
		total[g.pos]++
	}
	for i := 0; i < len(gaps); {
		j := i + 1
		for j < len(gaps) && gaps[j].x-gaps[j-1].x <= stationaryTolerance {
			j++
		}
		if gaps[j-1].x-gaps[i].x <= sharpWidth {
			byPos := map[int]int{}
			most, at := 0, 0
			for _, g := range gaps[i:j] {
				byPos[g.pos]++
				if n := byPos[g.pos]; n > most || n == most && g.pos < at {
					most, at = n, g.pos
				}
			}
			other := j - i - most
			elsewhere := 1 - float64(total[at])/float64(len(gaps))
			if other >= 2 && (2*other >= most || float64(other)/float64(j-i) >= 0.5*elsewhere) {
				for k := i; k < j; k++ {
					out[k] = true
				}
			}
		}
		i = j
	}
	return out
}

// inferCaps sets the attempt cap of a service with no explicit one: the
// first attempt number k at which failures of retried classes find a
// plausible retry (a later attempt where the gaps say) about as often as
// successes would by chance (the background: successes scored as if they
// had failed there), and much less often than the failures below k did.
// Below the cap nearly every such failure has its retry where the gaps
// say; at the cap only a stray attempt is there. The two are weighed as
// binomial likelihoods, so that a few failures at a cap (a policy of 3
// attempts and a handful of requests that gave up) are enough when each
// of them lacks its retry. Both are scored without the cap, so a cap
// never confirms itself.
func inferCaps(targets [][]*splitAttempt, sig *splitSignature, d gapDensity, caps map[string]int, window int64) {
	byService := map[string][][]*splitAttempt{}
	var services []string
	for _, t := range targets {
		svc := serviceOf(t)
		if sig.caps[svc] > 0 {
			continue
		}
		if byService[svc] == nil {
			services = append(services, svc)
		}
		byService[svc] = append(byService[svc], t)
	}
	for _, svc := range services {
		ts := byService[svc]
		delete(caps, svc)
		var hitsBelow, below float64
		for k := 1; ; k++ {
			atK := func(a *splitAttempt) bool { return a.pos == k && a.class != "" && sig.retried[a.class] > 0 }
			hits, n := findsRetry(ts, sig, d, k, window, atK)
			if n < 2 {
				break
			}
			bgHits, bgN := findsRetry(ts, sig, d, k, window, func(a *splitAttempt) bool { return a.class == "" })
			bg := bgHits / float64(max(bgN, 1))
			if below > 0 {
				q := min(0.99, max(0.5, hitsBelow/below))
				bg = min(0.9, max(0.01, bg))
				llr := hits*math.Log(bg/q) + (float64(n)-hits)*math.Log((1-bg)/(1-q))
				if q > bg+0.2 && llr > math.Log(joinDoubt) {
					caps[svc] = k
					break
				}
			}
			hitsBelow += hits
			below += float64(n)
		}
	}
}

// findsRetry counts the chosen attempts (at most 200 of them, evenly
// spread; n is how many there were) that have a later attempt on the
// target at a gap where the density of retry gaps at attempt number pos
// is above the rate of unrelated starts, and returns that count scaled to
// n. Successes are scored as failures of the classes that failed at that
// position, in turn.
func findsRetry(targets [][]*splitAttempt, sig *splitSignature, d gapDensity, pos int, window int64, chosen func(*splitAttempt) bool) (hits float64, n int) {
	const probes = 200
	var classes []string
	for _, t := range targets {
		for _, a := range t {
			if chosen(a) {
				n++
			}
			if a.pos == pos && a.class != "" && sig.retried[a.class] > 0 {
				classes = append(classes, a.class)
			}
		}
	}
	if n == 0 {
		return 0, n
	}
	step := max(1, n/probes)
	scored, found, seen := 0, 0, 0
	for _, t := range targets {
		for i, a := range t {
			if !chosen(a) {
				continue
			}
			seen++
			if seen%step != 0 {
				continue
			}
			probe := &splitAttempt{s: a.s, pos: pos, class: a.class}
			if probe.class == "" && len(classes) > 0 {
				probe.class = classes[scored%len(classes)]
			}
			scored++
			for j := i + 1; j < len(t); j++ {
				g := t[j].s.start - a.s.end
				if t[j].s.start-a.s.start > window+(a.s.end-a.s.start) {
					break
				}
				if g < 0 || g > window {
					continue
				}
				if fg := sig.density(d, probe, g); fg > 0 && fg > backgroundRate(t, t[j].s.start) {
					found++
					break
				}
			}
		}
	}
	return float64(found) / float64(scored) * float64(n), n
}
