// Package gentest loads generated traces into a throwaway database for
// tests: generate, write as OTLP/JSON lines, ingest, rebuild.
package gentest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/gen"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/storetest"
	"github.com/retryscope/retryscope/rebuild"
)

// Rebuilt generates cfg's workload, ingests it into a fresh database and
// rebuilds its logical requests; it returns the database and the truth.
func Rebuilt(t testing.TB, cfg gen.Config) (*store.Store, gen.Truth) {
	t.Helper()
	res, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "traces.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := gen.WriteJSONLines(f, res.Traces); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st := storetest.Open(t)
	ctx := context.Background()
	if _, err := ingest.Run(ctx, st, []string{path}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := rebuild.Rebuild(ctx, st); err != nil {
		t.Fatal(err)
	}
	return st, res.Truth
}

// BenchWorkload is the workload the derive benchmarks share: 50,000
// logical requests of every shape, ingested and rebuilt.
func BenchWorkload(b testing.TB) (*store.Store, gen.Truth) {
	b.Helper()
	cfg := gen.DefaultConfig()
	cfg.Requests = 50_000
	cfg.Rate = 50
	return Rebuilt(b, cfg)
}
