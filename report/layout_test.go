package report

import (
	"context"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/texttab"
	"github.com/retryscope/retryscope/segment"
)

// A duration reads as a person writes it, to three significant digits.
func TestDurationsRead(t *testing.T) {
	for ms, want := range map[float64]string{0: "0 ms", 4.512: "4.51 ms", 90.24: "90.2 ms", 201.4: "201 ms",
		1234: "1.23 s", 12034: "12.0 s", 209326: "3.5 min", 4387676: "73 min", 9e6: "2.5 h", -616: "-616 ms"} {
		if got := texttab.FormatMs(ms); got != want {
			t.Errorf("fmtMs(%v) = %q, want %q", ms, got, want)
		}
	}
}

// The default view is a screen: the headline first, the findings,
// latency, layers and triggers, and a line saying how to see the rest;
// --section shows what it names, in the order of Sections; --full shows
// every section, the workload without its rows of zeros.
func TestDefaultViewFitsAScreen(t *testing.T) {
	st := sampleStore(t)
	ctx := context.Background()
	by, err := segment.ParseDims("trigger", segment.DimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	build := func(o Options) string {
		o.Segments, o.Baseline, o.Source = segment.Spec{By: by, MinCohort: DefaultMinCohort}, "healthy", "sample.duckdb"
		rep, err := Build(ctx, st, o)
		if err != nil {
			t.Fatal(err)
		}
		return render(t, rep, "table")
	}
	titles := func(out string) []string {
		var ts []string
		for _, l := range strings.Split(out, "\n") {
			if l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "retryscope report") && !strings.HasPrefix(l, "sample.duckdb") {
				ts = append(ts, l)
			}
		}
		return ts
	}
	def := build(Options{})
	if n := strings.Count(def, "\n"); n > 70 {
		t.Errorf("the default view is %d lines, want at most 70:\n%s", n, def)
	}
	want := []string{"Headline", "Findings, most costly first", "Latency", "Amplification by retry layer", "Failed attempts by trigger"}
	if got := titles(def); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("default sections %q, want %q", got, want)
	}
	for _, s := range []string{"retry tax      1.41 attempts per request", "still failing  8.7% of requests (26)", "More: --full"} {
		if !strings.Contains(def, s) {
			t.Errorf("the default view lacks %q:\n%s", s, def)
		}
	}
	if strings.Contains(def, "ms\n") && strings.Contains(def, "000ms") {
		t.Errorf("raw milliseconds in the default view:\n%s", def)
	}

	picked := build(Options{Sections: []string{"capacity", "headline"}})
	if got := titles(picked); len(got) != 2 || got[0] != "Headline" || !strings.HasPrefix(got[1], "Capacity") {
		t.Errorf("--section capacity,headline shows %q", got)
	}

	full := build(Options{Full: true})
	for _, s := range []string{"Workload", "Marginal yield", "Capacity", "Baselines", "Segments by trigger"} {
		if !strings.Contains(full, "\n"+s) {
			t.Errorf("--full lacks the %s section", s)
		}
	}
	if strings.Contains(full, "ended by a deadline") {
		t.Error("--full shows the workload's all-zero row \"ended by a deadline\"")
	}
	if !strings.Contains(full, "\n  server_error ") {
		t.Errorf("segments by trigger pool the retried requests instead of separating them by first trigger:\n%s", full)
	}
}

func TestParseSections(t *testing.T) {
	if _, err := ParseSections("yield,bogus"); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Errorf("bogus section: %v", err)
	}
	if s, err := ParseSections("all"); err != nil || len(s) != len(Sections) {
		t.Errorf("all: %v %v", s, err)
	}
}
