package main

import (
	"path/filepath"
	"strings"
)

// Fixture grpc-java-a72: the retries of grpc-go-builtin-retries traced by
// grpc-java's OpenTelemetry module (io.grpc:grpc-opentelemetry,
// OpenTelemetryTracingModule): 'Sent.' / 'Attempt.' / 'Recv.' names, and
// every one of these spans is kind INTERNAL.

var (
	grpcJava = scope{"grpc-java", "1.75.0"}
	appSync  = scope{"com.example.ordersync", ""}
)

const (
	jRefused = "UNAVAILABLE: io exception\nChannel Pipeline: [SslHandler#0, ProtocolNegotiators$ClientTlsHandler#0, " +
		"WriteBufferingAndExceptionHandler#0, DefaultChannelPipeline$TailContext#0]"
	jRebalance = "UNAVAILABLE: inventory shard 7 is rebalancing"
)

func javaResource(service, version, host string) []attr {
	return []attr{
		{"host.arch", "amd64"},
		{"host.name", host},
		{"os.type", "linux"},
		{"process.pid", 7},
		{"process.runtime.name", "OpenJDK Runtime Environment"},
		{"process.runtime.version", "21.0.8+9-LTS"},
		{"service.name", service},
		{"service.version", version},
		{"telemetry.sdk.language", "java"},
		{"telemetry.sdk.name", "opentelemetry"},
		{"telemetry.sdk.version", "1.52.0"},
	}
}

// grpcJavaApp is the Java job order-sync calling inventory-jvm.
type grpcJavaApp struct {
	g         ids
	spans     []*span
	expected  []any
	resources map[string][]attr
}

func newGrpcJavaApp(seed uint32) *grpcJavaApp {
	return &grpcJavaApp{
		g: newIDs(seed),
		resources: map[string][]attr{
			"sync":      javaResource("order-sync", "5.4.1", "order-sync-68b9d7f6d-c2mzq"),
			"inventory": javaResource("inventory-jvm", "3.7.2", "inventory-jvm-59f7c8b6d-p4lq8"),
		},
	}
}

func (b *grpcJavaApp) add(s *span) *span {
	b.spans = append(b.spans, s)
	return s
}

// call is 'Sent.<service>.<method>' (generateTraceSpanName); grpc-java sets
// no span kind on any of its spans.
func (b *grpcJavaApp) call(tid, parent string, start int64) *span {
	return b.add(&span{res: "sync", scope: grpcJava, traceID: tid, spanID: b.g.span(), parent: parent,
		name: "Sent." + reserve, kind: kindInternal, start: start})
}

func (b *grpcJavaApp) attempt(tid string, call *span, start int64, dur float64, prev int, err string, sent bool) *span {
	end := start + ms(dur)
	var ev []event
	if sent {
		ev = append(ev, event{start + ms(0.24), "Outbound message", []attr{{"sequence-number", 0}, {"message-size", 142}}})
	}
	if err == "" {
		// grpc-java records the received message size on the call span
		call.events = append(call.events, event{end - ms(0.11), "Inbound message",
			[]attr{{"sequence-number", 0}, {"message-size", 87}}})
	}
	return b.add(&span{res: "sync", scope: grpcJava, traceID: tid, spanID: b.g.span(), parent: call.spanID,
		name: "Attempt." + reserve, kind: kindInternal, start: start, end: end,
		attrs:  []attr{{"previous-rpc-attempts", prev}, {"transparent-retry", false}},
		events: ev, status: okOrError(err), statusMsg: err})
}

// server is 'Recv.<service>.<method>', child of the attempt, in the other
// service.
func (b *grpcJavaApp) server(tid string, att *span, err string) *span {
	start, end := att.start+ms(0.52), att.end-ms(0.34)
	ev := []event{{start + ms(0.07), "Inbound message", []attr{{"sequence-number", 0}, {"message-size", 142}}}}
	if err == "" {
		ev = append(ev, event{end - ms(0.05), "Outbound message", []attr{{"sequence-number", 0}, {"message-size", 87}}})
	}
	return b.add(&span{res: "inventory", scope: grpcJava, traceID: tid, spanID: b.g.span(), parent: att.spanID,
		name: "Recv." + reserve, kind: kindInternal, start: start, end: end, events: ev,
		status: okOrError(err), statusMsg: err})
}

