package ingest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/store"
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

// MaxSpanDurationLimit is the largest MaxDuration: a span longer than a
// year is a broken clock, not a request.
const MaxSpanDurationLimit = 366 * 24 * time.Hour

// MaxExpansionLimit is the largest MaxExpansion ratio; zstd's best ratio
// on real traces is far below it, and more switches the bound off.
const MaxExpansionLimit = 1 << 20

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
	batch      *store.SpanBatch
	rejections []model.Rejection
	resources  int
}

// decodeRecord turns one framed record into spans, quarantining the ones
// with impossible values.
func decodeRecord(rec record, lim Limits) decoded {
	if rec.json && rec.problem == nil {
		if out, ok := decodeJSONFast(rec.data, rec.offset, lim); ok {
			return out
		}
	}
	return decodePdata(rec, lim)
}

// decodePdata decodes a record with pdata, then flattens it.
func decodePdata(rec record, lim Limits) decoded {
	td, rej := unmarshalRecord(rec)
	if rej != nil {
		return decoded{rejections: []model.Rejection{*rej}}
	}
	// A batch's text is about 0.85 times the protobuf it came from and
	// 0.4 times the JSON (ids in hex, JSON's syntax gone).
	textHint := len(rec.data)
	if rec.json {
		textHint /= 2
	}
	return flatten(td, rec.offset, lim, textHint)
}

// unmarshalRecord decodes one framed record as OTLP traces, or says why it
// is rejected: a problem of its framing, bad JSON or protobuf, or JSON
// that is no trace export.
func unmarshalRecord(rec record) (ptrace.Traces, *model.Rejection) {
	if rec.problem != nil {
		return ptrace.Traces{}, &model.Rejection{Offset: rec.offset, Reason: rec.problem.reason, Detail: rec.problem.detail}
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
		return ptrace.Traces{}, &model.Rejection{Offset: rec.offset, Reason: reason, Detail: firstLine(err.Error())}
	}
	if rec.json && td.ResourceSpans().Len() == 0 && !bytes.Contains(rec.data, []byte(`"resourceSpans"`)) &&
		!bytes.Contains(rec.data, []byte(`"resource_spans"`)) {
		return ptrace.Traces{}, &model.Rejection{Offset: rec.offset, Reason: "not_otlp", Detail: "JSON without resourceSpans: not an OTLP trace export"}
	}
	return td, nil
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

// flatten turns a record's spans into a batch, ready to load. The batch's
// buffers are sized once, its text to textHint bytes and its attribute
// entries, events and links to their count, rather than grown a doubling
// at a time: growing them was a quarter of a decoder's allocation.
func flatten(td ptrace.Traces, offset int64, lim Limits, textHint int) decoded {
	b := store.NewSpanBatch(td.SpanCount(), textHint)
	b.Attrs, b.Events, b.Links = presized(td)
	out := decoded{batch: b}
	rss := td.ResourceSpans()
	out.resources = rss.Len()
	w := textWriter{b: b}
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		resAttrs := rs.Resource().Attributes()
		var service store.Text
		if v, ok := resAttrs.Get("service.name"); ok {
			service = b.Text(clean(v.AsString()))
		}
		// The resource's map is written once, and the resource added to
		// the batch with its first span kept: a resource none of whose
		// spans is kept is not stored.
		resource := w.attrs(resAttrs)
		var resourceID int64
		added := false
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			scope := sss.At(j).Scope()
			scopeName, scopeVersion := b.Text(clean(scope.Name())), b.Text(clean(scope.Version()))
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if rej, bad := check(sp, offset, lim); bad {
					out.rejections = append(out.rejections, rej)
					continue
				}
				if !added {
					resourceID, added = b.AddResource(resource), true
				}
				traceID, spanID := sp.TraceID(), sp.SpanID()
				b.Spans = append(b.Spans, store.BatchSpan{
					TraceID:       b.HexText(traceID[:]),
					SpanID:        b.HexText(spanID[:]),
					ParentSpanID:  w.spanID(sp.ParentSpanID()),
					TraceState:    b.Text(clean(sp.TraceState().AsRaw())),
					Name:          b.Text(clean(sp.Name())),
					Kind:          w.constant(kindName(sp.Kind())),
					StartNS:       int64(sp.StartTimestamp()),
					EndNS:         int64(sp.EndTimestamp()),
					StatusCode:    w.constant(statusName(sp.Status().Code())),
					StatusMessage: b.Text(clean(sp.Status().Message())),
					ServiceName:   service,
					ScopeName:     scopeName,
					ScopeVersion:  scopeVersion,
					Attributes:    w.attrs(sp.Attributes()),
					ResourceID:    resourceID,
					Events:        w.events(sp.Events()),
					Links:         w.links(sp.Links()),
					Offset:        offset,
				})
			}
		}
	}
	return out
}

