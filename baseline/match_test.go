package baseline

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestNearestPrunesNothing: the pruned scan finds exactly what comparing
// every candidate finds.
func TestNearestPrunesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := &matcher{k: 5, maxDistance: 1, tokenScale: math.Ln2, timeScale: 60e9}
	row := func(id int) *matchRow {
		r := &matchRow{id: fmt.Sprintf("%05d", id), start: rng.Int64N(600e9), latency: rng.Float64() * 1000,
			inLog: math.Log(1 + 100 + rng.Float64()*5000), outLog: math.Log(1 + rng.Float64()*500)}
		if rng.IntN(10) == 0 {
			r.outLog = math.NaN()
		}
		return r
	}
	var candidates []*matchRow
	for i := range 2000 {
		candidates = append(candidates, row(i))
	}
	slices.SortFunc(candidates, func(a, b *matchRow) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.id, b.id)) })
	for i := range 200 {
		r := row(10000 + i)
		var brute []neighbour
		for _, c := range candidates {
			if d := m.distance(r, c); d <= m.maxDistance {
				brute = append(brute, neighbour{c, d})
			}
		}
		slices.SortFunc(brute, func(a, b neighbour) int {
			return cmp.Or(cmp.Compare(a.distance, b.distance), cmp.Compare(a.row.id, b.row.id))
		})
		brute = brute[:min(len(brute), m.k)]
		got := m.nearest(r, candidates)
		if len(got) != len(brute) {
			t.Fatalf("request %d: %d matches, brute force %d", i, len(got), len(brute))
		}
		for j := range got {
			if got[j].row != brute[j].row {
				t.Fatalf("request %d: match %d is %s, brute force %s", i, j, got[j].row.id, brute[j].row.id)
			}
		}
	}
}
