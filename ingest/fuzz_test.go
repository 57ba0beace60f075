package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit"
)

// The fuzz targets feed every reader arbitrary bytes and check what any
// input must get: no panic, an end, every byte accounted for by a record or
// a problem, records no larger than the limits, and offsets that only grow.
// `go test` runs their seeds and testdata/fuzz; `go test -fuzz FuzzX` explores.

// fuzzLimits are small, so the fuzzer reaches them.
var fuzzLimits = Limits{MaxDocumentBytes: 64 << 10, MaxExpansion: 20, ExpansionFloor: 256 << 10}

// readAll reads a stream to its end the way ingest does, decoding every
// record, and checks the invariants.
func readAll(t *testing.T, data []byte) {
	var consumed int64
	cr := countingReader{bytes.NewReader(data), &consumed}
	s, err := openStream(cr, func() int64 { return consumed }, -1, fuzzLimits)
	if err != nil {
		return // a bad compression header: rejected as corrupt_compression
	}
	defer s.close()
	last := int64(-1)
	for n := 0; ; n++ {
		rec, err := s.next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("next: %v (only io.EOF may end a stream)", err)
		}
		if n > 4*len(data)+1<<20 {
			t.Fatalf("more than %d records from %d bytes: no progress", n, len(data))
		}
		if rec.offset < last && rec.problem == nil {
			t.Fatalf("record at offset %d after one at %d", rec.offset, last)
		}
		last = max(last, rec.offset)
		if rec.problem == nil && rec.json && s.detected == FormatJSONDoc && int64(len(rec.data)) > fuzzLimits.MaxDocumentBytes {
			t.Fatalf("document of %d bytes passed the %d limit", len(rec.data), fuzzLimits.MaxDocumentBytes)
		}
		if len(rec.data) > MaxRecordBytes {
			t.Fatalf("record of %d bytes", len(rec.data))
		}
		d := decodeRecord(rec, DefaultLimits)
		if rec.problem != nil && len(d.rejections) != 1 {
			t.Fatalf("a framing problem gave %d rejections", len(d.rejections))
		}
		for _, sp := range spansOf(d) {
			if sp.EndNS < sp.StartNS || sp.StartNS < earliestNS || sp.EndNS >= latestNS || sp.SpanID == sp.ParentSpanID {
				t.Fatalf("impossible span stored: %+v", sp)
			}
		}
	}
}

// span is what the fuzz tests check of a decoded span.
type span struct {
	StartNS, EndNS       int64
	SpanID, ParentSpanID string
}

func spansOf(d decoded) []span {
	if d.batch == nil {
		return nil
	}
	out := make([]span, d.batch.Len())
	for i, sp := range d.batch.Spans {
		out[i] = span{sp.StartNS, sp.EndNS, d.batch.String(sp.SpanID), d.batch.String(sp.ParentSpanID)}
	}
	return out
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func seedBatches() [][]ptrace.Traces {
	return [][]ptrace.Traces{testkit.Batches(1, 3, 3), testkit.Batches(2, 8, 4)}
}

func encode(f func(io.Writer, []ptrace.Traces) error, b []ptrace.Traces) []byte {
	var buf bytes.Buffer
	f(&buf, b)
	return buf.Bytes()
}

func FuzzJSONLines(f *testing.F) {
	for _, b := range seedBatches() {
		f.Add(encode(sim.WriteJSONLines, b))
	}
	f.Add([]byte("{\"resourceSpans\":[]}\n\n{\n"))
	f.Add([]byte("{}\r\n{\"a\":\"\\\"}\"}\n"))
	f.Fuzz(readAll)
}

func FuzzJSONDocument(f *testing.F) {
	for _, b := range seedBatches() {
		var out bytes.Buffer
		json.Indent(&out, encode(testkit.WriteJSONDocument, b), "", "    ")
		f.Add(out.Bytes())
	}
	f.Add([]byte("{\n\"resourceSpans\": [\n\n\n   ]\n}\n"))
	f.Add([]byte("{\n  \"a\": \"}\n\"\n"))
	f.Fuzz(readAll)
}

func FuzzProtoFramed(f *testing.F) {
	for _, b := range seedBatches() {
		f.Add(encode(sim.WriteProtoFramed, b))
		f.Add(encode(testkit.WriteJSONFramedZstd, b))
	}
	f.Add([]byte{0, 0, 0, 2, 0x0a, 0})
	f.Fuzz(readAll)
}

// FuzzProtoFramedZstd frames arbitrary messages, each zstd-compressed, so the
// fuzzer explores what lies inside valid frames.
func FuzzProtoFramedZstd(f *testing.F) {
	enc, _ := zstd.NewWriter(nil)
	for _, b := range seedBatches() {
		f.Add(encode(sim.WriteProtoFramed, b)[4:], uint8(1))
	}
	f.Add([]byte{0x0a, 0x00, 0x0a}, uint8(3))
	f.Fuzz(func(t *testing.T, payload []byte, parts uint8) {
		var framed bytes.Buffer
		n := int(parts%8) + 1
		for i := range n {
			msg := payload[i*len(payload)/n : (i+1)*len(payload)/n]
			z := enc.EncodeAll(msg, nil)
			framed.Write(binary.BigEndian.AppendUint32(nil, uint32(len(z))))
			framed.Write(z)
		}
		readAll(t, framed.Bytes())
	})
}

func FuzzProtoVarint(f *testing.F) {
	for _, b := range seedBatches() {
		f.Add(encode(testkit.WriteProtoVarint, b))
	}
	f.Add([]byte{0x02, 0x0a, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(readAll)
}

func FuzzProtoRaw(f *testing.F) {
	for _, b := range seedBatches() {
		f.Add(encode(testkit.WriteProtoRaw, b))
	}
	f.Fuzz(readAll)
}

// FuzzGzip reads the input both as it is (a damaged gzip stream) and
// gzipped (arbitrary content inside a valid one).
func FuzzGzip(f *testing.F) {
	for _, b := range seedBatches() {
		f.Add(encode(testkit.Gzip(sim.WriteJSONLines), b), false)
		f.Add(encode(testkit.WriteProtoVarint, b), true)
	}
	f.Add(bytes.Repeat([]byte("\n"), 4096), true)
	f.Fuzz(func(t *testing.T, data []byte, wrap bool) {
		if wrap {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(data)
			zw.Close()
			data = buf.Bytes()
		}
		readAll(t, data)
	})
}

// FuzzZstd is FuzzGzip for whole-file zstd.
func FuzzZstd(f *testing.F) {
	enc, _ := zstd.NewWriter(nil)
	for _, b := range seedBatches() {
		f.Add(encode(testkit.Zstd(sim.WriteProtoFramed), b), false)
		f.Add(encode(sim.WriteJSONLines, b), true)
	}
	f.Add(bytes.Repeat([]byte(" "), 4096), true)
	f.Fuzz(func(t *testing.T, data []byte, wrap bool) {
		if wrap {
			data = enc.EncodeAll(data, nil)
		}
		readAll(t, data)
	})
}
