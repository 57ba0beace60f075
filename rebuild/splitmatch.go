package rebuild

import (
	"cmp"
	"math"
	"slices"
	"strconv"
)

// joinRounds: the first round joins by the excess histogram; each later
// one by the gap densities and caps the round before it found.
const joinRounds = 3

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
				alts = append(alts, alternatives(t, edges, func(f *splitAttempt) float64 { return sig.retryChance(f, cap) })...)
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
	all := knn(d["all"], math.Log(sec))
	ctx, shift := d.forPosition(f.pos)
	if ctx == nil {
		return all / sec
	}
	// A little of every position's gaps, so that a retry whose attempt
	// number was miscounted can still be joined, at a lower weight.
	return (0.9*knn(ctx, math.Log(sec)-shift) + 0.1*all) / sec
}

// enoughGaps is how many joined gaps an attempt number needs for a
// density of its own.
const enoughGaps = 15

// forPosition returns the gaps after failures at attempt number pos, or,
// when too few joins reached it, those of the highest attempt number
// with enough, shifted by the growth per attempt seen from the first to
// the second; nil when neither is known.
func (d gapDensity) forPosition(pos int) (samples []float64, shift float64) {
	if s := d["n"+strconv.Itoa(pos)]; len(s) >= enoughGaps {
		return s, 0
	}
	n1, n2 := d["n1"], d["n2"]
	if len(n1) < enoughGaps || len(n2) < enoughGaps {
		return nil, 0
	}
	growth := n2[len(n2)/2] - n1[len(n1)/2]
	if growth <= 0 {
		return nil, 0
	}
	from := pos - 1
	for from > 2 && len(d["n"+strconv.Itoa(from)]) < enoughGaps {
		from--
	}
	return d["n"+strconv.Itoa(from)], float64(pos-from) * growth
}

// knn is the k-nearest-neighbour density of the sorted samples at x, per
// unit of x; 0 well outside the samples.
func knn(samples []float64, x float64) float64 {
	n := len(samples)
	if n == 0 || x < samples[0]-0.1 || x > samples[n-1]+0.1 {
		return 0
	}
	k := min(n, max(3, min(20, n/10)))
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
// looks like.
func backgroundRate(t []*splitAttempt, at int64) float64 {
	const half = int64(30e9)
	span := float64(2 * half)
	if whole := t[len(t)-1].s.start - t[0].s.start; whole < 2*half {
		span = float64(max(whole, int64(1e9)))
	}
	lo, _ := slices.BinarySearchFunc(t, at-half, func(a *splitAttempt, v int64) int { return cmp.Compare(a.s.start, v) })
	hi, _ := slices.BinarySearchFunc(t, at+half+1, func(a *splitAttempt, v int64) int { return cmp.Compare(a.s.start, v) })
	return max(0.05, float64(hi-lo-1)/(span/1e9))
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

// learnDensity collects the gaps of this round's joins, per context.
func learnDensity(targets [][]*splitAttempt) gapDensity {
	d := gapDensity{}
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
			ctx := "n" + strconv.Itoa(f.pos)
			d[ctx] = append(d[ctx], math.Log(sec))
			d["all"] = append(d["all"], math.Log(sec))
		}
	}
	for _, s := range d {
		slices.Sort(s)
	}
	return d
}

// inferCaps sets the attempt cap of a service with no explicit one: the
// first attempt number at which failures of retried classes find a
// plausible retry hardly more often than successes would (the background:
// successes scored as if they had failed there), when at least three
// failures reached it. Below the cap nearly every such failure has its
// retry where the gaps say; at the cap only a stray attempt is there.
// Both are scored without the cap, so a cap never confirms itself.
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
		for k := 1; ; k++ {
			atK := func(a *splitAttempt) bool { return a.pos == k && a.class != "" && sig.retried[a.class] > 0 }
			failures, n := findsRetry(ts, sig, d, k, window, atK)
			if n < 5 {
				break
			}
			success := func(a *splitAttempt) bool { return a.class == "" }
			bg, _ := findsRetry(ts, sig, d, k, window, success)
			if bg < 0.9 && (failures-bg)/(1-bg) < 0.3 {
				caps[svc] = k
				break
			}
		}
	}
}

// findsRetry is the share of the chosen attempts (at most 400 of them,
// evenly spread) that have a later attempt on the target at a gap where
// the density of retry gaps at attempt number pos is above the rate of
// unrelated starts; n is how many were chosen.
func findsRetry(targets [][]*splitAttempt, sig *splitSignature, d gapDensity, pos int, window int64, chosen func(*splitAttempt) bool) (share float64, n int) {
	const probes = 400
	for _, t := range targets {
		for _, a := range t {
			if chosen(a) {
				n++
			}
		}
	}
	if n == 0 {
		return 1, n
	}
	step := max(1, n/probes)
	scored, hits, seen := 0, 0, 0
	for _, t := range targets {
		for i, a := range t {
			if !chosen(a) {
				continue
			}
			seen++
			if seen%step != 0 {
				continue
			}
			scored++
			probe := &splitAttempt{s: a.s, pos: pos}
			for j := i + 1; j < len(t); j++ {
				g := t[j].s.start - a.s.end
				if t[j].s.start-a.s.start > window+(a.s.end-a.s.start) {
					break
				}
				if g < 0 || g > window {
					continue
				}
				if fg := sig.density(d, probe, g); fg > 0 && fg > backgroundRate(t, t[j].s.start) {
					hits++
					break
				}
			}
		}
	}
	return float64(hits) / float64(scored), n
}
