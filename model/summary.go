package model

import (
	"math"
	"slices"
)

// Percentiles use the nearest-rank definition: pX of n sorted observations
// x(1) <= ... <= x(n) is x(k) with k = ceil(X·n/100). No interpolation, so
// every reported percentile is a latency some request really had. A
// percentile is reported only when n·(100−X)/100 >= MinTail, that is when at
// least MinTail observations are expected at or above it: p50 needs n >= 10,
// p95 n >= 100, p99 n >= 500. Otherwise it is unknown (null in JSON).
const MinTail = 5

// PercentileDefinition is the one statement of the percentile rule that
// every rendering of a report carries.
const PercentileDefinition = "pX is the nearest-rank percentile: the k-th smallest of n with k = ceil(X·n/100), " +
	"a value some request really had; shown only when at least 5 values lie at or above it " +
	"(p50 n>=10, p95 n>=100, p99 n>=500); else it has no value: null in JSON, n<N in tables"

// Rule is the sample rule with its threshold: a percentile is reported
// only when at least MinTail observations lie at or above it. Every
// percentile and summary of retryscope comes from a Rule's methods.
type Rule struct{ MinTail int }

// DefaultRule is the rule with MinTail.
var DefaultRule = Rule{MinTail: MinTail}

// PercentileRank returns k, the 1-based rank of the pct-th percentile of n
// observations, and whether the sample is large enough to report it under
// the default rule.
func PercentileRank(n, pct int) (int, bool) { return DefaultRule.Rank(n, pct) }

// Rank returns k, the 1-based rank of the pct-th percentile of n
// observations, and whether the rule lets it be reported.
func (r Rule) Rank(n, pct int) (int, bool) {
	if n <= 0 || pct <= 0 || pct > 100 {
		return 0, false
	}
	k := (pct*n + 99) / 100
	return k, n*(100-pct) >= r.MinTail*100
}

// MinN is the smallest sample for which pct is reported (500 for p99 with
// the default rule).
func (r Rule) MinN(pct int) int {
	if pct >= 100 {
		return math.MaxInt
	}
	return (r.MinTail*100 + 100 - pct - 1) / (100 - pct)
}

// Percentile returns the pct-th nearest-rank percentile of sorted, or nil
// when the sample is too small for it. sorted must be in ascending order.
func (r Rule) Percentile(sorted []float64, pct int) *float64 {
	k, ok := r.Rank(len(sorted), pct)
	if !ok {
		return nil
	}
	v := sorted[k-1]
	return &v
}

// Percentile is DefaultRule.Percentile.
func Percentile(sorted []float64, pct int) *float64 { return DefaultRule.Percentile(sorted, pct) }

// Summary is the count, mean and tail of a set of observations: the one
// distribution type of a report. CI95, when computed, bounds its tail.
type Summary struct {
	N    int      `json:"n"`
	Mean *float64 `json:"mean"`
	P50  *float64 `json:"p50"`
	P95  *float64 `json:"p95"`
	P99  *float64 `json:"p99"`
	// CI95 holds bootstrap 95% intervals of p95 and p99, when asked for.
	CI95 *TailCI `json:"ci95,omitempty"`
}

// Tail holds a figure of the p95 and of the p99 of a distribution; a side
// is null when its percentile is.
type Tail[T any] struct {
	P95 *T `json:"p95"`
	P99 *T `json:"p99"`
}

// TailCI holds bootstrap 95% intervals of p95 and p99.
type TailCI = Tail[Interval]

// Interval is a confidence interval.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Pct returns the summary's pct-th percentile (50, 95 or 99), nil for
// any other.
func (s *Summary) Pct(pct int) *float64 {
	switch pct {
	case 50:
		return s.P50
	case 95:
		return s.P95
	case 99:
		return s.P99
	}
	return nil
}

// CI returns the interval of the pct-th percentile (95 or 99), if any.
func (s *Summary) CI(pct int) *Interval {
	if s.CI95 == nil {
		return nil
	}
	switch pct {
	case 95:
		return s.CI95.P95
	case 99:
		return s.CI95.P99
	}
	return nil
}

// Summarize describes values (in any order; it is not modified). NaN
// stands for an unknown value and is left out.
func (r Rule) Summarize(values []float64) Summary {
	known := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			known = append(known, v)
		}
	}
	slices.Sort(known)
	return r.SummarizeSorted(known)
}

// SummarizeSorted is Summarize of values already sorted ascending, with
// no NaN.
func (r Rule) SummarizeSorted(sorted []float64) Summary {
	s := Summary{N: len(sorted)}
	if len(sorted) == 0 {
		return s
	}
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	mean := sum / float64(len(sorted))
	s.Mean = &mean
	s.P50, s.P95, s.P99 = r.Percentile(sorted, 50), r.Percentile(sorted, 95), r.Percentile(sorted, 99)
	return s
}

// Summarize is DefaultRule.Summarize.
func Summarize(values []float64) Summary { return DefaultRule.Summarize(values) }
