package ingest_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// writeFile writes bytes a test makes by hand, such as hostile input;
// traces go to files through testkit.WriteFile.
func writeFile(t *testing.T, dir, name string, f func(w *bytes.Buffer)) string {
	t.Helper()
	var buf bytes.Buffer
	f(&buf)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, st *store.Store, paths ...string) (ingest.Summary, string) {
	t.Helper()
	var log bytes.Buffer
	sum, err := ingest.Run(context.Background(), st, paths, ingest.Options{Log: &log})
	if err != nil {
		t.Fatalf("ingest: %v\n%s", err, log.String())
	}
	return sum, log.String()
}

// Every framing of the same traces ingests to the same spans table.
func TestEveryFramingIngestsIdentically(t *testing.T) {
	batches := testkit.Batches(1, 600, 50)
	want := testkit.SpanCount(batches)
	dir := t.TempDir()
	var reference string
	for _, fr := range testkit.Framings() {
		t.Run(fr.Name, func(t *testing.T) {
			p := testkit.WriteFile(t, filepath.Join(dir, fr.Name), fr.Write, batches)
			st := testkit.Open(t)
			sum, log := run(t, st, p)
			tot := sum.Totals()
			if spans, spansNew, rejected := tot.Spans, tot.SpansNew, tot.Rejected; spans != int64(want) || spansNew != int64(want) || rejected != 0 {
				t.Fatalf("spans %d new %d rejected %d, want %d, 0 rejected\n%s", spans, spansNew, rejected, want, log)
			}
			got := testkit.DumpSpans(t, st)
			if reference == "" {
				reference = got
				return
			}
			if got != reference {
				t.Errorf("spans table differs from the json-lines one:\n%s", testkit.FirstDiff(reference, got))
			}
		})
	}
}

