package main

import (
	"fmt"
	"path/filepath"
)

// Fixtures openai-node-undici-app-fallback and -nocapture: a Node app whose
// openai SDK retries inside, over undici, under OpenLLMetry spans that are
// lost when the SDK throws; an application retry loop with a fallback to
// Anthropic.

var (
	nodeHTTP    = scope{"@opentelemetry/instrumentation-http", "0.203.0"}
	nodeUndici  = scope{"@opentelemetry/instrumentation-undici", "0.14.0"}
	tlOpenAI    = scope{"@traceloop/instrumentation-openai", "0.19.1"}
	tlAnthropic = scope{"@traceloop/instrumentation-anthropic", "0.19.1"}
	appBot      = scope{"support-bot", ""}
)

const (
	openAIUA    = "OpenAI/JS 5.12.2"
	anthropicUA = "Anthropic/JS 0.60.0"
	anthropicIP = "160.79.104.10"

	stackReset = "Error: read ECONNRESET\n" +
		"    at TLSWrap.onStreamRead (node:internal/stream_base_commons:216:20)"
)

var openAIIPs = []string{"162.159.140.245", "172.66.0.243"}

// nodeBot is the Node 22 service support-bot; it makes the spans of both
// the app-fallback fixtures and the stream-stall one.
type nodeBot struct {
	g         ids
	capture   bool
	spans     []*span
	res       string
	resources map[string][]attr
	expected  []any
}

func newNodeBot(seed uint32, capture bool) *nodeBot {
	return &nodeBot{
		g:       newIDs(seed),
		capture: capture,
		res:     "support-bot",
		resources: map[string][]attr{"support-bot": {
			{"host.name", "support-bot-7c9f6d9b8-x2kqz"},
			{"host.arch", "amd64"},
			{"process.pid", 27},
			{"process.executable.name", "node"},
			{"process.runtime.version", "22.11.0"},
			{"process.runtime.name", "nodejs"},
			{"process.runtime.description", "Node.js"},
			{"service.name", "support-bot"},
			{"service.version", "2.14.0"},
			{"deployment.environment.name", "prod"},
			{"telemetry.sdk.language", "nodejs"},
			{"telemetry.sdk.name", "opentelemetry"},
			{"telemetry.sdk.version", "2.0.1"},
		}},
	}
}

func (b *nodeBot) add(s *span) *span {
	b.spans = append(b.spans, s)
	return s
}

// j is sub-millisecond noise.
func (b *nodeBot) j(lo, hi float64) float64 { return b.g.uniform(lo, hi) }

// server is the inbound POST /api/answer, instrumentation-http with its
// default old HTTP semconv.
func (b *nodeBot) server(tid string, start, end int64, statusCode int) *span {
	statusText := "SERVICE UNAVAILABLE"
	if statusCode == 200 {
		statusText = "OK"
	}
	a := []attr{
		{"http.url", "http://support-bot.prod.svc:8080/api/answer"},
		{"http.host", "support-bot.prod.svc:8080"},
		{"net.host.name", "support-bot.prod.svc"},
		{"http.method", "POST"},
		{"http.scheme", "http"},
		{"http.target", "/api/answer"},
		{"http.user_agent", "helpdesk-web/5.3 (+node-fetch)"},
		{"http.request_content_length_uncompressed", 412},
		{"http.flavor", "1.1"},
		{"net.transport", "ip_tcp"},
		{"net.host.ip", "::ffff:10.42.3.88"},
		{"net.host.port", 8080},
		{"net.peer.ip", "::ffff:10.42.7.19"},
		{"net.peer.port", 51234 + int(b.j(0, 9000))},
		{"http.status_code", statusCode},
		{"http.status_text", statusText},
		{"http.route", "/api/answer"},
	}
	st := statusUnset
	if statusCode >= 500 {
		st = statusError
	}
	return b.add(&span{res: b.res, scope: nodeHTTP, traceID: tid, spanID: b.g.span(),
		name: "POST /api/answer", kind: kindServer, start: start, end: end, attrs: a, status: st})
}

