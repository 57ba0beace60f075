package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

func runWith(t *testing.T, st *store.Store, opt ingest.Options, paths ...string) (ingest.Summary, string) {
	t.Helper()
	var log bytes.Buffer
	opt.Log = &log
	sum, err := ingest.Run(context.Background(), st, paths, opt)
	if err != nil {
		t.Fatalf("ingest: %v\n%s", err, log.String())
	}
	return sum, log.String()
}

// prettyDocument is batches as one JSON document, indented by indent per
// level, as a hand-made or whitespace-padded fixture would be.
func prettyDocument(t *testing.T, batches []ptrace.Traces, indent string) []byte {
	t.Helper()
	var doc, out bytes.Buffer
	if err := testkit.WriteJSONDocument(&doc, batches); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&out, doc.Bytes(), "", indent); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// A pretty-printed document is gathered without its whitespace, so padding
// costs no memory; one over the document limit is rejected with a reason,
// and the next file is still read.
func TestPrettyDocumentBounded(t *testing.T) {
	batches := testkit.Batches(21, 200, 50)
	dir := t.TempDir()
	padded := prettyDocument(t, batches, strings.Repeat(" ", 400))
	small := writeFile(t, dir, "a-padded.json", func(w *bytes.Buffer) { w.Write(padded) })
	st := testkit.Open(t)
	// The padded document is 40x over the limit, its content well under.
	lim := ingest.Limits{MaxDocumentBytes: int64(len(padded)) / 40}
	s, log := runWith(t, st, ingest.Options{Limits: lim}, small)
	tot := s.Totals()
	if spans, rejected := tot.Spans, tot.Rejected; spans != int64(testkit.SpanCount(batches)) || rejected != 0 {
		t.Fatalf("padded document: %d spans, %d rejected, want %d, 0\n%s", spans, rejected, testkit.SpanCount(batches), log)
	}

	big := testkit.Batches(22, 2000, 500)
	var doc, compact bytes.Buffer
	testkit.WriteJSONDocument(&doc, big)
	json.Compact(&compact, doc.Bytes())
	over := writeFile(t, dir, "b-over.json", func(w *bytes.Buffer) { w.Write(prettyDocument(t, big, "  ")) })
	next := testkit.WriteFile(t, filepath.Join(dir, "c-next.jsonl"), sim.WriteJSONLines, testkit.Batches(23, 30, 30))
	st = testkit.Open(t)
	lim = ingest.Limits{MaxDocumentBytes: int64(compact.Len()) / 2}
	s, log = runWith(t, st, ingest.Options{Limits: lim}, over, next)
	if s.Rejected["document_too_large"] != 1 {
		t.Errorf("rejections %v, want one document_too_large\n%s", s.Rejected, log)
	}
	if got := testkit.Count(t, st, `SELECT count(*) FROM ingest_errors WHERE reason = 'document_too_large' AND path = $1`, over); got != 1 {
		t.Errorf("document_too_large rows for %s: %d, want 1", over, got)
	}
	if got := testkit.Count(t, st, `SELECT count(*) FROM spans`); got != 30 {
		t.Errorf("spans stored %d, want the next file's 30", got)
	}
}

// A compressed file that expands beyond the ratio (past the floor) is
// rejected with a reason after a bounded read; the next file is read.
func TestExpansionBounded(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	sim.WriteJSONLines(zw, testkit.Batches(28, 10, 10))
	blank := bytes.Repeat([]byte("\n"), 1<<20)
	for range 64 {
		zw.Write(blank)
	}
	zw.Close()
	bomb := filepath.Join(dir, "a-blank.jsonl.gz")
	if err := os.WriteFile(bomb, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	next := testkit.WriteFile(t, filepath.Join(dir, "b-next.jsonl"), sim.WriteJSONLines, testkit.Batches(24, 30, 30))
	st := testkit.Open(t)
	lim := ingest.Limits{MaxExpansion: 100, ExpansionFloor: 4 << 20}
	s, log := runWith(t, st, ingest.Options{Limits: lim}, bomb, next)
	if s.Rejected["expansion_limit"] != 1 {
		t.Errorf("rejections %v, want one expansion_limit\n%s", s.Rejected, log)
	}
	if f := s.Files[0]; f.Path != bomb || f.Rejected["expansion_limit"] != 1 {
		t.Errorf("first file %+v", f)
	}
	if got := testkit.Count(t, st, `SELECT count(*) FROM spans`); got != 40 {
		t.Errorf("spans stored %d, want the bomb's first line's 10 and the next file's 30", got)
	}
	if got := testkit.Count(t, st, `SELECT coalesce(max("offset"), -1) FROM ingest_errors WHERE reason = 'expansion_limit'`); got < 0 || got > 16<<20 {
		t.Errorf("expansion_limit found at offset %d: read too far", got)
	}
}

// Links to files and to directories inside a scanned directory are
// followed; a link loop is not followed forever, and a file reached twice
// is read once.
func TestSymlinksFollowed(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "store")
	scan := filepath.Join(root, "scan")
	os.MkdirAll(filepath.Join(target, "sub"), 0o755)
	os.MkdirAll(scan, 0o755)
	testkit.WriteFile(t, filepath.Join(target, "a.jsonl"), sim.WriteJSONLines, testkit.Batches(25, 20, 20))
	testkit.WriteFile(t, filepath.Join(filepath.Join(target, "sub"), "b.pb"), sim.WriteProtoFramed, testkit.Batches(26, 30, 30))
	for link, target := range map[string]string{
		"today.jsonl": filepath.Join(target, "a.jsonl"),
		"again.jsonl": filepath.Join(target, "a.jsonl"),
		"subdir":      filepath.Join(target, "sub"),
		"loop":        scan,
	} {
		if err := os.Symlink(target, filepath.Join(scan, link)); err != nil {
			t.Fatal(err)
		}
	}
	st := testkit.Open(t)
	s, log := run(t, st, scan)
	if ingested := s.Totals().Ingested; ingested != 2 {
		t.Errorf("%d files read, want 2 (a.jsonl once, sub/b.pb)\n%s", ingested, log)
	}
	if got := testkit.Count(t, st, `SELECT count(*) FROM spans`); got != 50 {
		t.Errorf("spans stored %d, want 50", got)
	}
}

