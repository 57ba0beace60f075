package ingest_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/testkit"
)

// TestRawProtobufSkipsUnknownFields is issue 34's eighth night: a raw
// OTLP/protobuf body (one undelimited ExportTraceServiceRequest) with one
// top-level field this version does not know was rejected whole as
// not_otlp, every span lost, though the same field inside framed files or
// spans was accepted. Protobuf requires unknown fields to be skipped; now
// they are, wherever they stand and whatever their wire type.
func TestRawProtobufSkipsUnknownFields(t *testing.T) {
	batches := testkit.Batches(5, 80, 20)
	want := int64(testkit.SpanCount(batches))
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(testkit.Merge(batches))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string][]byte{
		"varint field 15":           {0x78, 0x01},
		"length-delimited field 2":  {0x12, 0x03, 'a', 'b', 'c'},
		"64-bit field 3":            {0x19, 1, 2, 3, 4, 5, 6, 7, 8},
		"32-bit field 4":            {0x25, 1, 2, 3, 4},
		"field 1000 (two-byte tag)": {0xc0, 0x3e, 0x07},
	}
	dir := t.TempDir()
	for name, field := range fields {
		for _, where := range []string{"after", "before"} {
			t.Run(name+" "+where, func(t *testing.T) {
				var raw []byte
				if where == "after" {
					raw = append(append(raw, body...), field...)
				} else {
					raw = append(append(raw, field...), body...)
				}
				p := writeFile(t, dir, filepath.Base(t.Name())+".pb", func(w *bytes.Buffer) { w.Write(raw) })
				st := testkit.Open(t)
				sum, log := run(t, st, p)
				tot := sum.Totals()
				if spansNew, rejected := tot.SpansNew, tot.Rejected; spansNew != want || rejected != 0 {
					t.Errorf("%d of %d spans stored, %d rejected (%v)\n%s", spansNew, want, rejected, sum.Rejected, log)
				}
			})
		}
	}
}
