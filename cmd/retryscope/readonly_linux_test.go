package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// asReader runs retryscope as a user who cannot write dir: as root, the
// nobody user (root writes whatever the modes say), from a copy of the
// test binary nobody may run.
func asReader(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	bin := os.Args[0]
	cmd := cli(args...)
	if os.Geteuid() == 0 {
		bin = filepath.Join(filepath.Dir(dir), "retryscope.test")
		if _, err := os.Stat(bin); err != nil {
			copyFile(t, os.Args[0], bin)
			os.Chmod(bin, 0o755)
		}
		cmd.Path, cmd.Args[0] = bin, bin
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &errOut
	cmd.Env = append(cmd.Env, "HOME="+dir)
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// TestReportOnReadOnlyDatabase is issue 34's twelfth night: report
// refused a database it could not write ("Permission denied") even when
// nothing needed rebuilding. An up-to-date database is opened read-only
// and reported; one that needs a rebuild fails saying so, with the file
// and what to do.
func TestReportOnReadOnlyDatabase(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "db")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(top), 0o755) // t.TempDir's are private
	os.Chmod(top, 0o755)
	db := filepath.Join(dir, "r.duckdb")
	mustRunCLI(t, "ingest", "--db", db, "../../testdata/sample/traces.jsonl")
	want, _ := mustRunCLI(t, "report", "--db", db, "--format", "json")
	lock := func() {
		os.Chmod(db, 0o444)
		os.Chmod(dir, 0o555)
	}
	lock()
	code, got, stderr := asReader(t, dir, "report", "--db", db, "--format", "json")
	if code != 0 || got != want {
		t.Errorf("read-only, up to date: exit %d, %d bytes of report (want the %d of the writable run); stderr:\n%s", code, len(got), len(want), stderr)
	}

	// New spans: the requests need rebuilding, which a read-only file
	// cannot take.
	os.Chmod(dir, 0o755)
	os.Chmod(db, 0o644)
	more := filepath.Join(top, "more.jsonl")
	mustRunCLI(t, "gen", "--seed", "9", "--requests", "20", "--start", "2026-12-01T00:00:00Z", "-o", more)
	mustRunCLI(t, "ingest", "--db", db, more)
	lock()
	code, got, stderr = asReader(t, dir, "report", "--db", db, "--format", "json")
	if code != 1 || got != "" || !strings.Contains(stderr, "r.duckdb") || !strings.Contains(stderr, "read-only") || !strings.Contains(stderr, "writable") {
		t.Errorf("read-only, stale: exit %d, stdout %d bytes, stderr %q; want exit 1 naming the file, read-only and the fix", code, len(got), stderr)
	}
	os.Chmod(dir, 0o755)
	os.Chmod(db, 0o644)
}
