package rebuild_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// httpAttempt is an otelhttp CLIENT attempt to the inventory service.
func httpAttempt(trace, id, parent string, startMs, endMs float64, status int, attrs map[string]any) fspan {
	a := map[string]any{"http.request.method": "GET", "url.full": "http://inv:8080/v1/stock", "server.address": "inv"}
	if status > 0 {
		a["http.response.status_code"] = status
	}
	for k, v := range attrs {
		a[k] = v
	}
	return fspan{trace: trace, id: id, parent: parent, service: "shop", scope: "otelhttp", name: "GET", kind: client,
		startMs: startMs, endMs: endMs, attrs: a}
}

// loop is the application's span over a request's attempts.
func loop(trace, id string, startMs, endMs float64) fspan {
	return fspan{trace: trace, id: id, service: "shop", scope: "app", name: "stock.get", kind: internal, startMs: startMs, endMs: endMs}
}

// TestTimeToFirstChunk: a stream whose instrumentation records the GenAI
// conventions' gen_ai.response.time_to_first_chunk (seconds) and no
// first-token event has that TTFT; a first-token event, where there is
// one, wins.
func TestTimeToFirstChunk(t *testing.T) {
	f := newFixture()
	chat := func(trace, id string, events []fevent) fspan {
		return fspan{trace: trace, id: id, service: "chat", scope: "openai-v2", name: "chat gpt-4o", kind: client, startMs: 0, endMs: 1000,
			attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.request.stream": "true",
				"gen_ai.response.time_to_first_chunk": 0.25, "gen_ai.usage.output_tokens": 80},
			events: events}
	}
	f.add(chat("a1111111111111111111111111111111", "a100000000000001", nil))
	f.add(chat("a2222222222222222222222222222222", "a200000000000001", []fevent{{name: "gen_ai.first_token", atMs: 400}}))
	st := fixtureStore(t, f)
	got := testkit.Dump(t, st, `SELECT trace_id, ttft_ms FROM attempts ORDER BY trace_id`)
	want := testkit.Dump(t, st, `SELECT * FROM (VALUES ('a1111111111111111111111111111111', 250.0),
		('a2222222222222222222222222222222', 400.0)) ORDER BY 1`)
	if got != want {
		t.Errorf("ttft:\n%s\nwant\n%s", got, want)
	}
}

// TestRetryAfterForms: a 429's wait captured as retry-after-ms (OpenAI,
// Anthropic), or as Retry-After in its HTTP-date form, is the attempt's
// retry_after_s (the date counted from the response, the span's end), and
// a retry that waited it out has its gap split into backoff and overhead.
func TestRetryAfterForms(t *testing.T) {
	f := newFixture()
	const t1, t2 = "b1111111111111111111111111111111", "b2222222222222222222222222222222"
	f.add(loop(t1, "b100000000000001", 0, 1700))
	f.add(httpAttempt(t1, "b100000000000002", "b100000000000001", 0, 100, 429,
		map[string]any{"http.response.header.retry-after-ms": []string{"1500"}, "http.response.header.retry-after": []string{"2"}}))
	f.add(httpAttempt(t1, "b100000000000003", "b100000000000001", 1605, 1700, 200, nil))
	// The date is whole seconds: the wait it says runs from the first
	// attempt's end to the next whole second two seconds on.
	end := time.Unix(0, f.base+int64(100*time.Millisecond))
	date := end.Add(2 * time.Second).Truncate(time.Second)
	waitMs := float64(date.Sub(end)) / 1e6
	f.add(loop(t2, "b200000000000001", 0, 110+waitMs+100))
	f.add(httpAttempt(t2, "b200000000000002", "b200000000000001", 0, 100, 503,
		map[string]any{"http.response.header.retry-after": []string{date.UTC().Format(http.TimeFormat)}}))
	f.add(httpAttempt(t2, "b200000000000003", "b200000000000001", 110+waitMs, 110+waitMs+100, 200, nil))
	st := fixtureStore(t, f)
	got := testkit.Dump(t, st, `SELECT trace_id, round(retry_after_s, 6) FROM attempts WHERE ordinal = 1 ORDER BY trace_id`)
	want := testkit.Dump(t, st, fmt.Sprintf(`SELECT * FROM (VALUES ('%s', 1.5), ('%s', round(%.6f / 1000, 6))) ORDER BY 1`, t1, t2, waitMs))
	if got != want {
		t.Errorf("retry_after_s:\n%s\nwant\n%s", got, want)
	}
	got = testkit.Dump(t, st, `SELECT trace_id, round(backoff_ms, 3), round(overhead_ms, 3) FROM requests ORDER BY trace_id`)
	want = testkit.Dump(t, st, fmt.Sprintf(`SELECT * FROM (VALUES ('%s', 1500.0, 5.0), ('%s', round(%.6f, 3), 10.0)) ORDER BY 1`, t1, t2, waitMs))
	if got != want {
		t.Errorf("backoff, overhead:\n%s\nwant\n%s", got, want)
	}
}

