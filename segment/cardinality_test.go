package segment

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestHighCardinalityPoolsTheLongTail is issue 34's ninth night at a size
// that runs in seconds: --by attr:user.id over a million distinct values
// took 2.4 GB, and with --min-cohort 1 it was killed at a 4 GiB cap. The
// segments reported are bounded (MaxSegments): the largest are shown, the
// long tail is pooled into (other) with a note, and no request is lost.
func TestHighCardinalityPoolsTheLongTail(t *testing.T) {
	const users, maxSegments = 400, 25
	st := newStore(t)
	var reqs []fakeRequest
	for i := range users + 60 {
		reqs = append(reqs, fakeRequest{id: fmt.Sprintf("r%04d", i), latency: 100, attempts: 1, ok: true,
			ttft: math.NaN(), first: 100, second: math.NaN()})
	}
	insertRequests(t, st, reqs)
	for i, r := range reqs {
		user := fmt.Sprintf("u%04d", i)
		if i >= users {
			user = "heavy" // one user with 60 requests, the largest segment
		}
		insertAnchorSpan(t, st, r.id, "user.id", user, "r", "prod")
	}
	dims, err := ParseDims("attr:user.id", DimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := compute(t, st, Spec{By: dims, MinCohort: 1, MaxSegments: maxSegments})
	if len(res.Segments) != maxSegments {
		t.Errorf("%d segments, want %d", len(res.Segments), maxSegments)
	}
	total := 0
	for _, s := range res.Segments {
		total += s.Measures.LogicalRequests
	}
	if total != len(reqs) {
		t.Errorf("the segments hold %d requests of %d", total, len(reqs))
	}
	if s := segmentBy(t, res, "heavy"); s.LogicalRequests != 60 {
		t.Errorf("the largest user: %d requests, want 60", s.LogicalRequests)
	}
	if o := segmentBy(t, res, Other); o.LogicalRequests != users-(maxSegments-2) {
		t.Errorf("(other): %d requests, want %d", o.LogicalRequests, users-(maxSegments-2))
	}
	if len(res.Notes) == 0 || !strings.Contains(strings.Join(res.Notes, "\n"), "pooled into (other)") {
		t.Errorf("no note says the tail was pooled: %q", res.Notes)
	}
}
