package rebuild_test

import (
	"context"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// TestClocksThatDisagree is issue 34's fifth and sixth nights: a
// gen_ai.first_token event 5 s before its span gave ttft_ms = -5000 on
// the attempt (and a negative TTFT on the request), and a callee's SERVER
// span starting 30 ms before its client parent gave queue_ms = -30, both
// averaged like real values. Now the event is set aside and the phases are
// left null, and the rebuild counts both and says how much skew it saw.
func TestClocksThatDisagree(t *testing.T) {
	const t1, t2 = "88888888888888888888888888888881", "88888888888888888888888888888882"
	f := newFixture()
	call := func(trace, id string) fspan {
		return fspan{trace: trace, id: id, service: "chat", scope: "app", name: "POST", kind: client, startMs: 100, endMs: 400,
			attrs: map[string]any{"http.request.method": "POST", "url.full": "https://llm.internal/v1/chat", "server.address": "llm.internal",
				"http.response.status_code": 200, "gen_ai.request.model": "m"}}
	}
	early := call(t1, "c100000000000001")
	early.events = []fevent{{name: "gen_ai.first_token", atMs: 100 - 5000}}
	f.add(early)
	f.add(call(t2, "c200000000000001"))
	f.add(fspan{trace: t2, id: "c200000000000002", parent: "c200000000000001", service: "llm", scope: "srv", name: "POST /v1/chat",
		kind: server, startMs: 70, endMs: 390})

	path := testkit.WriteFile(t, filepath.Join(t.TempDir(), "clocks.jsonl"), sim.WriteJSONLines, []ptrace.Traces{f.td})
	st := testkit.Open(t)
	ctx := context.Background()
	if _, err := ingest.Run(ctx, st, []string{path}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	stats, err := rebuild.Run(ctx, st, rebuild.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.FirstTokenOutside != 1 || stats.Skewed != 1 || stats.MaxSkewMs != 30 {
		t.Errorf("stats: %d first tokens set aside, %d skewed attempts, max skew %v ms; want 1, 1, 30", stats.FirstTokenOutside, stats.Skewed, stats.MaxSkewMs)
	}
	got := testkit.Dump(t, st, `SELECT trace_id, ttft_ms, queue_ms, serve_ms FROM attempts ORDER BY trace_id`)
	want := t1 + "\t<nil>\t<nil>\t<nil>\n" + t2 + "\t<nil>\t<nil>\t<nil>\n"
	if got != want {
		t.Errorf("attempts (trace, ttft, queue, serve):\n%s\nwant\n%s", got, want)
	}
	if n := testkit.Count(t, st, `SELECT count(*) FROM requests WHERE ttft_ms < 0 OR residual_ms <> 0`); n != 0 {
		t.Errorf("%d requests with a negative TTFT or a residual", n)
	}
}
