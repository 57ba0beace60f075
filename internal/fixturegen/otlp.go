package main

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/sim"
)

// This file only encodes, batches and writes; nothing here decides what a
// fixture contains. The expected truth is written next to the traces by
// each scenario.

const (
	kindInternal = ptrace.SpanKindInternal
	kindServer   = ptrace.SpanKindServer
	kindClient   = ptrace.SpanKindClient

	statusUnset = ptrace.StatusCodeUnset
	statusOK    = ptrace.StatusCodeOk
	statusError = ptrace.StatusCodeError
)

// msNS is nanoseconds in a millisecond.
const msNS = 1_000_000

// ms turns milliseconds into integer nanoseconds, rounding half to even.
func ms(x float64) int64 {
	return int64(math.RoundToEven(x * msNS))
}

// nsToMS is a nanosecond difference in milliseconds, as a float.
func nsToMS(ns int64) float64 {
	return float64(ns) / msNS
}

// round3 rounds to three decimals, correctly rounded from the binary value.
func round3(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 3, 64), 64)
	return v
}

// ids draws trace and span ids and sub-millisecond noise from one seeded
// generator, in the order a fixture's scenarios ask for them.
type ids struct{ r *pyRandom }

func newIDs(seed uint32) ids { return ids{newPyRandom(seed)} }

func (g ids) trace() string                { return g.r.hex(4) }
func (g ids) span() string                 { return g.r.hex(2) }
func (g ids) uniform(a, b float64) float64 { return g.r.uniform(a, b) }

// attr is one attribute, in the order the instrumentation sets it. The
// value is a bool, int, float64, string or []string.
type attr struct {
	key   string
	value any
}

type event struct {
	at    int64
	name  string
	attrs []attr
}

type scope struct{ name, version string }

// span is a span as a scenario builds it: parent, end and attributes are
// often filled in after its children are made.
type span struct {
	res             string // resource key
	scope           scope
	traceID, spanID string
	parent          string // "" for a root
	name            string
	kind            ptrace.SpanKind
	start, end      int64 // ns
	attrs           []attr
	events          []event
	status          ptrace.StatusCode
	statusMsg       string
	lost            bool // never ended, so never exported
}

func (s *span) key() string { return s.traceID + ":" + s.spanID }

// setAttr replaces the value of an attribute the span already has.
func (s *span) setAttr(key string, value any) {
	for i := range s.attrs {
		if s.attrs[i].key == key {
			s.attrs[i].value = value
		}
	}
}

func putAttrs(m pcommon.Map, attrs []attr) {
	for _, a := range attrs {
		switch v := a.value.(type) {
		case bool:
			m.PutBool(a.key, v)
		case int:
			m.PutInt(a.key, int64(v))
		case float64:
			m.PutDouble(a.key, v)
		case string:
			m.PutStr(a.key, v)
		case []string:
			sl := m.PutEmptySlice(a.key)
			for _, e := range v {
				sl.AppendEmpty().SetStr(e)
			}
		default:
			panic(fmt.Sprintf("attribute %s: value %#v", a.key, a.value))
		}
	}
}

func hexID(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func (s *span) copyTo(out ptrace.Span) {
	out.SetTraceID(pcommon.TraceID(hexID(s.traceID)))
	out.SetSpanID(pcommon.SpanID(hexID(s.spanID)))
	if s.parent != "" {
		out.SetParentSpanID(pcommon.SpanID(hexID(s.parent)))
	}
	out.SetName(s.name)
	out.SetKind(s.kind)
	out.SetStartTimestamp(pcommon.Timestamp(s.start))
	out.SetEndTimestamp(pcommon.Timestamp(s.end))
	putAttrs(out.Attributes(), s.attrs)
	for _, e := range s.events {
		oe := out.Events().AppendEmpty()
		oe.SetTimestamp(pcommon.Timestamp(e.at))
		oe.SetName(e.name)
		putAttrs(oe.Attributes(), e.attrs)
	}
	out.Status().SetCode(s.status)
	out.Status().SetMessage(s.statusMsg)
}

// exportOptions shape the batching of exportBatches.
type exportOptions struct {
	// firstTick is, per resource key, the time of that processor's first
	// tick; by default the start of the span that ended first.
	firstTick map[string]int64
	// merge lists groups of resource keys whose exports falling on the
	// same tick are merged into one request, as a Collector batch
	// processor in front of the file exporter would do.
	merge [][]string
}

// exportDelay is the BatchSpanProcessor's default schedule.
const exportDelay = 5_000_000_000

type batch struct {
	tick  int64
	res   string
	spans []*span
}

// exportBatches simulates one BatchSpanProcessor per resource (process):
// every 5 s it exports the spans that ended since the last export, in the
// order they ended. A span that was never ended is dropped, as the SDK never
// sees it. Each returned batch is one line of the file.
func exportBatches(spans []*span, resources map[string][]attr, opt exportOptions) []ptrace.Traces {
	var resOrder []string
	byRes := map[string][]*span{}
	for _, s := range spans {
		if s.lost {
			continue
		}
		if _, seen := byRes[s.res]; !seen {
			resOrder = append(resOrder, s.res)
		}
		byRes[s.res] = append(byRes[s.res], s)
	}
	var batches []batch
	for _, res := range resOrder {
		ss := byRes[res]
		slices.SortStableFunc(ss, func(a, b *span) int {
			return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(a.start, b.start))
		})
		first, set := opt.firstTick[res]
		if !set {
			first = ss[0].start
		}
		var cur *batch
		for _, s := range ss {
			tick := first + max(0, ceilDiv(s.end-first, exportDelay))*exportDelay
			if cur == nil || cur.tick != tick {
				batches = append(batches, batch{tick: tick, res: res})
				cur = &batches[len(batches)-1]
			}
			cur.spans = append(cur.spans, s)
		}
	}
	slices.SortStableFunc(batches, func(a, b batch) int {
		return cmp.Or(cmp.Compare(a.tick, b.tick), cmp.Compare(a.res, b.res))
	})
	var out []ptrace.Traces
	lastTick, lastGroup := int64(-1), -1
	for _, b := range batches {
		group := -1
		for i, g := range opt.merge {
			if slices.Contains(g, b.res) {
				group = i
			}
		}
		if len(out) == 0 || group < 0 || b.tick != lastTick || group != lastGroup {
			out = append(out, ptrace.NewTraces())
		}
		lastTick, lastGroup = b.tick, group
		appendResource(out[len(out)-1], resources[b.res], b.spans)
	}
	return out
}

