package ingest

import (
	"bytes"
	"encoding/hex"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/store"
)

// The OTLP JSON that exporters write (the Collector's file exporter, the
// SDKs' OTLP/HTTP JSON) is decoded here straight into a batch, without
// building pdata's objects first: pdata's JSON decoding, the reference the
// bench measures ingest against, is most of a JSON ingest's CPU.
//
// It takes only what it can decode exactly as pdata's JSONUnmarshaler
// followed by flatten would: every field pdata knows in the order writers
// put them (a resource before its scope spans, a scope before its spans),
// each once, with string, int, double, bool and array values (of those
// four). Anything else — a field pdata does not know, a null, a map or
// bytes value, a \u escape of a surrogate, a number in a form the JSON
// grammar does not allow, JSON pdata would refuse — sends the record to
// pdata (decodeRecord), which decides: the fast path never accepts what
// pdata rejects, nor stores anything differently (TestFastJSONAsPdata
// compares the two on every JSON input the tests have).

// fastJSON decodes one record.
type fastJSON struct {
	data   []byte
	i      int
	b      *store.SpanBatch
	w      textWriter
	lim    Limits
	offset int64
	out    decoded
	// keys and vals are the entries of the attribute map being read.
	keys [][]byte
	vals []store.Text
}

// decodeJSONFast decodes rec's JSON, or returns false for decodeRecord to
// use pdata.
func decodeJSONFast(data []byte, offset int64, lim Limits) (decoded, bool) {
	// Sized as flatten sizes a batch, from the record's bytes: about 800
	// bytes of JSON a span with an SDK's attributes, 60 an attribute.
	b := store.NewSpanBatch(len(data)/800+1, len(data)/2)
	b.Attrs = make([]store.Attr, 0, len(data)/60+1)
	d := &fastJSON{data: data, b: b, w: textWriter{b: b}, lim: lim, offset: offset}
	d.out.batch = b
	if !d.request() {
		return decoded{}, false
	}
	d.ws()
	if d.i != len(d.data) {
		return decoded{}, false
	}
	return d.out, true
}

func (d *fastJSON) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\n', '\t', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, 0 at the end.
func (d *fastJSON) peek() byte {
	d.ws()
	if d.i < len(d.data) {
		return d.data[d.i]
	}
	return 0
}

func (d *fastJSON) eat(c byte) bool {
	if d.peek() != c {
		return false
	}
	d.i++
	return true
}

// field reads the next key of an object whose '{' has been read: done at
// its '}'. first says no key has been read yet.
func (d *fastJSON) field(first bool) (key []byte, done, ok bool) {
	c := d.peek()
	if c == '}' {
		d.i++
		return nil, true, true
	}
	if !first {
		if c != ',' {
			return nil, false, false
		}
		d.i++
	}
	key, escaped, ok := d.str()
	if !ok || escaped || !d.eat(':') {
		return nil, false, false
	}
	return key, false, true
}

// elem moves to the next element of an array whose '[' has been read:
// done at its ']'.
func (d *fastJSON) elem(first bool) (done, ok bool) {
	c := d.peek()
	if c == ']' {
		d.i++
		return true, true
	}
	if !first {
		if c != ',' {
			return false, false
		}
		d.i++
	}
	return false, true
}

// list reads an array, each reading one element: false as soon as one
// does.
func (d *fastJSON) list(each func() bool) bool {
	if !d.eat('[') {
		return false
	}
	for first := true; ; first = false {
		done, ok := d.elem(first)
		if !ok {
			return false
		}
		if done {
			return true
		}
		if !each() {
			return false
		}
	}
}

// object reads an object, field reading the value of each key: false as
// soon as one does (an unknown key included).
func (d *fastJSON) object(field func(key []byte) bool) bool {
	if !d.eat('{') {
		return false
	}
	for first := true; ; first = false {
		key, done, ok := d.field(first)
		if !ok {
			return false
		}
		if done {
			return true
		}
		if !field(key) {
			return false
		}
	}
}

// uint32 reads a count or flags pdata keeps and flatten does not store.
func (d *fastJSON) uint32() bool {
	_, _, ok := d.integer(false, 32)
	return ok
}

