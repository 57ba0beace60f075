package baseline

import (
	"context"
	"testing"

	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// BenchmarkKinds times each baseline kind on its own, over the rebuilt
// requests of a generated workload, after the shared input is read; the
// derive's cost per kind, for the work on a full derive's speed.
//
//	go test -run '^$' -bench Kinds -benchtime 5x ./baseline
func BenchmarkKinds(b *testing.B) {
	st, _ := workload.Bench(b)
	ctx := context.Background()
	opt, err := Options{}.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	if err := opt.scope(ctx, st); err != nil {
		b.Fatal(err)
	}
	// Every kind reads the input, also when -bench picks one of them.
	if err := opt.input().exec(ctx, st); err != nil {
		b.Fatal(err)
	}
	b.Run("input", func(b *testing.B) {
		for b.Loop() {
			if err := opt.input().exec(ctx, st); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, s := range opt.steps() {
		b.Run(s.what, func(b *testing.B) {
			for b.Loop() {
				// Every kind appends to fresh tables.
				b.StopTimer()
				if err := opt.steps()[0].exec(ctx, st); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := s.exec(ctx, st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
