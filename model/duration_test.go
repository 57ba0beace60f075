package model

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"30d", 30 * 24 * time.Hour}, {"1d12h", 36 * time.Hour}, {"90m", 90 * time.Minute},
		{"-1s", -time.Second}, {"0", 0}, {"106751d", 106751 * 24 * time.Hour},
	} {
		if got, err := ParseDuration(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	// 1000000d is 8.64e19 ns: it must be refused, not wrap to a negative
	// or small span (--keep 1000000d once deleted everything).
	for _, in := range []string{"1000000d", "106752d", "106751d24h", "9999999999h", "d", "1.5d", "1d-1h", "NaN", "Inf", "", "1x"} {
		if got, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, got)
		}
	}
	if _, ok := ParseSpan("0"); ok {
		t.Error("ParseSpan(0) ok")
	}
}

func TestFormatDurationReadsBack(t *testing.T) {
	for _, d := range []time.Duration{24 * time.Hour, 36500 * 24 * time.Hour, time.Hour, 90 * time.Second, time.Millisecond, 1500 * time.Microsecond} {
		if got, err := ParseDuration(FormatDuration(d)); err != nil || got != d {
			t.Errorf("%v: FormatDuration %q reads back as %v, %v", d, FormatDuration(d), got, err)
		}
	}
}
