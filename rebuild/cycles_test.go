package rebuild_test

import (
	"context"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// A loop of parent links (A→B→C→A) is cut at the span that starts first,
// so its spans land in a request, and the cut is a row of parent_cycles.
func TestParentCycleLandsInARequest(t *testing.T) {
	f := newFixture()
	const tr = "0000000000000000000000000000c1c1"
	f.add(fspan{trace: tr, id: "00000000000000a1", parent: "00000000000000c1", service: "app", name: "POST", kind: ptrace.SpanKindClient, startMs: 0, endMs: 100})
	f.add(fspan{trace: tr, id: "00000000000000b1", parent: "00000000000000a1", service: "app", name: "POST", kind: ptrace.SpanKindClient, startMs: 10, endMs: 90})
	f.add(fspan{trace: tr, id: "00000000000000c1", parent: "00000000000000b1", service: "app", name: "POST", kind: ptrace.SpanKindClient, startMs: 20, endMs: 80})
	st := ingestFixture(t, f)
	if _, err := rebuild.Run(context.Background(), st, rebuild.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := testkit.Count(t, st, `SELECT count(*) FROM attempts WHERE trace_id = $1`, tr); got == 0 {
		t.Errorf("the loop's spans are in no request:\n%s", testkit.Dump(t, st, `SELECT * FROM requests`))
	}
	got := testkit.Dump(t, st, `SELECT span_id, parent_span_id FROM parent_cycles`)
	if want := "00000000000000a1\t00000000000000c1\n"; got != want {
		t.Errorf("parent_cycles:\n%s\nwant:\n%s", got, want)
	}
}

func ingestFixture(t testing.TB, f *fixture) *store.Store {
	t.Helper()
	st := testkit.Open(t)
	ingestInto(t, st, f.td)
	return st
}

func ingestInto(t testing.TB, st *store.Store, td ptrace.Traces) {
	t.Helper()
	path := testkit.WriteFile(t, filepath.Join(t.TempDir(), "fixture.jsonl"), sim.WriteJSONLines, []ptrace.Traces{td})
	if _, err := ingest.Run(context.Background(), st, []string{path}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
}

// spansFromBytes makes up to 24 spans in two traces from fuzz input, 6 bytes
// a span: trace and kind, id, parent (0: none), start, duration, status. Ids
// repeat, parents loop, point to themselves or to spans never sent, and
// children start before their parents (clock skew).
func spansFromBytes(data []byte) *fixture {
	f := newFixture()
	for i := 0; i+6 <= len(data) && i < 24*6; i += 6 {
		b := data[i : i+6]
		s := fspan{
			trace:   "000000000000000000000000000000f" + string("12"[b[0]>>7]),
			id:      "00000000000000" + hex2(b[1]%12+1),
			service: "svc" + string('a'+rune(b[0]>>5&1)),
			name:    "POST /v1/chat",
			startMs: float64(b[3]) * 10,
			endMs:   float64(b[3])*10 + float64(b[4]),
		}
		if p := b[2] % 14; p > 0 {
			s.parent = "00000000000000" + hex2(p)
		}
		switch b[0] % 4 {
		case 0:
			s.kind = ptrace.SpanKindClient
		case 1:
			s.kind = ptrace.SpanKindServer
		case 2:
			s.kind = ptrace.SpanKindInternal
			s.name = "retry loop"
		case 3:
			s.kind = ptrace.SpanKindInternal
			s.name = "Attempt.grpc.Chat"
		}
		switch b[5] % 4 {
		case 1:
			s.errMsg = "unavailable"
			s.attrs = map[string]any{"http.response.status_code": 503}
		case 2:
			s.errMsg = "rate limited"
			s.attrs = map[string]any{"http.response.status_code": 429}
		case 3:
			s.attrs = map[string]any{"http.response.status_code": 200}
		}
		f.add(s)
	}
	return f
}

func hex2(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}

// FuzzRebuild rebuilds requests from arbitrary span sets (cycles,
// self-parents, duplicate ids, missing parents, clock skew) and checks that
// the rebuild finishes, that no attempt is counted twice, and that every
// trace with an attempt-like span has attempts in some request.
func FuzzRebuild(f *testing.F) {
	f.Add([]byte{0, 1, 3, 0, 50, 0, 2, 2, 1, 1, 40, 0, 0, 3, 2, 2, 30, 1})   // loop a→c→b→a
	f.Add([]byte{0, 1, 2, 0, 50, 1, 0, 1, 0, 10, 50, 0})                     // duplicate id, other times
	f.Add([]byte{0, 4, 9, 0, 50, 1, 0, 5, 9, 60, 50, 3, 128, 6, 0, 5, 5, 2}) // missing parent, two traces
	f.Add([]byte{3, 1, 0, 20, 10, 1, 3, 2, 0, 40, 10, 3, 2, 3, 0, 0, 80, 0}) // gRPC attempts, skew
	st := testkit.Open(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, q := range []string{`DELETE FROM spans`, `DELETE FROM ingest_files`, `DELETE FROM ingest_errors`} {
			if _, err := st.ExecText(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		ingestInto(t, st, spansFromBytes(data).td)
		if _, err := rebuild.Run(ctx, st, rebuild.Options{}); err != nil {
			t.Fatalf("rebuild: %v", err)
		}
		if n := testkit.Count(t, st, `SELECT count(*) FROM (SELECT trace_id, span_id FROM attempts GROUP BY ALL HAVING count(*) > 1)`); n > 0 {
			t.Fatalf("%d spans are attempts twice:\n%s", n, testkit.Dump(t, st, `SELECT request_id, trace_id, span_id FROM attempts ORDER BY ALL`))
		}
		lost := testkit.Dump(t, st, `SELECT trace_id FROM spans
			WHERE kind = 'client' OR (kind = 'internal' AND name LIKE 'Attempt.%')
			EXCEPT SELECT trace_id FROM attempts ORDER BY ALL`)
		if lost != "" {
			t.Fatalf("traces with attempt-like spans but no attempts:\n%s\nspans:\n%s", lost,
				testkit.Dump(t, st, `SELECT trace_id, span_id, parent_span_id, kind, name, start_ns FROM spans ORDER BY ALL`))
		}
	})
}
