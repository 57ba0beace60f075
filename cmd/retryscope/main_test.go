package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// TestMain lets the test binary stand in for retryscope in subprocess
// tests: with RETRYSCOPE_AS_CLI set it runs the command line and exits,
// and scripts run it as the command retryscope.
func TestMain(m *testing.M) {
	if os.Getenv("RETRYSCOPE_AS_CLI") == "1" {
		main()
	}
	testscript.Main(cleaningM{m}, map[string]func(){"retryscope": main})
}

// cleaningM removes what tests share across the package (sharedDir) once
// every test has run; testscript.Main exits the process after Run.
type cleaningM struct{ m *testing.M }

func (c cleaningM) Run() int {
	code := c.m.Run()
	if sharedRoot != "" {
		os.RemoveAll(sharedRoot)
	}
	return code
}

// sharedRoot holds work that several tests start from (the crash tests'
// reference runs); sharedDir makes it on first use. The tests that run the
// nightly job many times call t.Parallel: go test runs this package beside
// the others, and run alone at the end it would leave a core idle.
var (
	sharedMu   sync.Mutex
	sharedRoot string
)

func sharedDir(t testing.TB, name string) string {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedRoot == "" {
		dir, err := os.MkdirTemp("", "retryscope-test-")
		if err != nil {
			t.Fatal(err)
		}
		sharedRoot = dir
	}
	dir := filepath.Join(sharedRoot, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestScripts runs testdata/script/*.txtar: the command line as a user
// types it. "exitcode N cmd args..." runs cmd and wants it to exit N.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exitcode N command [args...]")
				}
				err := ts.Exec(args[1], args[2:]...)
				code := 0
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					code = exit.ExitCode()
				} else if err != nil {
					ts.Fatalf("%s: %v", args[1], err)
				}
				if fmt.Sprint(code) != args[0] {
					ts.Fatalf("%s exited %d, want %s", args[1], code, args[0])
				}
			},
		},
	})
}

// cli starts retryscope as a real process.
func cli(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RETRYSCOPE_AS_CLI=1")
	return cmd
}

// runCLI runs the command line in-process, as a user types it, and
// returns the exit code, stdout and stderr. Every in-process test runs
// retryscope through it.
func runCLI(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// mustRunCLI is runCLI for a step that must succeed: it fails the test
// unless the command exits 0.
func mustRunCLI(t testing.TB, args ...string) (stdout, stderr string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("retryscope %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	return stdout, stderr
}

func writeDump(t *testing.T, dir string, files, spansPerFile int) {
	t.Helper()
	for i := 0; i < files; i++ {
		var buf bytes.Buffer
		if err := sim.WriteProtoFramed(&buf, testkit.Batches(uint64(100+i), spansPerFile, 500)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "part-"+string(rune('a'+i))+".pb"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func openDB(t testing.TB, path string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// kill -9 in the middle of a multi-file ingest, then a rerun, leaves
// exactly what one clean run leaves.
func TestKillMidIngestThenRerun(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and ingests 240k spans")
	}
	dump := t.TempDir()
	writeDump(t, dump, 4, 60_000) // a file holds more spans than a committed chunk
	cleanDB := filepath.Join(t.TempDir(), "clean.duckdb")
	if code, _, stderr := runCLI(t, "ingest", "--db", cleanDB, dump); code != exitOK {
		t.Fatalf("clean run: exit %d\n%s", code, stderr)
	}

	db := filepath.Join(t.TempDir(), "killed.duckdb")
	cmd := cli("ingest", "--db", db, dump)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "spans (") { // the first file is committed
			break
		}
	}
	time.Sleep(700 * time.Millisecond) // into the second file, past its first chunk
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	st := openDB(t, db)
	files := testkit.Count(t, st, `SELECT count(*) FROM ingest_files`)
	stored := testkit.Count(t, st, `SELECT count(*) FROM spans`)
	ledger := testkit.Count(t, st, `SELECT coalesce(sum(spans_new), 0) FROM ingest_files`)
	st.Close()
	if files < 1 || files > 3 {
		t.Fatalf("the kill did not land mid-dump: %d of 4 files committed", files)
	}
	if stored != ledger {
		t.Fatalf("after the kill: %d spans stored but the ledger accounts for %d: half a file is left", stored, ledger)
	}

	if code, _, stderr := runCLI(t, "ingest", "--db", db, dump); code != exitOK {
		t.Fatalf("rerun: exit %d\n%s", code, stderr)
	}
	clean, killed := openDB(t, cleanDB), openDB(t, db)
	defer clean.Close()
	defer killed.Close()
	if testkit.DumpSpans(t, clean) != testkit.DumpSpans(t, killed) {
		t.Error("spans after kill and rerun differ from one clean run")
	}
	q := `SELECT path, sha256, records, spans_read, spans_new, rejected FROM ingest_files ORDER BY path`
	if a, b := testkit.Dump(t, clean, q), testkit.Dump(t, killed, q); a != b {
		t.Errorf("ledger differs:\nclean:\n%s\nkilled+rerun:\n%s", a, b)
	}
}

// Exit codes: usage 2, rejected input 3, clean 0, --help 0.
func TestIngestExitCodes(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "x.duckdb")
	if code, _, _ := runCLI(t, "ingest", "--db", db); code != exitUsage {
		t.Errorf("no paths: exit %d, want 2", code)
	}
	if code, _, stderr := runCLI(t, "ingest", "--bogus"); code != exitUsage || !strings.Contains(stderr, "Try: retryscope ingest --help") {
		t.Errorf("bad flag: exit %d, stderr %q", code, stderr)
	}
	if code, out, _ := runCLI(t, "ingest", "--help"); code != exitOK || !strings.Contains(out, "Examples:") {
		t.Errorf("--help: exit %d", code)
	}
	dump := t.TempDir()
	writeDump(t, dump, 1, 200)
	if code, _, stderr := runCLI(t, "ingest", "--db", db, dump); code != exitOK {
		t.Errorf("clean dump: exit %d\n%s", code, stderr)
	}
	os.WriteFile(filepath.Join(dump, "notes.txt"), []byte("not traces"), 0o644)
	code, _, stderr := runCLI(t, "ingest", "--db", db, dump, filepath.Join(dump, "missing.pb"))
	if code != exitRejected {
		t.Errorf("dump with a stray file: exit %d, want 3\n%s", code, stderr)
	}
	for _, want := range []string{"notes.txt:0: not_otlp", "missing.pb: no such file", "2 rejected"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// An error names each step once: a message such as "rebuild requests:
// rebuild requests: ..." means a callee and its caller both wrapped it
// with the same noun. A write fails, as on a full disk, at a point in each
// step of run and of report.
func TestErrorsNameEachStepOnce(t *testing.T) {
	root, dump, ingested := ingestedDump(t, 40)
	for i, c := range []struct{ cmd, at string }{
		{"run", "full:ingest.staged:1"},
		{"run", "full:rebuild.built:1"},
		{"run", "full:baselines.computed:1"},
		{"run", "full:derive.recorded:1"},
		{"run", "full:export.tmp:1"},
		{"run", "full:report.tmp:1"},
		{"report", "full:rebuild.built:1"},
		{"report", "full:baselines.computed:1"},
	} {
		dir := filepath.Join(root, fmt.Sprint(i))
		os.Mkdir(dir, 0o755)
		args := []string{"run", "--db", "db.duckdb", "--parquet", "parquet", "--report", "report.md", dump}
		if c.cmd == "report" {
			copyFile(t, ingested, filepath.Join(dir, "db.duckdb"))
			args = []string{"report", "--db", "db.duckdb"}
		}
		cmd := cli(args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Env, "RETRYSCOPE_CRASH_AT="+c.at)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != exitFailed {
			t.Errorf("%s at %s: exit %d, want 1\n%s", c.cmd, c.at, code, out)
			continue
		}
		i := strings.Index(string(out), "retryscope: ")
		if i < 0 {
			t.Errorf("%s at %s: no error message\n%s", c.cmd, c.at, out)
			continue
		}
		msg, _, _ := strings.Cut(string(out[i:]), "\n")
		seen := map[string]bool{}
		for _, part := range strings.Split(msg, ": ") {
			if seen[part] {
				t.Errorf("%s at %s: %q twice in %q", c.cmd, c.at, part, msg)
			}
			seen[part] = true
		}
	}
}

// A report that runs out of DuckDB's memory says which flag gives it more:
// DuckDB's own advice names its SET statement, which a user of the
// command line cannot run.
func TestOutOfMemoryNamesTheFlag(t *testing.T) {
	root, _, db := ingestedDump(t, 2000)
	// Killed or failed while it builds, a report leaves no file behind:
	// neither the one asked for nor its .tmp.
	report := filepath.Join(root, "report.json")
	cmd := cli("report", "--db", db, "--memory-limit", "10MB", "-o", report)
	out, _ := cmd.CombinedOutput()
	for _, p := range []string{report, report + ".tmp"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the failed report left %s", filepath.Base(p))
		}
	}
	if code := cmd.ProcessState.ExitCode(); code != exitFailed {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	if !strings.Contains(string(out), "Out of Memory Error") || !strings.Contains(string(out), "run again with a larger one, e.g. --memory-limit 4GB") ||
		!strings.Contains(string(out), "(it had 9.5 MiB;") {
		t.Errorf("no out-of-memory error naming --memory-limit:\n%s", out)
	}
	// With room, the same report is written.
	mustRunCLI(t, "report", "--db", db, "--memory-limit", "256MB", "-o", report)
}

// The hint follows DuckDB's out-of-memory error only: a full disk that
// DuckDB reports as out of memory has its own explanation, whichever way
// it is spelled or wrapped.
func TestMemoryHintOnlyForMemory(t *testing.T) {
	oom := "Out of Memory Error: failed to pin block of size 256.0 KiB (95.2 MiB/95.3 MiB used)"
	cases := []struct {
		err  error
		hint bool
	}{
		{errors.New("report: " + oom), true},
		{errors.New("report: " + oom + "\n(no space left on device: /tmp has 3 MiB free; free some and run again)"), false},
		{errors.New("report: " + oom + ": No space left on device"), false},
		{fmt.Errorf("report: %s: %w", oom, syscall.ENOSPC), false},
		{errors.New("report: Binder Error: no such column"), false},
		{fmt.Errorf("report: %w", &duckdb.Error{Type: duckdb.ErrorTypeOutOfMemory, Msg: oom}), true},
		{fmt.Errorf("report: %w", &duckdb.Error{Type: duckdb.ErrorTypeTransaction, Msg: "TransactionContext Error: Failed to commit: " + oom}), true},
		{fmt.Errorf("report: %w", &duckdb.Error{Type: duckdb.ErrorTypeBinder, Msg: "Binder Error: no such column"}), false},
	}
	for _, c := range cases {
		if got := memoryHint(c.err) != ""; got != c.hint {
			t.Errorf("%q: hint %v, want %v", c.err, got, c.hint)
		}
	}
}

// The hint names the limit DuckDB ran out of, whether the default or one
// given, and suggests at least twice it: a user who gave 8GB is not told
// to try 4GB.
func TestMemoryHintNamesTheLimit(t *testing.T) {
	for _, c := range []struct{ msg, limit, suggest string }{
		{"report: Out of Memory Error: failed to pin block of size 256.0 KiB (95.2 MiB/95.3 MiB used)", "(it had 95.3 MiB; the default is 1GB", "--memory-limit 4GB"},
		{"report: Out of Memory Error: could not allocate block of size 256.0 KiB (953.6 MiB/953.6 MiB used)", "(it had 953.6 MiB; the default is 1GB", "--memory-limit 4GB"},
		{"derive: Out of Memory Error: failed to allocate data of size 16.0 MiB (7.4 GiB/7.5 GiB used)", "(it had 7.5 GiB; the default is 1GB", "--memory-limit 15GB"},
		{"report: Out of Memory Error: failed to allocate data of size 16.0 MiB", "(1GB, 128MB while ingesting, unless given)", "--memory-limit 4GB"},
	} {
		hint := memoryHint(errors.New(c.msg))
		if !strings.Contains(hint, c.limit) || !strings.HasSuffix(hint, c.suggest) {
			t.Errorf("%q: hint %q, want it to say %q and end %q", c.msg, hint, c.limit, c.suggest)
		}
	}
}

// ingestedDump generates requests logical requests in a temporary
// directory and ingests them: the directory, the dump and the database.
func ingestedDump(t *testing.T, requests int) (root, dump, db string) {
	t.Helper()
	root = t.TempDir()
	dump = filepath.Join(root, "traces.jsonl")
	mustRunCLI(t, "gen", "--requests", fmt.Sprint(requests), "-o", dump)
	db = filepath.Join(root, "ingested.duckdb")
	mustRunCLI(t, "ingest", "--db", db, dump)
	return root, dump, db
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
