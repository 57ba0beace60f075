package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retryscope/retryscope/internal/gen"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// TestMain lets the test binary stand in for retryscope in subprocess
// tests: with RETRYSCOPE_AS_CLI set it runs the command line and exits.
func TestMain(m *testing.M) {
	if os.Getenv("RETRYSCOPE_AS_CLI") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// cli starts retryscope as a real process.
func cli(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RETRYSCOPE_AS_CLI=1")
	return cmd
}

// runCLI runs the command in-process and returns exit code and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func writeDump(t *testing.T, dir string, files, spansPerFile int) {
	t.Helper()
	for i := 0; i < files; i++ {
		var buf bytes.Buffer
		if err := gen.WriteProtoFramed(&buf, testkit.Batches(uint64(100+i), spansPerFile, 500)); err != nil {
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
