package ingest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit"
)

// A directory where retryscope gen wrote its traces also holds their truth
// (FILE.truth.json): a walk leaves it out and says so instead of rejecting
// it, so `gen -o dump/traces.jsonl` then `run dump` exits 0. Named on the
// command line, the same file is read and rejected.
func TestGenTruthFileIsLeftOutOfAWalk(t *testing.T) {
	dir := t.TempDir()
	batches := testkit.Batches(41, 40, 20)
	testkit.WriteFile(t, filepath.Join(dir, "traces.jsonl"), sim.WriteJSONLines, batches)
	truth := filepath.Join(dir, "traces.jsonl.truth.json")
	os.WriteFile(truth, []byte(`{"requests": []}`), 0o644)

	sum, log := run(t, testkit.Open(t), dir)
	tot := sum.Totals()
	if spans, rejected := tot.Spans, tot.Rejected; spans != int64(testkit.SpanCount(batches)) || rejected != 0 {
		t.Fatalf("%d spans, %d rejected; want %d, 0\n%s", spans, rejected, testkit.SpanCount(batches), log)
	}
	if len(sum.Truth) != 1 || !strings.Contains(log, "traces.jsonl.truth.json: left out: a truth file of retryscope gen") {
		t.Errorf("truth files %v; log:\n%s", sum.Truth, log)
	}
	if line := sum.Line(0); !strings.Contains(line, "1 truth file of retryscope gen left out") {
		t.Errorf("summary line does not count it: %s", line)
	}

	sum, _ = run(t, testkit.Open(t), truth)
	if rejected := sum.Totals().Rejected; rejected != 1 || len(sum.Truth) != 0 {
		t.Errorf("named on the command line: %d rejected, %d left out; want 1, 0", rejected, len(sum.Truth))
	}
}
