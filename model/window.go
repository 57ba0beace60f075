package model

import (
	"math"
	"strconv"
	"strings"
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

// ParseSpan reads a span of time as the command line gives one: a Go
// duration ("90m", "36h") or a whole number of days ("30d"). ok is false
// for anything else, zero and negative spans included.
func ParseSpan(s string) (d time.Duration, ok bool) {
	s = strings.TrimSpace(s)
	if days, found := strings.CutSuffix(s, "d"); found {
		n, err := strconv.Atoi(days)
		return time.Duration(n) * 24 * time.Hour, err == nil && n > 0
	}
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}
