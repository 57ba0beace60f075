package testkit

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/sim"
)

// BaseNS is the first span's start: a 19-digit nanosecond time that a
// float64 cannot hold exactly.
const BaseNS = uint64(1764374400123456789)

// Batches returns traces with n spans in all, split into batches of about
// perBatch spans, seeded and deterministic. Each trace has a root SERVER
// span (no parent), an INTERNAL span and CLIENT children with attributes of
// every type, events and links.
func Batches(seed uint64, n, perBatch int) []ptrace.Traces {
	var out []ptrace.Traces
	Generate(seed, n, perBatch, func(td ptrace.Traces) error {
		out = append(out, td)
		return nil
	})
	return out
}

// Generate makes the same traces as Batches but hands each batch to emit as
// it is made, so a million spans need not sit in memory at once.
func Generate(seed uint64, n, perBatch int, emit func(ptrace.Traces) error) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	made := 0
	for made < n {
		td := ptrace.NewTraces()
		for made < n && td.SpanCount() < perBatch {
			made += addTrace(td, rng, made, n-made)
		}
		if err := emit(td); err != nil {
			return err
		}
	}
	return nil
}

func addTrace(td ptrace.Traces, rng *rand.Rand, index, budget int) int {
	rs := td.ResourceSpans().AppendEmpty()
	res := rs.Resource().Attributes()
	res.PutStr("service.name", fmt.Sprintf("svc-%02d", index%7))
	res.PutStr("deployment.environment", "prod")
	res.PutInt("process.pid", int64(1000+index%13))
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("io.opentelemetry.okhttp-3.0")
	ss.Scope().SetVersion("2.10.0")

	var traceID pcommon.TraceID
	fillNonZero(rng, traceID[:])
	start := BaseNS + uint64(index)*1_000_003
	root := ss.Spans().AppendEmpty()
	root.SetTraceID(traceID)
	root.SetSpanID(spanID(rng))
	root.SetName("POST /v1/answer")
	root.SetKind(ptrace.SpanKindServer)
	root.SetStartTimestamp(pcommon.Timestamp(start))
	root.SetEndTimestamp(pcommon.Timestamp(start + 900_000_001))
	root.Attributes().PutStr("http.route", "/v1/answer")
	root.Attributes().PutInt("http.response.status_code", 200)
	made := 1
	children := 1 + rng.IntN(4)
	for c := 0; c < children && made < budget; c++ {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(traceID)
		sp.SetSpanID(spanID(rng))
		sp.SetParentSpanID(root.SpanID())
		sp.SetName("POST")
		sp.SetKind(ptrace.SpanKindClient)
		s := start + uint64(c)*200_000_017 + 1
		sp.SetStartTimestamp(pcommon.Timestamp(s))
		sp.SetEndTimestamp(pcommon.Timestamp(s + 150_000_003 + uint64(rng.IntN(1000))))
		a := sp.Attributes()
		a.PutStr("http.request.method", "POST")
		a.PutStr("server.address", "api.openai.com")
		a.PutInt("http.request.resend_count", int64(c))
		a.PutDouble("retry.backoff_ms", 12.5)
		a.PutBool("gen_ai.request.stream", c%2 == 0)
		a.PutStr("note", "quote \" backslash \\ tab \t newline \n unicode é")
		hdr := a.PutEmptySlice("http.request.header.x-stainless-retry-count")
		hdr.AppendEmpty().SetStr(fmt.Sprint(c))
		if c < children-1 {
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage("503 Service Unavailable")
			a.PutInt("http.response.status_code", 503)
			a.PutStr("error.type", "503")
		} else {
			a.PutInt("http.response.status_code", 200)
			ev := sp.Events().AppendEmpty()
			ev.SetName("gen_ai.first_token")
			ev.SetTimestamp(pcommon.Timestamp(s + 50_000_000))
			ev.Attributes().PutInt("gen_ai.usage.output_tokens", 1)
		}
		if c > 0 {
			l := sp.Links().AppendEmpty()
			l.SetTraceID(traceID)
			l.SetSpanID(root.SpanID())
			l.Attributes().PutStr("link.kind", "previous_attempt")
		}
		made++
	}
	return made
}

func spanID(rng *rand.Rand) pcommon.SpanID {
	var id pcommon.SpanID
	fillNonZero(rng, id[:])
	return id
}

