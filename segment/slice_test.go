package segment

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/queries"
)

// A window read a slice of request ids at a time gives the segments one
// read of it gives, to the byte: the same requests, in the same order (the
// bootstrap's intervals, drawn by place, show it), with their anchor
// spans' values and baselines joined by slice.
func TestSlicedReadEqualsOneRead(t *testing.T) {
	st := generated(t, 32, 1500)
	ctx := context.Background()
	for _, q := range []string{queries.Get("baseline_state_mark"),
		`INSERT INTO baselines (request_id, kind, latency_ms, l0_ms, provenance, method, reason)
		 SELECT request_id, 'no_retry', latency_ms, latency_ms - hash(request_id) % 300,
		        CASE WHEN hash(request_id) % 3 = 0 THEN 'modeled' ELSE 'measured' END, 'test', NULL
		 FROM requests WHERE attempts > 1`,
	} {
		if _, err := st.ExecText(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	n := testkit.Count(t, st, `SELECT count(*) FROM requests`)
	const slice = 97
	if n < 5*slice {
		t.Fatalf("%d requests: too few for several slices of %d", n, slice)
	}
	specs := map[string]Spec{
		"workload": {BaselineKind: "no_retry", CI: true},
		"dims": {By: []Dim{{Kind: KindTrigger}, {Kind: KindAttr, Name: "cloud.region"}}, MinCohort: 1,
			BaselineKind: "no_retry", CI: true},
		"where": {By: []Dim{{Kind: KindModel}}, Where: []Filter{{Dim: Dim{Kind: KindOutcome}, Values: []string{"ok"}}},
			BaselineKind: "no_retry"},
	}
	for name, spec := range specs {
		read := func(size int64) string {
			t.Helper()
			old := sliceRequests
			sliceRequests = size
			defer func() { sliceRequests = old }()
			res, err := Compute(ctx, st, spec)
			if err != nil {
				t.Fatalf("%s, slices of %d: %v", name, size, err)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		whole, sliced := read(1<<40), read(slice)
		if whole != sliced {
			t.Errorf("%s: slices of %d changed the segments: %s", name, slice, testkit.FirstDiff(sliced, whole))
		}
		if exact := read(n / 4); exact != whole { // the last slice ends on the last id
			t.Errorf("%s: slices of n/4 changed the segments: %s", name, testkit.FirstDiff(exact, whole))
		}
	}
}
