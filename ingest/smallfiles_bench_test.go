package ingest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// BenchmarkSmallFiles ingests a directory of one-span files, as a
// Collector with rotation leaves them: what it measures is the cost of a
// file, not of a span. 20,000 files by default (RETRYSCOPE_BENCH_FILES
// sets another number); the documented run is
//
//	go test ./ingest -run '^$' -bench BenchmarkSmallFiles -benchtime 1x
//
// and it reports files/s and ms/file besides the time of the whole run.
func BenchmarkSmallFiles(b *testing.B) {
	n := 20_000
	if v := os.Getenv("RETRYSCOPE_BENCH_FILES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("RETRYSCOPE_BENCH_FILES=%q: want a number of files", v)
		}
	}
	dir := b.TempDir()
	one := oneSpanEach(testkit.Batches(11, n, 1))[:n]
	var m ptrace.JSONMarshaler
	for i, td := range one {
		data, err := m.MarshalTraces(td)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("traces-%06d.json", i)), append(data, '\n'), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		// As the CLI ingests: one DuckDB thread, 128MB.
		st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "t.duckdb"), store.Options{MemoryLimit: "128MB", Threads: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		sum, err := ingest.Run(context.Background(), st, []string{dir}, ingest.Options{Quiet: true})
		if err != nil {
			b.Fatal(err)
		}
		tot := sum.Totals()
		if ingested, spansNew, rejected := tot.Ingested, tot.SpansNew, tot.Rejected; ingested != n || spansNew != int64(len(one)) || rejected != 0 {
			b.Fatalf("%d files, %d spans, %d rejected; want %d files, %d spans", ingested, spansNew, rejected, n, len(one))
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
	perRun := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(n)/perRun, "files/s")
	b.ReportMetric(perRun*1000/float64(n), "ms/file")
}

// oneSpanEach splits batches into traces of one span each, with the span's
// resource and scope.
func oneSpanEach(batches []ptrace.Traces) []ptrace.Traces {
	var out []ptrace.Traces
	for _, td := range batches {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					one := ptrace.NewTraces()
					ors := one.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(ors.Resource())
					oss := ors.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(oss.Scope())
					ss.Spans().At(k).CopyTo(oss.Spans().AppendEmpty())
					out = append(out, one)
				}
			}
		}
	}
	return out
}
