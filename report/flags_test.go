package report

import (
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagsRefuseImpossibleBudgets: a budget that is not a number, below
// what it bounds, or infinite is a usage error, not a ceiling nobody can
// reach.
func TestFlagsRefuseImpossibleBudgets(t *testing.T) {
	for _, args := range [][]string{
		{"--amplification-budget", "NaN"}, {"--amplification-budget", "Inf"}, {"--amplification-budget", "0.5"},
		{"--p99-budget", "-5s"}, {"--p99-budget", "soon"},
	} {
		var f Flags
		fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
		f.Register(fs, "output")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := f.Check(); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	var f Flags
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	f.Register(fs, "output")
	if err := fs.Parse([]string{"--amplification-budget", "1.2", "--p99-budget", "2s"}); err != nil || f.Check() != nil {
		t.Errorf("good budgets refused: %v %v", err, f.Check())
	}
}