// appSpan is the app's own 'answer' span around its loop of up to three
// tries; its ticket.id attribute is invented, and that is the point: no
// retry-specific attribute on it. With errorMsg it records the exception
// and ends ERROR.
func (b *nodeBot) appSpan(tid, parent string, start, end int64, ticket, errorMsg string, errorAt int64) *span {
	s := &span{res: b.res, scope: appBot, traceID: tid, parent: parent, name: "answer", kind: kindInternal,
		start: start, end: end, attrs: []attr{{"ticket.id", ticket}, {"answer.max_tries", 3}}}
	if errorMsg != "" {
		s.events = []event{{errorAt, "exception", []attr{
			{"exception.type", "InternalServerError"},
			{"exception.message", errorMsg},
			{"exception.stacktrace", "Error: " + errorMsg + "\n    at answer (/app/dist/answer.js:88:17)"},
		}}}
		s.status, s.statusMsg = statusError, errorMsg
	}
	s.spanID = b.g.span()
	return b.add(s)
}

// usage is input and output tokens.
type usage struct{ in, out int }

const openAIInputMessages = `[{"role":"system","parts":[{"type":"text","content":"You are the support assistant."}]},` +
	`{"role":"user","parts":[{"type":"text","content":"How do I reset my API key?"}]}]`