// plain marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads a string: a slice of the input when it has no escapes, else a
// copy with them undone (escaped true).
func (d *fastJSON) str() (s []byte, escaped, ok bool) {
	if d.peek() != '"' {
		return nil, false, false
	}
	d.i++
	start := d.i
	data := d.data
	for i := start; i < len(data); i++ {
		c := data[i]
		if plain[c] {
			continue
		}
		if c == '"' {
			d.i = i + 1
			return data[start:i], false, true
		}
		if c != '\\' {
			return nil, false, false // a control character: pdata's to refuse
		}
		return d.unescape(start, i)
	}
	return nil, false, false
}

// unescape reads the rest of a string with escapes, from the first one at i.
func (d *fastJSON) unescape(start, i int) ([]byte, bool, bool) {
	data := d.data
	out := append(make([]byte, 0, i-start+16), data[start:i]...)
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			d.i = i + 1
			return out, true, true
		case c < 0x20:
			return nil, false, false
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(data) {
			return nil, false, false
		}
		e := data[i+1]
		i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+4 > len(data) {
				return nil, false, false
			}
			r, err := strconv.ParseUint(string(data[i:i+4]), 16, 32)
			if err != nil || utf16.IsSurrogate(rune(r)) {
				return nil, false, false
			}
			out = utf8.AppendRune(out, rune(r))
			i += 4
		default:
			return nil, false, false
		}
	}
	return nil, false, false
}

// number reads a JSON number's text: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// followed by white space, a comma or a closing bracket.
func (d *fastJSON) number() ([]byte, bool) {
	d.ws()
	data, i := d.data, d.i
	start := i
	if i < len(data) && data[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	first := i
	if n := digits(); n == 0 || (n > 1 && data[first] == '0') {
		return nil, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if digits() == 0 {
			return nil, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	if i < len(data) {
		switch data[i] {
		case ' ', '\n', '\t', '\r', ',', '}', ']':
		default:
			return nil, false
		}
	}
	d.i = i
	return data[start:i], true
}

// integer reads an integer given as a JSON number of digits alone or as a
// string, the two forms pdata takes, parsed as pdata parses the string
// form (strconv, base 10, bits wide).
func (d *fastJSON) integer(signed bool, bits int) (int64, uint64, bool) {
	var text []byte
	if d.peek() == '"' {
		s, _, ok := d.str()
		if !ok {
			return 0, 0, false
		}
		text = s
	} else {
		n, ok := d.number()
		if !ok || bytes.IndexAny(n, ".eE") >= 0 || (!signed && n[0] == '-') {
			return 0, 0, false
		}
		text = n
	}
	if signed {
		v, err := strconv.ParseInt(string(text), 10, bits)
		return v, 0, err == nil
	}
	v, err := strconv.ParseUint(string(text), 10, bits)
	return 0, v, err == nil
}

func (d *fastJSON) uint64() (uint64, bool) {
	_, v, ok := d.integer(false, 64)
	return v, ok
}

// enum reads an enum as pdata does: its number or its name.
func (d *fastJSON) enum(names []string) (int32, bool) {
	if d.peek() == '"' {
		s, _, ok := d.str()
		if !ok {
			return 0, false
		}
		i := slices.Index(names, string(s))
		return int32(i), i >= 0
	}
	n, ok := d.number()
	if !ok || bytes.IndexAny(n, ".eE") >= 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(n), 10, 32)
	return int32(v), err == nil
}

var (
	kindNames   = []string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}
	statusNames = []string{"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"}
)

// id reads a hex id into dst: the empty string leaves it zero.
func (d *fastJSON) id(dst []byte) bool {
	s, escaped, ok := d.str()
	if !ok || escaped {
		return false
	}
	if len(s) == 0 {
		return true
	}
	if len(s) != 2*len(dst) {
		return false
	}
	_, err := hex.Decode(dst, s)
	return err == nil
}

// text reads a string into the batch, made valid UTF-8 as clean does.
func (d *fastJSON) text() (store.Text, bool) {
	s, _, ok := d.str()
	if !ok {
		return store.Text{}, false
	}
	return d.b.BytesText(cleanBytes(s)), true
}

func cleanBytes(s []byte) []byte {
	if utf8.Valid(s) {
		return s
	}
	return bytes.ToValidUTF8(s, []byte("\uFFFD"))
}

// skipString reads a string pdata keeps and flatten does not store.
func (d *fastJSON) skipString() bool {
	_, _, ok := d.str()
	return ok
}

// seen marks a field read once; false when it comes again (pdata would
// append a list or keep the last value).
func seen(mask *uint32, bit uint32) bool {
	if *mask&bit != 0 {
		return false
	}
	*mask |= bit
	return true
}

// request reads an ExportTraceServiceRequest.
func (d *fastJSON) request() bool {
	var mask uint32
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "resourceSpans", "resource_spans":
			return seen(&mask, 1) && d.list(func() bool {
				d.out.resources++
				return d.resourceSpans()
			})
		}
		return false
	}) && mask != 0 // without resourceSpans pdata says whether it is an export
}