// TestStatedQueueTime: a queue time the callee's SERVER span states
// (vLLM's gen_ai.latency.time_in_queue, s) moves from serving to queue;
// one the attempt itself states (retryscope.queue_ms) is its queue when
// no SERVER span is exported, serving then unknown.
func TestStatedQueueTime(t *testing.T) {
	f := newFixture()
	const t1, t2 = "c1111111111111111111111111111111", "c2222222222222222222222222222222"
	f.add(httpAttempt(t1, "c100000000000001", "", 0, 100, 200, nil))
	f.add(fspan{trace: t1, id: "c100000000000002", parent: "c100000000000001", service: "vllm", scope: "vllm", name: "llm_request",
		kind: server, startMs: 10, endMs: 90, attrs: map[string]any{"gen_ai.latency.time_in_queue": 0.02}})
	f.add(httpAttempt(t2, "c200000000000001", "", 0, 100, 200, map[string]any{"retryscope.queue_ms": 15.0}))
	st := fixtureStore(t, f)
	got := testkit.Dump(t, st, `SELECT trace_id, queue_ms, serve_ms, generate_ms FROM attempts ORDER BY trace_id`)
	want := testkit.Dump(t, st, fmt.Sprintf(`SELECT * FROM (VALUES ('%s', 30.0, 60.0, 10.0), ('%s', 15.0, NULL, NULL)) ORDER BY 1`, t1, t2))
	if got != want {
		t.Errorf("phases:\n%s\nwant\n%s", got, want)
	}
}

// TestRequestCanceledIsUnknown: Go's "net/http: request canceled" says the
// client cancelled the attempt, not why: its trigger is unknown, not a
// timeout, unless the error says a timeout did it (Client.Timeout).
func TestRequestCanceledIsUnknown(t *testing.T) {
	f := newFixture()
	const t1, t2 = "d1111111111111111111111111111111", "d2222222222222222222222222222222"
	for _, c := range []struct{ trace, msg string }{
		{t1, `Get "http://inv:8080/v1/stock": net/http: request canceled`},
		{t2, `Get "http://inv:8080/v1/stock": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`},
	} {
		f.add(loop(c.trace, c.trace[:1]+"100000000000001", 0, 300))
		a := httpAttempt(c.trace, c.trace[:1]+"100000000000002", c.trace[:1]+"100000000000001", 0, 100, 0, nil)
		a.errMsg = c.msg
		f.add(a)
		f.add(httpAttempt(c.trace, c.trace[:1]+"100000000000003", c.trace[:1]+"100000000000001", 150, 300, 200, nil))
	}
	st := fixtureStore(t, f)
	got := testkit.Dump(t, st, `SELECT trace_id, trigger FROM attempts WHERE ordinal = 1 ORDER BY trace_id`)
	want := testkit.Dump(t, st, fmt.Sprintf(`SELECT * FROM (VALUES ('%s', 'unknown'), ('%s', 'timeout')) ORDER BY 1`, t1, t2))
	if got != want {
		t.Errorf("triggers:\n%s\nwant\n%s", got, want)
	}
}

// TestOlderRulesRederive: a database whose derived tables older rules
// made (rebuild_state names another RulesVersion) is not fresh: Ensure
// derives it again in full, and then it is.
func TestOlderRulesRederive(t *testing.T) {
	f := newFixture()
	f.add(httpAttempt("e1111111111111111111111111111111", "e100000000000001", "", 0, 100, 200, nil))
	st := fixtureStore(t, f)
	ctx := context.Background()
	if did, err := rebuild.Ensure(ctx, st, rebuild.Options{}); err != nil || did {
		t.Fatalf("a database just derived: rebuilt %v (%v), want it fresh", did, err)
	}
	// What older rules left: another version, and rows they derived.
	if _, err := st.ExecText(ctx, `UPDATE rebuild_state SET options = regexp_replace(options, '^rules=\d+', 'rules=0');
		UPDATE requests SET linkage = 'older-rules'`); err != nil {
		t.Fatal(err)
	}
	if did, err := rebuild.Ensure(ctx, st, rebuild.Options{}); err != nil || !did {
		t.Fatalf("derived by older rules: rebuilt %v (%v), want it derived again", did, err)
	}
	if got := testkit.Dump(t, st, `SELECT linkage FROM requests`); got != testkit.Dump(t, st, `SELECT 'single'`) {
		t.Errorf("linkage after re-deriving: %s", got)
	}
	if did, err := rebuild.Ensure(ctx, st, rebuild.Options{}); err != nil || did {
		t.Errorf("re-derived: rebuilt again %v (%v), want it fresh", did, err)
	}
}