// appendResource adds one resource's spans, grouped by scope in the order
// the scopes first appear.
func appendResource(td ptrace.Traces, resource []attr, spans []*span) {
	rs := td.ResourceSpans().AppendEmpty()
	putAttrs(rs.Resource().Attributes(), resource)
	var scopes []scope
	byScope := map[scope][]*span{}
	for _, s := range spans {
		if _, seen := byScope[s.scope]; !seen {
			scopes = append(scopes, s.scope)
		}
		byScope[s.scope] = append(byScope[s.scope], s)
	}
	for _, sc := range scopes {
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(sc.name)
		ss.Scope().SetVersion(sc.version)
		for _, s := range byScope[sc] {
			s.copyTo(ss.Spans().AppendEmpty())
		}
	}
}

// ceilDiv is a/b rounded up, for b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b > 0 {
		q++
	}
	return q
}

// writeFixture writes dir/traces.jsonl with the one OTLP/JSON lines writer
// and dir/expected.json beside it.
func writeFixture(dir string, batches []ptrace.Traces, expected object) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "traces.jsonl"))
	if err != nil {
		return err
	}
	if err := sim.WriteJSONLines(f, batches); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "expected.json"), encodeIndented(expected), 0o644)
}

// latency says how an expected request's latency is measured.
type latency struct {
	anchor *span // the span whose duration it is; nil: first attempt start to last attempt end
}

// request is one expected logical request. key is the anchor span (the
// first attempt when no logical span is exported); attempts are the
// physical attempt spans in start order; alt the other spans that stand
// 1:1 for it; extra the documentation keys that follow the fixed ones.
func request(key *span, attempts []*span, layers []any, outcome string, triggers []string, route, finalRoute any,
	lat latency, alt []*span, extra object) object {
	var latencyMS float64
	var basis string
	if lat.anchor != nil {
		latencyMS = nsToMS(lat.anchor.end - lat.anchor.start)
		basis = "anchor span duration"
	} else {
		lo, hi := attempts[0].start, attempts[0].end
		for _, a := range attempts {
			lo, hi = min(lo, a.start), max(hi, a.end)
		}
		latencyMS = nsToMS(hi - lo)
		basis = "first attempt start to last attempt end"
	}
	attemptIDs := make([]any, len(attempts))
	for i, a := range attempts {
		attemptIDs[i] = a.spanID
	}
	if triggers == nil {
		triggers = []string{}
	}
	d := object{
		{"key", key.key()},
		{"attempts", len(attempts)},
		{"layers", layers},
		{"outcome", outcome},
		{"latency_ms", round3(latencyMS)},
		{"latency_basis", basis},
		{"triggers", triggers},
		{"route", route},
		{"final_route", finalRoute},
		{"attempt_span_ids", attemptIDs},
	}
	if len(alt) > 0 {
		keys := make([]any, len(alt))
		for i, s := range alt {
			keys[i] = s.key()
		}
		d = d.set("alt_keys", keys)
	}
	for _, f := range extra {
		d = d.set(f.key, f.value)
	}
	return d
}

// layers builds an expected request's layers list.
func layers(v ...any) []any { return v }

// backoff is the gap between one attempt's end and the next one's start,
// in milliseconds to three decimals.
func backoff(prev, next *span) float64 {
	return round3(nsToMS(next.start - prev.end))
}
