package main

import (
	"path/filepath"
	"testing"

	"github.com/retryscope/retryscope/internal/testkit"
)

// TestReportOnLegacyDatabase: a database written by the last release
// before schema versions (18b8751) is upgraded when report opens it, and
// its report is the report of a fresh ingest of the same traces, byte for
// byte.
func TestReportOnLegacyDatabase(t *testing.T) {
	legacy := testkit.LegacyDB(t)
	old, _ := mustRunCLI(t, "report", "--db", legacy, "--format", "json", "--baseline", "all")
	fresh := filepath.Join(t.TempDir(), "fresh.duckdb")
	mustRunCLI(t, "ingest", "--db", fresh, testkit.LegacyTraces(t))
	want, _ := mustRunCLI(t, "report", "--db", fresh, "--format", "json", "--baseline", "all")
	if old != want {
		t.Errorf("the upgraded database reports otherwise than a fresh one: %s", testkit.FirstDiff(old, want))
	}
	if code, _, stderr := runCLI(t, "report", "--db", legacy); code != exitOK {
		t.Errorf("second open of the upgraded database: exit %d\n%s", code, stderr)
	}
}