// llmOpenAI is OpenLLMetry-JS's 'chat gpt-4o-mini' span. The instrumentation
// ends it only when the SDK's promise resolves (_thenUnwrap), so a try in
// which the SDK threw has it unexported (exported false).
func (b *nodeBot) llmOpenAI(tid, parent string, start, end int64, exported bool, u *usage, respID string) *span {
	a := []attr{
		{"gen_ai.provider.name", "openai"},
		{"gen_ai.operation.name", "chat"},
		{"gen_ai.request.model", "gpt-4o-mini"},
		{"gen_ai.request.max_tokens", 600},
		{"gen_ai.request.temperature", 0.2},
		{"gen_ai.input.messages", openAIInputMessages},
	}
	if exported && u != nil {
		a = append(a,
			attr{"gen_ai.response.model", "gpt-4o-mini-2024-07-18"},
			attr{"gen_ai.response.id", respID},
			attr{"gen_ai.usage.total_tokens", u.in + u.out},
			attr{"gen_ai.usage.output_tokens", u.out},
			attr{"gen_ai.usage.input_tokens", u.in},
			attr{"gen_ai.response.finish_reasons", []string{"stop"}},
			attr{"gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Open Settings > API keys and choose Rotate."}],"finish_reason":"stop"}]`},
		)
	}
	return b.add(&span{res: b.res, scope: tlOpenAI, traceID: tid, spanID: b.g.span(), parent: parent,
		name: "chat gpt-4o-mini", kind: kindClient, start: start, end: end, attrs: a, lost: !exported})
}

// llmAnthropic is the same for Anthropic (assumed named alike, and lost
// alike on a throw); the system prompt is an attribute of its own.
func (b *nodeBot) llmAnthropic(tid, parent string, start, end int64, exported bool, u *usage, respID string) *span {
	a := []attr{
		{"gen_ai.provider.name", "anthropic"},
		{"gen_ai.operation.name", "chat"},
		{"gen_ai.request.model", "claude-3-5-haiku-20241022"},
		{"gen_ai.request.max_tokens", 600},
		{"gen_ai.request.temperature", 0.2},
		{"gen_ai.system_instructions", `[{"type":"text","content":"You are the support assistant."}]`},
		{"gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"How do I reset my API key?"}]}]`},
	}
	if exported && u != nil {
		a = append(a,
			attr{"gen_ai.response.model", "claude-3-5-haiku-20241022"},
			attr{"gen_ai.response.id", respID},
			attr{"gen_ai.usage.input_tokens", u.in},
			attr{"gen_ai.usage.output_tokens", u.out},
			attr{"gen_ai.usage.total_tokens", u.in + u.out},
			attr{"gen_ai.response.finish_reasons", []string{"stop"}},
			attr{"gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Go to Settings, API keys, Rotate."}],"finish_reason":"stop"}]`},
		)
	}
	return b.add(&span{res: b.res, scope: tlAnthropic, traceID: tid, spanID: b.g.span(), parent: parent,
		name: "chat claude-3-5-haiku-20241022", kind: kindClient, start: start, end: end, attrs: a, lost: !exported})
}

// socketError is an undici error: code, message, stack.
type socketError struct{ code, message, stack string }

// post is one undici POST span, as @opentelemetry/instrumentation-undici
// sets it: request attributes at creation, peer (and configured request
// headers) when the headers are sent, status code at response headers,
// error.type + exception on a socket error, nothing at all on abort (a
// statusCode of 0 and no error: span.end() only).
func (b *nodeBot) post(tid, parent, provider string, start int64, dur float64, retryCount, statusCode int, err *socketError) *span {
	var host, path, ua, ip string
	if provider == "openai" {
		host, path, ua = "api.openai.com", "/v1/chat/completions", openAIUA
		ip = openAIIPs[int(b.j(0, 2))]
	} else {
		host, path, ua = "api.anthropic.com", "/v1/messages", anthropicUA
		ip = anthropicIP
	}
	a := []attr{
		{"http.request.method", "POST"},
		{"http.request.method_original", "POST"},
		{"url.full", "https://" + host + path},
		{"url.path", path},
		{"url.query", ""},
		{"url.scheme", "https"},
		{"server.address", host},
		{"server.port", 443},
		{"user_agent.original", ua},
		{"network.peer.address", ip},
		{"network.peer.port", 443},
	}
	if b.capture {
		a = append(a, attr{"http.request.header.x-stainless-retry-count", []string{fmt.Sprint(retryCount)}})
	}
	var ev []event
	st, msg := statusUnset, ""
	end := start + ms(dur)
	switch {
	case statusCode != 0:
		a = append(a, attr{"http.response.status_code", statusCode})
		if statusCode >= 400 {
			a = append(a, attr{"error.type", fmt.Sprint(statusCode)})
			st = statusError
		}
	case err != nil:
		a = append(a, attr{"error.type", err.code})
		ev = append(ev, event{end - ms(0.05), "exception", []attr{
			{"exception.type", err.code},
			{"exception.message", err.message},
			{"exception.stacktrace", err.stack},
		}})
		st, msg = statusError, err.message
	}
	return b.add(&span{res: b.res, scope: nodeUndici, traceID: tid, spanID: b.g.span(), parent: parent,
		name: "POST", kind: kindClient, start: start, end: end, attrs: a, events: ev, status: st, statusMsg: msg})
}

// plainSuccess: answer -> chat gpt-4o-mini -> one POST 200.
func (b *nodeBot) plainSuccess(t int64, ticket string, llmMS float64, u usage, respID string) {
	tid := b.g.trace()
	srvStart := t
	appStart := t + ms(1.6+b.j(0, 0.4))
	llmStart := appStart + ms(0.3+b.j(0, 0.1))
	llm := b.llmOpenAI(tid, "", llmStart, 0, true, &u, respID)
	p := b.post(tid, llm.spanID, "openai", llmStart+ms(0.6+b.j(0, 0.2)), llmMS, 0, 200, nil)
	llm.end = p.end + ms(0.9+b.j(0, 0.3))
	app := b.appSpan(tid, "", appStart, llm.end+ms(0.4+b.j(0, 0.2)), ticket, "", 0)
	llm.parent = app.spanID
	srv := b.server(tid, srvStart, app.end+ms(1.8+b.j(0, 0.5)), 200)
	app.parent = srv.spanID
	b.expected = append(b.expected, request(
		app, []*span{p}, layers(1, 1), "ok", nil, "api.openai.com", "api.openai.com",
		latency{app}, []*span{srv, llm},
		object{{"desc", "plain success: answer -> chat gpt-4o-mini -> one POST 200"}}))
}

func (b *nodeBot) sdk429ThenOK(t int64, ticket string) {
	tid := b.g.trace()
	appStart := t + ms(1.7)
	llm := b.llmOpenAI(tid, "", appStart+ms(0.35), 0, true, &usage{143, 61}, "chatcmpl-C8kq2w1ZJb0Yd7a9fXyQhS4mNnP1")
	a1 := b.post(tid, llm.spanID, "openai", llm.start+ms(0.71), 96.412, 0, 429, nil)
	// openai-node: retry-after-ms / retry-after honoured when < 60 s; here
	// the 429 carried retry-after-ms: 1160 (not captured on the span).
	a2 := b.post(tid, llm.spanID, "openai", a1.end+ms(1160.0+0.83), 1388.207, 1, 200, nil)
	llm.end = a2.end + ms(1.04)
	app := b.appSpan(tid, "", appStart, llm.end+ms(0.52), ticket, "", 0)
	llm.parent = app.spanID
	srv := b.server(tid, t, app.end+ms(2.21), 200)
	app.parent = srv.spanID
	b.expected = append(b.expected, request(
		app, []*span{a1, a2}, layers(1, 2), "ok", []string{"rate_limited"}, "api.openai.com",
		"api.openai.com", latency{app}, []*span{srv, llm},
		object{
			{"desc", "one app try; the openai SDK retried once after a 429 " +
				"(LLM span exported, it wraps both POSTs)"},
			{"backoff_ms", []any{backoff(a1, a2)}},
		}))
}

// fallback is the acceptance case: 3 app tries; try 1 and 2 throw inside
// the openai SDK (their LLM spans are never exported), try 3 falls back to
// Anthropic and succeeds.
func (b *nodeBot) fallback(t int64, ticket string) {
	tid := b.g.trace()
	appStart := t + ms(1.84)
	// try 1: 429, 429, 500 -> InternalServerError thrown, span lost
	c1 := b.llmOpenAI(tid, "", appStart+ms(0.26), 0, false, nil, "")
	a1 := b.post(tid, c1.spanID, "openai", c1.start+ms(0.51), 183.418, 0, 429, nil)
	a2 := b.post(tid, c1.spanID, "openai", a1.end+ms(437.205), 151.063, 1, 429, nil)
	a3 := b.post(tid, c1.spanID, "openai", a2.end+ms(861.530), 2412.774, 2, 500, nil)
	c1.end = a3.end + ms(1.12)
	// app backoff 250 ms + jitter
	// try 2: ECONNRESET, then the app's 8 s per-try deadline aborts the
	// second attempt (AbortError -> undici span ends with no status)
	c2 := b.llmOpenAI(tid, "", c1.end+ms(262.41), 0, false, nil, "")
	b1 := b.post(tid, c2.spanID, "openai", c2.start+ms(0.48), 38.716, 0, 0,
		&socketError{"ECONNRESET", "read ECONNRESET", stackReset})
	b2Start := b1.end + ms(471.322)
	deadline := c2.start + ms(8000.0)
	b2 := b.post(tid, c2.spanID, "openai", b2Start, float64(deadline-b2Start)/1e6+0.41, 1, 0, nil)
	c2.end = b2.end + ms(0.63)
	// try 3: fallback to Anthropic, success, LLM span exported
	c3 := b.llmAnthropic(tid, "", c2.end+ms(300.0+12.77), 0, true, &usage{139, 88}, "msg_01HqUu4cJ9x8TzVdN2b6kQmR")
	f1 := b.post(tid, c3.spanID, "anthropic", c3.start+ms(0.69), 1904.311, 0, 200, nil)
	c3.end = f1.end + ms(1.21)
	app := b.appSpan(tid, "", appStart, c3.end+ms(0.88), ticket, "", 0)
	for _, c := range []*span{c1, c2, c3} {
		c.parent = app.spanID
	}
	srv := b.server(tid, t, app.end+ms(2.33), 200)
	app.parent = srv.spanID
	b.expected = append(b.expected, request(
		app, []*span{a1, a2, a3, b1, b2, f1}, layers(3, 2), "ok",
		[]string{"rate_limited", "rate_limited", "server_error", "connection", "timeout"},
		"api.openai.com", "api.anthropic.com", latency{app}, []*span{srv},
		object{
			{"desc", fmt.Sprintf("app loop 'answer' with 3 tries: try1 openai 429,429,500 (SDK throws, "+
				"LLM span not exported: its 3 POSTs point to missing parent %s); "+
				"try2 openai ECONNRESET then aborted by the app's 8 s deadline "+
				"(SDK throws, LLM span %s not exported); try3 falls back to "+
				"Anthropic, 200, LLM span exported", c1.spanID, c2.spanID)},
			{"per_try_attempts", []any{3, 2, 1}},
			{"missing_parents", []any{c1.spanID, c2.spanID}},
		}))
}

// allFail is an outage: every try fails. Try 3 (Anthropic, 529 overloaded
// x3) throws too, so its LLM span is also lost. The app marks its span
// ERROR and the server answers 503.
func (b *nodeBot) allFail(t int64, ticket string) {
	tid := b.g.trace()
	appStart := t + ms(1.66)
	var tries, atts []*span
	cur := appStart + ms(0.3)
	plans := []struct {
		provider   string
		durs, gaps [3]float64
	}{
		{"openai", [3]float64{1011.9, 1046.3, 988.7}, [3]float64{0, 472.6, 903.8}},
		{"openai", [3]float64{1003.2, 1120.4, 1001.5}, [3]float64{0, 455.1, 948.2}},
		{"anthropic", [3]float64{311.5, 298.2, 305.9}, [3]float64{0, 431.7, 887.5}},
	}
	for i, p := range plans {
		var c *span
		if p.provider == "openai" {
			c = b.llmOpenAI(tid, "", cur, 0, false, nil, "")
		} else {
			c = b.llmAnthropic(tid, "", cur, 0, false, nil, "")
		}
		prevEnd := c.start + ms(0.55)
		for k := range p.durs {
			code := 503
			if p.provider != "openai" {
				code = 529
			}
			a := b.post(tid, c.spanID, p.provider, prevEnd+ms(p.gaps[k]), p.durs[k], k, code, nil)
			atts = append(atts, a)
			prevEnd = a.end
		}
		c.end = prevEnd + ms(1.05)
		tries = append(tries, c)
		cur = c.end + ms(250.0*float64(i+1)+9.3)
	}
	errAt := tries[len(tries)-1].end + ms(0.4)
	app := b.appSpan(tid, "", appStart, errAt+ms(0.7), ticket, "529 Overloaded", errAt)
	missing := make([]any, len(tries))
	for i, c := range tries {
		c.parent = app.spanID
		missing[i] = c.spanID
	}
	srv := b.server(tid, t, app.end+ms(1.9), 503)
	app.parent = srv.spanID
	b.expected = append(b.expected, request(
		app, atts, layers(3, 3), "error", repeat("server_error", 9), "api.openai.com", "api.anthropic.com",
		latency{app}, []*span{srv},
		object{
			{"desc", "all 3 app tries fail (openai 503x3, openai 503x3, anthropic 529x3); " +
				"no LLM span exported; answer span ERROR"},
			{"per_try_attempts", []any{3, 3, 3}},
			{"missing_parents", missing},
		}))
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func buildNode(out, name string, seed uint32, capture bool) error {
	b := newNodeBot(seed, capture)
	b.plainSuccess(t0+ms(0), "T-48207", 1211.384, usage{131, 54}, "chatcmpl-C8kpV3nX0aQ2m7rLbS9dPz1uWcY4")
	b.fallback(t0+ms(2140.5), "T-48213")
	b.plainSuccess(t0+ms(6412.9), "T-48219", 987.052, usage{127, 49}, "chatcmpl-C8kpdR6yJ8t1oPz4Q0kTnVmB3xL2")
	b.sdk429ThenOK(t0+ms(9833.2), "T-48224")
	b.allFail(t0+ms(21250.7), "T-48240")
	b.plainSuccess(t0+ms(33104.6), "T-48251", 1533.918, usage{140, 72}, "chatcmpl-C8kqM9eW2sR5vTa1uNyDq7gHc0Zf")
	batches := exportBatches(b.spans, b.resources, exportOptions{firstTick: map[string]int64{b.res: t0 - ms(1734.0)}})
	headers := "No request headers captured (the undici instrumentation's default). "
	if capture {
		headers = "Request header x-stainless-retry-count is captured (undici " +
			"headersToSpanAttributes.requestHeaders) as http.request.header.x-stainless-retry-count " +
			"string array. "
	}
	notes := "Node 22 app 'support-bot': POST /api/answer (instrumentation-http, old HTTP semconv) -> " +
		"'answer' INTERNAL app span (application retry loop, up to 3 tries, openai then " +
		"Anthropic fallback) -> OpenLLMetry-JS LLM span 'chat <model>' (CLIENT) -> undici 'POST' " +
		"CLIENT spans, one per physical attempt made by the Stainless SDK's own retry loop. " +
		"OpenLLMetry-JS ends its span only when the SDK promise resolves (_thenUnwrap), so every " +
		"try in which the SDK threw has no exported LLM span and its POSTs have a parentSpanId " +
		"that is in no line ('missing_parents'). " +
		headers +
		"Key = the 'answer' span; alt_keys lists spans that stand 1:1 for the same logical " +
		"request (the SERVER span, and the LLM span when exactly one try). layers = [app tries, " +
		"physical attempts per app try]. Aborted attempt: status UNSET, no status code, no " +
		"error.type (undici instrumentation treats AbortError as not an error)."
	return writeFixture(filepath.Join(out, name), batches, object{{"notes", notes}, {"requests", b.expected}})
}
