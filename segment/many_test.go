package segment

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// TestComputeManyMatchesCompute: specs computed from one read give what
// each gives computed alone, and specs that read other requests are
// refused.
func TestComputeManyMatchesCompute(t *testing.T) {
	cfg := sim.Config{Seed: 5, Requests: 3000, StreamShare: 0.5, Faults: sim.DefaultFaults(), Policy: sim.DefaultPolicy()}
	st, _ := workload.Rebuilt(t, cfg)
	ctx := context.Background()
	specs := []Spec{
		{By: []Dim{{Kind: KindService}, {Kind: KindOperation}, {Kind: KindRoute}}, MinCohort: 1, Samples: true},
		{By: []Dim{{Kind: KindTrigger}}},
		{By: []Dim{{Kind: KindModel}, {Kind: KindAttr, Name: "gen_ai.system"}}, CI: true, Sort: SortKey},
		{},
	}
	many, err := ComputeMany(ctx, st, specs)
	if err != nil {
		t.Fatal(err)
	}
	for i, spec := range specs {
		one, err := Compute(ctx, st, spec)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := resultText(t, many[i]), resultText(t, one); got != want {
			t.Errorf("spec %d: ComputeMany and Compute differ:\n%s", i, testkit.FirstDiff(want, got))
		}
	}
	other := []Spec{{}, {Where: []Filter{{Dim: Dim{Kind: KindOutcome}, Values: []string{"ok"}}}}}
	if _, err := ComputeMany(ctx, st, other); err == nil {
		t.Error("specs with other filters computed from one read")
	}
}

// resultText is res as JSON, with what JSON leaves out (segment values,
// samples) after it, NaN written as such.
func resultText(t *testing.T, res Result) string {
	t.Helper()
	b, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, s := range res.Segments {
		text += fmt.Sprintf("\nvalues %q", s.Values)
	}
	for _, s := range res.Samples {
		added := "NaN"
		if !math.IsNaN(s.AddedMs) {
			added = fmt.Sprint(s.AddedMs)
		}
		text += fmt.Sprintf("\nsample %d %v %d %s", s.StartNs, s.LatencyMs, s.Attempts, added)
	}
	return text
}

// TestByID: rows and their values come out in id order, each with its own,
// when some places are missing (a filter left their requests out).
func TestByID(t *testing.T) {
	ids := []string{"c", "a", "e", "b", "d", "f"}
	rows := make([]reqRow, len(ids))
	nm := newNames()
	values := make([]name, 2*len(ids))
	order := make([]int64, len(ids))
	for i, id := range ids {
		rows[i].task = int64(id[0])
		values[2*i], values[2*i+1] = nm.number([]byte(id+"1")), nm.number([]byte(id+"2"))
		order[i] = 3 * int64(id[0]-'a')
	}
	byID(rows, values, order, 2)
	for i, want := range []string{"a", "b", "c", "d", "e", "f"} {
		got := []string{nm.text(values[2*i]), nm.text(values[2*i+1])}
		if rows[i].task != int64(want[0]) || got[0] != want+"1" || got[1] != want+"2" {
			t.Errorf("position %d: row %q, values %q; want %q", i, rune(rows[i].task), got, want)
		}
	}
}
