package segment

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/queries"
)

// segment_rows' columns are read by name: two columns of one type swapped
// in its SQL leave every figure as it was, where reading them by position
// would swap every request's first and second attempt. A column renamed or
// dropped is an error naming the query and the column.
func TestSwappedColumnsLeaveTheSegmentsAsTheyWere(t *testing.T) {
	st := generated(t, 31, 1500)
	original := queries.Get("segment_rows")
	const pair = "       a.first_attempt_ms,\n       a.second_attempt_ms,\n"
	swapped := testkit.ReplaceOnce(t, original, pair, "       a.second_attempt_ms,\n       a.first_attempt_ms,\n")
	spec := Spec{By: []Dim{{Kind: KindTrigger}, {Kind: KindAttr, Name: "cloud.region"}}, MinCohort: 1}
	computed := func(rows string) (string, error) {
		t.Helper()
		old := rowsSQL
		rowsSQL = func() string { return rows }
		defer func() { rowsSQL = old }()
		res, err := Compute(context.Background(), st, spec)
		if err != nil {
			return "", err
		}
		b, err := json.MarshalIndent(res, "", " ")
		return string(b), err
	}
	want, err := computed(original)
	if err != nil {
		t.Fatal(err)
	}
	if testkit.Count(t, st, `SELECT count(*) FROM requests WHERE attempts > 1`) == 0 {
		t.Fatal("no request has a second attempt: the swap would show nothing")
	}
	got, err := computed(swapped)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("the swapped columns changed the segments: %s", testkit.FirstDiff(got, want))
	}

	for _, c := range []struct{ what, sql, want string }{
		{"renamed", testkit.ReplaceOnce(t, original, "r.stream,", "r.stream AS streamed,"), "segment_rows: the query has no column stream"},
		{"dropped", testkit.ReplaceOnce(t, original, "       r.hidden_work_ms,\n", ""), "segment_rows: the query has no column hidden_work_ms"},
	} {
		if _, err := computed(c.sql); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("a column %s: got %v, want an error with %q", c.what, err, c.want)
		}
	}
}
