package htmlreport

import (
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// Axes get 4 to 6 ticks at steps a person counts in, labelled in the
// figure's unit as the text report writes it, and a linear axis widens
// to whole steps without cutting data off.
func TestTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		unit   Unit
		log    bool
		want   string
	}{
		{0, 1100, Duration, false, "0 250 ms 500 ms 750 ms 1 s 1.25 s"},
		{0, 36_000, Duration, false, "0 10 s 20 s 30 s 40 s"},
		{0, 25_000, Duration, false, "0 5 s 10 s 15 s 20 s 25 s"},
		{0, 3 * 3600e3, Duration, false, "0 1 h 2 h 3 h"},
		{0, 86_400e3, Duration, false, "0 6 h 12 h 18 h 1 d"},
		{-400, 3100, Duration, false, "−1 s 0 1 s 2 s 3 s 4 s"},
		{8, 35_000, Duration, true, "10 ms 100 ms 1 s 10 s"},
		{60, 900, Duration, true, "100 ms 200 ms 300 ms 500 ms"},
		{0, 46, Number, false, "0 10 20 30 40 50"},
		{0, 25_000, Number, false, "0 5k 10k 15k 20k 25k"},
		{0, 20.3, Percent, false, "0% 5% 10% 15% 20% 25%"},
		{1, 1.84, Times, false, "1x 1.2x 1.4x 1.6x 1.8x 2x"},
	} {
		var ticks []plot.Tick
		if c.log {
			_, _, ticks = logTicks(c.lo, c.hi, c.unit)
		} else {
			var lo, hi float64
			lo, hi, ticks = linearTicks(c.lo, c.hi, c.unit, false)
			if lo > c.lo || hi < c.hi {
				t.Errorf("[%g, %g] widened to [%g, %g], which leaves data out", c.lo, c.hi, lo, hi)
			}
		}
		labels := make([]string, len(ticks))
		for i, tk := range ticks {
			labels[i] = tk.Label
		}
		if got := strings.Join(labels, " "); got != c.want {
			t.Errorf("ticks of [%g, %g] (unit %d, log %v): %q, want %q", c.lo, c.hi, c.unit, c.log, got, c.want)
		}
	}
}
