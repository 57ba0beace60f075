package main

import (
	"fmt"
	"path/filepath"
)

// Fixture openai-python-httpx: the openai SDK over httpx
// (opentelemetry-instrumentation-httpx with its default, old HTTP semconv),
// under OpenLLMetry's openai.chat span (exported also on error in current
// versions), inside a FastAPI (ASGI) request.

var (
	pyASGI   = scope{"opentelemetry.instrumentation.asgi", "0.50b0"}
	pyHTTPX  = scope{"opentelemetry.instrumentation.httpx", "0.50b0"}
	pyOpenAI = scope{"opentelemetry.instrumentation.openai.v1", "0.40.14"}
)

const (
	pyStackTimeout = "Traceback (most recent call last):\n" +
		"  File \"/usr/local/lib/python3.12/site-packages/httpx/_transports/default.py\", line 101, in map_httpcore_exceptions\n" +
		"    yield\n" +
		"httpcore.ReadTimeout: The read operation timed out\n"
	pyStack400 = "Traceback (most recent call last):\n" +
		"  File \"/usr/local/lib/python3.12/site-packages/opentelemetry/instrumentation/openai/shared/chat_wrappers.py\", line 91, in chat_wrapper\n" +
		"    response = wrapped(*args, **kwargs)\n" +
		"openai.BadRequestError: Error code: 400\n"
)

// pyApp is the Python 3.12 FastAPI service ticket-summarizer.
type pyApp struct {
	g         ids
	spans     []*span
	expected  []any
	res       string
	resources map[string][]attr
}

func newPyApp(seed uint32) *pyApp {
	return &pyApp{
		g:   newIDs(seed),
		res: "ticket-summarizer",
		resources: map[string][]attr{"ticket-summarizer": {
			{"telemetry.sdk.language", "python"},
			{"telemetry.sdk.name", "opentelemetry"},
			{"telemetry.sdk.version", "1.29.0"},
			{"service.name", "ticket-summarizer"},
			{"service.version", "0.9.3"},
			{"service.instance.id", "6f1c2a7e-3b9d-4c0e-9a51-2d7f0b8e4c13"},
			{"deployment.environment", "prod"},
			{"telemetry.auto.version", "0.50b0"},
		}},
	}
}

func (b *pyApp) add(s *span) *span {
	b.spans = append(b.spans, s)
	return s
}

func (b *pyApp) j(lo, hi float64) float64 { return b.g.uniform(lo, hi) }

// asgiServer is the ASGI SERVER span, open until closeServer.
type asgiServer struct {
	*span
	route      string
	statusCode int
}

// asgi makes the SERVER span and the ASGI 'http receive' INTERNAL span;
// the server span's end is set by closeServer.
func (b *pyApp) asgi(tid string, start int64, route string, statusCode int) *asgiServer {
	a := []attr{
		{"http.scheme", "http"},
		{"http.host", "10.8.2.14:8000"},
		{"net.host.port", 8000},
		{"http.flavor", "1.1"},
		{"http.target", route},
		{"http.url", "http://10.8.2.14:8000" + route},
		{"http.method", "POST"},
		{"http.server_name", "ticket-summarizer.prod.svc"},
		{"http.user_agent", "python-httpx/0.27.2"},
		{"net.peer.ip", "10.8.5.3"},
		{"net.peer.port", 40000 + int(b.j(0, 20000))},
		{"http.route", route},
		{"http.status_code", statusCode},
	}
	srv := b.add(&span{res: b.res, scope: pyASGI, traceID: tid, spanID: b.g.span(),
		name: "POST " + route, kind: kindServer, start: start, attrs: a})
	b.add(&span{res: b.res, scope: pyASGI, traceID: tid, spanID: b.g.span(), parent: srv.spanID,
		name: "POST " + route + " http receive", kind: kindInternal,
		start: start + ms(0.21), end: start + ms(0.29), attrs: []attr{{"asgi.event.type", "http.request"}}})
	return &asgiServer{srv, route, statusCode}
}

