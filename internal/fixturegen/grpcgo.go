package main

import (
	"path/filepath"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Fixture grpc-go-builtin-retries: grpc-go's built-in retries traced by
// grpc-go's own OpenTelemetry support (google.golang.org/grpc/stats/
// opentelemetry, gRFC A72).

var (
	grpcGo   = scope{"grpc-go", "1.75.1"}
	otelhttp = scope{"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp", "0.63.0"}
)

const (
	reserve   = "inventory.v1.InventoryService.Reserve"
	authorize = "payments.v1.PaymentService.Authorize"
	refused   = `connection error: desc = "transport: Error while dialing: dial tcp ` +
		`10.12.4.31:9090: connect: connection refused"`
	rebalance = "inventory shard 7 is rebalancing"
	draining  = "the connection is draining"
)

func goResource(name, version, host string) []attr {
	return []attr{
		{"host.name", host},
		{"os.type", "linux"},
		{"process.pid", 1},
		{"process.executable.name", name},
		{"process.runtime.name", "go"},
		{"process.runtime.version", "go1.24.6"},
		{"service.name", name},
		{"service.version", version},
		{"telemetry.sdk.language", "go"},
		{"telemetry.sdk.name", "opentelemetry"},
		{"telemetry.sdk.version", "1.38.0"},
	}
}

// grpcGoApp is the Go service checkout calling inventory and payments.
type grpcGoApp struct {
	g         ids
	spans     []*span
	expected  []any
	resources map[string][]attr
}

func newGrpcGoApp(seed uint32) *grpcGoApp {
	return &grpcGoApp{
		g: newIDs(seed),
		resources: map[string][]attr{
			"checkout":  goResource("checkout", "1.31.0", "checkout-5d8c7b6f4-9qvtl"),
			"inventory": goResource("inventory", "3.7.2", "inventory-7f6b9c8d5-hx2wp"),
			"payments":  goResource("payments", "2.2.0", "payments-66d9f7c5b-k8rzm"),
		},
	}
}

func (b *grpcGoApp) add(s *span) *span {
	b.spans = append(b.spans, s)
	return s
}

func (b *grpcGoApp) j(lo, hi float64) float64 { return b.g.uniform(lo, hi) }

// okOrError is grpc-go's span status: OK, or ERROR with the status message.
func okOrError(err string) ptrace.StatusCode {
	if err != "" {
		return statusError
	}
	return statusOK
}

func (b *grpcGoApp) httpServer(tid string, start, end int64, statusCode int) *span {
	a := []attr{
		{"http.request.method", "POST"},
		{"url.scheme", "http"},
		{"server.address", "checkout.prod.svc"},
		{"server.port", 8080},
		{"network.peer.address", "10.42.9.7"},
		{"network.peer.port", 38000 + int(b.j(0, 20000))},
		{"user_agent.original", "storefront-bff/4.2 undici"},
		{"client.address", "10.42.9.7"},
		{"url.path", "/v1/checkout"},
		{"network.protocol.version", "1.1"},
		{"http.route", "/v1/checkout"},
		{"http.response.status_code", statusCode},
	}
	st := statusUnset
	if statusCode >= 500 {
		st = statusError
	}
	return b.add(&span{res: "checkout", scope: otelhttp, traceID: tid, spanID: b.g.span(),
		name: "POST /v1/checkout", kind: kindServer, start: start, end: end, attrs: a, status: st})
}

// call is the call span: named '<service>.<method>' (no 'Sent.' prefix in
// grpc-go), kind CLIENT, OK or ERROR with the grpc status message.
func (b *grpcGoApp) call(tid, parent, method string, start, end int64, err string, events []event) *span {
	return b.add(&span{res: "checkout", scope: grpcGo, traceID: tid, spanID: b.g.span(), parent: parent,
		name: method, kind: kindClient, start: start, end: end, events: events, status: okOrError(err), statusMsg: err})
}

// attemptOptions are what differs between attempts.
type attemptOptions struct {
	transparent bool
	err         string
	notSent     bool     // failed before a message went out
	delayedPick *float64 // ms after the start of 'Delayed LB pick complete'
	reqSize     int
	respSize    int
}

// attempt is 'Attempt.<service>.<method>', with no kind, i.e. INTERNAL ("to
// prevent backend from prepending span name with 'Sent.'"), and
// populateSpan's attributes and events.
func (b *grpcGoApp) attempt(tid string, call *span, method string, start int64, dur float64, prev int, o attemptOptions) *span {
	if o.reqSize == 0 {
		o.reqSize = 142
	}
	if o.respSize == 0 {
		o.respSize = 87
	}
	end := start + ms(dur)
	a := []attr{{"Client", true}, {"FailFast", true}, {"previous-rpc-attempts", prev}, {"transparent-retry", o.transparent}}
	var ev []event
	pick := 0.0
	if o.delayedPick != nil {
		pick = *o.delayedPick
		ev = append(ev, event{start + ms(pick), "Delayed LB pick complete", nil})
	}
	if !o.notSent {
		ev = append(ev, event{start + ms(pick+0.21), "Outbound message", []attr{{"sequence-number", 0}, {"message-size", o.reqSize}}})
	}
	if o.err == "" {
		ev = append(ev, event{end - ms(0.09), "Inbound message", []attr{{"sequence-number", 0}, {"message-size", o.respSize}}})
	}
	return b.add(&span{res: "checkout", scope: grpcGo, traceID: tid, spanID: b.g.span(), parent: call.spanID,
		name: "Attempt." + method, kind: kindInternal, start: start, end: end, attrs: a, events: ev,
		status: okOrError(o.err), statusMsg: o.err})
}

// server is the callee's '<service>.<method>' SERVER span, child of the
// attempt (its parent is extracted from the request).
func (b *grpcGoApp) server(res, tid string, att *span, method string, lead, tail float64, err string, reqSize, respSize int) *span {
	if reqSize == 0 {
		reqSize, respSize = 142, 87
	}
	if len(att.events) > 0 && att.events[0].name == "Delayed LB pick complete" {
		lead += float64(att.events[0].at-att.start) / 1e6
	}
	start := att.start + ms(lead)
	end := att.end - ms(tail)
	a := []attr{{"Client", false}, {"FailFast", false}, {"previous-rpc-attempts", 0}, {"transparent-retry", false}}
	ev := []event{{start + ms(0.05), "Inbound message", []attr{{"sequence-number", 0}, {"message-size", reqSize}}}}
	if err == "" {
		ev = append(ev, event{end - ms(0.04), "Outbound message", []attr{{"sequence-number", 0}, {"message-size", respSize}}})
	}
	return b.add(&span{res: res, scope: grpcGo, traceID: tid, spanID: b.g.span(), parent: att.spanID,
		name: method, kind: kindServer, start: start, end: end, attrs: a, events: ev, status: okOrError(err), statusMsg: err})
}

func (b *grpcGoApp) authorize(tid, parent string, start int64) *span {
	c := b.call(tid, parent, authorize, start, 0, "", nil)
	at := b.attempt(tid, c, authorize, start+ms(0.04), 19.0+b.j(0, 9.0), 0, attemptOptions{reqSize: 311, respSize: 64})
	b.server("payments", tid, at, authorize, 0.41, 0.33, "", 311, 64)
	c.end = at.end + ms(0.03)
	b.expected = append(b.expected, request(
		c, []*span{at}, layers(1), "ok", nil, nil, nil, latency{c}, nil,
		object{{"desc", "a different gRPC call in the same request, plain success"}, {"callee_service", "payments"}}))
	return c
}

// insertBeforeLast puts a Reserve call's request before the Authorize
// call made after it.
func (b *grpcGoApp) insertBeforeLast(r object) {
	last := b.expected[len(b.expected)-1]
	b.expected = append(b.expected[:len(b.expected)-1], r, last)
}

// plainFirst is the first call after start-up: name resolution and LB pick
// delayed.
func (b *grpcGoApp) plainFirst(t int64) {
	tid := b.g.trace()
	c := b.call(tid, "", reserve, t+ms(0.62), 0, "", []event{{t + ms(18.4), "Delayed name resolution complete", nil}})
	pick := 44.215
	at := b.attempt(tid, c, reserve, t+ms(0.66), 61.907, 0, attemptOptions{delayedPick: &pick})
	b.server("inventory", tid, at, reserve, 0.47, 0.31, "", 0, 0)
	c.end = at.end + ms(0.04)
	au := b.authorize(tid, "", c.end+ms(0.52))
	srv := b.httpServer(tid, t, au.end+ms(1.13), 200)
	c.parent, au.parent = srv.spanID, srv.spanID
	b.insertBeforeLast(request(
		c, []*span{at}, layers(1), "ok", nil, nil, nil, latency{c}, nil,
		object{
			{"desc", "plain success (first RPC: 'Delayed name resolution complete' on the " +
				"call span, 'Delayed LB pick complete' on the attempt)"},
			{"callee_service", "inventory"},
		}))
}

func (b *grpcGoApp) okOnThird(t int64) {
	tid := b.g.trace()
	c := b.call(tid, "", reserve, t+ms(0.58), 0, "", nil)
	a1 := b.attempt(tid, c, reserve, t+ms(0.61), 2.873, 0, attemptOptions{err: refused, notSent: true})
	a2 := b.attempt(tid, c, reserve, a1.end+ms(73.416), 12.804, 1, attemptOptions{err: rebalance})
	b.server("inventory", tid, a2, reserve, 0.44, 0.36, rebalance, 0, 0)
	a3 := b.attempt(tid, c, reserve, a2.end+ms(151.627), 9.418, 2, attemptOptions{})
	b.server("inventory", tid, a3, reserve, 0.39, 0.27, "", 0, 0)
	c.end = a3.end + ms(0.05)
	au := b.authorize(tid, "", c.end+ms(0.47))
	srv := b.httpServer(tid, t, au.end+ms(1.21), 200)
	c.parent, au.parent = srv.spanID, srv.spanID
	b.insertBeforeLast(request(
		c, []*span{a1, a2, a3}, layers(3), "ok", []string{"connection", "server_error"}, nil, nil, latency{c}, nil,
		object{
			{"desc", "retry policy maxAttempts 4 on UNAVAILABLE: attempt 1 connection " +
				"refused (no server span), attempt 2 UNAVAILABLE from the server " +
				"(server span ERROR), attempt 3 OK"},
			{"callee_service", "inventory"},
			{"backoff_ms", []any{backoff(a1, a2), backoff(a2, a3)}},
		}))
}

func (b *grpcGoApp) transparent(t int64) {
	tid := b.g.trace()
	c := b.call(tid, "", reserve, t+ms(0.55), 0, "", nil)
	a1 := b.attempt(tid, c, reserve, t+ms(0.59), 0.412, 0, attemptOptions{err: draining, notSent: true})
	a2 := b.attempt(tid, c, reserve, a1.end+ms(0.087), 8.966, 1, attemptOptions{transparent: true})
	b.server("inventory", tid, a2, reserve, 0.41, 0.3, "", 0, 0)
	c.end = a2.end + ms(0.04)
	au := b.authorize(tid, "", c.end+ms(0.5))
	srv := b.httpServer(tid, t, au.end+ms(1.08), 200)
	c.parent, au.parent = srv.spanID, srv.spanID
	b.insertBeforeLast(request(
		c, []*span{a1, a2}, layers(2), "ok", []string{"connection"}, nil, nil, latency{c}, nil,
		object{
			{"desc", "transparent retry: attempt 1 hit a draining connection (GOAWAY) " +
				"before any byte reached the server; attempt 2 has " +
				"transparent-retry=true, previous-rpc-attempts=1, no backoff"},
			{"callee_service", "inventory"},
			{"transparent_retries", 1},
		}))
}

func (b *grpcGoApp) exhausted(t int64) {
	tid := b.g.trace()
	c := b.call(tid, "", reserve, t+ms(0.6), 0, rebalance, nil)
	var atts []*span
	prevEnd := t + ms(0.64)
	for i, p := range []struct{ gap, dur float64 }{{0, 11.931}, {58.204, 12.417}, {176.339, 10.862}, {301.585, 13.205}} {
		a := b.attempt(tid, c, reserve, prevEnd+ms(p.gap), p.dur, i, attemptOptions{err: rebalance})
		b.server("inventory", tid, a, reserve, 0.42, 0.33, rebalance, 0, 0)
		atts = append(atts, a)
		prevEnd = a.end
	}
	c.end = prevEnd + ms(0.06)
	srv := b.httpServer(tid, t, c.end+ms(0.92), 503)
	c.parent = srv.spanID
	var backoffs []any
	for i := range 3 {
		backoffs = append(backoffs, backoff(atts[i], atts[i+1]))
	}
	b.expected = append(b.expected, request(
		c, atts, layers(4), "error", repeat("server_error", 4), nil, nil, latency{c}, nil,
		object{
			{"desc", "all 4 attempts UNAVAILABLE from the server; call span ERROR; " +
				"no payments call; HTTP 503"},
			{"callee_service", "inventory"},
			{"backoff_ms", backoffs},
		}))
}

func buildGrpcGo(out string) error {
	b := newGrpcGoApp(31)
	b.plainFirst(t0 + ms(12.0))
	b.okOnThird(t0 + ms(1408.3))
	b.transparent(t0 + ms(3957.1))
	b.exhausted(t0 + ms(4988.6))
	batches := exportBatches(b.spans, b.resources, exportOptions{
		firstTick: map[string]int64{"checkout": t0 - ms(3101.0), "inventory": t0 - ms(917.0), "payments": t0 - ms(917.0)},
		merge:     [][]string{{"inventory", "payments"}},
	})
	notes := "Go service 'checkout' (otelhttp SERVER span POST /v1/checkout) calls " +
		"inventory.v1.InventoryService/Reserve with a service-config retry policy " +
		"(maxAttempts 4, initialBackoff 0.1s, maxBackoff 1s, backoffMultiplier 2, " +
		"retryableStatusCodes [UNAVAILABLE]) and then payments.v1.PaymentService/Authorize. " +
		"Both client and servers use grpc-go's stats/opentelemetry tracing: the call span is " +
		"named '<service>.<method>' (kind CLIENT, NO 'Sent.' prefix in grpc-go; that prefix is " +
		"grpc-java's and Cloud Trace's), each attempt 'Attempt.<service>.<method>' (kind " +
		"INTERNAL) with Client, FailFast, previous-rpc-attempts, transparent-retry, events " +
		"'Delayed LB pick complete', 'Outbound message', 'Inbound message'; the server span is " +
		"'<service>.<method>' kind SERVER, child of the attempt. grpc-go records NO rpc.* " +
		"attributes, no grpc status code and no server address: a failure is only span status " +
		"ERROR with the grpc status message. route is null because no span names the target " +
		"(callee_service says which service the server spans belong to). Exports of inventory " +
		"and payments that fall on the same tick are merged into one line (Collector batch)."
	return writeFixture(filepath.Join(out, "grpc-go-builtin-retries"), batches, object{{"notes", notes}, {"requests", b.expected}})
}
