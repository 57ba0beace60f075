package model

import "slices"

// PercentileOf is Percentile of values in any order, without sorting
// them: it reorders values (no NaN) in place, so that the percentile's
// rank holds the value it would hold sorted, in linear expected time.
func (r Rule) PercentileOf(values []float64, pct int) *float64 {
	k, ok := r.Rank(len(values), pct)
	if !ok {
		return nil
	}
	v := nthSmallest(values, k-1)
	return &v
}

// nthSmallest reorders v so that v[k] is the value sorting would put
// there, every value before it no greater and every one after no smaller,
// and returns v[k]. It partitions three ways around a median of three
// (latencies repeat), and sorts what is left when the partitions stop
// shrinking, so the worst case is a sort's.
func nthSmallest(v []float64, k int) float64 {
	lo, hi := 0, len(v) // v[lo:hi] holds rank k
	for budget := 2 * bitLen(len(v)); hi-lo > 16; budget-- {
		if budget == 0 {
			slices.Sort(v[lo:hi])
			return v[k]
		}
		a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi-1]
		pivot := max(min(a, b), min(max(a, b), c))
		// v[lo:lt] < pivot, v[lt:i] == pivot, v[gt:hi] > pivot.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch x := v[i]; {
			case x < pivot:
				v[lt], v[i] = x, v[lt]
				lt++
				i++
			case x > pivot:
				gt--
				v[gt], v[i] = x, v[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return pivot
		}
	}
	slices.Sort(v[lo:hi])
	return v[k]
}

// bitLen is the number of bits n needs.
func bitLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}