// Times past 2200 are quarantined, so report and export never disagree
// about a span near the end of int64 nanoseconds; a span that is its own
// parent is quarantined too.
func TestImpossibleTimesAndParents(t *testing.T) {
	batches := testkit.Batches(27, 20, 20)
	spans := batches[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	spans.At(0).SetStartTimestamp(9223372035854775807)
	spans.At(0).SetEndTimestamp(9223372035854775807)
	spans.At(1).SetParentSpanID(spans.At(1).SpanID())
	p := testkit.WriteFile(t, filepath.Join(t.TempDir(), "q.jsonl"), sim.WriteJSONLines, batches)
	st := testkit.Open(t)
	s, log := run(t, st, p)
	if s.Rejected["absurd_time"] != 1 || s.Rejected["self_parent"] != 1 {
		t.Errorf("rejections %v, want absurd_time 1 and self_parent 1\n%s", s.Rejected, log)
	}
}

// A line break in a file name is quoted in the log, so it cannot forge a
// line.
func TestPathQuotedInLog(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "evil\nretryscope: all good.jsonl", func(w *bytes.Buffer) { w.WriteString("not json\n") })
	st := testkit.Open(t)
	_, log := run(t, st, p)
	if strings.Contains(log, "\nretryscope: all good") || !strings.Contains(log, `evil\nretryscope`) {
		t.Errorf("log prints the name raw:\n%s", log)
	}
}

// The same span (trace id, span id) re-sent in another file with another
// start time is stored once: the first copy wins, and the conflict is a
// row of ingest_errors. An exact repeat is no conflict.
func TestResentSpanStoredOnce(t *testing.T) {
	batches := testkit.Batches(29, 20, 20)
	dir := t.TempDir()
	first := testkit.WriteFile(t, filepath.Join(dir, "a.jsonl"), sim.WriteJSONLines, batches)
	repeat := testkit.WriteFile(t, filepath.Join(dir, "b.pb"), sim.WriteProtoFramed, batches)
	sp := batches[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	start := sp.StartTimestamp()
	sp.SetStartTimestamp(start + 1)
	moved := testkit.WriteFile(t, filepath.Join(dir, "c.jsonl"), sim.WriteJSONLines, batches)

	st := testkit.Open(t)
	s, log := run(t, st, first, repeat, moved)
	if s.Rejected["duplicate_conflict"] != 1 || len(s.Rejected) != 1 {
		t.Errorf("rejections %v, want one duplicate_conflict\n%s", s.Rejected, log)
	}
	want := int64(testkit.SpanCount(batches))
	if got := testkit.Count(t, st, `SELECT count(*) FROM spans`); got != want {
		t.Errorf("spans stored %d, want %d", got, want)
	}
	if got := testkit.Count(t, st, `SELECT start_ns FROM spans WHERE span_id = $1`, sp.SpanID().String()); got != int64(start) {
		t.Errorf("stored start %d, want the first copy's %d", got, start)
	}
	got := testkit.Dump(t, st, `SELECT path, reason, span_id FROM ingest_errors`)
	if wantRow := moved + "\tduplicate_conflict\t" + sp.SpanID().String() + "\n"; got != wantRow {
		t.Errorf("ingest_errors:\n%s\nwant:\n%s", got, wantRow)
	}
	if got := testkit.Count(t, st, `SELECT rejected FROM ingest_files WHERE path = $1`, moved); got != 1 {
		t.Errorf("ledger counts %d rejected for %s, want 1", got, moved)
	}
}
