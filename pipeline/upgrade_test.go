package pipeline_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/pipeline"
	"github.com/retryscope/retryscope/rebuild"
)

// derivedDumps are the derived tables, in an order that does not depend
// on how they were written.
var derivedDumps = map[string]string{
	"requests":  `SELECT * FROM requests ORDER BY request_id`,
	"attempts":  `SELECT * FROM attempts ORDER BY trace_id, span_id`,
	"baselines": `SELECT * FROM baselines ORDER BY request_id, kind`,
}

// A database the previous release wrote, upgraded on open, derives the
// same requests, attempts and baselines as a fresh ingest of the same
// traces, and the workload the previous release reported (300 logical
// requests, 424 attempts).
func TestPreviousReleasesDatabaseDerivesAsAFreshOne(t *testing.T) {
	ctx := context.Background()
	legacy, err := store.Open(ctx, testkit.LegacyDB(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.Close()
	if err := pipeline.Ensure(ctx, legacy, rebuild.Options{}, io.Discard); err != nil {
		t.Fatal(err)
	}
	fresh := testkit.Open(t)
	if _, err := ingest.Run(ctx, fresh, []string{testkit.LegacyTraces(t)}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Ensure(ctx, fresh, rebuild.Options{}, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*store.Store{legacy, fresh} {
		if n := testkit.Count(t, st, `SELECT count(*) FROM requests`); n != 300 {
			t.Errorf("%s: %d logical requests, want 300", st.Path, n)
		}
		if n := testkit.Count(t, st, `SELECT count(*) FROM attempts`); n != 424 {
			t.Errorf("%s: %d attempts, want 424", st.Path, n)
		}
	}
	for table, q := range derivedDumps {
		if a, b := testkit.Dump(t, legacy, q), testkit.Dump(t, fresh, q); a != b {
			t.Errorf("%s differs from a fresh ingest's: %s", table, testkit.FirstDiff(a, b))
		}
	}
	// The resources the upgrade made of the spans' maps (by SQL) are those
	// ingest stores (their ids computed in Go), one per distinct map, and
	// every span refers to its own.
	const resources = `SELECT resource_id, attributes::VARCHAR FROM resources ORDER BY resource_id`
	a, b := testkit.Dump(t, legacy, resources), testkit.Dump(t, fresh, resources)
	if a != b {
		t.Errorf("resources differ from a fresh ingest's: %s", testkit.FirstDiff(a, b))
	}
	if n := strings.Count(b, "\n"); n < 2 {
		t.Errorf("%d resources in the fresh ingest, want several", n)
	}
	if a, b := testkit.DumpSpans(t, legacy), testkit.DumpSpans(t, fresh); a != b {
		t.Errorf("spans differ from a fresh ingest's: %s", testkit.FirstDiff(a, b))
	}
}
