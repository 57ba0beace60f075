package rebuild_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// TestAttemptPhases: where the callee's SERVER span is exported, an
// attempt's queue, connection, serving and generation add up to its
// elapsed time, none negative; a stream's generation runs from its first
// token to its end; without a SERVER span or a first token the phases are
// NULL. gRPC attempts (gen marks their delayed picks, as grpc-go does)
// add the pick's wait as their connection phase, in the sum.
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
	rows, err := st.QueryText(context.Background(), `SELECT trace_id || ':' || span_id, name, elapsed_ms, ttft_ms,
		queue_ms, connect_ms, serve_ms, generate_ms FROM attempts`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, withPhases, streams, picks := 0, 0, 0, 0
	for rows.Next() {
		var key, name string
		var elapsed float64
		var ttft, q, c, s, g *float64
		if err := rows.Scan(&key, &name, &elapsed, &ttft, &q, &c, &s, &g); err != nil {
			t.Fatal(err)
		}
		n++
		conn := 0.0
		if c != nil {
			if !strings.HasPrefix(name, "Attempt.") || *c < 0 {
				t.Errorf("%s: connect_ms %v without connection spans or a delayed pick", key, *c)
			}
			conn = *c
			picks++
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
		if *q < 0 || *s < 0 || *g < 0 || math.Abs(*q+conn+*s+*g-elapsed) > 1e-3 {
			t.Errorf("%s: Q %.4f + C %.4f + S %.4f + G %.4f, elapsed %.4f", key, *q, conn, *s, *g, elapsed)
		}
	}
	t.Logf("%d attempts, %d with Q/S/G, %d streamed, %d with a delayed pick", n, withPhases, streams, picks)
	if withPhases < n/2 || streams < 50 || picks < 20 {
		t.Fatalf("weak workload: %d of %d attempts with phases, %d streamed", withPhases, n, streams)
	}
}

// fixtureStore ingests the fixture and rebuilds it, returning the database.
func fixtureStore(t *testing.T, f *fixture) *store.Store {
	t.Helper()
	path := testkit.WriteFile(t, filepath.Join(t.TempDir(), "fixture.jsonl"), sim.WriteJSONLines, []ptrace.Traces{f.td})
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

// TestDelayedPickPhase: a gRPC attempt that waited for its pick (gRPC
// A72's "Delayed LB pick complete" event) spent that wait on the client,
// before anything was sent: it is the attempt's connection phase, and its
// queueing starts at the pick. Without the event the whole start is queue.
func TestDelayedPickPhase(t *testing.T) {
	f := newFixture()
	const t1, t2 = "88888888888888888888888888888888", "99999999999999999999999999999999"
	const method = "helloworld.Greeter.SayHello"
	scope := "google.golang.org/grpc"
	for _, tr := range []string{t1, t2} {
		f.add(fspan{trace: tr, id: "e100000000000001", service: "greeter-client", scope: scope, name: "Sent." + method, kind: client,
			startMs: 0, endMs: 100})
		s := fspan{trace: tr, id: "e100000000000011", parent: "e100000000000001", service: "greeter-client", scope: scope,
			name: "Attempt." + method, kind: internal, startMs: 0, endMs: 100,
			attrs:  map[string]any{"previous-rpc-attempts": 0, "transparent-retry": false},
			events: []fevent{{name: "Outbound message", atMs: 36, attr: map[string]any{"sequence-number": 0, "message-size": 12}}}}
		if tr == t1 {
			s.events = append([]fevent{{name: "Delayed LB pick complete", atMs: 35}}, s.events...)
		}
		f.add(s)
		f.add(fspan{trace: tr, id: "e100000000000021", parent: "e100000000000011", service: "greeter", scope: scope,
			name: "Recv." + method, kind: server, startMs: 40, endMs: 90})
	}
	st := fixtureStore(t, f)
	got := testkit.Dump(t, st, `SELECT trace_id, queue_ms, connect_ms, serve_ms, generate_ms FROM attempts ORDER BY trace_id`)
	want := testkit.Dump(t, st, `SELECT * FROM (VALUES ('`+t1+`', 5.0, 35.0, 50.0, 10.0), ('`+t2+`', 40.0, NULL, 50.0, 10.0))`)
	if got != want {
		t.Errorf("phases:\n%s\nwant\n%s", got, want)
	}
}
