package main

// Crash safety as a test (issue 13): `retryscope run` is stopped at named
// points spread over ingest, rebuild, baselines, the Parquet export and the
// report, by SIGKILL or by a write failing as on a full disk
// (internal/crashpoint); the next run must leave exactly what runs that
// were never stopped leave: the database tables, the Parquet files read
// back, and the report byte for byte. The database must always open.

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/testkit"
)

// crashCase stops the run of one night (1: the first, into an empty
// database; 2: the next, an incremental update) at a point, as
// RETRYSCOPE_CRASH_AT spells it.
type crashCase struct {
	night int
	at    string
}

// crashKills are the SIGKILL points: 24, over every step of a run.
var crashKills = []crashCase{
	{1, "kill:ingest.committed:2"},
	{1, "kill:rebuild.built:1"},
	{1, "kill:baselines.computed:1"},
	{1, "kill:export.written:2"},
	{1, "kill:report.tmp:1"},
	{2, "kill:ingest.staged:1"},
	{2, "kill:ingest.committed:1"},
	{2, "kill:ingest.staged:2"},
	{2, "kill:ingest.staged:3"},
	{2, "kill:ingest.committed:3"},
	{2, "kill:rebuild.cleared:1"},
	{2, "kill:rebuild.built:1"},
	{2, "kill:baselines.computed:1"},
	{2, "kill:derive.recorded:1"},
	{2, "kill:derive.committed:1"},
	{2, "kill:export.pending:1"},
	{2, "kill:export.tmp:1"},
	{2, "kill:export.written:1"},
	{2, "kill:export.written:4"},
	{2, "kill:export.tmp:5"},
	{2, "kill:export.written:7"},
	{2, "kill:export.done:1"},
	{2, "kill:report.tmp:1"},
	{2, "kill:report.renamed:1"},
}

// crashFulls are the points where a write fails as on a full disk: 7.
var crashFulls = []crashCase{
	{1, "full:derive.recorded:1"},
	{1, "full:export.written:2"},
	{2, "full:ingest.staged:2"},
	{2, "full:rebuild.built:1"},
	{2, "full:baselines.computed:1"},
	{2, "full:export.tmp:3"},
	{2, "full:report.tmp:1"},
}

// crashShort is the default: one point per kind of stop and step.
var crashShort = []crashCase{
	{2, "kill:ingest.staged:2"},
	{2, "kill:rebuild.built:1"},
	{2, "kill:export.written:4"},
	{1, "full:export.written:2"},
	{2, "full:baselines.computed:1"},
}

// crashCases is the short list, unless RETRYSCOPE_CRASH_POINTS=full asks
// for every point (about 60 runs of the nightly job; see
// docs/development.md).
func crashCases() []crashCase {
	if os.Getenv("RETRYSCOPE_CRASH_POINTS") == "full" {
		return append(slices.Clone(crashKills), crashFulls...)
	}
	return crashShort
}

// crashRun runs retryscope as a process in dir, with crashAt (if set) as
// RETRYSCOPE_CRASH_AT, and returns how it ended and its stderr.
func crashRun(t *testing.T, dir, crashAt string, args ...string) (killed bool, code int, stderr string) {
	t.Helper()
	cmd := cli(args...)
	cmd.Dir = dir
	if crashAt != "" {
		cmd.Env = append(cmd.Env, "RETRYSCOPE_CRASH_AT="+crashAt)
	}
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return true, -1, errBuf.String()
		}
		return false, exit.ExitCode(), errBuf.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return false, 0, errBuf.String()
}

// crashNight is the nightly job's command line for one night, with paths
// relative to the work directory so that two work directories give the
// same bytes.
func crashNight(night int) []string {
	return []string{"run", "--db", "db.duckdb", "--parquet", "parquet", "--report", "report.md", "--full",
		"--baseline", "all", filepath.Join("..", "dumps", "night"+string(rune('0'+night)))}
}

