package sim

import (
	"fmt"
	"net/http"
	"strconv"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// emitted is what a request's spans look like, for the truth.
type emitted struct {
	anchor   *span
	attempts []*span // parallel to simRequest.attempts
	gapSplit bool
}

// emitter collects the spans of all requests.
type emitter struct {
	spans []*span
}

func (e *emitter) add(s *span) *span {
	s.seq = len(e.spans)
	e.spans = append(e.spans, s)
	return s
}

// emit writes one logical request's spans in the convention of its shape.
func (e *emitter) emit(r *simRequest) emitted {
	switch r.shape {
	case ShapeExplicit:
		return e.explicit(r)
	case ShapeResend:
		return e.resend(r)
	case ShapeGRPC:
		return e.grpc(r)
	case ShapeWrapped:
		if r.nested() {
			return e.nestedWrapped(r)
		}
		return e.wrapped(r)
	case ShapeSplit:
		return e.split(r)
	case ShapeOrphan:
		return e.orphan(r)
	case ShapeAppLoop:
		return e.appLoop(r)
	case ShapeAgent:
		return e.agentStep(r)
	default:
		return e.hedge(r)
	}
}

// httpClient is an HTTP client instrumentation: its scope and the error.type
// values it records for failures without a response.
type httpClient struct {
	scope    string
	family   string // java, python, node, envoy
	resetErr [2]string
	timeout  string
}

var (
	okhttp     = httpClient{"io.opentelemetry.okhttp-3.0", "java", [2]string{"java.net.SocketException", "java.net.ConnectException"}, "java.net.SocketTimeoutException"}
	javaHTTP   = httpClient{"io.opentelemetry.java-http-client", "java", [2]string{"java.net.SocketException", "java.net.ConnectException"}, "java.net.http.HttpTimeoutException"}
	httpx      = httpClient{"opentelemetry.instrumentation.httpx", "python", [2]string{"httpx.RemoteProtocolError", "httpx.ConnectError"}, "httpx.ReadTimeout"}
	undici     = httpClient{"@opentelemetry/instrumentation-undici", "node", [2]string{"UND_ERR_SOCKET", "ECONNREFUSED"}, "timeout"}
	otelhttpGo = httpClient{"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp", "go", [2]string{"*net.OpError", "*net.OpError"}, "*url.Error"}
	envoy      = httpClient{"envoy", "envoy", [2]string{"connection_termination", "connection_failure"}, "timeout"}
)

// endpoint is what an attempt calls.
type endpoint struct {
	method   string
	url      string
	template string // the callee's http.route
}

func llmEndpoint(rt *route) endpoint {
	switch rt.host {
	case "api.openai.com":
		return endpoint{"POST", "https://api.openai.com/v1/chat/completions", "/v1/chat/completions"}
	case "api.anthropic.com":
		return endpoint{"POST", "https://api.anthropic.com/v1/messages", "/v1/messages"}
	}
	return endpoint{"POST", "https://" + rt.host + "/model/anthropic.claude-3-haiku-20240307-v1:0/converse", "/model/{modelId}/converse"}
}

func provider(rt *route) string {
	switch rt.host {
	case "api.openai.com":
		return "openai"
	case "api.anthropic.com":
		return "anthropic"
	}
	return "aws.bedrock"
}

// newSpan starts a span in the request's client service.
func (r *simRequest) newSpan(scope, name string, kind ptrace.SpanKind, trace [16]byte, parent [8]byte, start, end int64) *span {
	return &span{service: r.service, scope: scope, trace: trace, id: r.spanID(), parent: parent, name: name, kind: kind, start: start, end: end}
}

func (r *simRequest) traceID() [16]byte {
	var id [16]byte
	for id == ([16]byte{}) {
		for i := range id {
			id[i] = byte(r.rng.Uint32())
		}
	}
	return id
}

func (r *simRequest) spanID() [8]byte {
	var id [8]byte
	for id == ([8]byte{}) {
		for i := range id {
			id[i] = byte(r.rng.Uint32())
		}
	}
	return id
}

func (r *simRequest) uuid() string {
	b := r.traceID()
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// followed reports whether attempt i has a later, sequential attempt. Only
// such attempts may end a timeout with no status at all, because the rebuild
// can still tell from the next attempt that they failed.
func (r *simRequest) followed(i int) bool {
	return r.shape != ShapeHedge && i < len(r.attempts)-1
}

// httpAttempt is a CLIENT span for one HTTP attempt.
func (r *simRequest) httpAttempt(c httpClient, a *attempt, ep endpoint, name string, trace [16]byte, parent [8]byte, followed bool) *span {
	s := r.newSpan(c.scope, name, ptrace.SpanKindClient, trace, parent, a.start, a.end)
	s.set("http.request.method", ep.method)
	s.set("url.full", ep.url)
	s.set("server.address", a.route.host)
	s.set("server.port", a.route.port)
	if a.httpStatus != 0 {
		s.set("http.response.status_code", a.httpStatus)
	}
	switch a.fault {
	case faultRateLimited, faultServerError, faultClientError:
		s.set("error.type", strconv.Itoa(a.httpStatus))
		s.fail(fmt.Sprintf("%d %s", a.httpStatus, http.StatusText(a.httpStatus)))
	case faultReset:
		errType := c.resetErr[0]
		if !a.reached {
			errType = c.resetErr[1]
		}
		r.exception(s, a, errType, "Connection reset")
	case faultTimeout:
		if followed && r.rng.Float64() < 0.5 {
			break // aborted: the instrumentation ends the span with nothing set
		}
		r.exception(s, a, c.timeout, "Read timed out")
	case faultCancelled:
		r.cancelled(s)
	}
	r.responseDetails(s, a)
	return s
}

func (r *simRequest) exception(s *span, a *attempt, errType, message string) {
	s.set("error.type", errType)
	s.fail(message)
	s.event("exception", a.end, attr{"exception.type", errType}, attr{"exception.message", message})
}

// cancelled marks a hedge loser: error.type is always set, the status only
// sometimes (cancellation is often not treated as an error).
func (r *simRequest) cancelled(s *span) {
	s.set("error.type", "cancelled")
	if r.rng.Float64() < 0.5 {
		s.fail("cancelled")
	}
}

// responseDetails adds what every attempt span carries about its response:
// Retry-After on 429s, the first token of a stream.
func (r *simRequest) responseDetails(s *span, a *attempt) {
	if a.fault == faultRateLimited {
		s.set("http.response.header.retry-after", []string{strconv.Itoa(a.retryAfterS)})
	}
	if a.firstToken > 0 {
		s.event("gen_ai.first_token", a.firstToken)
	}
}

// genAIAttempt is a CLIENT gen_ai span that is itself an attempt.
func (r *simRequest) genAIAttempt(a *attempt, trace [16]byte, parent [8]byte) *span {
	s := r.newSpan(genAIScope(a.route, "python"), "chat "+r.model, ptrace.SpanKindClient, trace, parent, a.start, a.end)
	r.genAIAttrs(s, a.route, r.model)
	if a.httpStatus != 0 {
		s.set("http.response.status_code", a.httpStatus)
	}
	if a.outTokens > 0 {
		r.usage(s, a.route, r.model, a.outTokens)
	}
	r.genAIFailure(s, a)
	r.responseDetails(s, a)
	return s
}

func genAIScope(rt *route, family string) string {
	if family == "node" {
		return "@traceloop/instrumentation-" + provider(rt)
	}
	return "opentelemetry.instrumentation." + provider(rt)
}

func (r *simRequest) genAIAttrs(s *span, rt *route, model string) {
	s.set("gen_ai.system", provider(rt))
	s.set("gen_ai.provider.name", provider(rt))
	s.set("gen_ai.operation.name", "chat")
	s.set("gen_ai.request.model", model)
	s.set("server.address", rt.host)
	s.set("server.port", rt.port)
}

func (r *simRequest) usage(s *span, rt *route, model string, outTokens int) {
	s.set("gen_ai.response.model", model)
	s.set("gen_ai.usage.input_tokens", r.inputTokensOn(rt))
	s.set("gen_ai.usage.output_tokens", outTokens)
}

// genAIFailure records a failed SDK call the way GenAI instrumentations do:
// error.type is the SDK's exception class.
func (r *simRequest) genAIFailure(s *span, a *attempt) {
	p := provider(a.route)
	var class, message string
	switch a.fault {
	case faultNone, faultRejected, faultStalled:
		return // a stalled stream returned: its span looks like a success
	case faultRateLimited:
		class, message = "RateLimitError", "Error code: 429 - rate limit exceeded"
	case faultServerError:
		class, message = "InternalServerError", fmt.Sprintf("Error code: %d", a.httpStatus)
	case faultClientError:
		class = map[int]string{400: "BadRequestError", 401: "AuthenticationError", 404: "NotFoundError"}[a.httpStatus]
		message = fmt.Sprintf("Error code: %d", a.httpStatus)
	case faultReset:
		class, message = "APIConnectionError", "Connection error."
	case faultTimeout:
		class, message = "APITimeoutError", "Request timed out."
	case faultCancelled:
		r.cancelled(s)
		return
	}
	s.set("error.type", p+"."+class)
	s.fail(message)
}

// markRejected flags an output an evaluator turned down: an attribute on
// some requests, an event at the span's end on the others.
func (r *simRequest) markRejected(s *span, asEvent bool) {
	if asEvent {
		s.event("evaluation.rejected", s.end)
		return
	}
	s.set("retryscope.rejected_output", true)
}

// serverSpan is the callee's SERVER span for an attempt that reached it.
func (r *simRequest) serverSpan(a *attempt, parent *span, ep endpoint) *span {
	rt := a.route
	s := &span{service: rt.callee, scope: serverScope(rt), trace: parent.trace, id: r.spanID(), parent: parent.id,
		name: ep.method + " " + ep.template, kind: ptrace.SpanKindServer, start: a.serverStart, end: a.serverEnd}
	s.set("http.request.method", ep.method)
	s.set("http.route", ep.template)
	switch {
	case a.fault == faultReset:
		s.fail("connection reset by peer")
	case a.httpStatus != 0:
		s.set("http.response.status_code", a.httpStatus)
	default: // the client gave up; the server finished anyway
		s.set("http.response.status_code", 200)
	}
	if a.httpStatus >= 500 {
		s.fail(http.StatusText(a.httpStatus))
	}
	if rt.llm {
		s.set("gen_ai.request.model", r.modelOn(rt))
		s.set("gen_ai.usage.input_tokens", r.inputTokensOn(rt))
		s.set("gen_ai.usage.output_tokens", a.serverOut)
	}
	return s
}

func serverScope(rt *route) string {
	switch rt.callee {
	case "inventory":
		return "io.opentelemetry.tomcat-10.0"
	case "quote-svc":
		return "opentelemetry.instrumentation.flask"
	}
	return "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
}

func (r *simRequest) modelOn(rt *route) string {
	if r.fallback != nil && rt == r.fallback {
		return r.fallbackModel
	}
	return r.model
}

// emitBackoff puts a retry.backoff event at the start of each wait, on the
// span target returns, for about half of the requests. It reports whether
// telemetry splits every gap into backoff and overhead: by those events,
// or by the Retry-After of every response before a retry.
func (r *simRequest) emitBackoff(target func(w wait) *span) bool {
	if len(r.attempts) == 1 {
		return true
	}
	if !r.backoffEvents || len(r.waits) == 0 {
		return r.retryAfterSplit()
	}
	targets := make([]*span, len(r.waits))
	for i, w := range r.waits {
		if targets[i] = target(w); targets[i] == nil {
			return r.retryAfterSplit()
		}
	}
	for i, w := range r.waits {
		targets[i].event("retry.backoff", w.start, attr{"retry.backoff_ms", float64(w.end-w.start) / 1e6})
	}
	return true
}

// retryAfterSplit reports whether captured Retry-After headers split every
// gap: each attempt but the first followed a response with Retry-After,
// and the wait before it was exactly that long. A wait after the final
// attempt (a retry a deadline stopped) is no gap between attempts and
// does not count.
func (r *simRequest) retryAfterSplit() bool {
	var waits []wait
	for _, w := range r.waits {
		if w.start < r.final.start {
			waits = append(waits, w)
		}
	}
	if len(waits) != len(r.attempts)-1 {
		return false
	}
	for i, w := range waits {
		a := w.after
		if a != r.attempts[i] || a.retryAfterS == 0 || w.end-w.start != ns(float64(a.retryAfterS)*1000) {
			return false
		}
	}
	return true
}

// logicalFailure sets the error status of a logical span whose request failed.
func (r *simRequest) logicalFailure(s *span) {
	if r.ok {
		return
	}
	last := r.final
	msg := fmt.Sprintf("giving up after %d attempts: %s", len(r.attempts), last.fault.trigger())
	if r.exhausted == "quota" {
		// The quota is the AWS SDKs' standard retryer's, and its client
		// says so as the AWS SDK for Go v2 does (its ratelimit package's
		// QuotaExceededError, wrapped by the retryer and the operation).
		msg = fmt.Sprintf("operation error %s: %s, failed to get rate limit token, retry quota exceeded, %d available, %d requested",
			r.service, s.name, int(r.quotaLeft), int(r.quotaAsked))
	}
	s.fail(msg)
	s.set("error.type", last.fault.trigger())
	if r.exhausted == "token_cap" {
		// A client that caps a request's tokens says why it gave up, as
		// the evaluator loops do (seed 004's Unverified reason).
		s.set("retryscope.exhausted.reason", "token_cap")
	}
}