// closeServer adds the two 'http send' spans and ends the server span.
func (b *pyApp) closeServer(srv *asgiServer, handlerEnd int64) {
	tid := srv.traceID
	s1 := handlerEnd + ms(0.31)
	b.add(&span{res: b.res, scope: pyASGI, traceID: tid, spanID: b.g.span(), parent: srv.spanID,
		name: "POST " + srv.route + " http send", kind: kindInternal, start: s1, end: s1 + ms(0.12),
		attrs: []attr{{"asgi.event.type", "http.response.start"}, {"http.status_code", srv.statusCode}}})
	s2 := s1 + ms(0.19)
	b.add(&span{res: b.res, scope: pyASGI, traceID: tid, spanID: b.g.span(), parent: srv.spanID,
		name: "POST " + srv.route + " http send", kind: kindInternal, start: s2, end: s2 + ms(0.07),
		attrs: []attr{{"asgi.event.type", "http.response.body"}}})
	srv.end = s2 + ms(0.42)
}

// chat is OpenLLMetry's openai.chat CLIENT span around Completions.create,
// so around the SDK's retries.
func (b *pyApp) chat(tid, parent string, start int64, stream bool, prompt string) *span {
	a := []attr{
		{"llm.request.type", "chat"},
		{"gen_ai.system", "openai"},
		{"gen_ai.request.model", "gpt-4o-mini"},
		{"gen_ai.request.max_tokens", 512},
		{"gen_ai.request.temperature", 0.3},
		{"llm.is_streaming", stream},
		{"gen_ai.openai.api_base", "https://api.openai.com/v1/"},
		{"gen_ai.prompt.0.role", "system"},
		{"gen_ai.prompt.0.content", "Summarize the support ticket in three bullet points."},
		{"gen_ai.prompt.1.role", "user"},
		{"gen_ai.prompt.1.content", prompt},
	}
	return b.add(&span{res: b.res, scope: pyOpenAI, traceID: tid, spanID: b.g.span(), parent: parent,
		name: "openai.chat", kind: kindClient, start: start, attrs: a})
}

// chatOK records the response; a stream ends with status OK after the
// last chunk.
func (b *pyApp) chatOK(s *span, u usage, respID, content string, stream bool) {
	s.attrs = append(s.attrs,
		attr{"gen_ai.response.model", "gpt-4o-mini-2024-07-18"},
		attr{"gen_ai.response.id", respID},
		attr{"llm.usage.total_tokens", u.in + u.out},
		attr{"gen_ai.usage.completion_tokens", u.out},
		attr{"gen_ai.usage.prompt_tokens", u.in},
		attr{"gen_ai.completion.0.finish_reason", "stop"},
		attr{"gen_ai.completion.0.role", "assistant"},
		attr{"gen_ai.completion.0.content", content},
	)
	if stream {
		s.status = statusOK
	}
}

// post is the httpx span: it wraps the transport's handle_request, so it
// ends when the response headers arrive. With the default semconv only
// http.method, http.url and http.status_code; ERROR for >= 400; an
// exception raised inside it gives an exception event and ERROR
// "<Type>: <message>".
func (b *pyApp) post(tid, parent string, start int64, dur float64, statusCode int, timeout bool) *span {
	a := []attr{{"http.method", "POST"}, {"http.url", "https://api.openai.com/v1/chat/completions"}}
	var ev []event
	st, msg := statusUnset, ""
	end := start + ms(dur)
	if statusCode != 0 {
		a = append(a, attr{"http.status_code", statusCode})
		if statusCode >= 400 {
			st = statusError
		}
	}
	if timeout {
		ev = append(ev, event{end - ms(0.03), "exception", []attr{
			{"exception.type", "ReadTimeout"},
			{"exception.message", "The read operation timed out"},
			{"exception.stacktrace", pyStackTimeout},
			{"exception.escaped", "True"},
		}})
		st, msg = statusError, "ReadTimeout: The read operation timed out"
	}
	return b.add(&span{res: b.res, scope: pyHTTPX, traceID: tid, spanID: b.g.span(), parent: parent,
		name: "POST", kind: kindClient, start: start, end: end, attrs: a, events: ev, status: st, statusMsg: msg})
}

