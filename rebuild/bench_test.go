package rebuild_test

import (
	"context"
	"testing"

	"github.com/retryscope/retryscope/internal/testkit/workload"
	"github.com/retryscope/retryscope/rebuild"
)

// BenchmarkRebuild times a full rebuild of a generated workload of every
// shape: the span facts in SQL, reading them back, grouping and measuring
// in Go, and writing requests and attempts.
//
//	go test -run '^$' -bench Rebuild -benchtime 5x ./rebuild
func BenchmarkRebuild(b *testing.B) {
	st, truth := workload.Bench(b)
	ctx := context.Background()
	for b.Loop() {
		if err := rebuild.Rebuild(ctx, st); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(truth.Requests))*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
}
