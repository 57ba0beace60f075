package rebuild

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/queries"
)

// The span facts' columns are read by name: two columns of one type
// swapped in rebuild_spans' SQL leave every request and attempt as they
// were, where reading them by position would swap every span's input and
// output tokens. A column renamed or dropped is an error naming the query
// and the column.
func TestSwappedColumnsLeaveTheRebuildAsItWas(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Requests = 31, 400
	res, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	traces := testkit.WriteFile(t, filepath.Join(t.TempDir(), "traces.jsonl"), sim.WriteJSONLines, res.Traces)
	const pair = "e.input_tokens, e.output_tokens,"
	original := queries.Get("rebuild_spans")
	swapped := testkit.ReplaceOnce(t, original, pair, "e.output_tokens, e.input_tokens,")

	want := rebuiltWith(t, traces, original)
	if !strings.Contains(want.attempts, "\t") || testkit.Count(t, want.st, `SELECT count(*) FROM attempts
		WHERE input_tokens > 0 AND output_tokens > 0 AND input_tokens <> output_tokens`) == 0 {
		t.Fatal("no attempt whose input and output tokens differ: the swap would show nothing")
	}
	got := rebuiltWith(t, traces, swapped)
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.requests != want.requests || got.attempts != want.attempts {
		t.Errorf("the swapped columns changed the rebuild: requests %s; attempts %s",
			testkit.FirstDiff(got.requests, want.requests), testkit.FirstDiff(got.attempts, want.attempts))
	}

	for _, c := range []struct{ what, sql, want string }{
		{"renamed", testkit.ReplaceOnce(t, original, "e.length_cut,", "e.length_cut AS cut,"), "rebuild_partition: the query has no column length_cut"},
		{"dropped", testkit.ReplaceOnce(t, original, "e.stated_queue_ms, ", ""), "rebuild_partition: the query has no column stated_queue_ms"},
	} {
		if r := rebuiltWith(t, traces, c.sql); r.err == nil || !strings.Contains(r.err.Error(), c.want) {
			t.Errorf("a column %s: got %v, want an error with %q", c.what, r.err, c.want)
		}
	}
}

type rebuilt struct {
	st                 *store.Store
	requests, attempts string
	err                error
}

// rebuiltWith ingests traces into a new database and rebuilds it with
// spanFacts as the text of rebuild_spans.
func rebuiltWith(t *testing.T, traces, spanFacts string) rebuilt {
	t.Helper()
	old := spanFactsSQL
	spanFactsSQL = func() string { return spanFacts }
	defer func() { spanFactsSQL = old }()
	ctx := context.Background()
	st := testkit.Open(t)
	if _, err := ingest.Run(ctx, st, []string{traces}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, st, Options{}); err != nil {
		return rebuilt{st: st, err: err}
	}
	return rebuilt{st: st, requests: testkit.Dump(t, st, `SELECT * FROM requests ORDER BY request_id`),
		attempts: testkit.Dump(t, st, `SELECT * FROM attempts ORDER BY request_id, ordinal`)}
}
