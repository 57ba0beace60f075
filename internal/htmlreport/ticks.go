package htmlreport

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// Tick steps are chosen so an axis has 4 to 6 labelled ticks at values a
// person counts in: 1, 2, 2.5 and 5 times a power of ten, and for
// durations the steps of a clock (15 s, 30 s, 1 min, 5 min, 1 h, 6 h).
const maxIntervals = 5

// durationSteps are the steps, in ms, of a duration axis of a second or
// more; below a second the decimal steps serve.
var durationSteps = []float64{1e3, 2e3, 5e3, 10e3, 15e3, 30e3,
	60e3, 2 * 60e3, 5 * 60e3, 10 * 60e3, 15 * 60e3, 30 * 60e3,
	3600e3, 2 * 3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3, 24 * 3600e3}

// linearTicks widens [lo, hi] to whole steps and returns the ticks; keepLo
// leaves the bottom where it is (a fixed minimum).
func linearTicks(lo, hi float64, u Unit, keepLo bool) (float64, float64, []plot.Tick) {
	if hi == lo {
		hi = lo + math.Max(math.Abs(lo), 1)
	}
	for _, step := range steps(u, hi-lo) {
		a, b := math.Floor(lo/step+1e-9)*step, math.Ceil(hi/step-1e-9)*step
		if keepLo {
			a = lo
		}
		if (b-a)/step > maxIntervals+1e-9 {
			continue
		}
		var ticks []plot.Tick
		for v := math.Ceil(a/step-1e-9) * step; v <= b+step*1e-9; v += step {
			v = math.Round(v/step) * step
			if v == 0 {
				v = 0 // not -0
			}
			l := label(v, u)
			if u == Number && v != 0 && math.Max(-a, b) >= 10_000 {
				l = short(v/1000) + "k"
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: l})
		}
		return a, b, ticks
	}
	return lo, hi, nil
}

// steps are the candidate steps for a span, smallest first, from a
// little under span/maxIntervals.
func steps(u Unit, span float64) []float64 {
	var out []float64
	p := math.Pow(10, math.Floor(math.Log10(span/maxIntervals)))
	for e := p; len(out) < 12; e *= 10 {
		for _, m := range []float64{1, 2, 2.5, 5} {
			s := m * e
			if u == Duration && s >= 1000 {
				continue
			}
			out = append(out, s)
		}
		if u == Duration && e >= 1000 {
			break
		}
	}
	if u == Duration {
		out = append(out, durationSteps...)
		for d := 2.0; d < 1e6; d *= 2 {
			out = append(out, d*24*3600e3)
		}
	}
	return out
}

// logTicks ticks each power of ten in [lo, hi], and 2 and 5 times each
// where that leaves fewer than four ticks; the range stays the data's, a
// decade wider would leave most of the axis empty.
func logTicks(lo, hi float64, u Unit) (float64, float64, []plot.Tick) {
	if lo <= 0 {
		lo = math.Min(hi, 1) / 10
	}
	if hi <= lo {
		hi = lo * 10
	}
	var ticks []plot.Tick
	for _, mults := range [][]float64{{1}, {1, 2, 5}, {1, 2, 3, 5}} {
		ticks = ticks[:0]
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			for _, m := range mults {
				if v := m * math.Pow(10, e); v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
					ticks = append(ticks, plot.Tick{Value: v, Label: label(v, u)})
				}
			}
		}
		if len(ticks) >= 4 {
			break
		}
	}
	return lo, hi, ticks
}

// durationUnits are the units a duration tick is written in, largest
// first.
var durationUnits = []struct {
	ms   float64
	name string
}{{24 * 3600e3, "d"}, {3600e3, "h"}, {60e3, "min"}, {1e3, "s"}, {1, "ms"}}

// label writes a tick's value in its unit.
func label(v float64, u Unit) string {
	switch u {
	case Duration:
		return FormatDuration(v)
	case Percent:
		return short(v) + "%"
	case Times:
		return short(v) + "x"
	}
	return short(v)
}

// FormatDuration writes ms as a chart's duration ticks read, in the
// largest unit that leaves at most one decimal (two for seconds): 0,
// 250 ms, 1.25 s, 90 s, 2 min, 6 h.
func FormatDuration(ms float64) string {
	if ms == 0 {
		return "0"
	}
	a := math.Abs(ms)
	for _, d := range durationUnits {
		x, places := a/d.ms, 10.0
		if d.name == "s" {
			places = 100
		}
		if x >= 1 && math.Abs(x*places-math.Round(x*places)) < 1e-6 || d.name == "ms" {
			return sign(ms) + short(x) + " " + d.name
		}
	}
	return short(ms)
}

func sign(v float64) string {
	if v < 0 {
		return "−"
	}
	return ""
}

// short writes v without a trailing .0 or float noise.
func short(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}