// crashState is everything a run leaves that the test compares.
func crashState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	db := filepath.Join(dir, "db.duckdb")
	for table, dump := range nightlyDumpTables(t, db) {
		out["table "+table] = dump
	}
	st := nightlyOpen(t, db)
	for name, q := range map[string]string{
		"spans":           "SELECT " + testkit.SpansColumns + " FROM spans ORDER BY ALL",
		"ingest_files":    `SELECT path, sha256, size_bytes, format, compression, records, spans_read, spans_new, rejected FROM ingest_files ORDER BY ALL`,
		"ingest_errors":   `SELECT path, "offset", reason, detail, trace_id, span_id FROM ingest_errors ORDER BY ALL`,
		"run_window":      `SELECT * FROM run_window`,
		"parquet_pending": `SELECT * FROM parquet_pending ORDER BY ALL`,
		"parent_cycles":   `SELECT * FROM parent_cycles ORDER BY ALL`,
	} {
		out[name] = testkit.Dump(t, st, q)
	}
	st.Close()
	for table, rows := range nightlyReadParquet(t, filepath.Join(dir, "parquet")) {
		out["parquet "+table] = rows
	}
	var files []string
	filepath.WalkDir(filepath.Join(dir, "parquet"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	out["parquet files"] = strings.Join(files, "\n")
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	out["report.md"] = string(report)
	if _, err := os.Stat(filepath.Join(dir, "report.md.tmp")); err == nil {
		out["report.md.tmp"] = "left behind"
	}
	return out
}

func crashCopyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// crashWriteNight writes a night's batches as three dump files, so that
// ingest stops can fall between files.
func crashWriteNight(t *testing.T, dir string, batches []ptrace.Traces) {
	t.Helper()
	third := (len(batches) + 2) / 3
	for i, name := range []string{"a.pb", "b.pb", "c.pb"} {
		part := batches[min(i*third, len(batches)):min((i+1)*third, len(batches))]
		nightlyWrite(t, filepath.Join(dir, name), part)
	}
}

func TestCrashAtEveryStepThenRerun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the nightly job as a process about 60 times")
	}
	t.Parallel()
	// The reference: both nights run, never stopped. after1 is the state
	// after the first night, the start of every second-night case.
	root, _, after1, want := crashReference(t)

	for i, c := range crashCases() {
		t.Run(strings.ReplaceAll(c.at, ":", "_")+"_night"+string(rune('0'+c.night)), func(t *testing.T) {
			work := filepath.Join(root, "case"+string(rune('a'+i%26))+string(rune('a'+i/26)))
			os.RemoveAll(work)
			t.Cleanup(func() { os.RemoveAll(work) })
			if c.night == 2 {
				crashCopyTree(t, after1, work)
			} else {
				os.MkdirAll(work, 0o755)
			}
			killed, code, stderr := crashRun(t, work, c.at, crashNight(c.night)...)
			switch {
			case strings.HasPrefix(c.at, "kill:") && !killed:
				t.Fatalf("not killed (exit %d): the point was never reached\n%s", code, stderr)
			case strings.HasPrefix(c.at, "full:") && (code != exitFailed || !strings.Contains(stderr, "no space left on device")):
				t.Fatalf("full disk: exit %d, want 1 saying no space left on device\n%s", code, stderr)
			}
			// The database opens after any stop (openDB fails the test if not).
			openDB(t, filepath.Join(work, "db.duckdb")).Close()
			for night := c.night; night <= 2; night++ {
				if _, code, stderr := crashRun(t, work, "", crashNight(night)...); code != exitOK {
					t.Fatalf("night %d after the stop: exit %d\n%s", night, code, stderr)
				}
			}
			got := crashState(t, work)
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range want {
					if !yield(k) {
						return
					}
				}
			}) {
				if got[k] != want[k] {
					t.Errorf("%s differs from the runs never stopped: %s", k, testkit.FirstDiff(want[k], got[k]))
				}
			}
			if got["report.md.tmp"] != "" {
				t.Error("report.md.tmp left behind")
			}
		})
	}
}

