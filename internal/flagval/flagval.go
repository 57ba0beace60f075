// Package flagval holds the command line's number and duration flags with
// the range each one accepts, so a bad value fails while the flags are
// parsed: before any file is opened, written or deleted.
package flagval

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/retryscope/retryscope/model"
)

// Duration is a duration flag (ParseDuration's syntax, "30d" included)
// that accepts Min to Max, and 0 too when ZeroMeans says what 0 means.
type Duration struct {
	P         *time.Duration
	Min, Max  time.Duration
	ZeroMeans string
}

// NewDuration sets *p to def and returns a flag value for it that accepts
// min to max.
func NewDuration(p *time.Duration, def, min, max time.Duration) *Duration {
	*p = def
	return &Duration{P: p, Min: min, Max: max}
}

// OrZero also accepts 0, meaning what it says.
func (d *Duration) OrZero(means string) *Duration { d.ZeroMeans = means; return d }

// Set implements pflag.Value.
func (d *Duration) Set(s string) error {
	v, err := model.ParseDuration(s)
	if err != nil {
		return err
	}
	if v == 0 && d.ZeroMeans != "" {
		*d.P = 0
		return nil
	}
	if v < d.Min || v > d.Max {
		return fmt.Errorf("want a duration from %s to %s%s", model.FormatDuration(d.Min), model.FormatDuration(d.Max), d.zero())
	}
	*d.P = v
	return nil
}

func (d *Duration) zero() string {
	if d.ZeroMeans == "" {
		return ""
	}
	return ", or 0 for " + d.ZeroMeans
}

// String implements pflag.Value; 0 is "0" so that help leaves it out.
func (d *Duration) String() string {
	if d.P == nil || *d.P == 0 {
		return "0"
	}
	return model.FormatDuration(*d.P)
}

// Type implements pflag.Value.
func (d *Duration) Type() string { return "duration" }

// Int is a whole-number flag that accepts Min to Max.
type Int struct {
	P        *int
	Min, Max int
	// ZeroMeans, unless empty, makes 0 valid too and says what it means.
	ZeroMeans string
}

// NewInt sets *p to def and returns a flag value for it that accepts min to
// max.
func NewInt(p *int, def, min, max int) *Int {
	*p = def
	return &Int{P: p, Min: min, Max: max}
}

// OrZero also accepts 0, meaning what it says.
func (n *Int) OrZero(means string) *Int { n.ZeroMeans = means; return n }

// Set implements pflag.Value.
func (n *Int) Set(s string) error {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 0, 64)
	if err == nil && v == 0 && n.ZeroMeans != "" {
		*n.P = 0
		return nil
	}
	if err != nil || v < int64(n.Min) || v > int64(n.Max) {
		zero := ""
		if n.ZeroMeans != "" {
			zero = ", or 0 for " + n.ZeroMeans
		}
		return fmt.Errorf("want a whole number from %d to %d%s", n.Min, n.Max, zero)
	}
	*n.P = int(v)
	return nil
}

// String implements pflag.Value.
func (n *Int) String() string {
	if n.P == nil {
		return "0"
	}
	return strconv.Itoa(*n.P)
}

// Type implements pflag.Value.
func (n *Int) Type() string { return "int" }

// Float is a number flag that accepts finite values from Min to Max.
type Float struct {
	P        *float64
	Min, Max float64
}

// NewFloat sets *p to def and returns a flag value for it that accepts min
// to max.
func NewFloat(p *float64, def, min, max float64) *Float {
	*p = def
	return &Float{P: p, Min: min, Max: max}
}

// Set implements pflag.Value.
func (f *Float) Set(s string) error {
	v, err := ParseFloat(s, f.Min, f.Max)
	if err != nil {
		return err
	}
	*f.P = v
	return nil
}

// ParseFloat reads a finite number from min to max; NaN and infinities
// are refused.
func ParseFloat(s string, min, max float64) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < min || v > max {
		return 0, fmt.Errorf("want a number from %s to %s", fmtFloat(min), fmtFloat(max))
	}
	return v, nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// String implements pflag.Value.
func (f *Float) String() string {
	if f.P == nil {
		return "0"
	}
	return fmtFloat(*f.P)
}

// Type implements pflag.Value.
func (f *Float) Type() string { return "float" }
