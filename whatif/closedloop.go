package whatif

import (
	"cmp"
	"slices"
)

// A closed-loop client is a fixed set of workers, each starting its next
// request when its last one ends (after a short think time). Its recorded
// start times are not the workload's: under a policy that makes requests
// shorter or longer, every later request of a worker starts earlier or
// later, and meets the conditions of that moment.

// maxThinkMs is the longest wait between a request's end and the start
// of the next one of its worker: a worker that waits longer is taken to
// be driven by something else (a timer, arrivals).
const maxThinkMs = 10

// clockMs is how far a start may come before the end it follows: span
// clocks differ in resolution (Node's span starts are whole ms).
const clockMs = 1

// minChained is the share of a segment's requests that must follow the
// end of another, each predecessor used once, for the segment to be a
// closed loop. Open-loop (Poisson) arrivals follow some end within
// maxThinkMs by chance only (1-exp(-rate*maxThinkMs): 8% at 8 requests a
// second), and chains of dependent steps (an agent's 2 to 5 steps) reach
// about 70%.
const minChained = 0.9

// loops are the closed-loop segments of a set of recorded requests.
type loops struct {
	// pred is, for every request (by index), the request of the same
	// worker whose end it followed, or -1: the first of its worker, or a
	// request of an open-loop segment. succ is the converse.
	pred, succ []int
	// thinkMs is each request's start minus its predecessor's end.
	thinkMs []float64
	// workers counts the workers (lanes) of each closed-loop segment.
	workers map[Segment]int
}

// closedLoops finds, per segment, whether its client is a closed loop of
// C workers: nearly every request (all but at most one in ten) starts
// within maxThinkMs after the end of another (or clockMs before it) of the segment, each end
// followed once (greedily in start order, the end nearest the start first);
// the requests that follow none are the workers' first, C of them; and
// the requests in flight reach C (at least 90% of it), which chained
// requests of an open loop do not. Segments that are not closed loops
// keep pred -1.
func closedLoops(reqs []*recRequest) loops {
	l := loops{pred: make([]int, len(reqs)), succ: make([]int, len(reqs)), thinkMs: make([]float64, len(reqs)), workers: map[Segment]int{}}
	for i := range reqs {
		l.pred[i], l.succ[i] = -1, -1
	}
	bySeg := map[Segment][]int{}
	for i, r := range reqs {
		bySeg[r.seg] = append(bySeg[r.seg], i)
	}
	for seg, idx := range bySeg {
		pred, c := lanes(reqs, idx)
		n := len(idx)
		if c < 2 || float64(n-c) < minChained*float64(n) || float64(peakInFlight(reqs, idx)) < 0.9*float64(c) {
			continue
		}
		l.workers[seg] = c
		for k, i := range idx {
			if p := pred[k]; p >= 0 {
				l.pred[i], l.succ[p] = p, i
				l.thinkMs[i] = msAfter(reqs[i].startNs, reqs[p].endNs)
			}
		}
	}
	return l
}

// lanes links each of the requests idx (indexes into reqs) to the
// request whose end it followed within maxThinkMs, or -1, and counts
// those that follow none.
func lanes(reqs []*recRequest, idx []int) (pred []int, unlinked int) {
	byStart := slices.Clone(idx)
	slices.SortStableFunc(byStart, func(a, b int) int { return cmp.Compare(reqs[a].startNs, reqs[b].startNs) })
	byEnd := slices.Clone(idx)
	slices.SortStableFunc(byEnd, func(a, b int) int { return cmp.Compare(reqs[a].endNs, reqs[b].endNs) })
	at := make(map[int]int, len(idx))
	for k, i := range idx {
		at[i] = k
	}
	pred = make([]int, len(idx))
	var free []int // ended, not yet followed, in end order
	e := 0
	for _, i := range byStart {
		t := reqs[i].startNs
		for e < len(byEnd) && reqs[byEnd[e]].endNs <= t+clockMs*1e6 {
			if byEnd[e] != i {
				free = append(free, byEnd[e])
			}
			e++
		}
		for len(free) > 0 && msAfter(t, reqs[free[0]].endNs) > maxThinkMs {
			free = free[1:]
		}
		pred[at[i]] = -1
		best := -1
		for k, f := range free {
			if best < 0 || abs(msAfter(t, reqs[f].endNs)) < abs(msAfter(t, reqs[free[best]].endNs)) {
				best = k
			}
		}
		if best >= 0 {
			pred[at[i]] = free[best]
			free = slices.Delete(free, best, best+1)
		} else {
			unlinked++
		}
	}
	return pred, unlinked
}

// peakInFlight is the most of the requests idx running at once.
func peakInFlight(reqs []*recRequest, idx []int) int {
	spans := make([][2]int64, 0, len(idx))
	for _, i := range idx {
		spans = append(spans, [2]int64{reqs[i].startNs, reqs[i].endNs})
	}
	return mostAtOnce(spans)
}

// mostAtOnce is the most of the [start, end) spans (Unix ns) that overlap
// at one moment. An end before a start at the same moment: back-to-back
// spans (a worker's next request, a loop's next attempt) do not overlap.
func mostAtOnce(spans [][2]int64) int {
	type edge struct {
		at int64
		d  int
	}
	edges := make([]edge, 0, 2*len(spans))
	for _, sp := range spans {
		edges = append(edges, edge{sp[0], 1}, edge{sp[1], -1})
	}
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.d, b.d)) })
	n, peak := 0, 0
	for _, e := range edges {
		n += e.d
		peak = max(peak, n)
	}
	return peak
}
