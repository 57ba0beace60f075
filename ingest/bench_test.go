package ingest

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

const benchSpans = 100_000

// benchRecords is benchSpans generated spans as records of 500 spans, the
// way a decoder gets them.
func benchRecords(b *testing.B, asJSON bool) []record {
	b.Helper()
	var recs []record
	err := testkit.Generate(7, benchSpans, 500, func(td ptrace.Traces) error {
		var m []byte
		var err error
		if asJSON {
			m, err = (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		} else {
			m, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		}
		recs = append(recs, record{data: m, json: asJSON})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return recs
}

// BenchmarkDecodeFlatten is a decoder's work per record: pdata's unmarshal
// and the flattening into a span batch for protobuf ("proto") and for
// JSON records pdata decodes ("json-pdata"), the direct decoding of JSON
// lines ("json"). Compare with cmd/retryscope's BenchmarkDecodeReference,
// the unmarshal alone.
func BenchmarkDecodeFlatten(b *testing.B) {
	for _, format := range []string{"proto", "json", "json-pdata"} {
		b.Run(format, func(b *testing.B) {
			recs := benchRecords(b, format != "proto")
			decode := decodeRecord
			if format == "json-pdata" {
				decode = decodePdata
			}
			if format == "json" {
				for _, r := range recs {
					if _, ok := decodeJSONFast(r.data, r.offset, DefaultLimits); !ok {
						b.Fatal("a record pdata wrote is left to pdata")
					}
				}
			}
			for b.Loop() {
				for _, r := range recs {
					if d := decode(r, DefaultLimits); len(d.rejections) > 0 {
						b.Fatal(d.rejections[0].Detail)
					}
				}
			}
			b.ReportMetric(float64(benchSpans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}

// BenchmarkLoad is the store's work for decoded spans: staging the batches
// and merging them into spans, in a fresh database ("new", a plain load)
// and again in a second file that repeats them all ("repeated", the
// careful merge).
func BenchmarkLoad(b *testing.B) {
	var batches []*store.SpanBatch
	for _, r := range benchRecords(b, false) {
		batches = append(batches, decodeRecord(r, DefaultLimits).batch)
	}
	ctx := context.Background()
	load := func(st *store.Store, path string) {
		tx, err := st.BeginFile(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		for _, bt := range batches {
			if err := tx.Add(bt); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := tx.Commit(store.FileInfo{Path: path, SHA256: path}, nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, repeated := range []bool{false, true} {
		name := map[bool]string{false: "new", true: "repeated"}[repeated]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				st := testkit.Open(b)
				if _, err := st.SetThreads(ctx, 1); err != nil { // as the CLI ingests
					b.Fatal(err)
				}
				if repeated {
					load(st, "first")
				}
				b.StartTimer()
				load(st, "second")
				b.StopTimer()
				st.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(benchSpans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}