func fillNonZero(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	b[0] |= 1
}

// Framing is one way to write batches to a file.
type Framing struct {
	Name  string
	Write func(w io.Writer, batches []ptrace.Traces) error
}

// Framings lists every input form of docs/input.md, "What it reads".
func Framings() []Framing {
	return []Framing{
		{"json-lines", sim.WriteJSONLines},
		{"json-doc-pretty", WriteJSONDocument},
		{"proto-framed", sim.WriteProtoFramed},
		{"proto-framed-zstd", WriteProtoFramedZstd},
		{"json-framed-zstd", WriteJSONFramedZstd},
		{"proto-varint", WriteProtoVarint},
		{"proto-raw", WriteProtoRaw},
		{"json-lines.gz", Gzip(sim.WriteJSONLines)},
		{"proto-framed.zst", Zstd(sim.WriteProtoFramed)},
		{"proto-varint.gz", Gzip(WriteProtoVarint)},
		{"proto-raw.zst", Zstd(WriteProtoRaw)},
	}
}

// WriteJSONDocument writes all batches as one pretty-printed document.
func WriteJSONDocument(w io.Writer, batches []ptrace.Traces) error {
	all := Merge(batches)
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(all)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// WriteProtoFramedZstd is sim.WriteProtoFramed with compression: zstd: each
// message compressed, then framed.
func WriteProtoFramedZstd(w io.Writer, batches []ptrace.Traces) error {
	return writeFramedZstd(w, batches, false)
}

// WriteJSONFramedZstd is the file exporter's format: json with
// compression: zstd.
func WriteJSONFramedZstd(w io.Writer, batches []ptrace.Traces) error {
	return writeFramedZstd(w, batches, true)
}

func writeFramedZstd(w io.Writer, batches []ptrace.Traces, asJSON bool) error {
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	for _, td := range batches {
		var b []byte
		var err error
		if asJSON {
			b, err = (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		} else {
			b, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		}
		if err != nil {
			return err
		}
		b = enc.EncodeAll(b, nil)
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		if _, err := w.Write(append(n[:], b...)); err != nil {
			return err
		}
	}
	return nil
}

// WriteProtoVarint writes varint-delimited messages.
func WriteProtoVarint(w io.Writer, batches []ptrace.Traces) error {
	for _, td := range batches {
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(binary.AppendUvarint(nil, uint64(len(b))), b...)); err != nil {
			return err
		}
	}
	return nil
}

// WriteProtoRaw writes all batches as one undelimited message, like an
// OTLP/HTTP request body.
func WriteProtoRaw(w io.Writer, batches []ptrace.Traces) error {
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(Merge(batches))
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Gzip wraps a writer function in whole-file gzip.
func Gzip(f func(io.Writer, []ptrace.Traces) error) func(io.Writer, []ptrace.Traces) error {
	return func(w io.Writer, batches []ptrace.Traces) error {
		zw := gzip.NewWriter(w)
		if err := f(zw, batches); err != nil {
			return err
		}
		return zw.Close()
	}
}

// Zstd wraps a writer function in whole-file zstd.
func Zstd(f func(io.Writer, []ptrace.Traces) error) func(io.Writer, []ptrace.Traces) error {
	return func(w io.Writer, batches []ptrace.Traces) error {
		zw, err := zstd.NewWriter(w)
		if err != nil {
			return err
		}
		if err := f(zw, batches); err != nil {
			return err
		}
		return zw.Close()
	}
}

// Merge copies all batches into one Traces, leaving them as they were.
func Merge(batches []ptrace.Traces) ptrace.Traces {
	all := ptrace.NewTraces()
	for _, td := range batches {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			td.ResourceSpans().At(i).CopyTo(all.ResourceSpans().AppendEmpty())
		}
	}
	return all
}

// SpanCount totals the spans of all batches.
func SpanCount(batches []ptrace.Traces) int {
	n := 0
	for _, td := range batches {
		n += td.SpanCount()
	}
	return n
}

// WriteFile writes batches to path with write (sim.WriteJSONLines,
// sim.WriteProtoFramed or a Framing's Write), creating path's directory,
// and returns path. It is the one way tests put traces in a file.
func WriteFile(t testing.TB, path string, write func(io.Writer, []ptrace.Traces) error, batches []ptrace.Traces) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(f, batches); err != nil {
		f.Close()
		t.Fatalf("write %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