// job is the app span syncOrder (invented).
func (b *grpcJavaApp) job(tid string, start int64, order string) *span {
	return b.add(&span{res: "sync", scope: appSync, traceID: tid, spanID: b.g.span(),
		name: "syncOrder", kind: kindInternal, start: start, attrs: []attr{{"order.id", order}}})
}

// javaStep is one attempt of a run: the gap before it, its duration, and
// what it meets: "ok", "refused" or "unavailable".
type javaStep struct {
	gap, dur float64
	kind     string
}

func (b *grpcJavaApp) run(t int64, order string, plan []javaStep) {
	tid := b.g.trace()
	job := b.job(tid, t, order)
	c := b.call(tid, job.spanID, t+ms(0.91))
	var atts []*span
	var trig, kinds []string
	cur := c.start + ms(0.12)
	for i, step := range plan {
		cur += ms(step.gap)
		err := map[string]string{"ok": "", "refused": jRefused, "unavailable": jRebalance}[step.kind]
		a := b.attempt(tid, c, cur, step.dur, i, err, step.kind != "refused")
		if step.kind != "refused" {
			b.server(tid, a, err)
		}
		switch step.kind {
		case "refused":
			trig = append(trig, "connection")
		case "unavailable":
			trig = append(trig, "server_error")
		}
		atts = append(atts, a)
		kinds = append(kinds, step.kind)
		cur = a.end
	}
	lastErr := plan[len(plan)-1].kind != "ok"
	c.end = cur + ms(0.21)
	outcome := "ok"
	if lastErr {
		c.status, c.statusMsg = statusError, atts[len(atts)-1].statusMsg
		outcome = "error"
	} else {
		c.status = statusOK
	}
	job.end = c.end + ms(1.37)
	if lastErr {
		job.status, job.statusMsg = statusError, jRebalance
	}
	b.expected = append(b.expected, request(
		c, atts, layers(len(atts)), outcome, trig, nil, nil, latency{c}, []*span{job},
		object{{"desc", "grpc-java: " + strings.Join(kinds, ", ")}, {"callee_service", "inventory-jvm"}}))
}

func buildGrpcJava(out string) error {
	b := newGrpcJavaApp(51)
	b.run(t0+ms(40.0), "SO-118204", []javaStep{{0, 14.226, "ok"}})
	b.run(t0+ms(1311.6), "SO-118205", []javaStep{{0, 3.418, "refused"}, {88.147, 12.961, "unavailable"},
		{137.802, 10.377, "ok"}})
	b.run(t0+ms(2904.2), "SO-118206", []javaStep{{0, 11.522, "unavailable"}, {41.905, 12.083, "unavailable"},
		{193.460, 11.017, "unavailable"}, {262.118, 12.664, "unavailable"}})
	b.run(t0+ms(6100.9), "SO-118207", []javaStep{{0, 13.702, "ok"}})
	batches := exportBatches(b.spans, b.resources, exportOptions{firstTick: map[string]int64{
		"sync": t0 - ms(1377.0), "inventory": t0 - ms(3520.0),
	}})
	notes := "Java job 'order-sync' (app span 'syncOrder') calls inventory.v1.InventoryService/Reserve " +
		"through grpc-java with a retry policy (maxAttempts 4, UNAVAILABLE retryable), traced by " +
		"grpc-java's own OpenTelemetry module: call span 'Sent.<service>.<method>', attempt " +
		"spans 'Attempt.<service>.<method>' with previous-rpc-attempts and transparent-retry, " +
		"server span 'Recv.<service>.<method>' (child of the attempt, other service). grpc-java " +
		"sets no span kind, so ALL of them are INTERNAL, including Sent. and Recv. The received " +
		"message size is an 'Inbound message' event on the call span, not on the attempt. " +
		"Errors carry status ERROR with 'CODE: description' as message; no rpc.* attributes, no " +
		"server address (route null)."
	return writeFixture(filepath.Join(out, "grpc-java-a72"), batches, object{{"notes", notes}, {"requests", b.expected}})
}
