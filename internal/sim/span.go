package sim

import (
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// span is a generated span before it becomes pdata. Times are nanoseconds
// after Config.Start.
type span struct {
	service string
	scope   string
	trace   [16]byte
	id      [8]byte
	parent  [8]byte
	name    string
	kind    ptrace.SpanKind
	start   int64
	end     int64
	status  ptrace.StatusCode
	message string
	attrs   []attr
	events  []spanEvent
	seq     int // emission order, to break ties when sorting
}

// attr values are string, int, bool, float64 or []string.
type attr struct {
	key   string
	value any
}

type spanEvent struct {
	name  string
	at    int64
	attrs []attr
}

func (s *span) set(key string, value any) { s.attrs = append(s.attrs, attr{key, value}) }

func (s *span) event(name string, at int64, attrs ...attr) {
	s.events = append(s.events, spanEvent{name: name, at: at, attrs: attrs})
}

func (s *span) fail(message string) {
	s.status, s.message = ptrace.StatusCodeError, message
}

func (s *span) key() string { return fmt.Sprintf("%x:%x", s.trace, s.id) }

// toBatches orders spans the way exporters emit them (by end time) and packs
// them into Traces of about batchSize spans, grouped by service and scope.
func toBatches(spans []*span, start time.Time, batchSize int, sdkAttributes bool) []ptrace.Traces {
	ordered := slices.Clone(spans)
	slices.SortStableFunc(ordered, func(a, b *span) int {
		if a.end != b.end {
			if a.end < b.end {
				return -1
			}
			return 1
		}
		return a.seq - b.seq
	})
	var batches []ptrace.Traces
	for len(ordered) > 0 {
		n := min(batchSize, len(ordered))
		batches = append(batches, toTraces(ordered[:n], start, sdkAttributes))
		ordered = ordered[n:]
	}
	return batches
}

func toTraces(spans []*span, start time.Time, sdkAttributes bool) ptrace.Traces {
	td := ptrace.NewTraces()
	type group struct{ service, scope string }
	resources := map[string]ptrace.ResourceSpans{}
	scopes := map[group]ptrace.SpanSlice{}
	base := start.UnixNano()
	for _, s := range spans {
		rs, ok := resources[s.service]
		if !ok {
			rs = td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", s.service)
			if sdkAttributes {
				putSDKResource(rs.Resource().Attributes(), s.service)
			}
			resources[s.service] = rs
		}
		g := group{s.service, s.scope}
		out, ok := scopes[g]
		if !ok {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(s.scope)
			out = ss.Spans()
			scopes[g] = out
		}
		sp := out.AppendEmpty()
		s.fill(sp, base)
		if sdkAttributes {
			putSDKSpanAttributes(sp)
		}
	}
	return td
}

// putSDKSpanAttributes adds to an HTTP span what real HTTP
// instrumentations record beside the attributes the rebuild reads
// (Config.SDKAttributes): the protocol, the user agent and, on a client
// span, the body sizes, on a server span the peer. The values follow from
// the span id: no draw of the simulation moves.
func putSDKSpanAttributes(sp ptrace.Span) {
	attrs := sp.Attributes()
	if _, ok := attrs.Get("http.request.method"); !ok {
		return
	}
	id := sp.SpanID()
	n := int64(id[0])<<8 | int64(id[1])
	attrs.PutStr("network.protocol.version", "1.1")
	attrs.PutStr("user_agent.original", "Go-http-client/1.1")
	switch sp.Kind() {
	case ptrace.SpanKindClient:
		attrs.PutInt("http.request.body.size", 200+n%1800)
		attrs.PutInt("http.response.body.size", 400+n%6000)
	case ptrace.SpanKindServer:
		attrs.PutStr("client.address", fmt.Sprintf("10.0.%d.%d", id[2], id[3]))
		attrs.PutInt("network.peer.port", 32768+n%28000)
	}
}

func (s *span) fill(out ptrace.Span, base int64) {
	out.SetTraceID(pcommon.TraceID(s.trace))
	out.SetSpanID(pcommon.SpanID(s.id))
	if s.parent != ([8]byte{}) {
		out.SetParentSpanID(pcommon.SpanID(s.parent))
	}
	out.SetName(s.name)
	out.SetKind(s.kind)
	out.SetStartTimestamp(pcommon.Timestamp(base + s.start))
	out.SetEndTimestamp(pcommon.Timestamp(base + s.end))
	out.Status().SetCode(s.status)
	out.Status().SetMessage(s.message)
	putAttrs(out.Attributes(), s.attrs)
	for _, e := range s.events {
		ev := out.Events().AppendEmpty()
		ev.SetName(e.name)
		ev.SetTimestamp(pcommon.Timestamp(base + e.at))
		putAttrs(ev.Attributes(), e.attrs)
	}
}

func putAttrs(m pcommon.Map, attrs []attr) {
	for _, a := range attrs {
		switch v := a.value.(type) {
		case string:
			m.PutStr(a.key, v)
		case int:
			m.PutInt(a.key, int64(v))
		case int64:
			m.PutInt(a.key, v)
		case bool:
			m.PutBool(a.key, v)
		case float64:
			m.PutDouble(a.key, v)
		case []string:
			sl := m.PutEmptySlice(a.key)
			for _, item := range v {
				sl.AppendEmpty().SetStr(item)
			}
		default:
			panic(fmt.Sprintf("gen: attribute %s has unsupported type %T", a.key, a.value))
		}
	}
}

// putSDKResource adds what an OpenTelemetry SDK and its resource detectors
// put on every resource besides service.name (Config.SDKAttributes): the
// SDK, the host, the process and the pod, 13 attributes, each service's
// values its own.
func putSDKResource(m pcommon.Map, service string) {
	h := fnv.New64a()
	h.Write([]byte(service))
	id := h.Sum64()
	m.PutStr("service.version", fmt.Sprintf("1.%d.%d", id%20, id%7))
	m.PutStr("service.instance.id", fmt.Sprintf("%016x-%04x", id, id%65536))
	m.PutStr("service.namespace", "production")
	m.PutStr("telemetry.sdk.name", "opentelemetry")
	m.PutStr("telemetry.sdk.language", "go")
	m.PutStr("telemetry.sdk.version", "1.38.0")
	m.PutStr("host.name", fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", id%256, id/256%256))
	m.PutStr("host.arch", "amd64")
	m.PutStr("os.type", "linux")
	m.PutInt("process.pid", int64(1+id%32768))
	m.PutStr("process.runtime.name", "go")
	m.PutStr("k8s.namespace.name", "prod")
	m.PutStr("k8s.pod.name", fmt.Sprintf("%s-%x-%x", service, id%0xfffff, id/7%0xfffff))
}
