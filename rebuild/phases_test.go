package rebuild_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/gen"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// TestAttemptPhases: where the callee's SERVER span is exported, an
// attempt's queue, connection, serving and generation add up to its
// elapsed time, none negative; a stream's generation runs from its first
// token to its end; without a SERVER span or a first token the phases are
// NULL.
func TestAttemptPhases(t *testing.T) {
	cfg := shapeConfig(nil, 400, 1)
	cfg.StreamShare = 1
	st, truth := generated(t, cfg)
	served := map[string]bool{}
	for _, r := range truth.Requests {
		for _, a := range r.AttemptList {
			served[a.Span] = a.ServerEndNs != 0
		}
	}
	rows, err := st.Conn.QueryContext(context.Background(), `SELECT trace_id || ':' || span_id, elapsed_ms, ttft_ms,
		queue_ms, connect_ms, serve_ms, generate_ms FROM attempts`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, withPhases, streams := 0, 0, 0
	for rows.Next() {
		var key string
		var elapsed float64
		var ttft, q, c, s, g *float64
		if err := rows.Scan(&key, &elapsed, &ttft, &q, &c, &s, &g); err != nil {
			t.Fatal(err)
		}
		n++
		if c != nil {
			t.Errorf("%s: connect_ms %v without connection spans", key, *c)
		}
		if served[key] != (s != nil) || (q != nil) != (s != nil) {
			t.Errorf("%s: SERVER span %v, queue %v, serve %v", key, served[key], q != nil, s != nil)
		}
		if ttft != nil {
			streams++
			if g == nil || math.Abs(*g-(elapsed-*ttft)) > 1e-3 {
				t.Errorf("%s: generate_ms %v, want elapsed - ttft = %.4f", key, g, elapsed-*ttft)
			}
		}
		if s == nil {
			continue
		}
		withPhases++
		if *q < 0 || *s < 0 || *g < 0 || math.Abs(*q+*s+*g-elapsed) > 1e-3 {
			t.Errorf("%s: Q %.4f + S %.4f + G %.4f, elapsed %.4f", key, *q, *s, *g, elapsed)
		}
	}
	t.Logf("%d attempts, %d with Q/S/G, %d streamed", n, withPhases, streams)
	if withPhases < n/2 || streams < 50 {
		t.Fatalf("weak workload: %d of %d attempts with phases, %d streamed", withPhases, n, streams)
	}
}

// fixtureStore ingests the fixture and rebuilds it, returning the database.
func fixtureStore(t *testing.T, f *fixture) *store.Store {
	t.Helper()
	path := testkit.WriteFile(t, filepath.Join(t.TempDir(), "fixture.jsonl"), gen.WriteJSONLines, []ptrace.Traces{f.td})
	st := testkit.Open(t)
	ctx := context.Background()
	if _, err := ingest.Run(ctx, st, []string{path}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := rebuild.Rebuild(ctx, st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestConnectionPhase: otelhttptrace's connection span under an attempt
// gives its connection time, and its queueing starts where that ends.
func TestConnectionPhase(t *testing.T) {
	f := newFixture()
	const t1 = "77777777777777777777777777777777"
	f.add(fspan{trace: t1, id: "a100000000000001", service: "shop", scope: "otelhttp", name: "GET", kind: client, startMs: 0, endMs: 100,
		attrs: map[string]any{"http.request.method": "GET", "url.full": "http://inv:8080/v1/stock", "server.address": "inv",
			"http.response.status_code": 200}})
	f.add(fspan{trace: t1, id: "a100000000000002", parent: "a100000000000001", service: "shop", scope: "otelhttptrace",
		name: "http.getconn", kind: internal, startMs: 1, endMs: 21})
	f.add(fspan{trace: t1, id: "a100000000000003", parent: "a100000000000001", service: "inv", scope: "tomcat",
		name: "GET /v1/stock", kind: server, startMs: 30, endMs: 90})
	st := fixtureStore(t, f)
	got := testkit.Dump(t, st, `SELECT queue_ms, connect_ms, serve_ms, generate_ms FROM attempts`)
	if want := testkit.Dump(t, st, `SELECT 9.0, 20.0, 60.0, 10.0`); got != want {
		t.Errorf("phases:\n%s\nwant\n%s", got, want)
	}
}