func (b *pyApp) streamTwo503(t int64) {
	tid := b.g.trace()
	srv := b.asgi(tid, t, "/v1/summarize", 200)
	c := b.chat(tid, srv.spanID, t+ms(1.27), true,
		"Customer cannot log in after enabling SSO; error AADSTS50105 on every attempt.")
	a1 := b.post(tid, c.spanID, c.start+ms(3.92), 612.384, 503, false)
	a2 := b.post(tid, c.spanID, a1.end+ms(436.117), 598.052, 503, false)
	a3 := b.post(tid, c.spanID, a2.end+ms(912.704), 402.631, 200, false)
	// stream: one llm.content.completion.chunk event per chunk
	var ev []event
	tt := a3.end + ms(2.83)
	first := tt
	for range 34 {
		ev = append(ev, event{tt, "llm.content.completion.chunk", nil})
		tt += ms(17.0 + b.j(0, 19.0))
	}
	last := ev[len(ev)-1].at
	c.events = ev
	c.end = last + ms(1.36)
	b.chatOK(c, usage{188, 96}, "chatcmpl-C8lA1Xk2uP0s9Y4dQw7eRtZnHb6M",
		"- SSO login fails with AADSTS50105\n- user not assigned to app\n- fix: assign in Entra ID", true)
	b.closeServer(srv, c.end+ms(0.88))
	b.expected = append(b.expected, request(
		c, []*span{a1, a2, a3}, layers(3), "ok", []string{"server_error", "server_error"},
		"api.openai.com", "api.openai.com", latency{c}, []*span{srv.span},
		object{
			{"desc", "streaming chat; openai-python retried two 503s; httpx spans end " +
				"at response headers, the stream continues on openai.chat"},
			{"stream", true},
			{"ttft_ms", round3(float64(first-c.start) / 1e6)},
			{"ttft_basis", "openai.chat start -> first llm.content.completion.chunk event"},
			{"backoff_ms", []any{backoff(a1, a2), backoff(a2, a3)}},
		}))
}

func (b *pyApp) badRequest(t int64) {
	tid := b.g.trace()
	srv := b.asgi(tid, t, "/v1/summarize", 422)
	c := b.chat(tid, srv.spanID, t+ms(1.18), false, "Please summarize the attached 300-page export.")
	a1 := b.post(tid, c.spanID, c.start+ms(3.41), 187.905, 400, false)
	c.end = a1.end + ms(2.74)
	msg := "Error code: 400 - {'error': {'message': 'max_tokens is too large: 40000. This model " +
		"supports at most 16384 completion tokens, whereas you provided 40000.', 'type': " +
		"'invalid_request_error', 'param': 'max_tokens', 'code': 'invalid_value'}}"
	c.setAttr("gen_ai.request.max_tokens", 40000)
	c.attrs = append(c.attrs, attr{"error.type", "BadRequestError"})
	c.events = []event{{c.end - ms(0.2), "exception", []attr{
		{"exception.type", "BadRequestError"},
		{"exception.message", msg},
		{"exception.stacktrace", pyStack400},
		{"exception.escaped", "False"},
	}}}
	c.status, c.statusMsg = statusError, msg
	b.closeServer(srv, c.end+ms(0.95))
	b.expected = append(b.expected, request(
		c, []*span{a1}, layers(1), "error", []string{"client_error"}, "api.openai.com", "api.openai.com",
		latency{c}, []*span{srv.span},
		object{{"desc", "400 BadRequest: not retried by the SDK (deterministic); openai.chat " +
			"exported with status ERROR, error.type BadRequestError"}}))
}

func (b *pyApp) timeoutThenOK(t int64) {
	tid := b.g.trace()
	srv := b.asgi(tid, t, "/v1/summarize", 200)
	c := b.chat(tid, srv.spanID, t+ms(1.33), false,
		"Refund requested twice for order 88213; second charge still pending.")
	a1 := b.post(tid, c.spanID, c.start+ms(3.66), 20000.874, 0, true)
	a2 := b.post(tid, c.spanID, a1.end+ms(441.238), 1830.415, 200, false)
	c.end = a2.end + ms(6.12)
	b.chatOK(c, usage{176, 58}, "chatcmpl-C8lB7hQ1nV3a0Kd5sWm2XyPz9Ue4",
		"- duplicate refund request\n- second charge pending\n- no action needed", false)
	b.closeServer(srv, c.end+ms(0.71))
	b.expected = append(b.expected, request(
		c, []*span{a1, a2}, layers(2), "ok", []string{"timeout"}, "api.openai.com", "api.openai.com",
		latency{c}, []*span{srv.span},
		object{{"desc", "httpx ReadTimeout after the client's 20 s timeout (exception event, " +
			"status ERROR, no status code), SDK retried, 200"}}))
}

