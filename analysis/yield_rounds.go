package analysis

import (
	"github.com/retryscope/retryscope/model"
)

// A retry after a transport failure and a re-prompt after an evaluator
// rejected the output buy different things: the first needs a healthier
// moment or server, the second only another generation. Where the window
// has re-prompts, the two get yield curves of their own. A request's
// attempts fall into rounds, one per prompt: a round is the transport
// tries that sent it, and the attempt after one whose output was rejected
// starts the next.

// roundStarts returns the index of the first attempt of each of r's
// rounds.
func roundStarts(r *Request) []int {
	starts := []int{0}
	for k := range len(r.at) - 1 {
		if r.at[k].rejected {
			starts = append(starts, k+1)
		}
	}
	return starts
}

// prompted are the requests whose attempts were all read, each with the
// index of the first attempt of each of its rounds.
type prompted struct {
	reqs   []*Request
	starts [][]int
}

// roundsOf returns the rounds of reqs, and whether any request was
// prompted again after a rejected output.
func roundsOf(reqs []*Request) (p prompted, reprompted bool) {
	for _, r := range reqs {
		if len(r.at) != r.attempts || r.attempts == 0 {
			continue // an attempt began before the window's read
		}
		s := roundStarts(r)
		p.reqs, p.starts = append(p.reqs, r), append(p.starts, s)
		reprompted = reprompted || len(s) > 1
	}
	return p, reprompted
}

// evaluatorCurve is the yield of each further prompt: row m counts the
// requests that reached their m-th round and those whose answer came from
// it; capped at m, a request ends, failed, at the end of its m-th round.
func evaluatorCurve(p prompted, rule model.Rule, budget YieldBudget) *YieldCurve {
	reqs, starts := p.reqs, p.starts
	most := 0
	for _, s := range starts {
		most = max(most, len(s))
	}
	reached, cleared := make([]int, most), make([]int, most)
	for i, r := range reqs {
		for m := range starts[i] {
			reached[m]++
		}
		if r.used > 0 {
			cleared[roundOf(starts[i], r.used-1)]++
		}
	}
	capAt := func(i, m int) (float64, int) {
		r, s := reqs[i], starts[i]
		if len(s) <= m {
			return r.latency, r.attempts
		}
		return r.at[s[m]-1].endMs, s[m]
	}
	return curveOf(len(reqs), len(reqs), reached, cleared, capAt, rule, budget, "requests")
}

// transportCurve is the yield of each further transport try of a prompt:
// row j counts the rounds that made try j and those that got their output
// from it (the answer used, or one the evaluator rejected); capped at j, a
// request ends, failed, at the end of try j of its first round that
// needed more.
func transportCurve(p prompted, rule model.Rule, budget YieldBudget) *YieldCurve {
	reqs, starts := p.reqs, p.starts
	most, rounds := 0, 0
	for i, r := range reqs {
		for m, s := range starts[i] {
			most = max(most, roundEnd(starts[i], m, r.attempts)-s)
		}
		rounds += len(starts[i])
	}
	reached, cleared := make([]int, most), make([]int, most)
	for i, r := range reqs {
		for m, s := range starts[i] {
			end := roundEnd(starts[i], m, r.attempts)
			for j := range end - s {
				reached[j]++
			}
			switch {
			case r.used > s && r.used <= end: // answered by the try used (a hedge's first, say)
				cleared[r.used-1-s]++
			case r.at[end-1].rejected:
				cleared[end-1-s]++
			}
		}
	}
	capAt := func(i, j int) (float64, int) {
		r, s := reqs[i], starts[i]
		attempts := 0
		for m, first := range s {
			end := roundEnd(s, m, r.attempts)
			if end-first > j {
				return r.at[first+j-1].endMs, attempts + j
			}
			attempts += end - first
		}
		return r.latency, r.attempts
	}
	return curveOf(rounds, len(reqs), reached, cleared, capAt, rule, budget, "prompts")
}

// roundOf is the round attempt k (0-based) belongs to.
func roundOf(starts []int, k int) int {
	m := 0
	for m+1 < len(starts) && starts[m+1] <= k {
		m++
	}
	return m
}

// roundEnd is one past the last attempt of round m.
func roundEnd(starts []int, m, attempts int) int {
	if m+1 < len(starts) {
		return starts[m+1]
	}
	return attempts
}

// curveOf makes a yield curve of units (requests, or prompts) from what
// each step reached and cleared; capAt(i, n) is request i's latency and
// attempts had it been capped at n steps. Its amplification and p99 are
// per request (of requests).
func curveOf(units, requests int, reached, cleared []int, capAt func(i, n int) (float64, int),
	rule model.Rule, budget YieldBudget, unit string) *YieldCurve {
	c := &YieldCurve{Requests: units, Unit: unit, Rows: []YieldRow{}}
	if units == 0 {
		c.CeilingWhy = "no requests"
		return c
	}
	cond, in := make([]float64, len(reached)), make([]float64, len(reached))
	for k := range reached {
		cond[k] = float64(cleared[k]) / float64(reached[k])
		in[k] = float64(reached[k]) / float64(units)
	}
	c.Rows = yieldArithmetic(cond, in)
	capped := make([]float64, requests)
	var prevP99 *float64
	for k := range c.Rows {
		row := &c.Rows[k]
		row.Reached, row.Cleared = reached[k], cleared[k]
		attempts := 0
		for i := range requests {
			l, a := capAt(i, k+1)
			capped[i], attempts = l, attempts+a
		}
		row.Amplification = float64(attempts) / float64(requests)
		row.P99Ms = rule.PercentileOf(capped, 99)
		if row.P99Ms != nil && prevP99 != nil {
			d := *row.P99Ms - *prevP99
			row.AddedP99Ms = &d
		}
		prevP99 = row.P99Ms
	}
	c.Ceiling, c.CeilingWhy = ceiling(c.Rows, budget)
	return c
}
