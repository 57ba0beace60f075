package ingest

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/model"
)

// Limits bound what one input may cost and what a span must meet to be
// stored. A zero field takes its value from DefaultLimits.
type Limits struct {
	// MaxDuration is the longest believable span; longer ones are
	// quarantined as absurd.
	MaxDuration time.Duration
	// MaxRecordBytes caps one record: a JSON line, a framed message, a raw
	// message's field, a message after zstd. A record is decoded whole, at
	// several times its size, so this bounds the process's memory. At most
	// MaxRecordBytes (the package constant).
	MaxRecordBytes int64
	// MaxDocumentBytes caps a multi-line (pretty-printed) JSON document,
	// counted without the whitespace between its tokens: such a document
	// is decoded whole, so its size is the process's memory.
	MaxDocumentBytes int64
	// MaxExpansion caps how many bytes a gzip or zstd file may expand to
	// per byte of it read, beyond the first ExpansionFloor bytes.
	MaxExpansion int64
	// ExpansionFloor is what any compressed file may expand to whatever
	// its ratio, so that small, very repetitive files are never refused.
	ExpansionFloor int64
}

// DefaultLimits are used for the fields the caller leaves zero.
var DefaultLimits = Limits{MaxDuration: 7 * 24 * time.Hour, MaxRecordBytes: 64 << 20, MaxDocumentBytes: 64 << 20,
	MaxExpansion: 100, ExpansionFloor: 256 << 20}

// withDefaults fills the zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	if l.MaxDuration == 0 {
		l.MaxDuration = DefaultLimits.MaxDuration
	}
	if l.MaxRecordBytes == 0 {
		l.MaxRecordBytes = DefaultLimits.MaxRecordBytes
	}
	l.MaxRecordBytes = min(l.MaxRecordBytes, MaxRecordBytes)
	if l.MaxDocumentBytes == 0 {
		l.MaxDocumentBytes = DefaultLimits.MaxDocumentBytes
	}
	if l.MaxExpansion == 0 {
		l.MaxExpansion = DefaultLimits.MaxExpansion
	}
	if l.ExpansionFloor == 0 {
		l.ExpansionFloor = DefaultLimits.ExpansionFloor
	}
	return l
}

// earliestNS is 2000-01-01: a start before it is a clock or unit error
// (seconds or microseconds written as nanoseconds).
const earliestNS = int64(946684800) * 1e9

// latestNS is 2200-01-01: a time after it is corrupt, and days near the end
// of int64 nanoseconds (2262-04-11) cannot be bounded by a following day
// (the export's day partitions, the report's windows).
const latestNS = int64(7258118400) * 1e9

// decoded is what one record yields.
type decoded struct {
	spans      []model.Span
	rejections []model.Rejection
	resources  int
}

// decodeRecord turns one framed record into spans, quarantining the ones
// with impossible values.
func decodeRecord(rec record, lim Limits) decoded {
	if rec.problem != nil {
		return decoded{rejections: []model.Rejection{{Offset: rec.offset, Reason: rec.problem.reason, Detail: rec.problem.detail}}}
	}
	var td ptrace.Traces
	var err error
	if rec.json {
		td, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(rec.data)
	} else {
		td, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(rec.data)
	}
	if err != nil {
		reason := "bad_protobuf"
		if rec.json {
			reason = "bad_json"
		}
		return decoded{rejections: []model.Rejection{{Offset: rec.offset, Reason: reason, Detail: firstLine(err.Error())}}}
	}
	if rec.json && td.ResourceSpans().Len() == 0 && !bytes.Contains(rec.data, []byte(`"resourceSpans"`)) &&
		!bytes.Contains(rec.data, []byte(`"resource_spans"`)) {
		return decoded{rejections: []model.Rejection{{Offset: rec.offset, Reason: "not_otlp",
			Detail: "JSON without resourceSpans: not an OTLP trace export"}}}
	}
	return flatten(td, rec.offset, lim)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func flatten(td ptrace.Traces, offset int64, lim Limits) decoded {
	out := decoded{spans: make([]model.Span, 0, td.SpanCount())}
	rss := td.ResourceSpans()
	out.resources = rss.Len()
	var enc jsonText
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		resAttrs := rs.Resource().Attributes()
		service := ""
		if v, ok := resAttrs.Get("service.name"); ok {
			service = clean(v.AsString())
		}
		resourceJSON := enc.attrs(resAttrs)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			scope := sss.At(j).Scope()
			scopeName, scopeVersion := clean(scope.Name()), clean(scope.Version())
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if rej, bad := check(sp, offset, lim); bad {
					out.rejections = append(out.rejections, rej)
					continue
				}
				out.spans = append(out.spans, model.Span{
					TraceID:        sp.TraceID().String(),
					SpanID:         sp.SpanID().String(),
					ParentSpanID:   parentID(sp.ParentSpanID()),
					TraceState:     clean(sp.TraceState().AsRaw()),
					Name:           clean(sp.Name()),
					Kind:           kindName(sp.Kind()),
					StartNS:        int64(sp.StartTimestamp()),
					EndNS:          int64(sp.EndTimestamp()),
					StatusCode:     statusName(sp.Status().Code()),
					StatusMsg:      clean(sp.Status().Message()),
					ServiceName:    service,
					ScopeName:      scopeName,
					ScopeVersion:   scopeVersion,
					AttributesJSON: enc.attrs(sp.Attributes()),
					ResourceJSON:   resourceJSON,
					EventsJSON:     enc.events(sp.Events()),
					LinksJSON:      enc.links(sp.Links()),
					Offset:         offset,
				})
			}
		}
	}
	return out
}

