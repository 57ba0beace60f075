package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit"
)

// benchDir keeps generated dumps between benchmark runs; they are large.
var benchDir = filepath.Join(os.TempDir(), "retryscope-bench")

// benchDump writes (once) a dump of n spans in the given framing.
func benchDump(b *testing.B, framing string, n int) string {
	b.Helper()
	path := filepath.Join(benchDir, fmt.Sprintf("%s-%d", framing, n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	os.MkdirAll(benchDir, 0o755)
	f, err := os.Create(path + ".part")
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	write := sim.WriteProtoFramed
	if framing == "json" {
		write = sim.WriteJSONLines
	}
	err = testkit.Generate(7, n, 500, func(td ptrace.Traces) error { return write(w, []ptrace.Traces{td}) })
	if err == nil {
		err = w.Flush()
	}
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(path+".part", path); err != nil {
		b.Fatal(err)
	}
	return path
}

// buildBinary builds retryscope once per benchmark process.
func buildBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(benchDir, "retryscope")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkIngest runs the real binary on generated dumps and reports its
// throughput and peak resident memory (the child's maxrss), so the memory
// figure is the whole process, DuckDB included.
//
//	go test -run '^$' -bench Ingest -benchtime 1x ./cmd/retryscope
func BenchmarkIngest(b *testing.B) {
	bin := buildBinary(b)
	for _, framing := range []string{"proto", "json"} {
		for _, n := range []int{100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/spans=%d", framing, n), func(b *testing.B) {
				dump := benchDump(b, framing, n)
				var maxRSS int64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					db := filepath.Join(b.TempDir(), "bench.duckdb")
					cmd := exec.Command(bin, "ingest", "-q", "--db", db, dump)
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("ingest: %v\n%s", err, out)
					}
					if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > maxRSS {
						maxRSS = ru.Maxrss
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
				b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MB")
			})
		}
	}
}

// BenchmarkDecodeReference is the yardstick for BenchmarkIngest: pdata's
// own decoding of the same dump, on one core, with nothing stored.
func BenchmarkDecodeReference(b *testing.B) {
	for _, framing := range []string{"proto", "json"} {
		b.Run(framing, func(b *testing.B) {
			const n = 100_000
			var msgs [][]byte
			testkit.Generate(7, n, 500, func(td ptrace.Traces) error {
				var m []byte
				if framing == "json" {
					m, _ = (&ptrace.JSONMarshaler{}).MarshalTraces(td)
				} else {
					m, _ = (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
				}
				msgs = append(msgs, m)
				return nil
			})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, m := range msgs {
					var err error
					if framing == "json" {
						_, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(m)
					} else {
						_, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(m)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}
