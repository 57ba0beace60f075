package ingest_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// Small files stored together (several to a transaction) leave exactly
// what the same files stored one at a time leave: the spans, every
// file's ledger row and file_id, the rejections, the log and the counts;
// and so do a second run over them and a third over copies of their spans
// batched anew. The directory mixes what a group
// must take apart: a copy of a file's bytes (skipped), a re-batched copy
// of an earlier file of the group (stored once), a copy with one span
// moved (a conflict), a file repeating its own spans, damaged, foreign
// and empty files.
func TestSmallFilesTogetherAsAlone(t *testing.T) {
	dir := t.TempDir()
	batches := testkit.Batches(41, 120, 12)
	var names []string
	for i := range batches {
		name := filepath.Join(dir, "a-"+string(rune('0'+i))+".jsonl")
		testkit.WriteFile(t, name, sim.WriteJSONLines, batches[i:i+1])
		names = append(names, name)
	}
	copyFile(t, names[3], filepath.Join(dir, "b-copy.jsonl"))
	testkit.WriteFile(t, filepath.Join(dir, "c-resent.pb"), sim.WriteProtoFramed, batches[1:2])
	moved := ptrace.NewTraces()
	batches[2].CopyTo(moved)
	sp := moved.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	sp.SetStartTimestamp(sp.StartTimestamp() + 1)
	testkit.WriteFile(t, filepath.Join(dir, "d-moved.jsonl"), sim.WriteJSONLines, []ptrace.Traces{moved})
	testkit.WriteFile(t, filepath.Join(dir, "e-twice.jsonl"), sim.WriteJSONLines, []ptrace.Traces{batches[4], batches[4]})
	var damaged bytes.Buffer
	sim.WriteJSONLines(&damaged, testkit.Batches(42, 20, 10))
	damaged.WriteString("this is not json {\n")
	os.WriteFile(filepath.Join(dir, "f-damaged.jsonl"), damaged.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "g-empty.json"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "h-README.txt"), []byte("Traces exported nightly.\n"), 0o644)
	testkit.WriteFile(t, filepath.Join(dir, "i-last.jsonl"), sim.WriteJSONLines, testkit.Batches(43, 30, 30))

	// Later, the spans of two files stored before, batched anew, beside new ones.
	later := t.TempDir()
	testkit.WriteFile(t, filepath.Join(later, "j-rebatched.pb"), sim.WriteProtoFramed, []ptrace.Traces{testkit.Merge(batches[5:7])})
	testkit.WriteFile(t, filepath.Join(later, "k-new.jsonl"), sim.WriteJSONLines, testkit.Batches(44, 30, 30))

	together := smallFilesState(t, dir, later)
	restore := ingest.SetSmallFileBytes(-1)
	alone := smallFilesState(t, dir, later)
	restore()
	for _, k := range []string{"run 1", "run 2", "run 3", "spans", "ingest_files", "ingest_errors"} {
		if together[k] != alone[k] {
			t.Errorf("%s: together differs from alone: %s", k, testkit.FirstDiff(alone[k], together[k]))
		}
	}
	for _, want := range []string{"b-copy.jsonl: skipped, already ingested as", "duplicate_conflict", "bad_json", "g-empty.json: the file is empty", "not_otlp"} {
		if !strings.Contains(together["run 1"], want) {
			t.Errorf("log lacks %q:\n%s", want, together["run 1"])
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// timing is the part of a file's log line that differs from run to run.
var timing = regexp.MustCompile(`, [0-9.]+s(, [0-9.]+[kM]? spans/s)?\n`)

// smallFilesState ingests dir twice, then later, into a new database and
// returns the logs and counts of the runs and the tables, without times.
func smallFilesState(t *testing.T, dir, later string) map[string]string {
	t.Helper()
	st := testkit.Open(t)
	out := map[string]string{}
	for i, in := range []string{dir, dir, later} {
		sum, log := run(t, st, in)
		r := fmt.Sprintf("run %d", i+1)
		tot := sum.Totals()
		ingested, skipped, spans, spansNew, rejected := tot.Ingested, tot.Skipped, tot.Spans, tot.SpansNew, tot.Rejected
		out[r] = timing.ReplaceAllString(log, "\n") +
			fmt.Sprintln(ingested, skipped, spans, spansNew, rejected, sum.Rejected)
	}
	out["spans"] = testkit.Dump(t, st, "SELECT file_id, "+testkit.SpansColumns+" FROM spans ORDER BY ALL")
	out["ingest_files"] = testkit.Dump(t, st, `SELECT file_id, path, sha256, size_bytes, format, compression, records,
		spans_read, spans_new, rejected FROM ingest_files ORDER BY file_id`)
	out["ingest_errors"] = testkit.Dump(t, st, `SELECT file_id, path, "offset", reason, detail, trace_id, span_id
		FROM ingest_errors ORDER BY ALL`)
	checkLedgerTimes(t, st)
	return out
}

// checkLedgerTimes: every ledger row has a time and a duration.
func checkLedgerTimes(t *testing.T, st *store.Store) {
	t.Helper()
	if n := testkit.Count(t, st, `SELECT count(*) FROM ingest_files WHERE ingested_at IS NULL OR NOT seconds > 0`); n != 0 {
		t.Errorf("%d ledger rows without a time or a duration", n)
	}
}