// TestParquetRecoversAfterFailedExport is issue 13's first reproduction,
// with the failing write injected as a file where the export needs a
// directory: on the first night the export fails in attempts, on the
// second in baselines. Once the blocker is gone, the next run writes what
// the failed export did not, and the Parquet files equal a clean run's.
func TestParquetRecoversAfterFailedExport(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 16k spans and runs the nightly job seven times")
	}
	t.Parallel()
	root, clean, _, _ := crashReference(t)
	work := filepath.Join(root, "recover")
	os.RemoveAll(work)
	t.Cleanup(func() { os.RemoveAll(work) })
	for _, step := range []struct {
		night   int
		blocker string
	}{{1, "parquet/attempts"}, {2, "parquet/baselines/date=2026-11-29"}} {
		block := filepath.Join(work, step.blocker)
		os.MkdirAll(filepath.Dir(block), 0o755)
		os.RemoveAll(block)
		if err := os.WriteFile(block, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, code, stderr := crashRun(t, work, "", crashNight(step.night)...); code != exitFailed {
			t.Fatalf("night %d with %s blocked: exit %d, want 1\n%s", step.night, step.blocker, code, stderr)
		}
		os.Remove(block)
		_, code, stderr := crashRun(t, work, "", crashNight(step.night)...)
		if code != exitOK || strings.Contains(stderr, "parquet: unchanged") {
			t.Fatalf("night %d again: exit %d, want 0 and the Parquet written\n%s", step.night, code, stderr)
		}
	}
	want, got := nightlyReadParquet(t, filepath.Join(clean, "parquet")), nightlyReadParquet(t, filepath.Join(work, "parquet"))
	for _, table := range nightlyParquetTables {
		if got[table] != want[table] {
			t.Errorf("Parquet %s differs from a clean run's: %s", table, testkit.FirstDiff(want[table], got[table]))
		}
	}
}

// crashRef is the reference the crash tests share: made once per test
// binary, since three tests start from it.
var crashRef struct {
	sync.Mutex
	made                bool
	root, clean, after1 string
	want                map[string]string
}

// crashReference writes the two nights' dumps under a shared root and runs
// both, never stopped, in root/clean; root/after1 holds the state after the
// first night, where second-night cases start. want is what root/clean
// holds (crashState). Tests work in directories of their own under root.
func crashReference(t *testing.T) (root, clean, after1 string, want map[string]string) {
	t.Helper()
	crashRef.Lock()
	defer crashRef.Unlock()
	if crashRef.made {
		return crashRef.root, crashRef.clean, crashRef.after1, crashRef.want
	}
	root = sharedDir(t, "crash")
	night1, night2, _, _ := nightlySplit(nightlyGenerate(t, nightlySmallConfig()), nightlyMidnight)
	crashWriteNight(t, filepath.Join(root, "dumps", "night1"), night1)
	crashWriteNight(t, filepath.Join(root, "dumps", "night2"), night2)
	clean, after1 = filepath.Join(root, "clean"), filepath.Join(root, "after1")
	os.RemoveAll(clean)
	os.RemoveAll(after1)
	os.MkdirAll(clean, 0o755)
	for night := 1; night <= 2; night++ {
		if _, code, stderr := crashRun(t, clean, "", crashNight(night)...); code != exitOK {
			t.Fatalf("clean night %d: exit %d\n%s", night, code, stderr)
		}
		if night == 1 {
			crashCopyTree(t, clean, after1)
		}
	}
	crashRef.root, crashRef.clean, crashRef.after1 = root, clean, after1
	crashRef.want = crashState(t, clean)
	crashRef.made = true
	return root, clean, after1, crashRef.want
}
