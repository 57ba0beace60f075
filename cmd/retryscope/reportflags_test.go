package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// parseReportFlags registers the report's flags, parses args and checks
// them.
func parseReportFlags(args ...string) (*reportFlags, error) {
	var f reportFlags
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	f.Register(fs, "output")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return &f, f.Check()
}

// TestFlagsRefuseImpossibleBudgets: a budget that is not a number, below
// what it bounds, or infinite is a usage error, not a ceiling nobody can
// reach.
func TestFlagsRefuseImpossibleBudgets(t *testing.T) {
	for _, args := range [][]string{
		{"--amplification-budget", "NaN"}, {"--amplification-budget", "Inf"}, {"--amplification-budget", "0.5"},
		{"--p99-budget", "-5s"}, {"--p99-budget", "soon"},
	} {
		if _, err := parseReportFlags(args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	if _, err := parseReportFlags("--amplification-budget", "1.2", "--p99-budget", "2s"); err != nil {
		t.Errorf("good budgets refused: %v", err)
	}
}

// TestWorkersFlag: --workers absent or 0 estimates; a count sets it; a
// negative count or not a number is a usage error naming the flag.
func TestWorkersFlag(t *testing.T) {
	parse := func(args ...string) (int, error) {
		f, err := parseReportFlags(args...)
		if err != nil {
			return 0, err
		}
		return f.opt.Workers, nil
	}
	for _, tc := range []struct {
		args []string
		want int
	}{{nil, 0}, {[]string{"--workers", "0"}, 0}, {[]string{"--workers", "8"}, 8}, {[]string{"--workers=16"}, 16}} {
		if got, err := parse(tc.args...); err != nil || got != tc.want {
			t.Errorf("%v: workers %d, %v; want %d", tc.args, got, err, tc.want)
		}
	}
	for _, bad := range []string{"-1", "abc", "1.5", "20000000"} {
		_, err := parse("--workers", bad)
		if err == nil || !strings.Contains(err.Error(), "--workers") {
			t.Errorf("--workers %s: %v, want an error naming --workers", bad, err)
		}
	}
}

// TestChartsOnlyForHTML: the charts' samples are kept for an HTML report
// only (report.Options.NoCharts), whether the format is given or follows
// from the output file's extension.
func TestChartsOnlyForHTML(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		noCharts bool
	}{
		{nil, true}, {[]string{"--format", "html"}, false}, {[]string{"--format", "json"}, true},
		{[]string{"-o", "r.html"}, false}, {[]string{"-o", "r.md"}, true},
	} {
		f, err := parseReportFlags(tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		if f.opt.NoCharts != tc.noCharts {
			t.Errorf("%v: NoCharts %v, want %v", tc.args, f.opt.NoCharts, tc.noCharts)
		}
	}
}

// TestPricesFlag: --prices reads its file over the built-in prices; a
// missing file is a usage error naming the flag.
func TestPricesFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(path, []byte(`{"mine": {"input_per_mtok": 1, "output_per_mtok": 2}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := parseReportFlags("--prices", path)
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Prices(); p["mine"].OutputPerMTok != 2 || p["gpt-4o"].InputPerMTok != 2.5 {
		t.Errorf("prices %v: want the file over the built-in ones", p)
	}
	if _, err := parseReportFlags("--prices", path+".none"); err == nil || !strings.Contains(err.Error(), "--prices") {
		t.Errorf("a missing file: %v, want an error naming --prices", err)
	}
}
