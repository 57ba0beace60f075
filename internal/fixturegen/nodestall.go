package main

import (
	"fmt"
	"path/filepath"
)

// Fixture openai-node-undici-stream-stall: the support-bot of nodeBot
// during a storm, with streamed answers that stall after HTTP 200 and are
// abandoned by the app's idle watchdog, and an agent loop beside it. See
// the README ("openai-node-undici-stream-stall"). Only scenarios live
// here; nodeBot makes the spans.

// idleMS is the app's idle watchdog: a stream that sends nothing for this
// long is abandoned (AbortController.abort()) and the request sent again.
const idleMS = 4000.0

// stalledUsage is what OpenLLMetry-JS records when the app stops reading a
// stream: the wrapper's finally-block ends the span with what it
// accumulated, so it looks like a success (status unset, finish reason of
// the last chunk it saw, usage counted by the instrumentation).
func stalledUsage(s *span, u usage, respID string) {
	s.attrs = append(s.attrs,
		attr{"gen_ai.response.model", "gpt-4o-mini-2024-07-18"},
		attr{"gen_ai.response.id", respID},
		attr{"gen_ai.usage.total_tokens", u.in + u.out},
		attr{"gen_ai.usage.output_tokens", u.out},
		attr{"gen_ai.usage.input_tokens", u.in},
		attr{"gen_ai.response.finish_reasons", []string{"stop"}},
	)
}

// stallBot plays the scenarios on a nodeBot, which makes the spans.
type stallBot struct{ b *nodeBot }

func (s stallBot) llm(tid, provider string, start int64, exported bool, u *usage, respID string) *span {
	if provider == "openai" {
		return s.b.llmOpenAI(tid, "", start, 0, exported, u, respID)
	}
	return s.b.llmAnthropic(tid, "", start, 0, exported, u, respID)
}

// stream is a streamed POST that answers 200 and then stops sending: undici
// ends the span when the app aborts the body, with the status code it
// already recorded and no error (AbortError is not an error to it).
func (s stallBot) stream(tid, parent, provider string, start int64, lastChunkMS float64, retryCount int) *span {
	dur := lastChunkMS + idleMS + s.b.j(0.2, 0.9)
	return s.b.post(tid, parent, provider, start, dur, retryCount, 200, nil)
}

func (s stallBot) app(tid string, start, end int64, ticket string, events []event, errMsg string) *span {
	sp := s.b.appSpan(tid, "", start, end, ticket, "", 0)
	sp.events = events
	if errMsg != "" {
		sp.status, sp.statusMsg = statusError, errMsg
	}
	return sp
}

// idleEvent is the watchdog's exception event (the app's own code).
func idleEvent(at int64, provider string) event {
	return event{at, "exception", []attr{
		{"exception.type", "StreamIdleTimeoutError"},
		{"exception.message", fmt.Sprintf("no chunk from %s for %d ms; retrying", provider, int(idleMS))},
	}}
}

// stallThenResend: try 1 streams, stalls after 23 tokens and is abandoned;
// the app sends the same request again; the SDK retries a 429, then the
// stream completes. Nothing on try 1's spans says it failed.
func (s stallBot) stallThenResend(t int64, ticket string) {
	b := s.b
	tid := b.g.trace()
	appStart := t + ms(1.71)
	c1 := s.llm(tid, "openai", appStart+ms(0.31), true, nil, "")
	p1 := s.stream(tid, c1.spanID, "openai", c1.start+ms(0.62), 1288.4, 0)
	c1.end = p1.end + ms(0.74)
	stalledUsage(c1, usage{131, 23}, "chatcmpl-C9aa1Stall0Yd7a9fXyQhS4mNnP")
	c2 := s.llm(tid, "openai", c1.end+ms(1.9+1012.44), true, &usage{131, 77}, "chatcmpl-C9aa2Ok0Yd7a9fXyQhS4mNnPq1W")
	q1 := b.post(tid, c2.spanID, "openai", c2.start+ms(0.58), 88.931, 0, 429, nil)
	q2 := b.post(tid, c2.spanID, "openai", q1.end+ms(611.27), 2210.563, 1, 200, nil)
	c2.end = q2.end + ms(0.97)
	app := s.app(tid, appStart, c2.end+ms(0.61), ticket, nil, "")
	for _, c := range []*span{c1, c2} {
		c.parent = app.spanID
	}
	srv := b.server(tid, t, app.end+ms(2.04), 200)
	app.parent = srv.spanID
	b.expected = append(b.expected, request(
		app, []*span{p1, q1, q2}, layers(2, 1.5), "ok", []string{"abandoned", "rate_limited"},
		"api.openai.com", "api.openai.com", latency{app}, []*span{srv},
		object{
			{"desc", fmt.Sprintf("try 1 streams 200, stalls, abandoned by the app's %d ms idle watchdog "+
				"(its LLM span is exported, status unset, finish_reasons [stop], usage "+
				"131/23: it looks like a success); try 2 re-sends the same request: "+
				"429, then 200", int(idleMS))},
			{"per_try_attempts", []any{1, 2}},
		}))
}