// The stored values are the ones written, with 19-digit times exact and
// attribute values readable by key.
func TestValuesSurvive(t *testing.T) {
	batches := testkit.Batches(2, 40, 40)
	dir := t.TempDir()
	p := testkit.WriteFile(t, filepath.Join(dir, "a.jsonl"), sim.WriteJSONLines, batches)
	st := testkit.Open(t)
	run(t, st, p)
	first := batches[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	got := testkit.Dump(t, st, `SELECT start_ns, end_ns, parent_span_id IS NULL, kind, service_name FROM spans WHERE span_id = $1`, first.SpanID().String())
	want := "1764374400123456789\t1764374401023456790\ttrue\tserver\tsvc-00\n"
	if got != want {
		t.Errorf("root span: got %q, want %q", got, want)
	}
	got = testkit.Dump(t, st, `SELECT events[1].name, events[1].time_ns - start_ns, events[1].attributes['gen_ai.usage.output_tokens']
		FROM spans WHERE len(events) > 0 ORDER BY start_ns LIMIT 1`)
	if want := "gen_ai.first_token\t50000000\t1\n"; got != want {
		t.Errorf("event: got %q, want %q", got, want)
	}
	got = testkit.Dump(t, st, `SELECT attributes['http.request.header.x-stainless-retry-count'], attributes['note'], attributes['gen_ai.request.stream'],
		attributes['retry.backoff_ms'], links[1].attributes['link.kind']
		FROM spans WHERE kind = 'client' AND attributes['http.request.resend_count'] = '1' ORDER BY start_ns LIMIT 1`)
	want = "[\"1\"]\tquote \" backslash \\ tab \t newline \n unicode é\tfalse\t12.5\tprevious_attempt\n"
	if got != want {
		t.Errorf("attributes: got %q, want %q", got, want)
	}
}

// Exporters differ in how they write 64-bit integers and optional fields.
func TestJSONExporterQuirks(t *testing.T) {
	const line = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"quirks"}}]},` +
		`"scopeSpans":[{"scope":{"name":"s"},"spans":[` +
		`{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"root","kind":2,` +
		`"startTimeUnixNano":"1764374400123456789","endTimeUnixNano":"1764374400999999999",` +
		`"attributes":[{"key":"http.response.status_code","value":{"intValue":429}}],"status":{"code":2,"message":"rate limited"}},` +
		`{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203332","parentSpanId":"b7ad6b7169203331","name":"child","kind":3,` +
		`"startTimeUnixNano":1764374400123456790,"endTimeUnixNano":1764374400123456799,` +
		`"attributes":[{"key":"http.request.resend_count","value":{"intValue":"2"}},{"key":"retry.count","value":{"intValue":"9007199254740993"}}]}` +
		`]}]}]}`
	dir := t.TempDir()
	p := filepath.Join(dir, "quirks.json")
	os.WriteFile(p, []byte(line+"\n"), 0o644)
	st := testkit.Open(t)
	sum, log := run(t, st, p)
	tot := sum.Totals()
	if spans, rejected := tot.Spans, tot.Rejected; spans != 2 || rejected != 0 {
		t.Fatalf("spans %d rejected %d\n%s", spans, rejected, log)
	}
	got := testkit.Dump(t, st, `SELECT span_id, coalesce(parent_span_id, '-'), kind, start_ns, end_ns, status_code, status_message,
		coalesce(attributes['http.response.status_code'], '-'), coalesce(attributes['http.request.resend_count'], '-'), coalesce(attributes['retry.count'], '-')
		FROM spans ORDER BY span_id`)
	want := "b7ad6b7169203331\t-\tserver\t1764374400123456789\t1764374400999999999\terror\trate limited\t429\t-\t-\n" +
		"b7ad6b7169203332\tb7ad6b7169203331\tclient\t1764374400123456790\t1764374400123456799\tunset\t<nil>\t-\t2\t9007199254740993\n"
	if got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

// A dump full of damage ingests every good record, reports every bad one
// with file and offset, and counts them.
func TestBadInputLosesNothingElse(t *testing.T) {
	batches := testkit.Batches(3, 300, 30) // 10 batches
	perBatch := make([]int, len(batches))
	for i, b := range batches {
		perBatch[i] = b.SpanCount()
	}
	dir := t.TempDir()

	// JSON lines with a garbage line in the middle and a truncated last line.
	var lines bytes.Buffer
	sim.WriteJSONLines(&lines, batches[:5])
	garbageAt := lines.Len()
	lines.WriteString("this is not json {\n")
	sim.WriteJSONLines(&lines, batches[5:8])
	truncAt := lines.Len()
	var last bytes.Buffer
	sim.WriteJSONLines(&last, batches[8:9])
	lines.Write(last.Bytes()[:last.Len()/2])
	os.WriteFile(filepath.Join(dir, "damaged.jsonl"), lines.Bytes(), 0o644)
	jsonGood := sum(perBatch[:8])

	// Length-prefixed proto with one corrupt message body.
	var framed bytes.Buffer
	sim.WriteProtoFramed(&framed, batches[:3])
	corruptAt := framed.Len()
	bad := bytes.Repeat([]byte{0xff}, 40)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(bad)))
	framed.Write(n[:])
	framed.Write(bad)
	sim.WriteProtoFramed(&framed, batches[3:6])
	os.WriteFile(filepath.Join(dir, "corrupt.pb"), framed.Bytes(), 0o644)
	protoGood := sum(perBatch[:6])

	// A whole-file zstd stream cut short; large enough to hold several
	// compressed blocks, of which the complete ones are kept.
	big := testkit.Batches(7, 4000, 100)
	var zbuf bytes.Buffer
	testkit.Zstd(sim.WriteProtoFramed)(&zbuf, big)
	os.WriteFile(filepath.Join(dir, "cut.pb.zst"), zbuf.Bytes()[:zbuf.Len()*2/3], 0o644)

	os.WriteFile(filepath.Join(dir, "empty.json"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "README.txt"), []byte("Traces exported nightly by the collector.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte("{\"name\": \"not-traces\"}\n"), 0o644)

	st := testkit.Open(t)
	s, log := run(t, st, dir)
	tot := s.Totals()
	spans, rejected := tot.Spans, tot.Rejected
	for _, want := range []string{
		"damaged.jsonl:" + strconv.Itoa(garbageAt) + ": bad_json",
		"damaged.jsonl:" + strconv.Itoa(truncAt) + ": truncated",
		"corrupt.pb:" + strconv.Itoa(corruptAt) + ": bad_protobuf",
		"cut.pb.zst:",
		"empty.json: the file is empty",
		"README.txt:0: not_otlp",
		"package.json:0: not_otlp",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	cutSpans := testkit.Count(t, st, `SELECT count(*) FROM spans s JOIN ingest_files f USING (file_id) WHERE f.path LIKE '%cut.pb.zst'`)
	if cutSpans == 0 || cutSpans >= int64(testkit.SpanCount(big)) {
		t.Errorf("cut zstd file: %d spans kept, want some but not all %d", cutSpans, testkit.SpanCount(big))
	}
	if want := int64(jsonGood+protoGood) + cutSpans; spans != want {
		t.Errorf("spans read %d, want %d", spans, want)
	}
	if rejected != 7 {
		t.Errorf("rejected %d, want 7: %v", rejected, s.Rejected)
	}
	if got := testkit.Count(t, st, `SELECT count(*) FROM ingest_errors`); got != 7 {
		t.Errorf("ingest_errors has %d rows, want 7", got)
	}
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// Spans with impossible values are quarantined with their reason.
func TestImpossibleSpansQuarantined(t *testing.T) {
	batches := testkit.Batches(4, 20, 20)
	spans := batches[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	spans.At(1).SetEndTimestamp(spans.At(1).StartTimestamp() - 5)
	if spans.Len() < 3 {
		t.Fatal("fixture too small")
	}
	spans.At(2).SetStartTimestamp(1)
	dir := t.TempDir()
	p := testkit.WriteFile(t, filepath.Join(dir, "q.pb"), sim.WriteProtoFramed, batches)
	st := testkit.Open(t)
	s, log := run(t, st, p)
	if s.Rejected["end_before_start"] != 1 || s.Rejected["absurd_time"] != 1 {
		t.Errorf("rejections %v\n%s", s.Rejected, log)
	}
	if got := testkit.Count(t, st, `SELECT count(*) FROM spans`); got != int64(testkit.SpanCount(batches)-2) {
		t.Errorf("stored %d spans", got)
	}
	if got := testkit.Count(t, st, `SELECT count(*) FROM ingest_errors WHERE span_id = $1`, spans.At(1).SpanID().String()); got != 1 {
		t.Errorf("quarantined span not in ingest_errors")
	}
}

// The same file twice counts once; two files sharing spans store each once.
func TestIdempotent(t *testing.T) {
	batches := testkit.Batches(5, 400, 40)
	dir := t.TempDir()
	a := testkit.WriteFile(t, filepath.Join(dir, "a.jsonl"), sim.WriteJSONLines, batches)
	overlap := testkit.WriteFile(t, filepath.Join(dir, "b.pb"), sim.WriteProtoFramed, batches[3:])

	once := testkit.Open(t)
	run(t, once, a)
	twice := testkit.Open(t)
	run(t, twice, a)
	s, log := run(t, twice, a)
	if skipped := s.Totals().Skipped; skipped != 1 || !strings.Contains(log, "skipped, already ingested") {
		t.Errorf("second ingest not skipped:\n%s", log)
	}
	if testkit.DumpSpans(t, once) != testkit.DumpSpans(t, twice) {
		t.Error("ingesting twice changed the spans table")
	}
	s, _ = run(t, twice, overlap)
	tot := s.Totals()
	if spans, spansNew := tot.Spans, tot.SpansNew; spansNew != 0 || spans == 0 {
		t.Errorf("overlapping file: %d spans, %d new; want all already stored", spans, spansNew)
	}
	if got := testkit.Count(t, twice, `SELECT count(*) FROM spans`); got != int64(testkit.SpanCount(batches)) {
		t.Errorf("spans stored %d, want %d", got, testkit.SpanCount(batches))
	}
	// Each resource is stored once, however many spans, records and files
	// bring it, and only while a span refers to it.
	const resources = `SELECT resource_id, attributes::VARCHAR FROM resources ORDER BY resource_id`
	if a, b := testkit.Dump(t, once, resources), testkit.Dump(t, twice, resources); a != b {
		t.Errorf("the overlapping file changed the resources: %s", testkit.FirstDiff(a, b))
	}
	for _, st := range []*store.Store{once, twice} {
		if n := testkit.Count(t, st, `SELECT count(*) FROM resources`); n < 2 || n != testkit.Count(t, st, `SELECT count(DISTINCT resource_id) FROM resources`) {
			t.Errorf("%d resources, want several, each once", n)
		}
		if n := testkit.Count(t, st, `SELECT count(*) FROM resources WHERE resource_id NOT IN (SELECT resource_id FROM spans)`); n != 0 {
			t.Errorf("%d resources no span refers to", n)
		}
		if n := testkit.Count(t, st, `SELECT count(*) FROM spans WHERE resource_id NOT IN (SELECT resource_id FROM resources)`); n != 0 {
			t.Errorf("%d spans whose resource is not stored", n)
		}
	}
}

// Stdin is read like a file, and its content is remembered too.
func TestStdin(t *testing.T) {
	batches := testkit.Batches(6, 100, 25)
	var buf bytes.Buffer
	testkit.Gzip(testkit.WriteProtoVarint)(&buf, batches)
	st := testkit.Open(t)
	for i := 0; i < 2; i++ {
		s, err := ingest.Run(context.Background(), st, []string{"-"}, ingest.Options{Stdin: bytes.NewReader(buf.Bytes())})
		if err != nil {
			t.Fatal(err)
		}
		tot := s.Totals()
		skipped, spansNew := tot.Skipped, tot.SpansNew
		if i == 0 && spansNew != int64(testkit.SpanCount(batches)) {
			t.Errorf("stdin: %d new spans", spansNew)
		}
		if i == 1 && skipped != 1 {
			t.Errorf("stdin again: not skipped")
		}
	}
}
