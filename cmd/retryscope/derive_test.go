package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit"
)

// Bringing the derived tables up to date after each new file, with only the
// changed requests and their neighbours' baselines recomputed, leaves the
// same requests, attempts and baselines as deriving everything at once.
func TestIncrementalDeriveEqualsFull(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Requests, cfg.Rate = 12, 1500, 2 // 12.5 minutes: several baseline windows
	res, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := uint64(sim.DefaultStart.UnixNano())
	var cuts []uint64
	for c := uint64(150e9); c < 750e9; c += 150e9 {
		cuts = append(cuts, start+c)
	}
	dir := t.TempDir()
	var paths []string
	for i, td := range sim.CutByEnd(res.Traces, cuts) {
		p := filepath.Join(dir, fmt.Sprintf("night%d.jsonl", i))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		sim.WriteJSONLines(f, []ptrace.Traces{td})
		f.Close()
		paths = append(paths, p)
	}

	fullDB := filepath.Join(t.TempDir(), "full.duckdb")
	args := append([]string{"run", "--db", fullDB, "--by", "none"}, paths...)
	if code, _, stderr := runCLI(t, args...); code != exitOK {
		t.Fatalf("full: exit %d\n%s", code, stderr)
	}
	incDB := filepath.Join(t.TempDir(), "inc.duckdb")
	for i, p := range paths {
		code, _, stderr := runCLI(t, "run", "--db", incDB, "--by", "none", p)
		if code != exitOK {
			t.Fatalf("incremental %s: exit %d\n%s", p, code, stderr)
		}
		if i > 0 && (!strings.Contains(stderr, "updated the logical requests of") ||
			!strings.Contains(stderr, "recomputed the baselines near the changed requests")) {
			t.Fatalf("night %d did not update incrementally:\n%s", i, stderr)
		}
	}
	full, inc := openDB(t, fullDB), openDB(t, incDB)
	defer full.Close()
	defer inc.Close()
	for _, q := range []string{
		`SELECT * FROM requests ORDER BY request_id`,
		`SELECT * FROM attempts ORDER BY request_id, ordinal`,
		// Means over the same cohort may sum in another order: compare to 1 µs.
		`SELECT request_id, kind, provenance, method, cohort_size, reason, round(l0_ms, 3), round(match_distance, 6)
		 FROM baselines ORDER BY request_id, kind`,
		`SELECT * FROM baseline_arms ORDER BY request_id`,
	} {
		if a, b := testkit.Dump(t, full, q), testkit.Dump(t, inc, q); a != b {
			t.Errorf("%s\ndiffers between one run and a run per file:\n%s", q, testkit.FirstDiff(a, b))
		}
	}
	n := testkit.Count(t, inc, `SELECT count(*) FROM baselines WHERE l0_ms IS NOT NULL`)
	if n == 0 {
		t.Fatal("no baseline was computed: the comparison shows nothing")
	}
}