// stallThrowFallback: try 1 stalls and is abandoned (the app records an
// exception event, its span status stays unset); try 2 gets 500 three
// times and the SDK throws (LLM span lost); try 3 falls back to Anthropic.
func (s stallBot) stallThrowFallback(t int64, ticket string) {
	b := s.b
	tid := b.g.trace()
	appStart := t + ms(1.58)
	c1 := s.llm(tid, "openai", appStart+ms(0.29), true, nil, "")
	p1 := s.stream(tid, c1.spanID, "openai", c1.start+ms(0.55), 903.7, 0)
	c1.end = p1.end + ms(0.81)
	stalledUsage(c1, usage{131, 15}, "chatcmpl-C9ab1Stall7a9fXyQhS4mNnPzz")
	ev := []event{idleEvent(c1.end+ms(0.3), "openai")}
	c2 := s.llm(tid, "openai", c1.end+ms(1.2+988.3), false, nil, "")
	var atts []*span
	prev := c2.start + ms(0.5)
	for k, p := range []struct{ gap, dur float64 }{{0, 1433.2}, {476.9, 1521.7}, {911.4, 1387.5}} {
		a := b.post(tid, c2.spanID, "openai", prev+ms(p.gap), p.dur, k, 500, nil)
		atts = append(atts, a)
		prev = a.end
	}
	c2.end = prev + ms(1.1)
	c3 := s.llm(tid, "anthropic", c2.end+ms(2011.8), true, &usage{142, 81}, "msg_01StallFallbackQ8x8TzVdN2b6k")
	f1 := b.post(tid, c3.spanID, "anthropic", c3.start+ms(0.66), 2377.02, 0, 200, nil)
	c3.end = f1.end + ms(1.17)
	app := s.app(tid, appStart, c3.end+ms(0.83), ticket, ev, "")
	for _, c := range []*span{c1, c2, c3} {
		c.parent = app.spanID
	}
	srv := b.server(tid, t, app.end+ms(2.2), 200)
	app.parent = srv.spanID
	attempts := append(append([]*span{p1}, atts...), f1)
	b.expected = append(b.expected, request(
		app, attempts, layers(3, 5.0/3), "ok", append([]string{"abandoned"}, repeat("server_error", 3)...),
		"api.openai.com", "api.anthropic.com", latency{app}, []*span{srv},
		object{
			{"desc", fmt.Sprintf("try 1 openai stream stalls, abandoned (exception event on 'answer', "+
				"status unset); try 2 openai 500 x3, SDK throws, LLM span %s lost; "+
				"try 3 Anthropic fallback 200 (Anthropic counts 142 input tokens for the "+
				"prompt openai counted as 131)", c2.spanID)},
			{"per_try_attempts", []any{1, 3, 1}},
			{"missing_parents", []any{c2.spanID}},
		}))
}

// throwThenStalls is an outage: try 1 429, 429, 500 (SDK throws, span
// lost); try 2 openai stalls; try 3 Anthropic stalls too; the app gives up.
func (s stallBot) throwThenStalls(t int64, ticket string) {
	b := s.b
	tid := b.g.trace()
	appStart := t + ms(1.62)
	c1 := s.llm(tid, "openai", appStart+ms(0.33), false, nil, "")
	a1 := b.post(tid, c1.spanID, "openai", c1.start+ms(0.5), 201.7, 0, 429, nil)
	a2 := b.post(tid, c1.spanID, "openai", a1.end+ms(455.1), 187.3, 1, 429, nil)
	a3 := b.post(tid, c1.spanID, "openai", a2.end+ms(902.6), 2288.4, 2, 500, nil)
	c1.end = a3.end + ms(1.05)
	c2 := s.llm(tid, "openai", c1.end+ms(1019.2), true, nil, "")
	p2 := s.stream(tid, c2.spanID, "openai", c2.start+ms(0.6), 1702.9, 0)
	c2.end = p2.end + ms(0.77)
	stalledUsage(c2, usage{131, 31}, "chatcmpl-C9ac2Stall7a9fXyQhS4mNnPx")
	c3 := s.llm(tid, "anthropic", c2.end+ms(2003.4), true, nil, "")
	p3 := s.stream(tid, c3.spanID, "anthropic", c3.start+ms(0.7), 2410.6, 0)
	c3.end = p3.end + ms(0.9)
	stalledUsage(c3, usage{142, 40}, "msg_01StallGiveUpQ8x8TzVdN2b6kQ")
	c3.setAttr("gen_ai.response.model", "claude-3-5-haiku-20241022")
	end := c3.end + ms(0.7)
	app := s.app(tid, appStart, end, ticket, nil, "stream idle timeout after 3 tries")
	for _, c := range []*span{c1, c2, c3} {
		c.parent = app.spanID
	}
	srv := b.server(tid, t, app.end+ms(1.9), 503)
	app.parent = srv.spanID
	b.expected = append(b.expected, request(
		app, []*span{a1, a2, a3, p2, p3}, layers(3, 5.0/3), "error",
		[]string{"rate_limited", "rate_limited", "server_error", "abandoned", "abandoned"},
		"api.openai.com", "api.anthropic.com", latency{app}, []*span{srv},
		object{
			{"desc", fmt.Sprintf("try 1 openai 429,429,500 (SDK throws, span %s lost); try 2 openai "+
				"streams and stalls; try 3 Anthropic streams and stalls; the app gives "+
				"up: answer ERROR, POST /api/answer 503", c1.spanID)},
			{"per_try_attempts", []any{3, 1, 1}},
			{"missing_parents", []any{c1.spanID}},
		}))
}

