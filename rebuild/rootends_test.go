package rebuild_test

import "testing"

// TestRootEndingBeforeItsLastAttempt is issue 34's seventh night: a
// request whose root span ended (at 92 ms) before its final attempt did
// (at 110 ms) had a latency shorter than its attempts and a residual of
// 18 ms, where the decomposition must add up (under 1 ms). The request now
// runs to its final response.
func TestRootEndingBeforeItsLastAttempt(t *testing.T) {
	const t1 = "99999999999999999999999999999991"
	try := func(id string, n int, startMs, endMs float64, status int) fspan {
		s := fspan{trace: t1, id: id, parent: "d100000000000001", service: "checkout", scope: "app", name: "POST", kind: client,
			startMs: startMs, endMs: endMs, attrs: map[string]any{"http.request.method": "POST", "url.full": "https://pay.internal/v1/charge",
				"server.address": "pay.internal", "http.response.status_code": status, "retryscope.request.id": "r-1", "retryscope.attempt": n}}
		if status >= 500 {
			s.errMsg = "HTTP 503"
		}
		return s
	}
	f := newFixture()
	f.add(fspan{trace: t1, id: "d100000000000001", service: "checkout", scope: "app", name: "charge", kind: internal, startMs: 0, endMs: 92})
	f.add(try("d100000000000011", 1, 2, 40, 503))
	f.add(try("d100000000000012", 2, 50, 110, 200))
	got := rebuildFixture(t, f)
	r := got[t1+":d100000000000001"]
	if r == nil || len(got) != 1 {
		t.Fatalf("%d requests, want the one", len(got))
	}
	if r.latency != 110 || r.tFinal != 60 || r.residual != 0 {
		t.Errorf("latency %v ms, final attempt %v ms, residual %v ms; want 110, 60, 0", r.latency, r.tFinal, r.residual)
	}
}
