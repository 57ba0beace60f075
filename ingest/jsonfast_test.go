package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
)

// render writes out everything a decoded record stores, by value.
func render(d decoded) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "resources %d\n", d.resources)
	for _, r := range d.rejections {
		fmt.Fprintf(&sb, "rejected %+v\n", r)
	}
	b := d.batch
	if b == nil {
		return sb.String()
	}
	attrs := func(r store.Range) string {
		var parts []string
		for _, a := range b.Attrs[r.Start : r.Start+r.N] {
			parts = append(parts, fmt.Sprintf("%q=%q", b.String(a.Key), b.String(a.Value)))
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	resources := map[int64]string{}
	for _, r := range b.Resources {
		resources[r.ID] = attrs(r.Attributes)
		fmt.Fprintf(&sb, "resource %d %s\n", r.ID, resources[r.ID])
	}
	for _, s := range b.Spans {
		fmt.Fprintf(&sb, "span %s %s %q %q %q %s %d %d %s %q service=%q scope=%q@%q offset=%d\n",
			b.String(s.TraceID), b.String(s.SpanID), b.String(s.ParentSpanID), b.String(s.TraceState), b.String(s.Name),
			b.String(s.Kind), s.StartNS, s.EndNS, b.String(s.StatusCode), b.String(s.StatusMessage),
			b.String(s.ServiceName), b.String(s.ScopeName), b.String(s.ScopeVersion), s.Offset)
		fmt.Fprintf(&sb, "  attrs %s\n  resource %d %s\n", attrs(s.Attributes), s.ResourceID, resources[s.ResourceID])
		for _, e := range b.Events[s.Events.Start : s.Events.Start+s.Events.N] {
			fmt.Fprintf(&sb, "  event %q %d %s\n", b.String(e.Name), e.TimeNS, attrs(e.Attributes))
		}
		for _, l := range b.Links[s.Links.Start : s.Links.Start+s.Links.N] {
			fmt.Fprintf(&sb, "  link %q %q %s\n", b.String(l.TraceID), b.String(l.SpanID), attrs(l.Attributes))
		}
	}
	return sb.String()
}

// compareFast decodes each JSON record of data both ways: whatever the fast
// path takes, it must store exactly as pdata and flatten do, and it must
// never take a record pdata refuses. It returns how many records there
// were and how many the fast path took.
func compareFast(t *testing.T, name string, data []byte) (records, fast int) {
	t.Helper()
	s, err := openStream(bytes.NewReader(data), func() int64 { return 0 }, -1, DefaultLimits)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer s.close()
	for {
		rec, err := s.next()
		if errors.Is(err, io.EOF) {
			return records, fast
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !rec.json || rec.problem != nil {
			continue
		}
		records++
		got, ok := decodeJSONFast(rec.data, rec.offset, DefaultLimits)
		if !ok {
			continue
		}
		fast++
		want := decodePdata(rec, DefaultLimits)
		if want.batch == nil {
			t.Errorf("%s at %d: the fast path took a record pdata refuses: %+v", name, rec.offset, want.rejections)
			continue
		}
		if g, w := render(got), render(want); g != w {
			t.Errorf("%s at %d: the fast path stores\n%s\npdata and flatten\n%s", name, rec.offset, clip([]byte(g), 3000), clip([]byte(w), 3000))
		}
	}
}

// TestFastJSONAsPdata: on every JSON trace file the tests have (the
// sample, the real clients' fixtures and corpora, the scenarios, a gen dump
// with an SDK's attribute load) the fast path stores what pdata does, and
// takes every record of those exporters' output.
func TestFastJSONAsPdata(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../testdata/sample/*.jsonl", "../testdata/fixtures/*/*.jsonl", "../testdata/scenarios/*/*.jsonl",
		"../testdata/corpora/*/traces.jsonl.zst", "testdata/*.jsonl", "testdata/*.json"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d JSON files found", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		records, fast := compareFast(t, f, data)
		// The bad-input scenarios and hostile files hold records pdata
		// refuses or the fast path leaves to it; every other file is what
		// exporters write, and takes the fast path whole.
		if records == 0 {
			continue
		}
		if strings.Contains(f, "rejections") || strings.HasPrefix(f, "testdata/") {
			t.Logf("%s: %d of %d records decoded fast", f, fast, records)
			continue
		}
		if fast != records {
			t.Errorf("%s: %d of %d records decoded fast, want all", f, fast, records)
		}
	}
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.SDKAttributes = 2000, true
	res, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := sim.WriteJSONLines(&buf, res.Traces); err != nil {
		t.Fatal(err)
	}
	if records, fast := compareFast(t, "gen", buf.Bytes()); records == 0 || fast != records {
		t.Errorf("gen: %d of %d records decoded fast, want all", fast, records)
	}
}

// TestFastJSONEdges: the forms pdata accepts beyond what exporters write,
// and input it refuses, each either decoded as pdata decodes it or left to
// pdata.
func TestFastJSONEdges(t *testing.T) {
	const ids = `"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174"`
	span := func(fields string) string {
		return `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"api"}}]},` +
			`"scopeSpans":[{"scope":{"name":"s","version":"1"},"spans":[{` + fields + `}]}]}]}`
	}
	times := `"startTimeUnixNano":"1700000000000000000","endTimeUnixNano":1700000000500000000`
	cases := map[string]struct {
		json string
		fast bool // the fast path must take it
	}{
		"plain":            {span(ids + `,"name":"GET","kind":3,` + times), true},
		"snake case":       {`{"resource_spans":[{"scope_spans":[{"spans":[{"trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b174","start_time_unix_nano":1700000000000000000,"end_time_unix_nano":"1700000000000000001"}]}]}]}`, true},
		"enum names":       {span(ids + `,"kind":"SPAN_KIND_SERVER","status":{"code":"STATUS_CODE_ERROR","message":"boom"},` + times), true},
		"unknown enum":     {span(ids + `,"kind":"SPAN_KIND_NOPE",` + times), false},
		"enum number high": {span(ids + `,"kind":9,"status":{"code":7},` + times), true},
		"escapes":          {span(ids + `,"name":"a\"b\\c\/d\n\t\u00e9\u4e2d",` + times), true},
		"surrogate pair":   {span(ids + `,"name":"\ud83d\ude00",` + times), false},
		"control char":     {span(ids + ",\"name\":\"a\x01b\"," + times), false},
		"invalid utf8":     {span(ids + ",\"name\":\"a\xffb\",\"attributes\":[{\"key\":\"k\xfe\",\"value\":{\"stringValue\":\"v\xc3\"}}]," + times), true},
		"values":           {span(ids + `,"attributes":[{"key":"s","value":{"stringValue":"x"}},{"key":"i","value":{"intValue":"-42"}},{"key":"j","value":{"intValue":7}},{"key":"d","value":{"doubleValue":0.1}},{"key":"e","value":{"doubleValue":1e21}},{"key":"f","value":{"doubleValue":"NaN"}},{"key":"g","value":{"doubleValue":123456789.123456789}},{"key":"b","value":{"boolValue":true}},{"key":"c","value":{"boolValue":false}}],` + times), true},
		"arrays":           {span(ids + `,"attributes":[{"key":"a","value":{"arrayValue":{"values":[{"stringValue":"x"},{"stringValue":"y z"}]}}},{"key":"m","value":{"arrayValue":{"values":[{"intValue":"1"},{"doubleValue":2.5},{"boolValue":true},{"stringValue":"<é\"\n>"}]}}},{"key":"e","value":{"arrayValue":{}}},{"key":"n","value":{"arrayValue":{"values":[]}}}],` + times), true},
		"nested array":     {span(ids + `,"attributes":[{"key":"a","value":{"arrayValue":{"values":[{"arrayValue":{}}]}}}],` + times), false},
		"kvlist":           {span(ids + `,"attributes":[{"key":"a","value":{"kvlistValue":{"values":[]}}}],` + times), false},
		"bytes":            {span(ids + `,"attributes":[{"key":"a","value":{"bytesValue":"aGk="}}],` + times), false},
		"empty value":      {span(ids + `,"attributes":[{"key":"a","value":{}}],` + times), false},
		"two values":       {span(ids + `,"attributes":[{"key":"a","value":{"stringValue":"x","intValue":"1"}}],` + times), false},
		"duplicate keys":   {span(ids + `,"attributes":[{"key":"a","value":{"stringValue":"1"}},{"key":"b","value":{"stringValue":"2"}},{"key":"a","value":{"stringValue":"3"}}],` + times), true},
		"service twice":    {`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"one"}},{"key":"service.name","value":{"intValue":"2"}}]},"scopeSpans":[{"spans":[{` + ids + `,` + times + `}]}]}]}`, true},
		"unknown field":    {span(ids + `,"extra":1,` + times), false},
		"field twice":      {span(ids + `,"name":"a","name":"b",` + times), false},
		"null":             {span(ids + `,"attributes":null,` + times), false},
		"events links":     {span(ids + `,"events":[{"timeUnixNano":"1700000000100000000","name":"retry","attributes":[{"key":"n","value":{"intValue":"2"}}]},{"name":"x"}],"links":[{"traceId":"5b8efff798038103d269b633813fc60d","spanId":"eee19b7ec3c1b175","attributes":[{"key":"l","value":{"boolValue":true}}],"flags":256},{}],` + times), true},
		"dropped counts":   {span(ids + `,"droppedAttributesCount":3,"droppedEventsCount":"1","droppedLinksCount":0,"flags":1,"traceState":"k=v",` + times), true},
		"scope attributes": {`{"resourceSpans":[{"scopeSpans":[{"scope":{"name":"n","attributes":[{"key":"x","value":{"stringValue":"y"}}],"droppedAttributesCount":1},"spans":[{` + ids + `,` + times + `}]}],"schemaUrl":"u"}]}`, true},
		"zero trace id":    {span(`"traceId":"","spanId":"eee19b7ec3c1b174",` + times), true},
		"self parent":      {span(ids + `,"parentSpanId":"eee19b7ec3c1b174",` + times), true},
		"end before":       {span(ids + `,"startTimeUnixNano":"1700000000500000000","endTimeUnixNano":"1700000000000000000"`), true},
		"no time":          {span(ids), true},
		"seconds":          {span(ids + `,"startTimeUnixNano":1700000000,"endTimeUnixNano":1700000001`), true},
		"short id":         {span(`"traceId":"5b8e","spanId":"eee19b7ec3c1b174",` + times), false},
		"bad hex":          {span(`"traceId":"zz8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",` + times), false},
		"float time":       {span(ids + `,"startTimeUnixNano":1.7e18,"endTimeUnixNano":1700000000500000000`), false},
		"leading zero":     {span(ids + `,"startTimeUnixNano":01700000000000000000,"endTimeUnixNano":1700000000500000000`), false},
		"negative time":    {span(ids + `,"startTimeUnixNano":"-1","endTimeUnixNano":1700000000500000000`), false},
		"big int":          {span(ids + `,"attributes":[{"key":"i","value":{"intValue":"9223372036854775808"}}],` + times), false},
		"white space":      {" {\n \"resourceSpans\" : [ { \"scopeSpans\" : [ { \"spans\" : [ { " + ids + " , " + times + " } ] } ] } ] }\r\n", true},
		"trailing comma":   {span(ids + `,` + times + `,`), false},
		"trailing bytes":   {span(ids+`,`+times) + `x`, false},
		"no export":        {`{"foo":[]}`, false},
		"empty export":     {`{"resourceSpans":[]}`, true},
		"resource after":   {`{"resourceSpans":[{"scopeSpans":[],"resource":{}}]}`, false},
		"scope after":      {`{"resourceSpans":[{"scopeSpans":[{"spans":[],"scope":{}}]}]}`, false},
		"resource alone":   {`{"resourceSpans":[{"resource":{"attributes":[{"key":"a","value":{"stringValue":"b"}}]}},{}]}`, true},
		"deprecated":       {`{"resourceSpans":[{"deprecatedScopeSpans":[]}]}`, false},
	}
	for name, c := range cases {
		data := []byte(c.json)
		got, ok := decodeJSONFast(data, 7, DefaultLimits)
		if c.fast != ok {
			t.Errorf("%s: fast path took it %v, want %v", name, ok, c.fast)
		}
		if !ok {
			continue
		}
		want := decodePdata(record{offset: 7, data: data, json: true}, DefaultLimits)
		if g, w := render(got), render(want); g != w {
			t.Errorf("%s: the fast path stores\n%s\npdata and flatten\n%s", name, g, w)
		}
	}
}

// TestFastJSONTruncated: a record cut short anywhere is left to pdata,
// which refuses it as bad JSON.
func TestFastJSONTruncated(t *testing.T) {
	var buf bytes.Buffer
	if err := sim.WriteJSONLines(&buf, seedBatches()[1][:1]); err != nil {
		t.Fatal(err)
	}
	line := bytes.TrimSpace(buf.Bytes())
	if _, ok := decodeJSONFast(line, 0, DefaultLimits); !ok {
		t.Fatal("the whole record is left to pdata")
	}
	for n := range len(line) {
		if _, ok := decodeJSONFast(line[:n], 0, DefaultLimits); ok {
			t.Fatalf("the first %d of %d bytes decoded fast", n, len(line))
		}
		if want := decodePdata(record{data: line[:n], json: true}, DefaultLimits); want.batch != nil && n > 0 {
			t.Fatalf("pdata took the first %d of %d bytes", n, len(line))
		}
	}
}

// FuzzFastJSON: for any input the fast path takes, pdata takes it too and
// it is stored the same.
func FuzzFastJSON(f *testing.F) {
	for _, b := range seedBatches() {
		for _, line := range bytes.Split(encode(sim.WriteJSONLines, b), []byte("\n")) {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := decodeJSONFast(data, 0, DefaultLimits)
		if !ok {
			return
		}
		want := decodePdata(record{data: data, json: true}, DefaultLimits)
		if want.batch == nil {
			t.Fatalf("the fast path took what pdata refuses: %+v", want.rejections)
		}
		if g, w := render(got), render(want); g != w {
			t.Fatalf("the fast path stores\n%s\npdata and flatten\n%s", g, w)
		}
	})
}
