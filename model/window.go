package model

import (
	"fmt"
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

// ParseSpan reads a span of time as the command line gives one (see
// ParseDuration). ok is false for anything else, zero and negative spans
// included.
func ParseSpan(s string) (d time.Duration, ok bool) {
	d, err := ParseDuration(s)
	return d, err == nil && d > 0
}

// ParseDuration reads a duration as the command line gives one: a Go
// duration ("90m", "1.5h", "-1s"), a whole number of days ("30d"), or days
// and a Go duration ("1d12h"). A value beyond what a time.Duration holds
// (about 292 years) is an error, never a wrapped-around number.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	sign, rest := time.Duration(1), s
	if r, ok := strings.CutPrefix(rest, "-"); ok {
		sign, rest = -1, r
	} else if r, ok := strings.CutPrefix(rest, "+"); ok {
		rest = r
	}
	days, clock, hasDays := strings.Cut(rest, "d")
	if !hasDays {
		d, err := time.ParseDuration(rest)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (want e.g. 30d, 36h, 90m or 1d12h)", s)
		}
		return sign * d, nil
	}
	const maxDays = math.MaxInt64 / int64(24*time.Hour)
	n, err := strconv.ParseUint(days, 10, 64)
	if err != nil || days == "" || strings.HasPrefix(clock, "-") || strings.HasPrefix(clock, "+") {
		return 0, fmt.Errorf("%q is not a duration (want e.g. 30d, 36h, 90m or 1d12h)", s)
	}
	if n > uint64(maxDays) {
		return 0, fmt.Errorf("%q is out of range (at most %d days)", s, maxDays)
	}
	d := time.Duration(n) * 24 * time.Hour
	if clock != "" {
		c, err := time.ParseDuration(clock)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (want e.g. 30d, 36h, 90m or 1d12h)", s)
		}
		if c > math.MaxInt64-d {
			return 0, fmt.Errorf("%q is out of range (at most %d days)", s, maxDays)
		}
		d += c
	}
	return sign * d, nil
}

// FormatDuration writes d as ParseDuration reads it back, shortest first:
// "30d", "1h", "90s", else as Go writes it.
func FormatDuration(d time.Duration) string {
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d != 0 && d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.name
		}
	}
	return d.String()
}

// InNanoRange reports whether t is from 1970 to 2262, the times whose Unix
// nanoseconds an int64 holds and a span's start (unsigned nanoseconds
// since 1970) can have.
func InNanoRange(t time.Time) bool {
	return !t.Before(time.Unix(0, 0)) && !t.After(time.Unix(0, math.MaxInt64))
}
