package sim

import (
	"fmt"
	"strconv"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// explicit: a logical INTERNAL span over CLIENT attempts that say which
// request and which attempt they are, by retryscope.* attributes or by
// captured SDK/proxy headers.
func (e *emitter) explicit(r *simRequest) emitted {
	trace := r.traceID()
	name := map[string]string{variantAttrsHTTP: "retry.loop", variantAttrsLLM: "retry.loop", variantEvaluator: "generate_summary",
		variantStainless: "summarize_ticket", variantAWS: "classify_document", variantEnvoy: "reserve_stock"}[r.variant]
	logical := e.add(r.newSpan(r.service, name, ptrace.SpanKindInternal, trace, [8]byte{}, r.start, r.end))
	r.logicalFailure(logical)
	requestID, invocationID := r.uuid(), r.uuid()
	sku := 1000 + r.rng.IntN(9000)
	rejectAsEvent := r.rng.Float64() < 0.5
	out := emitted{anchor: logical}
	for i, a := range r.attempts {
		var s *span
		var ep endpoint
		switch r.variant {
		case variantAttrsHTTP:
			ep = endpoint{"GET", fmt.Sprintf("http://inventory:8080/v1/stock/%d", sku), "/v1/stock/{sku}"}
			s = r.httpAttempt(okhttp, a, ep, "GET", trace, logical.id, r.followed(i))
		case variantEnvoy:
			ep = endpoint{"POST", "http://inventory:8080/v1/reserve", "/v1/reserve"}
			s = r.httpAttempt(okhttp, a, ep, "POST", trace, logical.id, r.followed(i))
			s.set("http.request.header.x-envoy-attempt-count", []string{fmt.Sprint(a.try[0])})
		case variantAttrsLLM, variantEvaluator:
			ep = llmEndpoint(a.route)
			s = r.genAIAttempt(a, trace, logical.id)
		case variantStainless:
			ep = llmEndpoint(a.route)
			s = r.httpAttempt(httpx, a, ep, "POST", trace, logical.id, r.followed(i))
			s.set("http.request.header.x-stainless-retry-count", []string{fmt.Sprint(a.try[0] - 1)})
		case variantAWS:
			ep = llmEndpoint(a.route)
			s = r.httpAttempt(javaHTTP, a, ep, "POST", trace, logical.id, r.followed(i))
			s.set("http.request.header.amz-sdk-invocation-id", []string{invocationID})
			s.set("http.request.header.amz-sdk-request", []string{fmt.Sprintf("attempt=%d; max=%d", a.try[0], r.layers[0].maxTries)})
		}
		if r.variant == variantAttrsHTTP || r.variant == variantAttrsLLM || r.variant == variantEvaluator {
			s.set("retryscope.request.id", requestID)
			s.set("retryscope.attempt", a.try[0])
		}
		if a.fault == faultRejected {
			r.markRejected(s, rejectAsEvent)
		}
		out.attempts = append(out.attempts, e.add(s))
		e.server(r, a, s, ep)
	}
	out.gapSplit = r.emitBackoff(func(wait) *span { return logical })
	return out
}

// server adds the callee's SERVER span when the attempt reached it.
func (e *emitter) server(r *simRequest, a *attempt, attemptSpan *span, ep endpoint) {
	if a.reached {
		e.add(r.serverSpan(a, attemptSpan, ep))
	}
}

// resend: sibling CLIENT spans under the caller's SERVER span, told apart by
// http.request.resend_count (Java agent) or retry.count (Envoy upstream).
func (e *emitter) resend(r *simRequest) emitted {
	trace := r.traceID()
	var parent *span
	var ep endpoint
	var client httpClient
	name, countKey := "GET", "http.request.resend_count"
	if r.variant == variantEnvoy {
		parent = r.newSpan("envoy", "POST /v1/reserve", ptrace.SpanKindServer, trace, [8]byte{}, r.start, r.end)
		ep, client, name, countKey = endpoint{"POST", "http://inventory:8080/v1/reserve", "/v1/reserve"}, envoy, "router inventory egress", "retry.count"
		parent.set("upstream_cluster", "inventory")
	} else {
		order := 1 + r.rng.IntN(99999)
		parent = r.newSpan("io.opentelemetry.tomcat-10.0", "GET /orders/{id}", ptrace.SpanKindServer, trace, [8]byte{}, r.start, r.end)
		parent.set("http.route", "/orders/{id}")
		parent.set("url.path", fmt.Sprintf("/orders/%d", order))
		ep, client = endpoint{"GET", fmt.Sprintf("http://inventory:8080/v1/stock/%d", order%5000), "/v1/stock/{sku}"}, okhttp
	}
	parent.set("http.request.method", ep.method)
	parent.set("http.response.status_code", statusFor(r.ok, 502))
	if !r.ok {
		parent.fail("Bad Gateway")
	}
	e.add(parent)
	out := emitted{anchor: parent}
	for i, a := range r.attempts {
		s := r.httpAttempt(client, a, ep, name, trace, parent.id, r.followed(i))
		if r.variant == variantEnvoy {
			s.set("upstream_cluster", "inventory")
		}
		if i > 0 {
			s.set(countKey, i)
		}
		out.attempts = append(out.attempts, e.add(s))
		e.server(r, a, s, ep)
	}
	out.gapSplit = r.emitBackoff(func(wait) *span { return parent })
	return out
}

// gRPC status codes the simulation produces.
const (
	grpcOK                = 0
	grpcInvalidArgument   = 3
	grpcDeadlineExceeded  = 4
	grpcNotFound          = 5
	grpcResourceExhausted = 8
	grpcUnavailable       = 14
	grpcUnauthenticated   = 16
)

var grpcCodeNames = map[int]string{grpcOK: "OK", grpcInvalidArgument: "INVALID_ARGUMENT", grpcDeadlineExceeded: "DEADLINE_EXCEEDED",
	grpcNotFound: "NOT_FOUND", grpcResourceExhausted: "RESOURCE_EXHAUSTED", grpcUnavailable: "UNAVAILABLE", grpcUnauthenticated: "UNAUTHENTICATED"}

func grpcCode(a *attempt) int {
	switch a.fault {
	case faultRateLimited:
		return grpcResourceExhausted
	case faultServerError, faultReset:
		return grpcUnavailable
	case faultTimeout:
		return grpcDeadlineExceeded
	case faultClientError:
		return map[int]int{400: grpcInvalidArgument, 401: grpcUnauthenticated, 404: grpcNotFound}[a.httpStatus]
	}
	return grpcOK
}

// grpc: gRFC A72. A Sent.<service>.<method> CLIENT span, one INTERNAL
// Attempt.<service>.<method> child per attempt, the callee's
// Recv.<service>.<method> SERVER span under the attempt.
func (e *emitter) grpc(r *simRequest) emitted {
	const method = "inventory.v1.InventoryService.Reserve"
	trace := r.traceID()
	var root [8]byte
	if r.rng.Float64() < 0.5 {
		app := r.newSpan("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp", "POST /cart/checkout", ptrace.SpanKindServer,
			trace, [8]byte{}, r.start-r.uniformMs(0.5, 3), r.end+r.uniformMs(0.5, 3))
		app.set("http.request.method", "POST")
		app.set("http.route", "/cart/checkout")
		app.set("http.response.status_code", statusFor(r.ok, 503))
		if !r.ok {
			app.fail("Service Unavailable")
		}
		root = e.add(app).id
	}
	call := r.newSpan("grpc-go", "Sent."+method, ptrace.SpanKindClient, trace, root, r.start, r.end)
	grpcAttrs(call)
	code := grpcCode(r.final)
	if !r.ok {
		call.fail(grpcCodeNames[code] + ": " + r.final.fault.trigger())
	}
	call.set("rpc.grpc.status_code", code)
	e.add(call)
	out := emitted{anchor: call}
	for i, a := range r.attempts {
		s := r.newSpan("grpc-go", "Attempt."+method, ptrace.SpanKindInternal, trace, call.id, a.start, a.end)
		s.set("previous-rpc-attempts", i)
		s.set("transparent-retry", a.transparent)
		if r.rng.Float64() < 0.3 {
			// The pick completes before the message goes out, so before
			// the server can start on it.
			pick := a.start + min(r.uniformMs(0.1, 1), (a.end-a.start)/4)
			if a.reached {
				pick = min(pick, a.serverStart)
			}
			s.event("Delayed LB pick complete", pick)
		}
		s.event("Outbound message", a.start+(a.end-a.start)/8, attr{"sequence-number", 0}, attr{"message-size", 120 + r.rng.IntN(400)})
		c := grpcCode(a)
		s.set("rpc.grpc.status_code", c)
		if a.fault == faultNone {
			s.event("Inbound message", a.end-(a.end-a.start)/8, attr{"sequence-number", 0}, attr{"message-size", 40 + r.rng.IntN(200)})
		} else {
			s.fail(grpcCodeNames[c] + ": " + a.fault.trigger())
		}
		out.attempts = append(out.attempts, e.add(s))
		if a.reached {
			srv := &span{service: a.route.callee, scope: "grpc-java", trace: trace, id: r.spanID(), parent: s.id,
				name: "Recv." + method, kind: ptrace.SpanKindServer, start: a.serverStart, end: a.serverEnd}
			grpcAttrs(srv)
			srv.set("rpc.grpc.status_code", grpcCode(&attempt{fault: a.fault, httpStatus: a.httpStatus}))
			if a.fault == faultServerError {
				srv.fail("UNAVAILABLE")
			}
			e.add(srv)
		}
	}
	out.gapSplit = r.emitBackoff(func(wait) *span { return call })
	return out
}

func grpcAttrs(s *span) {
	s.set("rpc.system", "grpc")
	s.set("rpc.service", "inventory.v1.InventoryService")
	s.set("rpc.method", "Reserve")
	s.set("server.address", "inventory")
	s.set("server.port", 50051)
}

// wrapped: an LLM instrumentation span over the SDK's HTTP attempts.
func (e *emitter) wrapped(r *simRequest) emitted {
	trace := r.traceID()
	client := httpx
	if r.variant == variantAnthropic {
		client = undici
	}
	llm := e.add(r.llmSpan(client.family, r.primary, r.model, trace, [8]byte{}, interval{r.start, r.end}, r.final))
	out := emitted{anchor: llm}
	for i, a := range r.attempts {
		out.attempts = append(out.attempts, e.sdkAttempt(r, client, a, trace, llm.id, r.followed(i)))
	}
	out.gapSplit = r.emitBackoff(func(wait) *span { return llm })
	return out
}

// sdkAttempt is an SDK's HTTP attempt, numbered by x-stainless-retry-count.
func (e *emitter) sdkAttempt(r *simRequest, client httpClient, a *attempt, trace [16]byte, parent [8]byte, followed bool) *span {
	ep := llmEndpoint(a.route)
	s := r.httpAttempt(client, a, ep, "POST", trace, parent, followed)
	s.set("http.request.header.x-stainless-retry-count", []string{fmt.Sprint(a.try[len(a.try)-1] - 1)})
	e.add(s)
	e.server(r, a, s, ep)
	return s
}

// llmSpan is the GenAI instrumentation's span for one SDK call whose last
// attempt was last. Usage is recorded only when the call returned output.
func (r *simRequest) llmSpan(family string, rt *route, model string, trace [16]byte, parent [8]byte, at interval, last *attempt) *span {
	s := r.newSpan(genAIScope(rt, family), "chat "+model, ptrace.SpanKindClient, trace, parent, at.start, at.end)
	r.genAIAttrs(s, rt, model)
	if last.fault == faultNone || last.fault == faultRejected || last.fault == faultStalled {
		r.usage(s, rt, model, last.outTokens)
	}
	r.genAIFailure(s, last)
	return s
}

// nestedWrapped: an application loop (answer_question) around SDK calls
// around HTTP attempts; the last app try may go to the fallback provider.
func (e *emitter) nestedWrapped(r *simRequest) emitted {
	trace := r.traceID()
	app := e.add(r.newSpan(r.service, "answer_question", ptrace.SpanKindInternal, trace, [8]byte{}, r.start, r.end))
	r.logicalFailure(app)
	rejectAsEvent := r.rng.Float64() < 0.5
	out := emitted{anchor: app}
	llmOf := make([]*span, len(r.calls))
	for ci, call := range r.calls {
		var inCall []*attempt
		for _, a := range r.attempts {
			if a.try[0] == ci+1 {
				inCall = append(inCall, a)
			}
		}
		last := inCall[len(inCall)-1]
		llm := r.llmSpan(httpx.family, last.route, r.modelOn(last.route), trace, app.id, call, last)
		if last.fault == faultRejected {
			r.markRejected(llm, rejectAsEvent)
		}
		llmOf[ci] = e.add(llm)
		for _, a := range inCall {
			out.attempts = append(out.attempts, e.sdkAttempt(r, httpx, a, trace, llm.id, r.followed(attemptIndex(r, a))))
		}
	}
	out.gapSplit = r.emitBackoff(twoLayerWaits(app, llmOf))
	return out
}

// split: no trace was open, so every attempt is the root of its own trace.
func (e *emitter) split(r *simRequest) emitted {
	w := r.worker
	if w.variant == variantRetryable {
		return e.retryable(r)
	}
	ep := endpoint{"PUT", fmt.Sprintf("https://ingest.internal/v1/batch/%d", w.shard), "/v1/batch/{shard}"}
	if w.variant == variantAWSID {
		ep = endpoint{"POST", fmt.Sprintf("https://sqs.us-east-1.amazonaws.com/123456789012/jobs-%d", w.shard), "/{account}/{queue}"}
	}
	invocationID := r.uuid()
	var out emitted
	for i, a := range r.attempts {
		s := r.httpAttempt(javaHTTP, a, ep, ep.method, r.traceID(), [8]byte{}, r.followed(i))
		if w.variant == variantAWSID {
			s.set("http.request.header.amz-sdk-invocation-id", []string{invocationID})
			s.set("http.request.header.amz-sdk-request", []string{fmt.Sprintf("attempt=%d; max=%d", a.try[0], r.layers[0].maxTries)})
		}
		out.attempts = append(out.attempts, e.add(s))
		e.server(r, a, s, ep)
	}
	out.anchor = out.attempts[0]
	out.gapSplit = r.emitBackoff(func(w wait) *span { return out.attempts[attemptIndex(r, w.after)] })
	return out
}

// retryable: go-retryablehttp over otelhttp's Transport with no span in the
// context, so each attempt is the root "HTTP GET" span of its own trace.
// otelhttp sets status ERROR without a message and error.type = the code
// for any status >= 400; a transport error is an exception event and
// status ERROR with the error's text. Nothing on the spans says which
// request or which attempt they are.
func (e *emitter) retryable(r *simRequest) emitted {
	var out emitted
	for _, a := range r.attempts {
		s := r.newSpan(otelhttpGo.scope, "HTTP "+r.target.method, ptrace.SpanKindClient, r.traceID(), [8]byte{}, a.start, a.end)
		s.set("http.request.method", r.target.method)
		s.set("url.full", r.target.url)
		s.set("server.address", a.route.host)
		s.set("network.protocol.version", "1.1")
		switch {
		case a.httpStatus != 0:
			s.set("http.response.status_code", a.httpStatus)
			if a.httpStatus >= 400 {
				s.set("error.type", strconv.Itoa(a.httpStatus))
				s.fail("")
			}
		case a.fault == faultReset:
			message := "read tcp 10.0.3.7:41872->" + a.route.host + ":443: read: connection reset by peer"
			if !a.reached {
				message = "dial tcp " + a.route.host + ":443: connect: connection refused"
			}
			r.exception(s, a, "*net.OpError", message)
		case a.fault == faultTimeout:
			r.exception(s, a, "*url.Error", "context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
		}
		// otelhttp records no response headers: a Retry-After is waited
		// for, never seen on the span.
		out.attempts = append(out.attempts, e.add(s))
		e.server(r, a, s, r.target)
	}
	out.anchor = out.attempts[0]
	return out
}

func attemptIndex(r *simRequest, a *attempt) int {
	for i, x := range r.attempts {
		if x == a {
			return i
		}
	}
	panic("gen: wait after an unknown attempt")
}

// orphan: the LLM span is exported only when the call succeeded; when it
// threw, its HTTP attempts point at a parent that is not in the dump.
func (e *emitter) orphan(r *simRequest) emitted {
	trace := r.traceID()
	root := r.newSpan("opentelemetry.instrumentation.fastapi", "POST /v1/answer", ptrace.SpanKindServer, trace, [8]byte{},
		r.start-r.uniformMs(0.5, 3), r.end+r.uniformMs(0.5, 3))
	root.set("http.request.method", "POST")
	root.set("http.route", "/v1/answer")
	root.set("http.response.status_code", statusFor(r.ok, 500))
	if !r.ok {
		root.fail("Internal Server Error")
	}
	e.add(root)
	llm := r.llmSpan(httpx.family, r.primary, r.model, trace, root.id, interval{r.start, r.end}, r.final)
	var out emitted
	if r.ok {
		out.anchor = e.add(llm)
	}
	for i, a := range r.attempts {
		out.attempts = append(out.attempts, e.sdkAttempt(r, httpx, a, trace, llm.id, r.followed(i)))
	}
	if out.anchor == nil {
		out.anchor = out.attempts[0]
	}
	out.gapSplit = r.emitBackoff(func(wait) *span {
		if r.ok {
			return llm
		}
		return nil
	})
	return out
}

// hedge: two overlapping attempts under one logical span; the first to
// succeed wins and the other is cancelled.
func (e *emitter) hedge(r *simRequest) emitted {
	trace := r.traceID()
	logical := e.add(r.newSpan(r.service, "get_quote", ptrace.SpanKindInternal, trace, [8]byte{}, r.start, r.end))
	r.logicalFailure(logical)
	ep := endpoint{"GET", fmt.Sprintf("http://quote-svc:8080/v1/quote?sku=%d", 1000+r.rng.IntN(9000)), "/v1/quote"}
	out := emitted{anchor: logical}
	for _, a := range r.attempts {
		s := r.httpAttempt(okhttp, a, ep, "GET", trace, logical.id, false)
		out.attempts = append(out.attempts, e.add(s))
		e.server(r, a, s, ep)
	}
	out.gapSplit = r.emitBackoff(func(wait) *span { return logical })
	return out
}

// statusFor is the HTTP status a caller's SERVER span reports: 200, or
// failed when the logical request failed.
func statusFor(ok bool, failed int) int {
	if ok {
		return 200
	}
	return failed
}

// twoLayerWaits puts the waits of an application loop on its span and those
// of an SDK call on that call's span (nil, so none, when the call's span was
// not exported).
func twoLayerWaits(app *span, calls []*span) func(wait) *span {
	return func(w wait) *span {
		if w.layer == 0 {
			return app
		}
		return calls[w.after.try[0]-1]
	}
}