// presized returns empty attribute, event and link slices with room for
// every one td holds.
func presized(td ptrace.Traces) ([]store.Attr, []store.Event, []store.Link) {
	var attrs, events, links int
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		attrs += rss.At(i).Resource().Attributes().Len()
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				attrs += sp.Attributes().Len()
				evs, ls := sp.Events(), sp.Links()
				events, links = events+evs.Len(), links+ls.Len()
				for e := 0; e < evs.Len(); e++ {
					attrs += evs.At(e).Attributes().Len()
				}
				for l := 0; l < ls.Len(); l++ {
					attrs += ls.At(l).Attributes().Len()
				}
			}
		}
	}
	return make([]store.Attr, 0, attrs), make([]store.Event, 0, events), make([]store.Link, 0, links)
}

// check quarantines spans no analysis could trust.
func check(sp ptrace.Span, offset int64, lim Limits) (model.Rejection, bool) {
	return checkSpan(sp.TraceID(), sp.SpanID(), sp.ParentSpanID(), uint64(sp.StartTimestamp()), uint64(sp.EndTimestamp()), offset, lim)
}

// checkSpan is check of a span's ids and times.
func checkSpan(traceID pcommon.TraceID, spanID, parent pcommon.SpanID, startU, endU uint64, offset int64, lim Limits) (model.Rejection, bool) {
	start, end := int64(startU), int64(endU)
	reason, detail := "", ""
	switch {
	case traceID.IsEmpty():
		reason, detail = "zero_trace_id", "span has an all-zero trace id"
	case spanID.IsEmpty():
		reason, detail = "zero_span_id", "span has an all-zero span id"
	case parent == spanID:
		reason, detail = "self_parent", "span names itself as its parent"
	case startU == 0 || endU == 0:
		reason, detail = "missing_time", "span has no start or no end time"
	case startU >= uint64(latestNS) || endU >= uint64(latestNS):
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
		TraceID: traceID.String(), SpanID: spanID.String()}, true
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

// textWriter adds attribute maps, events and links to a batch. Every
// attribute value is text (see docs/parquet.md, "Database schema"); a map
// keeps one value per key, the last, as pdata's Get does.
type textWriter struct {
	b      *store.SpanBatch
	keys   []string
	vals   []pcommon.Value
	consts map[string]store.Text
}

// constant adds one of a few fixed strings (kinds, statuses) once per batch.
func (w *textWriter) constant(s string) store.Text {
	t, ok := w.consts[s]
	if !ok {
		if w.consts == nil {
			w.consts = map[string]store.Text{}
		}
		t = w.b.Text(s)
		w.consts[s] = t
	}
	return t
}

// spanID is id in hex, or empty for the all-zero id (no parent, no link).
func (w *textWriter) spanID(id pcommon.SpanID) store.Text {
	if id.IsEmpty() {
		return store.Text{}
	}
	return w.b.HexText(id[:])
}

func (w *textWriter) traceID(id pcommon.TraceID) store.Text {
	if id.IsEmpty() {
		return store.Text{}
	}
	return w.b.HexText(id[:])
}

func (w *textWriter) attrs(m pcommon.Map) store.Range {
	keys, vals := w.keys[:0], w.vals[:0]
	m.Range(func(k string, v pcommon.Value) bool {
		keys = append(keys, k)
		vals = append(vals, v)
		return true
	})
	w.keys, w.vals = keys, vals
	dups := hasDuplicate(keys)
	first := len(w.b.Attrs)
	for i, k := range keys {
		if dups && slices.Contains(keys[i+1:], k) {
			continue
		}
		w.b.AddAttr(w.b.Text(clean(k)), w.value(vals[i]))
	}
	return w.b.AttrsSince(first)
}

func (w *textWriter) value(v pcommon.Value) store.Text {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return w.b.Text(clean(v.Str()))
	case pcommon.ValueTypeInt:
		return w.b.IntText(v.Int())
	}
	return w.b.Text(clean(v.AsString()))
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

func (w *textWriter) events(es ptrace.SpanEventSlice) store.Range {
	first := len(w.b.Events)
	for i := 0; i < es.Len(); i++ {
		e := es.At(i)
		name := w.b.Text(clean(e.Name()))
		w.b.Events = append(w.b.Events, store.Event{Name: name, TimeNS: int64(e.Timestamp()), Attributes: w.attrs(e.Attributes())})
	}
	return store.Range{Start: uint32(first), N: uint32(len(w.b.Events) - first)}
}

func (w *textWriter) links(ls ptrace.SpanLinkSlice) store.Range {
	first := len(w.b.Links)
	for i := 0; i < ls.Len(); i++ {
		l := ls.At(i)
		w.b.Links = append(w.b.Links, store.Link{TraceID: w.traceID(l.TraceID()), SpanID: w.spanID(l.SpanID()),
			Attributes: w.attrs(l.Attributes())})
	}
	return store.Range{Start: uint32(first), N: uint32(len(w.b.Links) - first)}
}