func (d *fastJSON) resourceSpans() bool {
	var mask uint32
	res := resourceRead{}
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "resource":
			return seen(&mask, 1) && mask&2 == 0 && d.resource(&res)
		case "scopeSpans", "scope_spans":
			if !seen(&mask, 2) {
				return false
			}
			if !res.read {
				res.attrs, res.read = d.attrsEmpty(), true
			}
			return d.list(func() bool { return d.scopeSpans(&res) })
		case "schemaUrl", "schema_url":
			return seen(&mask, 4) && d.skipString()
		}
		return false
	})
}

// resourceRead is a resource as its spans need it.
type resourceRead struct {
	read    bool
	attrs   store.Range
	service store.Text
	id      int64
	added   bool
}

func (d *fastJSON) resource(res *resourceRead) bool {
	var mask uint32
	ok := d.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "attributes":
			if ok = seen(&mask, 1); ok {
				res.attrs, res.service, ok = d.attrs(true)
				res.read = true
			}
		case "droppedAttributesCount", "dropped_attributes_count":
			ok = seen(&mask, 2) && d.uint32()
		}
		return ok
	})
	if !res.read {
		res.attrs, res.read = d.attrsEmpty(), true
	}
	return ok
}

func (d *fastJSON) attrsEmpty() store.Range { return d.b.AttrsSince(len(d.b.Attrs)) }

func (d *fastJSON) scopeSpans(res *resourceRead) bool {
	var mask uint32
	var scopeName, scopeVersion store.Text
	return d.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "scope":
			if ok = seen(&mask, 1) && mask&2 == 0; ok {
				scopeName, scopeVersion, ok = d.scope()
			}
		case "spans":
			if ok = seen(&mask, 2); ok {
				if mask&1 == 0 {
					scopeName, scopeVersion = d.b.Text(""), d.b.Text("")
				}
				ok = d.list(func() bool { return d.span(res, scopeName, scopeVersion) })
			}
		case "schemaUrl", "schema_url":
			ok = seen(&mask, 4) && d.skipString()
		}
		return ok
	})
}

func (d *fastJSON) scope() (name, version store.Text, ok bool) {
	var mask uint32
	ok = d.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "name":
			if ok = seen(&mask, 1); ok {
				name, ok = d.text()
			}
		case "version":
			if ok = seen(&mask, 2); ok {
				version, ok = d.text()
			}
		case "attributes":
			// Read, as pdata reads them, and not stored, as flatten does.
			mark := len(d.b.Attrs)
			if ok = seen(&mask, 4); ok {
				_, _, ok = d.attrs(false)
			}
			d.b.Attrs = d.b.Attrs[:mark]
		case "droppedAttributesCount", "dropped_attributes_count":
			ok = seen(&mask, 8) && d.uint32()
		}
		return ok
	})
	if mask&1 == 0 {
		name = d.b.Text("")
	}
	if mask&2 == 0 {
		version = d.b.Text("")
	}
	return name, version, ok
}

