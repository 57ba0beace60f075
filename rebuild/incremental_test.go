package rebuild_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// writeParts writes each part as a JSON-lines file and returns the paths.
func writeParts(t *testing.T, parts []ptrace.Traces) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, td := range parts {
		p := filepath.Join(dir, fmt.Sprintf("part%02d.jsonl", i))
		paths = append(paths, testkit.WriteFile(t, p, sim.WriteJSONLines, []ptrace.Traces{td}))
	}
	return paths
}

func dumpDerived(t *testing.T, st *store.Store) (string, string) {
	return testkit.Dump(t, st, `SELECT * FROM requests ORDER BY request_id`),
		testkit.Dump(t, st, `SELECT * FROM attempts ORDER BY request_id, ordinal`)
}

// Updating after each new file gives exactly the tables of one rebuild
// over all files, with traces and split retries straddling the cuts.
func TestIncrementalEqualsFull(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Requests, cfg.Rate = 11, 1500, 20 // about 75 s of traffic
	res, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := uint64(sim.DefaultStart.UnixNano())
	var cuts []uint64 // every 6 s: many straddling traces and split retries
	for c := uint64(6e9); c < 75e9; c += 6e9 {
		cuts = append(cuts, start+c)
	}
	paths := writeParts(t, sim.CutByEnd(res.Traces, cuts))
	ctx := context.Background()

	full := testkit.Open(t)
	if _, err := ingest.Run(ctx, full, paths, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rebuild.Run(ctx, full, rebuild.Options{}); err != nil {
		t.Fatal(err)
	}

	inc := testkit.Open(t)
	for i, p := range paths {
		if _, err := ingest.Run(ctx, inc, []string{p}, ingest.Options{}); err != nil {
			t.Fatal(err)
		}
		did, err := rebuild.Ensure(ctx, inc, rebuild.Options{})
		if err != nil || !did {
			t.Fatalf("update after file %d: did %v, err %v", i, did, err)
		}
	}
	if did, err := rebuild.Ensure(ctx, inc, rebuild.Options{}); err != nil || did {
		t.Fatalf("a fresh database was updated again: did %v, err %v", did, err)
	}
	straddling := testkit.Count(t, inc, `SELECT count(*) FROM (SELECT trace_id FROM spans GROUP BY trace_id HAVING count(DISTINCT file_id) > 1)`)
	splitAcross := testkit.Count(t, inc, `SELECT count(*) FROM requests r WHERE linkage = 'split_inferred'
		AND (SELECT count(DISTINCT s.file_id) FROM attempts a JOIN spans s ON s.trace_id = a.trace_id AND s.span_id = a.span_id WHERE a.request_id = r.request_id) > 1`)
	t.Logf("%d traces and %d split-across-trace requests straddle a cut", straddling, splitAcross)
	if straddling == 0 || splitAcross == 0 {
		t.Fatal("no trace or split retry straddles a cut: the test shows nothing")
	}
	fr, fa := dumpDerived(t, full)
	ir, ia := dumpDerived(t, inc)
	if fr != ir {
		t.Errorf("requests differ between incremental and full rebuild:\n%s", testkit.FirstDiff(fr, ir))
	}
	if fa != ia {
		t.Errorf("attempts differ between incremental and full rebuild:\n%s", testkit.FirstDiff(fa, ia))
	}
}
