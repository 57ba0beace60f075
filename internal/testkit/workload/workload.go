// Package workload loads generated traces into a throwaway database for
// tests: generate, write as OTLP/JSON lines, ingest, rebuild. It is apart
// from testkit because it imports ingest, whose own tests use testkit.
package workload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// Rebuilt generates cfg's workload, ingests it into a fresh database and
// rebuilds its logical requests; it returns the database and the truth.
// Within one test binary a config is built once: later calls get a copy of
// that database file, theirs to change (the truth is shared; read it only).
func Rebuilt(t testing.TB, cfg sim.Config) (*store.Store, sim.Truth) {
	t.Helper()
	b := built(t, cfg)
	path := filepath.Join(t.TempDir(), "rebuilt.duckdb")
	if err := os.WriteFile(path, b.db, 0o644); err != nil {
		t.Fatal(err)
	}
	return testkit.OpenFile(t, path), b.truth
}

// builds holds each config's rebuilt database file, by config.
var builds sync.Map // fmt %#v of sim.Config → *build

type build struct {
	once  sync.Once
	db    []byte
	truth sim.Truth
	err   error
}

func built(t testing.TB, cfg sim.Config) *build {
	t.Helper()
	v, _ := builds.LoadOrStore(fmt.Sprintf("%#v", cfg), &build{})
	b := v.(*build)
	b.once.Do(func() { b.db, b.truth, b.err = rebuildOnce(cfg, t.TempDir()) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b
}

// rebuildOnce does the work of Rebuilt in dir and returns the closed
// database's bytes.
func rebuildOnce(cfg sim.Config, dir string) ([]byte, sim.Truth, error) {
	res, err := sim.Generate(cfg)
	if err != nil {
		return nil, sim.Truth{}, err
	}
	traces := filepath.Join(dir, "traces.jsonl")
	f, err := os.Create(traces)
	if err != nil {
		return nil, sim.Truth{}, err
	}
	if err := sim.WriteJSONLines(f, res.Traces); err != nil {
		f.Close()
		return nil, sim.Truth{}, err
	}
	if err := f.Close(); err != nil {
		return nil, sim.Truth{}, err
	}
	path := filepath.Join(dir, "built.duckdb")
	ctx := context.Background()
	st, err := store.Open(ctx, path, testkit.StoreOptions)
	if err != nil {
		return nil, sim.Truth{}, err
	}
	if _, err := ingest.Run(ctx, st, []string{traces}, ingest.Options{}); err != nil {
		st.Close()
		return nil, sim.Truth{}, err
	}
	if err := rebuild.Rebuild(ctx, st); err != nil {
		st.Close()
		return nil, sim.Truth{}, err
	}
	if err := st.Close(); err != nil {
		return nil, sim.Truth{}, err
	}
	db, err := os.ReadFile(path)
	return db, res.Truth, err
}

// Bench is the workload the derive benchmarks share: 50,000 logical
// requests of every shape, ingested and rebuilt.
func Bench(b testing.TB) (*store.Store, sim.Truth) {
	b.Helper()
	cfg := sim.DefaultConfig()
	cfg.Requests = 50_000
	cfg.Rate = 50
	return Rebuilt(b, cfg)
}