func (b *pyApp) twoCalls(t int64) {
	tid := b.g.trace()
	srv := b.asgi(tid, t, "/v1/triage", 200)
	c1 := b.chat(tid, srv.spanID, t+ms(1.41), false, "Classify: 'My invoice shows the wrong VAT number.'")
	p1 := b.post(tid, c1.spanID, c1.start+ms(3.2), 644.318, 200, false)
	c1.end = p1.end + ms(5.41)
	b.chatOK(c1, usage{97, 4}, "chatcmpl-C8lCq0sT5yK8aP2dV1nR7wXe3Bj6", "billing", false)
	c2 := b.chat(tid, srv.spanID, c1.end+ms(0.93), false, "Summarize: 'My invoice shows the wrong VAT number.'")
	p2 := b.post(tid, c2.spanID, c2.start+ms(2.87), 1207.662, 200, false)
	c2.end = p2.end + ms(5.03)
	b.chatOK(c2, usage{121, 37}, "chatcmpl-C8lCr4uW9mB1xS6eF3kQ0tYh8Gn2",
		"- wrong VAT number on invoice\n- needs reissue", false)
	b.closeServer(srv, c2.end+ms(0.64))
	for _, call := range []struct {
		c, p *span
		what string
	}{{c1, p1, "classify"}, {c2, p2, "summarize"}} {
		b.expected = append(b.expected, request(
			call.c, []*span{call.p}, layers(1), "ok", nil, "api.openai.com", "api.openai.com", latency{call.c}, nil,
			object{{"desc", fmt.Sprintf("one of two successful openai.chat calls (%s) in the same "+
				"request: two logical requests, not a retry", call.what)}}))
	}
}

func (b *pyApp) plain(t int64, dur float64, u usage, respID string) {
	tid := b.g.trace()
	srv := b.asgi(tid, t, "/v1/summarize", 200)
	c := b.chat(tid, srv.spanID, t+ms(1.22), false, "Dark mode toggle does not persist after reload on Firefox 133.")
	p := b.post(tid, c.spanID, c.start+ms(3.38), dur, 200, false)
	c.end = p.end + ms(5.77)
	b.chatOK(c, u, respID, "- dark mode setting not persisted\n- Firefox 133 only", false)
	b.closeServer(srv, c.end+ms(0.69))
	b.expected = append(b.expected, request(
		c, []*span{p}, layers(1), "ok", nil, "api.openai.com", "api.openai.com", latency{c},
		[]*span{srv.span}, object{{"desc", "plain success"}}))
}

func buildPython(out string) error {
	b := newPyApp(21)
	b.plain(t0+ms(100.0), 1412.509, usage{142, 44}, "chatcmpl-C8lDf2aK7pX0sN4vR9tQ1mWy5Ec8")
	b.streamTwo503(t0 + ms(1873.4))
	b.badRequest(t0 + ms(4711.9))
	b.timeoutThenOK(t0 + ms(5230.6))
	b.twoCalls(t0 + ms(9120.2))
	b.plain(t0+ms(31877.3), 1104.276, usage{139, 41}, "chatcmpl-C8lEw6bN3qT8cZ1yH5kV0rPm2Xd7")
	batches := exportBatches(b.spans, b.resources, exportOptions{firstTick: map[string]int64{b.res: t0 - ms(2207.0)}})
	notes := "Python 3.12 FastAPI app 'ticket-summarizer': ASGI SERVER span (+ http receive/send " +
		"INTERNAL spans) -> OpenLLMetry 'openai.chat' CLIENT span -> httpx 'POST' CLIENT spans, one " +
		"per physical attempt of openai-python's retry loop (max_retries=2, timeout=20 s). The " +
		"httpx instrumentation runs with its default (old) HTTP semantic conventions: " +
		"http.method, http.url, http.status_code only; no server.address, no error.type, no " +
		"request headers (httpx has no header capture), so x-stainless-retry-count is not " +
		"visible. route is the host of http.url. The httpx span ends when response headers " +
		"arrive; for the stream the body continues on openai.chat, one " +
		"'llm.content.completion.chunk' event per chunk. openai.chat is exported on error " +
		"(status ERROR, error.type = exception class) as current OpenLLMetry-Python does."
	return writeFixture(filepath.Join(out, "openai-python-httpx"), batches, object{{"notes", notes}, {"requests", b.expected}})
}
