package report

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// TestBuildProgress: Build tells Options.Progress of every step, in order,
// numbered of how many there are; the what-if step only with a replay.
func TestBuildProgress(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests = 200
	st, _ := workload.Rebuilt(t, cfg)
	for _, whatif := range []bool{false, true} {
		var got []string
		opt := Options{Baseline: "none", Progress: func(step string, i, n int) {
			got = append(got, fmt.Sprintf("%d/%d %s", i, n, step))
		}}
		want := []string{"1/5 measuring the requests", "2/5 layers, triggers and ranges", "3/5 baselines",
			"4/5 marginal yield and capacity", "5/5 findings"}
		if whatif {
			opt.Whatif = &Replay{}
			want = []string{"1/6 measuring the requests", "2/6 layers, triggers and ranges", "3/6 baselines",
				"4/6 marginal yield and capacity", "5/6 findings", "6/6 what if"}
		}
		if _, err := Build(context.Background(), st, opt); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("whatif %v: progress %q, want %q", whatif, got, want)
		}
	}
}