// span reads a span and adds it to the batch, or its rejection.
func (d *fastJSON) span(res *resourceRead, scopeName, scopeVersion store.Text) bool {
	b := d.b
	marks := [3]int{len(b.Attrs), len(b.Events), len(b.Links)}
	var (
		mask                     uint32
		traceID                  pcommon.TraceID
		spanID, parent           pcommon.SpanID
		traceState, name, msg    store.Text
		kind, code               int32
		start, end               uint64
		attrs, events, links     store.Range
		hasAttrs, hasEv, hasLink bool
	)
	if !d.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "traceId", "trace_id":
			ok = seen(&mask, 1<<0) && d.id(traceID[:])
		case "spanId", "span_id":
			ok = seen(&mask, 1<<1) && d.id(spanID[:])
		case "parentSpanId", "parent_span_id":
			ok = seen(&mask, 1<<2) && d.id(parent[:])
		case "traceState", "trace_state":
			if ok = seen(&mask, 1<<3); ok {
				traceState, ok = d.text()
			}
		case "name":
			if ok = seen(&mask, 1<<4); ok {
				name, ok = d.text()
			}
		case "kind":
			if ok = seen(&mask, 1<<5); ok {
				kind, ok = d.enum(kindNames)
			}
		case "startTimeUnixNano", "start_time_unix_nano":
			if ok = seen(&mask, 1<<6); ok {
				start, ok = d.uint64()
			}
		case "endTimeUnixNano", "end_time_unix_nano":
			if ok = seen(&mask, 1<<7); ok {
				end, ok = d.uint64()
			}
		case "attributes":
			if ok = seen(&mask, 1<<8); ok {
				attrs, _, ok = d.attrs(false)
				hasAttrs = true
			}
		case "events":
			if ok = seen(&mask, 1<<9); ok {
				events, ok = d.events()
				hasEv = true
			}
		case "links":
			if ok = seen(&mask, 1<<10); ok {
				links, ok = d.links()
				hasLink = true
			}
		case "status":
			if ok = seen(&mask, 1<<11); ok {
				code, msg, ok = d.status()
			}
		case "flags":
			ok = seen(&mask, 1<<12) && d.uint32()
		case "droppedAttributesCount", "dropped_attributes_count":
			ok = seen(&mask, 1<<13) && d.uint32()
		case "droppedEventsCount", "dropped_events_count":
			ok = seen(&mask, 1<<14) && d.uint32()
		case "droppedLinksCount", "dropped_links_count":
			ok = seen(&mask, 1<<15) && d.uint32()
		}
		return ok
	}) {
		return false
	}
	if rej, bad := checkSpan(traceID, spanID, parent, start, end, d.offset, d.lim); bad {
		d.out.rejections = append(d.out.rejections, rej)
		b.Attrs, b.Events, b.Links = b.Attrs[:marks[0]], b.Events[:marks[1]], b.Links[:marks[2]]
		return true
	}
	if !hasAttrs {
		attrs = d.attrsEmpty()
	}
	if !hasEv {
		events = store.Range{Start: uint32(len(b.Events))}
	}
	if !hasLink {
		links = store.Range{Start: uint32(len(b.Links))}
	}
	if !res.added {
		res.id, res.added = b.AddResource(res.attrs), true
	}
	b.Spans = append(b.Spans, store.BatchSpan{
		TraceID:       b.HexText(traceID[:]),
		SpanID:        b.HexText(spanID[:]),
		ParentSpanID:  d.w.spanID(parent),
		TraceState:    traceState,
		Name:          name,
		Kind:          d.w.constant(kindName(ptrace.SpanKind(kind))),
		StartNS:       int64(start),
		EndNS:         int64(end),
		StatusCode:    d.w.constant(statusName(ptrace.StatusCode(code))),
		StatusMessage: msg,
		ServiceName:   res.service,
		ScopeName:     scopeName,
		ScopeVersion:  scopeVersion,
		Attributes:    attrs,
		ResourceID:    res.id,
		Events:        events,
		Links:         links,
		Offset:        d.offset,
	})
	return true
}

func (d *fastJSON) status() (code int32, msg store.Text, ok bool) {
	var mask uint32
	ok = d.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "message":
			if ok = seen(&mask, 1); ok {
				msg, ok = d.text()
			}
		case "code":
			if ok = seen(&mask, 2); ok {
				code, ok = d.enum(statusNames)
			}
		}
		return ok
	})
	return code, msg, ok
}