// agentLoop is not a retry: an agent loop ('triage') calls the same model
// three times, one after another, each with the previous answer and a tool
// result added to the prompt. Three logical requests.
func (s stallBot) agentLoop(t int64, ticket string) {
	b := s.b
	tid := b.g.trace()
	appStart := t + ms(1.49)
	app := b.add(&span{res: b.res, scope: appBot, traceID: tid, spanID: b.g.span(), name: "triage", kind: kindInternal,
		start: appStart, attrs: []attr{{"ticket.id", ticket}}})
	cur := appStart + ms(0.4)
	prompt, inputs := openAIInputMessages[:len(openAIInputMessages)-1], 131
	steps := []struct {
		dur    float64
		out    int
		toolMS float64
	}{{1144.2, 64, 212.7}, {1390.6, 88, 331.9}, {1012.8, 41, 0}}
	for step, p := range steps {
		c := s.llm(tid, "openai", cur, true, &usage{inputs, p.out}, fmt.Sprintf("chatcmpl-C9ad%dAgent9fXyQhS4mNn", step))
		c.setAttr("gen_ai.input.messages", prompt+"]")
		c.parent = app.spanID
		post := b.post(tid, c.spanID, "openai", c.start+ms(0.57), p.dur, 0, 200, nil)
		c.end = post.end + ms(0.88)
		b.expected = append(b.expected, request(
			c, []*span{post}, layers(1), "ok", nil, "api.openai.com", "api.openai.com", latency{c}, nil,
			object{{"desc", fmt.Sprintf("agent step %d of 3: same model and parameters, input grows "+
				"(%d tokens); not a retry of the step before", step+1, inputs)}}))
		cur = c.end + ms(0.5)
		if p.toolMS != 0 {
			tool := b.add(&span{res: b.res, scope: appBot, traceID: tid, spanID: b.g.span(), parent: app.spanID,
				name: "tool.lookup_account", kind: kindInternal, start: cur, end: cur + ms(p.toolMS),
				attrs: []attr{{"tool.name", "lookup_account"}}})
			cur = tool.end + ms(0.4)
		}
		prompt += fmt.Sprintf(`,{"role":"assistant","parts":[{"type":"text","content":"step %d"}]},`+
			`{"role":"tool","parts":[{"type":"text","content":"result %d"}]}`, step, step)
		inputs += p.out + 90 + 37*step
	}
	app.end = cur + ms(0.3)
}

func buildNodeStall(out, name string, seed uint32, start int64) error {
	b := newNodeBot(seed, true)
	s := stallBot{b}
	b.plainSuccess(start+ms(0), "T-48301", 1104.7, usage{131, 58}, "chatcmpl-C9aZ0Plain9fXyQhS4mNnPq")
	s.stallThenResend(start+ms(1911.3), "T-48305")
	s.agentLoop(start+ms(9377.0), "T-48309")
	s.stallThrowFallback(start+ms(16021.8), "T-48312")
	s.throwThenStalls(start+ms(33480.2), "T-48320")
	b.plainSuccess(start+ms(52215.6), "T-48327", 1377.1, usage{129, 66}, "chatcmpl-C9aZ9Plain9fXyQhS4mNnPr")
	batches := exportBatches(b.spans, b.resources, exportOptions{firstTick: map[string]int64{b.res: start - ms(2210.0)}})
	notes := fmt.Sprintf("The support-bot of openai-node-undici-app-fallback during a storm, with streamed answers "+
		"(stream: true). A stream that answers 200 and then sends nothing is abandoned by the "+
		"app's %d ms idle watchdog (AbortController), and the app loop sends the same request "+
		"again. Nothing in the abandoned try's spans says it failed: the undici POST ends with "+
		"status code 200 and no error (abort is not an error to it), and OpenLLMetry-JS ends its "+
		"'chat <model>' span with what it accumulated (status unset, finish_reasons [\"stop\"], "+
		"usage). The only evidence is the re-send: same operation, model, max_tokens, temperature, "+
		"input messages and input token count, one after the other under 'answer' (across the "+
		"Anthropic fallback only the parameters and a close token count). The 'triage' agent loop "+
		"calls the same model three times with a growing prompt: three logical requests. "+
		"x-stainless-retry-count is captured.", int(idleMS))
	return writeFixture(filepath.Join(out, name), batches, object{{"notes", notes}, {"requests", b.expected}})
}
