package model

import (
	"math"
	"time"
)

// Window bounds the logical requests a report covers by their start time:
// Since inclusive, Until exclusive, both Unix nanoseconds. A zero side is
// open, so the zero Window covers every request.
type Window struct {
	Since, Until int64
}

// Bounds returns the window as a closed range [lo, hi] of start times, the
// open sides as the smallest and largest int64, for SQL parameters.
func (w Window) Bounds() (lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	if w.Since != 0 {
		lo = w.Since
	}
	if w.Until != 0 {
		hi = w.Until - 1
	}
	return lo, hi
}

// All reports whether the window covers every request.
func (w Window) All() bool { return w.Since == 0 && w.Until == 0 }

// String describes the window in UTC, RFC 3339.
func (w Window) String() string {
	if w.All() {
		return "every request"
	}
	side := func(ns int64, open string) string {
		if ns == 0 {
			return open
		}
		return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
	}
	return "requests starting from " + side(w.Since, "the first") + " until " + side(w.Until, "the last")
}