func (d *fastJSON) events() (store.Range, bool) {
	b := d.b
	firstEvent := len(b.Events)
	ok := d.list(func() bool {
		var mask uint32
		var name store.Text
		var at uint64
		attrs, hasAttrs := store.Range{}, false
		ok := d.object(func(key []byte) (ok bool) {
			switch string(key) {
			case "timeUnixNano", "time_unix_nano":
				if ok = seen(&mask, 1); ok {
					at, ok = d.uint64()
				}
			case "name":
				if ok = seen(&mask, 2); ok {
					name, ok = d.text()
				}
			case "attributes":
				if ok = seen(&mask, 4); ok {
					attrs, _, ok = d.attrs(false)
					hasAttrs = true
				}
			case "droppedAttributesCount", "dropped_attributes_count":
				ok = seen(&mask, 8) && d.uint32()
			}
			return ok
		})
		if !hasAttrs {
			attrs = d.attrsEmpty()
		}
		b.Events = append(b.Events, store.Event{Name: name, TimeNS: int64(at), Attributes: attrs})
		return ok
	})
	return store.Range{Start: uint32(firstEvent), N: uint32(len(b.Events) - firstEvent)}, ok
}

func (d *fastJSON) links() (store.Range, bool) {
	b := d.b
	firstLink := len(b.Links)
	ok := d.list(func() bool {
		var mask uint32
		var traceID pcommon.TraceID
		var spanID pcommon.SpanID
		attrs, hasAttrs := store.Range{}, false
		ok := d.object(func(key []byte) (ok bool) {
			switch string(key) {
			case "traceId", "trace_id":
				ok = seen(&mask, 1) && d.id(traceID[:])
			case "spanId", "span_id":
				ok = seen(&mask, 2) && d.id(spanID[:])
			case "traceState", "trace_state":
				ok = seen(&mask, 4) && d.skipString()
			case "attributes":
				if ok = seen(&mask, 8); ok {
					attrs, _, ok = d.attrs(false)
					hasAttrs = true
				}
			case "droppedAttributesCount", "dropped_attributes_count":
				ok = seen(&mask, 16) && d.uint32()
			case "flags":
				ok = seen(&mask, 32) && d.uint32()
			}
			return ok
		})
		if !hasAttrs {
			attrs = d.attrsEmpty()
		}
		b.Links = append(b.Links, store.Link{TraceID: d.w.traceID(traceID), SpanID: d.w.spanID(spanID), Attributes: attrs})
		return ok
	})
	return store.Range{Start: uint32(firstLink), N: uint32(len(b.Links) - firstLink)}, ok
}

// attrs reads an attribute map and adds its entries, one per key (the
// last), as textWriter.attrs does; with service, also the value of its
// first service.name, as pdata's Get finds it.
func (d *fastJSON) attrs(service bool) (store.Range, store.Text, bool) {
	var svc store.Text
	keys, vals := d.keys[:0], d.vals[:0]
	if !d.list(func() bool {
		key, val, ok := d.keyValue()
		if service && string(key) == "service.name" && !slices.ContainsFunc(keys, func(k []byte) bool { return string(k) == "service.name" }) {
			svc = val
		}
		keys, vals = append(keys, key), append(vals, val)
		return ok
	}) {
		return store.Range{}, svc, false
	}
	d.keys, d.vals = keys, vals
	dups := false
	for i := 1; i < len(keys) && !dups; i++ {
		for j := 0; j < i; j++ {
			if bytes.Equal(keys[i], keys[j]) {
				dups = true
				break
			}
		}
	}
	first := len(d.b.Attrs)
	for i, k := range keys {
		if dups && slices.ContainsFunc(keys[i+1:], func(l []byte) bool { return bytes.Equal(k, l) }) {
			continue
		}
		d.b.AddAttr(d.b.BytesText(cleanBytes(k)), vals[i])
	}
	return d.b.AttrsSince(first), svc, true
}

// keyValue reads one {"key": ..., "value": ...}, the value added to the
// batch as its text.
func (d *fastJSON) keyValue() (key []byte, val store.Text, ok bool) {
	var mask uint32
	ok = d.object(func(k []byte) (ok bool) {
		switch string(k) {
		case "key":
			if ok = seen(&mask, 1); ok {
				key, _, ok = d.str()
			}
		case "value":
			if ok = seen(&mask, 2); ok {
				var v anyVal
				if v, ok = d.anyValue(true); ok {
					val = d.valueText(v)
				}
			}
		}
		return ok
	})
	// A pair without a key or a value is pdata's to decide.
	return key, val, ok && mask == 3
}

