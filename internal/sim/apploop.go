package sim

import (
	"fmt"
	"math"
	"strconv"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The opt-in shapes of real LLM applications: an application retry loop
// whose failed tries may look successful in their spans (apploop), and an
// agent loop whose calls are not retries (agent).
const (
	variantNodeCapture   = "openai-node"           // apploop: undici captures x-stainless-retry-count
	variantNodeNoCapture = "openai-node-nocapture" // apploop: no header capture (undici's default)
	variantAgent         = "agent"                 // agent: steps with a growing context
)

// Request parameters the LLM instrumentations record, the same on every
// try of one request and every step of one agent.
const (
	maxTokensParam   = 1024
	temperatureParam = 0.2
)

// fallbackTokenizer is how many more input tokens the fallback provider's
// tokenizer counts for the same prompt.
const fallbackTokenizer = 1.1

// stallPerTimeout: a streamed apploop attempt that would have succeeded
// stalls with this many times the mix's timeout rate (scaled like every
// fault in an incident window).
const stallPerTimeout = 4.0

func (p *planner) planAppLoop(r *simRequest) {
	r.variant = weighted(r.rng, []string{variantNodeCapture, variantNodeNoCapture}, []int{1, 1})
	r.content = r.rng.Float64() < 0.5
	r.stallLost = r.rng.Float64() < 0.5
	r.service, r.genAI = "support-bot-node", true
	r.primary, r.fallback = p.routes["api.openai.com"], p.routes["api.anthropic.com"]
	r.model, r.fallbackModel = "gpt-4o-mini", "claude-3-5-haiku"
}

func (p *planner) planAgent(r *simRequest) {
	r.variant, r.service, r.genAI = variantAgent, "research-agent", true
	r.content = r.rng.Float64() < 0.5
	r.primary, r.model = p.routes["api.openai.com"], "gpt-4o"
}

// agentRun is one agent task: steps that each make one LLM call, under one
// span, with a tool call between them. A step starts when the one before
// it succeeded; a failed step ends the task, and the steps after it never
// run.
type agentRun struct {
	trace [16]byte
	span  [8]byte
	steps []*simRequest
	// task is the task's span; when only one step ran, it stands for that
	// step's request (a loop of one try), with layers [1, attempts].
	task *span
	solo bool
}

// assignAgentRuns groups agent requests into tasks of 2 to 5 steps, in
// arrival order. Each step's prompt holds the one before it, its answer and
// a tool result, so the context grows.
func (p *planner) assignAgentRuns(requests []*simRequest) {
	var run *agentRun
	want := 0
	for _, r := range requests {
		if r.shape != ShapeAgent {
			continue
		}
		if run == nil || len(run.steps) == want {
			run, want = &agentRun{}, 2+r.rng.IntN(4)
		} else {
			prev := run.steps[len(run.steps)-1]
			prev.nextStep, r.chained = r, true
			r.inputTokens = prev.inputTokens + prev.outputTokens + 200 + r.rng.IntN(600)
		}
		r.agent = run
		run.steps = append(run.steps, r)
	}
}

// stall: the stream starts, then stops sending; the application's idle
// watchdog gives up on it after a few seconds, with HTTP 200 and part of
// the answer received. The server holds the stream until the client goes.
func (s *simulation) stall(r *simRequest, a *attempt, firstByteMs, genMs float64) {
	frac := 0.1 + 0.6*r.rng.Float64()
	stallAt := a.serverStart + ns(firstByteMs+genMs*frac)
	a.serverOut = int(float64(a.serverOut) * frac)
	a.outTokens = a.serverOut
	a.serverEnd = stallAt + r.uniformMs(2000, 4000)
	a.fault = faultStalled
}

// stallChance is the chance a streamed apploop attempt stalls at t.
func (s *simulation) stallChance(r *simRequest, rt *route, t int64) float64 {
	if r.shape != ShapeAppLoop || !r.stream {
		return 0
	}
	return min(0.9, stallPerTimeout*s.cfg.Faults.Timeout*rt.faultScaleAt(t))
}

// inputTokensOn is the prompt size route rt's tokenizer counts.
func (r *simRequest) inputTokensOn(rt *route) int {
	if r.shape == ShapeAppLoop && rt == r.fallback {
		return int(math.Round(float64(r.inputTokens) * fallbackTokenizer))
	}
	return r.inputTokens
}

// requestParams records the request parameters on an LLM span, and the
// prompt when the instrumentation captures content. Only the Anthropic API
// requires max_tokens, so the OpenAI calls leave it out; and it takes the
// system prompt apart from the messages.
func (r *simRequest) requestParams(s *span, rt *route) {
	if provider(rt) == "anthropic" {
		s.set("gen_ai.request.max_tokens", maxTokensParam)
	}
	s.set("gen_ai.request.temperature", temperatureParam)
	if !r.content {
		return
	}
	user := fmt.Sprintf(`{"role":"user","parts":[{"type":"text","content":"ticket %d, context of %d tokens"}]}`, r.idx, r.inputTokens)
	system := `{"role":"system","parts":[{"type":"text","content":"You are the support assistant."}]}`
	if provider(rt) == "anthropic" {
		s.set("gen_ai.system_instructions", `[{"type":"text","content":"You are the support assistant."}]`)
		s.set("gen_ai.input.messages", "["+user+"]")
		return
	}
	s.set("gen_ai.input.messages", "["+system+","+user+"]")
}

// appLoop (service support-bot-node; openai-node under OTel undici and
// OpenLLMetry-JS): an INTERNAL "answer" span whose application loop makes
// up to Policy.AppTries SDK calls, the last to the fallback provider; each
// call is a "chat <model>" CLIENT span over undici POST attempts. The
// instrumentation ends the call's span only when the call returns, so the
// span of a call that threw is never exported and its attempts point at a
// missing parent. A stalled stream returns: its span is exported, status
// unset, finish reasons ["stop"], like a success. Half of the requests
// record an "exception" event on the answer span when the app gives up on
// a try.
func (e *emitter) appLoop(r *simRequest) emitted {
	trace := r.traceID()
	app := e.add(r.newSpan(r.service, "answer", ptrace.SpanKindInternal, trace, [8]byte{}, r.start, r.end))
	r.logicalFailure(app)
	events := r.rng.Float64() < 0.5
	out := emitted{anchor: app}
	llmOf := make([]*span, len(r.calls))
	for ci, call := range r.calls {
		inCall := r.attemptsOfCall(ci)
		last := inCall[len(inCall)-1]
		llm := r.llmSpan(undici.family, last.route, r.modelOn(last.route), trace, app.id, call, last)
		r.requestParams(llm, last.route)
		if last.fault == faultNone || last.fault == faultStalled && !r.stallLost {
			llm.set("gen_ai.response.finish_reasons", []string{"stop"})
			llmOf[ci] = e.add(llm)
		}
		for _, a := range inCall {
			ep := llmEndpoint(a.route)
			s := r.httpAttempt(undici, a, ep, "POST", trace, llm.id, r.followed(attemptIndex(r, a)))
			if r.variant == variantNodeCapture {
				s.set("http.request.header.x-stainless-retry-count", []string{strconv.Itoa(a.try[1] - 1)})
			}
			out.attempts = append(out.attempts, e.add(s))
			e.server(r, a, s, ep)
		}
		if events && ci < len(r.calls)-1 {
			app.event("exception", call.end, attr{"exception.type", "StreamIdleTimeoutError"}, attr{"exception.message", "try failed: " + last.fault.trigger()})
		}
	}
	out.gapSplit = r.emitBackoff(twoLayerWaits(app, llmOf))
	return out
}

// agentStep (service research-agent): one step of an agent task, an
// OpenLLMetry "chat gpt-4o" CLIENT span (ended with ERROR when the call
// throws) over httpx POST attempts numbered by x-stainless-retry-count,
// under the task's INTERNAL "agent.run" span; a "tool.web_search" INTERNAL
// span follows each step that another step follows. The first step emits
// the task span, which stands for the request when it is the only step.
func (e *emitter) agentStep(r *simRequest) emitted {
	run := r.agent
	if r == run.steps[0] {
		run.trace, run.span = r.traceID(), r.spanID()
		last := r
		for last.nextStep != nil && last.nextStep.done {
			last = last.nextStep
		}
		task := r.newSpan(r.service, "agent.run", ptrace.SpanKindInternal, run.trace, [8]byte{}, r.start-r.uniformMs(0.5, 3), last.end+r.uniformMs(0.5, 3))
		task.id = run.span
		if !last.ok {
			task.fail("step failed: " + last.final.fault.trigger())
		}
		run.task, run.solo = e.add(task), last == r
	}
	llm := r.llmSpan(httpx.family, r.primary, r.model, run.trace, run.span, interval{r.start, r.end}, r.final)
	r.requestParams(llm, r.primary)
	e.add(llm)
	out := emitted{anchor: llm}
	if run.solo {
		out.anchor = run.task
	}
	for i, a := range r.attempts {
		out.attempts = append(out.attempts, e.sdkAttempt(r, httpx, a, run.trace, llm.id, r.followed(i)))
	}
	if next := r.nextStep; next != nil && next.done {
		tool := r.newSpan(r.service, "tool.web_search", ptrace.SpanKindInternal, run.trace, run.span, r.end+r.uniformMs(0.1, 1), next.start-r.uniformMs(0.1, 1))
		e.add(tool)
	}
	out.gapSplit = r.emitBackoff(func(wait) *span { return llm })
	return out
}

// attemptsOfCall lists the attempts of app try ci (0-based).
func (r *simRequest) attemptsOfCall(ci int) []*attempt {
	var out []*attempt
	for _, a := range r.attempts {
		if a.try[0] == ci+1 {
			out = append(out, a)
		}
	}
	return out
}

// usageLost: the attempt's usage sat on a call span that was never
// exported (an abandoned stream whose span the instrumentation never
// ended), so no span records it.
func (r *simRequest) usageLost(a *attempt) bool {
	return a.fault == faultStalled && r.stallLost
}
