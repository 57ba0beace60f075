package gen

import (
	"fmt"
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
func toBatches(spans []*span, start time.Time, batchSize int) []ptrace.Traces {
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
		batches = append(batches, toTraces(ordered[:n], start))
		ordered = ordered[n:]
	}
	return batches
}

func toTraces(spans []*span, start time.Time) ptrace.Traces {
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
		s.fill(out.AppendEmpty(), base)
	}
	return td
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
