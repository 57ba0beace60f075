package rebuild_test

import (
	"context"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// fixture builds traces by hand, the way a given instrumentation would
// export them, independently of the generator.
type fixture struct {
	td   ptrace.Traces
	base int64
}

type fspan struct {
	trace, id, parent string
	service, scope    string
	name              string
	kind              ptrace.SpanKind
	startMs, endMs    float64
	errMsg            string // non-empty: status ERROR with this message
	attrs             map[string]any
	events            []fevent
}

type fevent struct {
	name string
	atMs float64
	attr map[string]any
}

func newFixture() *fixture {
	return &fixture{td: ptrace.NewTraces(), base: sim.DefaultStart.UnixNano()}
}

func traceID(s string) pcommon.TraceID {
	var id pcommon.TraceID
	b, _ := hex.DecodeString(s)
	copy(id[:], b)
	return id
}

func spanID(s string) pcommon.SpanID {
	var id pcommon.SpanID
	b, _ := hex.DecodeString(s)
	copy(id[:], b)
	return id
}

func (f *fixture) ns(ms float64) pcommon.Timestamp {
	return pcommon.Timestamp(f.base + int64(ms*1e6))
}

func (f *fixture) add(s fspan) {
	rs := f.td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", s.service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(s.scope)
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID(traceID(s.trace))
	sp.SetSpanID(spanID(s.id))
	if s.parent != "" {
		sp.SetParentSpanID(spanID(s.parent))
	}
	sp.SetName(s.name)
	sp.SetKind(s.kind)
	sp.SetStartTimestamp(f.ns(s.startMs))
	sp.SetEndTimestamp(f.ns(s.endMs))
	if s.errMsg != "" {
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(s.errMsg)
	}
	putAttrs(sp.Attributes(), s.attrs)
	for _, e := range s.events {
		ev := sp.Events().AppendEmpty()
		ev.SetName(e.name)
		ev.SetTimestamp(f.ns(e.atMs))
		putAttrs(ev.Attributes(), e.attr)
	}
}

func putAttrs(m pcommon.Map, attrs map[string]any) {
	for k, v := range attrs {
		switch v := v.(type) {
		case string:
			m.PutStr(k, v)
		case int:
			m.PutInt(k, int64(v))
		case float64:
			m.PutDouble(k, v)
		case bool:
			m.PutBool(k, v)
		case []string:
			sl := m.PutEmptySlice(k)
			for _, item := range v {
				sl.AppendEmpty().SetStr(item)
			}
		}
	}
}

// rebuildFixture ingests the fixture and returns the requests table as
// request_id -> "linkage attempts layers outcome triggers".
func rebuildFixture(t *testing.T, f *fixture) map[string]*rebuilt {
	t.Helper()
	return rebuildFixtureWith(t, f, rebuild.Options{})
}

func rebuildFixtureWith(t *testing.T, f *fixture, opt rebuild.Options) map[string]*rebuilt {
	t.Helper()
	path := testkit.WriteFile(t, filepath.Join(t.TempDir(), "fixture.jsonl"), sim.WriteJSONLines, []ptrace.Traces{f.td})
	st := testkit.Open(t)
	ctx := context.Background()
	if _, err := ingest.Run(ctx, st, []string{path}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rebuild.Run(ctx, st, opt); err != nil {
		t.Fatal(err)
	}
	return loadRequests(t, st)
}

type wantRequest struct {
	linkage  string
	attempts int
	layers   []float64
	outcome  string
	triggers []string
}

func checkFixture(t *testing.T, got map[string]*rebuilt, want map[string]wantRequest) {
	t.Helper()
	if len(got) != len(want) {
		var keys []string
		for k, g := range got {
			keys = append(keys, k+" "+g.linkage)
		}
		slices.Sort(keys)
		t.Errorf("%d requests, want %d: %v", len(got), len(want), keys)
	}
	for key, w := range want {
		g := got[key]
		if g == nil {
			t.Errorf("%s: not rebuilt", key)
			continue
		}
		if g.linkage != w.linkage || g.attempts != w.attempts || !slices.Equal(g.layers, w.layers) ||
			g.outcome != w.outcome || !slices.Equal(g.triggers, w.triggers) {
			t.Errorf("%s: got %s %d %v %s %v, want %s %d %v %s %v", key, g.linkage, g.attempts, g.layers, g.outcome, g.triggers,
				w.linkage, w.attempts, w.layers, w.outcome, w.triggers)
		}
		if g.residual != 0 {
			t.Errorf("%s: residual %.4f ms", key, g.residual)
		}
	}
}

const (
	client   = ptrace.SpanKindClient
	server   = ptrace.SpanKindServer
	internal = ptrace.SpanKindInternal
)

// undiciAttempt is an OpenAI/Anthropic Node SDK HTTP attempt as the OTel
// undici instrumentation records it with request headers captured.
func undiciAttempt(trace, id, parent, host string, retry string, startMs, endMs float64, status int) fspan {
	s := fspan{trace: trace, id: id, parent: parent, service: "chat-web", scope: "@opentelemetry/instrumentation-undici",
		name: "POST", kind: client, startMs: startMs, endMs: endMs, attrs: map[string]any{
			"http.request.method": "POST", "url.full": "https://" + host + "/v1/chat/completions",
			"server.address": host, "server.port": 443,
			"http.request.header.x-stainless-retry-count": []string{retry},
		}}
	switch {
	case status == 0:
		s.errMsg = "other side closed"
		s.attrs["error.type"] = "UND_ERR_SOCKET"
		s.events = []fevent{{name: "exception", atMs: endMs, attr: map[string]any{"exception.type": "UND_ERR_SOCKET"}}}
	case status >= 400:
		s.attrs["http.response.status_code"] = status
		s.attrs["error.type"] = strconv.Itoa(status)
		s.errMsg = "HTTP " + strconv.Itoa(status)
	default:
		s.attrs["http.response.status_code"] = status
	}
	return s
}

// llmSpan is OpenLLMetry's span for one SDK call (older attribute names:
// gen_ai.usage.prompt_tokens / completion_tokens, no gen_ai.operation.name).
func llmSpan(trace, id, parent, system, model string, startMs, endMs float64) fspan {
	return fspan{trace: trace, id: id, parent: parent, service: "chat-web", scope: "@traceloop/instrumentation-" + system,
		name: system + ".chat", kind: client, startMs: startMs, endMs: endMs, attrs: map[string]any{
			"gen_ai.system": system, "gen_ai.request.model": model, "llm.request.type": "chat",
			"gen_ai.usage.prompt_tokens": 800, "gen_ai.usage.completion_tokens": 120,
		}}
}

// TestOpenAIFallbackFixture: an OpenAI-style Node SDK retrying inside
// (x-stainless-retry-count), traced by the undici instrumentation under an
// OpenLLMetry span that is not exported when the call throws, inside an
// application loop that falls back to a second provider.
func TestOpenAIFallbackFixture(t *testing.T) {
	f := newFixture()
	const t1, t2, t3 = "11111111111111111111111111111111", "22222222222222222222222222222222", "33333333333333333333333333333333"
	http := map[string]any{"http.request.method": "POST", "http.route": "/api/chat", "http.response.status_code": 200}
	// t1: OpenAI fails three times (the SDK span is lost), Anthropic
	// succeeds on its second attempt.
	f.add(fspan{trace: t1, id: "a100000000000001", service: "chat-web", scope: "@opentelemetry/instrumentation-http",
		name: "POST /api/chat", kind: server, startMs: 0, endMs: 3000, attrs: http})
	f.add(fspan{trace: t1, id: "a100000000000002", parent: "a100000000000001", service: "chat-web", scope: "chat-web",
		name: "answer_with_fallback", kind: internal, startMs: 5, endMs: 2990})
	f.add(undiciAttempt(t1, "a100000000000011", "dead000000000001", "api.openai.com", "0", 10, 200, 429))
	f.add(undiciAttempt(t1, "a100000000000012", "dead000000000001", "api.openai.com", "1", 1250, 1400, 500))
	f.add(undiciAttempt(t1, "a100000000000013", "dead000000000001", "api.openai.com", "2", 2200, 2210, 0))
	f.add(llmSpan(t1, "a100000000000003", "a100000000000002", "anthropic", "claude-3-5-sonnet", 2250, 2980))
	f.add(undiciAttempt(t1, "a100000000000021", "a100000000000003", "api.anthropic.com", "0", 2260, 2500, 529))
	f.add(undiciAttempt(t1, "a100000000000022", "a100000000000003", "api.anthropic.com", "1", 2700, 2975, 200))
	// t2: OpenAI succeeds at once; the SDK span is exported.
	f.add(fspan{trace: t2, id: "b100000000000001", service: "chat-web", scope: "@opentelemetry/instrumentation-http",
		name: "POST /api/chat", kind: server, startMs: 100, endMs: 900, attrs: http})
	f.add(fspan{trace: t2, id: "b100000000000002", parent: "b100000000000001", service: "chat-web", scope: "chat-web",
		name: "answer_with_fallback", kind: internal, startMs: 101, endMs: 899})
	f.add(llmSpan(t2, "b100000000000003", "b100000000000002", "openai", "gpt-4o-mini", 102, 898))
	f.add(undiciAttempt(t2, "b100000000000011", "b100000000000003", "api.openai.com", "0", 103, 897, 200))
	// t3: both providers fail; neither SDK span is exported.
	f.add(fspan{trace: t3, id: "c100000000000001", service: "chat-web", scope: "@opentelemetry/instrumentation-http",
		name: "POST /api/chat", kind: server, startMs: 0, endMs: 2000, errMsg: "Internal Server Error",
		attrs: map[string]any{"http.request.method": "POST", "http.route": "/api/chat", "http.response.status_code": 500}})
	f.add(fspan{trace: t3, id: "c100000000000002", parent: "c100000000000001", service: "chat-web", scope: "chat-web",
		name: "answer_with_fallback", kind: internal, startMs: 1, endMs: 1999, errMsg: "all providers failed"})
	f.add(undiciAttempt(t3, "c100000000000011", "dead000000000003", "api.openai.com", "0", 5, 50, 503))
	f.add(undiciAttempt(t3, "c100000000000012", "dead000000000003", "api.openai.com", "1", 600, 650, 503))
	f.add(undiciAttempt(t3, "c100000000000021", "dead000000000004", "api.anthropic.com", "0", 1500, 1990, 500))

	got := rebuildFixture(t, f)
	checkFixture(t, got, map[string]wantRequest{
		t1 + ":a100000000000002": {"orphan", 5, []float64{2, 2.5}, "ok", []string{"rate_limited", "server_error", "connection", "server_error"}},
		t2 + ":b100000000000002": {"wrapped", 1, []float64{1, 1}, "ok", []string{}},
		t3 + ":c100000000000002": {"orphan", 3, []float64{2, 1.5}, "error", []string{"server_error", "server_error", "server_error"}},
	})
	if g := got[t1+":a100000000000002"]; g != nil && (g.route != "api.openai.com" || g.finalRoute != "api.anthropic.com" || g.outputTokens != 120 || g.duplicated != 0) {
		t.Errorf("t1: route %s -> %s, output tokens %d, duplicated %d", g.route, g.finalRoute, g.outputTokens, g.duplicated)
	}
}

// TestGRPCGoFixture: grpc-go's built-in retries traced by grpc-go's own
// OpenTelemetry support: Sent/Attempt spans without rpc.* status
// attributes, failures only in the status message.
func TestGRPCGoFixture(t *testing.T) {
	f := newFixture()
	const t1 = "44444444444444444444444444444444"
	const method = "helloworld.Greeter.SayHello"
	scope := "google.golang.org/grpc"
	f.add(fspan{trace: t1, id: "d100000000000001", service: "greeter-client", scope: scope, name: "Sent." + method, kind: client,
		startMs: 0, endMs: 700})
	attempt := func(id string, n int, startMs, endMs float64, errMsg string) fspan {
		s := fspan{trace: t1, id: id, parent: "d100000000000001", service: "greeter-client", scope: scope, name: "Attempt." + method,
			kind: internal, startMs: startMs, endMs: endMs, errMsg: errMsg,
			attrs:  map[string]any{"previous-rpc-attempts": n, "transparent-retry": false},
			events: []fevent{{name: "Outbound message", atMs: startMs + 1, attr: map[string]any{"sequence-number": 0, "message-size": 12}}}}
		if errMsg == "" {
			s.events = append(s.events, fevent{name: "Inbound message", atMs: endMs - 1, attr: map[string]any{"sequence-number": 0, "message-size": 30}})
		}
		return s
	}
	f.add(attempt("d100000000000011", 0, 1, 20, `connection error: desc = "transport: Error while dialing: dial tcp 10.0.0.5:50051: connect: connection refused"`))
	f.add(attempt("d100000000000012", 1, 150, 300, "rpc error: code = Unavailable desc = upstream overloaded"))
	f.add(attempt("d100000000000013", 2, 500, 699, ""))
	f.add(fspan{trace: t1, id: "d100000000000021", parent: "d100000000000013", service: "greeter", scope: scope,
		name: "Recv." + method, kind: server, startMs: 505, endMs: 690})

	checkFixture(t, rebuildFixture(t, f), map[string]wantRequest{
		t1 + ":d100000000000001": {"grpc", 3, []float64{3}, "ok", []string{"connection", "server_error"}},
	})
}

// TestTwoSuccessesFixture: two successful calls of the same operation
// under one span are two logical requests, not a retry; a callee's SERVER
// span with its own retried calls yields the callee's request.
func TestTwoSuccessesFixture(t *testing.T) {
	f := newFixture()
	const t1 = "55555555555555555555555555555555"
	get := func(id, parent string, startMs, endMs float64, status int, resend int) fspan {
		s := fspan{trace: t1, id: id, parent: parent, service: "sync", scope: "io.opentelemetry.okhttp-3.0", name: "GET", kind: client,
			startMs: startMs, endMs: endMs, attrs: map[string]any{"http.request.method": "GET", "url.full": "http://inv:8080/v1/stock",
				"server.address": "inv", "http.response.status_code": status}}
		if status >= 400 {
			s.errMsg = "HTTP " + strconv.Itoa(status)
			s.attrs["error.type"] = strconv.Itoa(status)
		}
		if resend > 0 {
			s.attrs["http.request.resend_count"] = resend
		}
		return s
	}
	f.add(fspan{trace: t1, id: "e100000000000001", service: "sync", scope: "sync", name: "sync_inventory", kind: internal, startMs: 0, endMs: 500})
	f.add(get("e100000000000011", "e100000000000001", 10, 100, 200, 0))
	f.add(get("e100000000000012", "e100000000000001", 150, 300, 200, 0))
	// The callee's SERVER span under the second call retries a call of its own.
	f.add(fspan{trace: t1, id: "e100000000000021", parent: "e100000000000012", service: "inv", scope: "io.opentelemetry.tomcat-10.0",
		name: "GET /v1/stock", kind: server, startMs: 152, endMs: 298})
	db := func(id string, startMs, endMs float64, status, resend int) fspan {
		s := get(id, "e100000000000021", startMs, endMs, status, resend)
		s.service, s.attrs["url.full"], s.attrs["server.address"] = "inv", "http://db-api:9000/q", "db-api"
		return s
	}
	f.add(db("e100000000000031", 155, 170, 503, 0))
	f.add(db("e100000000000032", 200, 290, 200, 1))

	checkFixture(t, rebuildFixture(t, f), map[string]wantRequest{
		t1 + ":e100000000000011": {"single", 1, []float64{1}, "ok", []string{}},
		t1 + ":e100000000000012": {"single", 1, []float64{1}, "ok", []string{}},
		t1 + ":e100000000000021": {"resend", 2, []float64{2}, "ok", []string{"server_error"}},
	})
}

// TestConfiguredKeys: an application's own logical id, attempt number,
// first-token event and model attribute, named through Options.Keys.
func TestConfiguredKeys(t *testing.T) {
	f := newFixture()
	const t1 = "66666666666666666666666666666666"
	try := func(id string, n int, startMs, endMs float64) fspan {
		return fspan{trace: t1, id: id, parent: "f100000000000001", service: "writer", scope: "app", name: "POST", kind: client,
			startMs: startMs, endMs: endMs, attrs: map[string]any{"http.request.method": "POST", "url.full": "https://llm.internal/v1/generate",
				"server.address": "llm.internal", "http.response.status_code": 200, "app.request_id": "req-7", "app.try": n, "llm.model": "m-large"},
			events: []fevent{{name: "stream.first_chunk", atMs: startMs + 40}}}
	}
	// The application retried a good answer it did not like, and says so only
	// through its own attributes.
	f.add(fspan{trace: t1, id: "f100000000000001", service: "writer", scope: "app", name: "draft", kind: internal, startMs: 0, endMs: 600})
	f.add(try("f100000000000011", 1, 10, 200))
	f.add(try("f100000000000012", 2, 300, 590))

	plain := rebuildFixture(t, f)
	if len(plain) != 2 {
		t.Errorf("without keys: %d requests, want 2 (two successful calls)", len(plain))
	}
	keys := rebuild.Keys{RequestID: []string{"app.request_id"}, Attempt: []string{"app.try"},
		FirstToken: []string{"stream.first_chunk"}, Model: []string{"llm.model"}}
	got := rebuildFixtureWith(t, f, rebuild.Options{Keys: keys})
	checkFixture(t, got, map[string]wantRequest{
		t1 + ":f100000000000001": {"explicit", 2, []float64{2}, "ok", []string{"unknown"}},
	})
	if g := got[t1+":f100000000000001"]; g != nil && (g.model != "m-large" || g.ttft == nil || *g.ttft != 340) {
		t.Errorf("model %q, ttft %v; want m-large, 340 ms", g.model, fmtPtr(g.ttft))
	}
}
