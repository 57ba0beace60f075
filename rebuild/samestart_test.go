package rebuild_test

import "testing"

// TestAttemptsStartingInTheSameNanosecond is issue 34's third night: two
// attempts of one request (same retryscope.request.id, attempts 1 and 2)
// that start in the same nanosecond, as millisecond clocks and instant
// retries make them, were split into two requests, inventing a request
// and a failure; zero-duration attempts too. The attempt number orders
// them, and they make one request that succeeded.
func TestAttemptsStartingInTheSameNanosecond(t *testing.T) {
	const t1 = "77777777777777777777777777777777"
	parent := "a100000000000001"
	trace := t1
	try := func(id string, n int, startMs, endMs float64, status int) fspan {
		s := fspan{trace: trace, id: id, parent: parent, service: "checkout", scope: "app", name: "POST", kind: client,
			startMs: startMs, endMs: endMs, attrs: map[string]any{"http.request.method": "POST", "url.full": "https://pay.internal/v1/charge",
				"server.address": "pay.internal", "http.response.status_code": status, "retryscope.request.id": "req-" + t1[:4], "retryscope.attempt": n}}
		if status >= 500 {
			s.errMsg = "HTTP 503"
		}
		return s
	}
	for _, layout := range []string{"under a parent", "root attempts", "a trace each"} {
		for _, tc := range []struct {
			name  string
			spans []fspan
		}{
			// Attempt 1 has the larger span id and, in its own trace, the
			// larger trace id: only its counter says it came first.
			{"same start", []fspan{try("a100000000000012", 2, 10, 40, 200), try("a100000000000013", 1, 10, 12, 503)}},
			{"zero duration", []fspan{try("a100000000000012", 2, 10, 10, 200), try("a100000000000013", 1, 10, 10, 503)}},
			{"zero duration, then a later success", []fspan{try("a100000000000012", 2, 10, 30, 200), try("a100000000000013", 1, 10, 10, 503)}},
		} {
			t.Run(layout+"/"+tc.name, func(t *testing.T) {
				f := newFixture()
				if layout == "under a parent" {
					f.add(fspan{trace: t1, id: "a100000000000001", service: "checkout", scope: "app", name: "charge", kind: internal, startMs: 0, endMs: 50})
				}
				for i, s := range tc.spans {
					if layout != "under a parent" {
						s.parent = ""
					}
					if layout == "a trace each" {
						s.trace = t1[:31] + string(rune('0'+i))
					}
					f.add(s)
				}
				got := rebuildFixture(t, f)
				if len(got) != 1 {
					t.Fatalf("%d requests, want 1", len(got))
				}
				for key, g := range got {
					if g.attempts != 2 || g.outcome != "ok" {
						t.Errorf("%s: %s %d attempts %s %v, want 2 attempts ok", key, g.linkage, g.attempts, g.outcome, g.triggers)
					}
				}
			})
		}
	}
}
