package texttab

import "strconv"

// Unit says what a cell holds, and so how every format writes it.
type Unit int

// The units of a cell.
const (
	Text     Unit = iota // a label
	Count                // a whole number
	Ms                   // milliseconds
	SignedMs             // a difference in milliseconds, signed
	Share                // a share of 1, shown as a percentage
	Times                // a ratio, shown as a multiplier
	Number               // a plain figure
	Decimal              // a plain figure to two decimals: a load, a rate
	USD                  // US dollars
	Change               // a relative change, shown as a signed percentage
	Points               // a change of a share, in percentage points
)

// Cell is one figure of a table: a value with its unit, a range of two
// values, text, or a missing value with the reason it is missing.
type Cell struct {
	Unit Unit
	V    float64
	// Hi, with Range, makes the cell the range V to Hi.
	Hi    float64
	Range bool
	Text  string
	// Missing cells have no value: MinN > 0 says the sample is smaller
	// than the MinN a percentile needs, 0 that there is nothing to show.
	Missing bool
	MinN    int
	// Blank marks a missing value nobody asked for: an empty cell.
	Blank bool
}

// Label is the text s, a cell of Unit Text.
func Label(s string) Cell { return Cell{Unit: Text, Text: s} }

// Int is the whole number n.
func Int[T ~int | ~int64](n T) Cell { return Cell{Unit: Count, V: float64(n)} }

// Value is v in unit u.
func Value(u Unit, v float64) Cell { return Cell{Unit: u, V: v} }

// Maybe is v in unit u, or a cell with nothing to show.
func Maybe(u Unit, v *float64) Cell {
	if v == nil {
		return Cell{Unit: u, Missing: true}
	}
	return Cell{Unit: u, V: *v}
}

// String is the cell as text, Markdown and HTML show it: the one place a
// figure is formatted.
func (c Cell) String() string {
	switch {
	case c.Blank:
		return ""
	case c.Missing && c.MinN > 0:
		return "n<" + strconv.Itoa(c.MinN)
	case c.Missing:
		return "-"
	case c.Unit == Text:
		return c.Text
	case c.Range:
		return Format(c.Unit, c.V) + " – " + Format(c.Unit, c.Hi)
	}
	return Format(c.Unit, c.V)
}

// Format writes v in unit u, as a cell of u shows it.
func Format(u Unit, v float64) string {
	switch u {
	case Count:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case Ms:
		return FormatMs(v)
	case SignedMs:
		if v > 0 {
			return "+" + FormatMs(v)
		}
		return FormatMs(v)
	case Share:
		return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
	case Times:
		return strconv.FormatFloat(v, 'f', 2, 64) + "x"
	case Decimal:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case Change:
		return signed(v, strconv.FormatFloat(100*v, 'f', 1, 64)) + "%"
	case Points:
		return signed(v, strconv.FormatFloat(100*v, 'f', 1, 64)) + " pp"
	case USD:
		if max(v, -v) >= 1 {
			return "$" + strconv.FormatFloat(v, 'f', 2, 64)
		}
		return "$" + strconv.FormatFloat(v, 'f', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// signed puts a plus before s, the figure v formatted, unless v is
// negative.
func signed(v float64, s string) string {
	if v < 0 {
		return s
	}
	return "+" + s
}

// FormatMs writes a duration given in ms as a person reads it, to three
// significant digits: 4.51 ms, 90.2 ms, 1.23 s, 12.0 s, 3.5 min, 73 min,
// 2.5 h.
func FormatMs(v float64) string {
	f := func(x float64, unit string) string {
		prec := 0
		switch a := max(x, -x); {
		case a < 10:
			prec = 2
		case a < 100:
			prec = 1
		}
		return strconv.FormatFloat(x, 'f', prec, 64) + " " + unit
	}
	switch a := max(v, -v); {
	case a == 0:
		return "0 ms"
	case a < 1000:
		return f(v, "ms")
	case a < 60_000:
		return f(v/1000, "s")
	case a < 7_200_000: // up to two hours in minutes: 73 min reads better than 1.2 h
		if a < 600_000 {
			return strconv.FormatFloat(v/60_000, 'f', 1, 64) + " min"
		}
		return strconv.FormatFloat(v/60_000, 'f', 0, 64) + " min"
	case a < 36_000_000:
		return strconv.FormatFloat(v/3_600_000, 'f', 1, 64) + " h"
	}
	return strconv.FormatFloat(v/3_600_000, 'f', 0, 64) + " h"
}

// Raw is the cell as CSV holds it: the full-precision value in its base
// unit (ms, a share of 1, a ratio), the text, or empty when missing. A
// range gives its two ends.
func (c Cell) Raw() []string {
	if c.Range {
		if c.Missing {
			return []string{"", ""}
		}
		return []string{strconv.FormatFloat(c.V, 'g', -1, 64), strconv.FormatFloat(c.Hi, 'g', -1, 64)}
	}
	switch {
	case c.Missing:
		return []string{""}
	case c.Unit == Text:
		return []string{c.Text}
	}
	return []string{strconv.FormatFloat(c.V, 'g', -1, 64)}
}

// Numeric reports whether the cell is a figure, right-aligned in tables.
func (c Cell) Numeric() bool { return c.Unit != Text }