// check quarantines spans no analysis could trust.
func check(sp ptrace.Span, offset int64, lim Limits) (model.Rejection, bool) {
	start, end := int64(sp.StartTimestamp()), int64(sp.EndTimestamp())
	reason, detail := "", ""
	switch {
	case sp.TraceID().IsEmpty():
		reason, detail = "zero_trace_id", "span has an all-zero trace id"
	case sp.SpanID().IsEmpty():
		reason, detail = "zero_span_id", "span has an all-zero span id"
	case sp.ParentSpanID() == sp.SpanID():
		reason, detail = "self_parent", "span names itself as its parent"
	case sp.StartTimestamp() == 0 || sp.EndTimestamp() == 0:
		reason, detail = "missing_time", "span has no start or no end time"
	case uint64(sp.StartTimestamp()) >= uint64(latestNS) || uint64(sp.EndTimestamp()) >= uint64(latestNS):
		reason, detail = "absurd_time", "timestamp after 2200-01-01"
	case start < earliestNS:
		reason, detail = "absurd_time", fmt.Sprintf("start %d ns is before 2000-01-01: wrong unit?", start)
	case end < start:
		reason, detail = "end_before_start", fmt.Sprintf("ends %s before it starts", time.Duration(start-end))
	case lim.MaxDuration > 0 && end-start > int64(lim.MaxDuration):
		reason, detail = "absurd_duration", fmt.Sprintf("lasts %s, over the %s limit", time.Duration(end-start).Round(time.Second), lim.MaxDuration)
	default:
		return model.Rejection{}, false
	}
	return model.Rejection{Offset: offset, Reason: reason, Detail: detail,
		TraceID: sp.TraceID().String(), SpanID: sp.SpanID().String()}, true
}

func parentID(id pcommon.SpanID) string {
	if id.IsEmpty() {
		return ""
	}
	return id.String()
}

func kindName(k ptrace.SpanKind) string {
	switch k {
	case ptrace.SpanKindInternal:
		return "internal"
	case ptrace.SpanKindServer:
		return "server"
	case ptrace.SpanKindClient:
		return "client"
	case ptrace.SpanKindProducer:
		return "producer"
	case ptrace.SpanKindConsumer:
		return "consumer"
	}
	return "unspecified"
}

func statusName(c ptrace.StatusCode) string {
	switch c {
	case ptrace.StatusCodeOk:
		return "ok"
	case ptrace.StatusCodeError:
		return "error"
	}
	return "unset"
}

// clean makes text safe for DuckDB, which stores only valid UTF-8.
func clean(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// jsonText writes attribute maps, events and links as compact JSON. It
// reuses one buffer; every value is text (see the README's spans schema).
type jsonText struct {
	buf  []byte
	keys []string
	vals []pcommon.Value
}

func (j *jsonText) attrs(m pcommon.Map) string {
	j.buf = j.appendAttrs(j.buf[:0], m)
	return string(j.buf)
}

func (j *jsonText) appendAttrs(b []byte, m pcommon.Map) []byte {
	keys, vals := j.keys[:0], j.vals[:0]
	m.Range(func(k string, v pcommon.Value) bool {
		keys = append(keys, k)
		vals = append(vals, v)
		return true
	})
	j.keys, j.vals = keys, vals
	dups := hasDuplicate(keys)
	b = append(b, '{')
	for i, k := range keys {
		if dups && slices.Contains(keys[i+1:], k) {
			continue // a MAP keeps one value per key; the last wins, as in pdata's Get
		}
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, vals[i].AsString())
	}
	return append(b, '}')
}

// hasDuplicate reports whether a key repeats. Attribute maps are short, so
// comparing pairs is cheaper than building a set.
func hasDuplicate(keys []string) bool {
	for i := 1; i < len(keys); i++ {
		if slices.Contains(keys[:i], keys[i]) {
			return true
		}
	}
	return false
}

func (j *jsonText) events(es ptrace.SpanEventSlice) string {
	if es.Len() == 0 {
		return "[]"
	}
	b := append(j.buf[:0], '[')
	for i := 0; i < es.Len(); i++ {
		e := es.At(i)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendJSONString(b, e.Name())
		b = append(b, `,"time_ns":`...)
		b = strconv.AppendUint(b, uint64(e.Timestamp()), 10)
		b = append(b, `,"attributes":`...)
		b = j.appendAttrs(b, e.Attributes())
		b = append(b, '}')
	}
	j.buf = append(b, ']')
	return string(j.buf)
}

func (j *jsonText) links(ls ptrace.SpanLinkSlice) string {
	if ls.Len() == 0 {
		return "[]"
	}
	b := append(j.buf[:0], '[')
	for i := 0; i < ls.Len(); i++ {
		l := ls.At(i)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"trace_id":`...)
		b = appendJSONString(b, l.TraceID().String())
		b = append(b, `,"span_id":`...)
		b = appendJSONString(b, l.SpanID().String())
		b = append(b, `,"attributes":`...)
		b = j.appendAttrs(b, l.Attributes())
		b = append(b, '}')
	}
	j.buf = append(b, ']')
	return string(j.buf)
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as a JSON string, replacing invalid UTF-8.
func appendJSONString(b []byte, s string) []byte {
	s = clean(s)
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