// anyVal is one AnyValue read: a string, an int, a double, a bool, or (at
// the top) an array of those as pdata's AsString writes it.
type anyVal struct {
	kind byte // 's', 'i', 'd', 'b', 'a'
	s    []byte
	i    int64
	f    float64
	t    bool
}

func (d *fastJSON) anyValue(top bool) (anyVal, bool) {
	var v anyVal
	if !d.eat('{') {
		return v, false
	}
	key, done, ok := d.field(true)
	if !ok || done {
		return v, false // an empty value is pdata's to decide
	}
	switch string(key) {
	case "stringValue", "string_value":
		v.kind = 's'
		v.s, _, ok = d.str()
	case "intValue", "int_value":
		v.kind = 'i'
		v.i, _, ok = d.integer(true, 64)
	case "doubleValue", "double_value":
		v.kind = 'd'
		v.f, ok = d.double()
	case "boolValue", "bool_value":
		v.kind = 'b'
		v.t, ok = d.boolean()
	case "arrayValue", "array_value":
		if !top {
			return v, false
		}
		v.kind = 'a'
		v.s, ok = d.array()
	default:
		return v, false
	}
	if !ok {
		return v, false
	}
	_, done, ok = d.field(false)
	return v, ok && done // a second field is pdata's to decide
}

// double reads a double as pdata does: a JSON number or a string, parsed
// by strconv (jsoniter's quicker path for short decimals gives the same
// float64: the digits and the power of ten are both exact).
func (d *fastJSON) double() (float64, bool) {
	var text []byte
	if d.peek() == '"' {
		s, _, ok := d.str()
		if !ok {
			return 0, false
		}
		text = s
	} else {
		n, ok := d.number()
		if !ok {
			return 0, false
		}
		text = n
	}
	f, err := strconv.ParseFloat(string(text), 64)
	return f, err == nil
}

func (d *fastJSON) boolean() (bool, bool) {
	switch d.peek() {
	case 't':
		if bytes.HasPrefix(d.data[d.i:], []byte("true")) {
			d.i += 4
			return true, true
		}
	case 'f':
		if bytes.HasPrefix(d.data[d.i:], []byte("false")) {
			d.i += 5
			return false, true
		}
	}
	return false, false
}

// array reads an ArrayValue and writes it as pdata's AsString does: JSON
// of its values.
func (d *fastJSON) array() ([]byte, bool) {
	var vals []anyVal
	var mask uint32
	if !d.object(func(key []byte) bool {
		return string(key) == "values" && seen(&mask, 1) && d.list(func() bool {
			v, ok := d.anyValue(false)
			vals = append(vals, v)
			return ok
		})
	}) {
		return nil, false
	}
	// Strings of printable ASCII other than a quote or a backslash are
	// written as they are; anything else as pdata writes it.
	out := []byte{'['}
	for i, v := range vals {
		if v.kind != 's' || !printable(v.s) {
			return arrayText(vals), true
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(append(out, '"'), v.s...), '"')
	}
	return append(out, ']'), true
}

func printable(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// arrayText is pdata's AsString of the array.
func arrayText(vals []anyVal) []byte {
	v := pcommon.NewValueSlice()
	sl := v.Slice()
	sl.EnsureCapacity(len(vals))
	for _, x := range vals {
		e := sl.AppendEmpty()
		switch x.kind {
		case 's':
			e.SetStr(string(x.s))
		case 'i':
			e.SetInt(x.i)
		case 'd':
			e.SetDouble(x.f)
		case 'b':
			e.SetBool(x.t)
		}
	}
	return []byte(v.AsString())
}

// valueText adds a value's text as textWriter.value does.
func (d *fastJSON) valueText(v anyVal) store.Text {
	switch v.kind {
	case 's':
		return d.b.BytesText(cleanBytes(v.s))
	case 'i':
		return d.b.IntText(v.i)
	case 'b':
		return d.b.Text(strconv.FormatBool(v.t))
	case 'd':
		return d.b.Text(pcommon.NewValueDouble(v.f).AsString())
	}
	return d.b.BytesText(cleanBytes(v.s)) // an array's JSON
}
