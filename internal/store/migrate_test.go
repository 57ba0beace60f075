package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/queries"
)

// derivedTables are the tables migrations/003_derived makes.
var derivedTables = []string{"attempts", "requests", "join_alternatives", "rebuild_state", "rebuild_pending",
	"baseline_pending", "parent_cycles", "baselines", "baseline_arms", "baseline_state", "run_window", "parquet_pending"}

func open(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A new database gets every table and the latest schema version on open;
// opening it again changes nothing.
func TestOpenMigratesANewDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.duckdb")
	st := open(t, path)
	want := fmt.Sprintf("%d\n", store.SchemaVersion())
	if got := testkit.Dump(t, st, `SELECT version FROM schema_version`); got != want {
		t.Errorf("schema_version %q, want %q", got, want)
	}
	for _, table := range append([]string{"spans", "ingest_files", "ingest_errors"}, derivedTables...) {
		testkit.Count(t, st, `SELECT count(*) FROM `+table)
	}
	written := testkit.Dump(t, st, `SELECT * FROM schema_version`)
	st.Close()
	st = open(t, path)
	defer st.Close()
	if again := testkit.Dump(t, st, `SELECT * FROM schema_version`); again != written {
		t.Errorf("reopening rewrote schema_version: %q, then %q", written, again)
	}
	if n := len(queries.Migrations()); n != store.SchemaVersion() {
		t.Errorf("%d migrations, schema version %d", n, store.SchemaVersion())
	}
}

// A database the previous release wrote (no schema_version; ingest and
// derived tables) is upgraded in place: its spans and ledger stay, its
// derived tables are emptied to be computed again.
func TestOpenUpgradesAPreviousReleasesDatabase(t *testing.T) {
	st := open(t, testkit.LegacyDB(t))
	defer st.Close()
	if got, want := testkit.Dump(t, st, `SELECT version FROM schema_version`), fmt.Sprintf("%d\n", store.SchemaVersion()); got != want {
		t.Errorf("schema_version %q, want %q", got, want)
	}
	if n := testkit.Count(t, st, `SELECT count(*) FROM spans`); n != 1203 {
		t.Errorf("%d spans after the upgrade, want the 1203 ingested", n)
	}
	if n := testkit.Count(t, st, `SELECT count(*) FROM ingest_files`); n != 1 {
		t.Errorf("%d ledger rows after the upgrade, want 1", n)
	}
	for _, table := range derivedTables {
		if n := testkit.Count(t, st, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("%s: %d rows after the upgrade, want none (derived again)", table, n)
		}
	}
}

// A schema newer than this retryscope's is refused, naming both versions,
// and left as it was.
func TestOpenRefusesANewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "newer.duckdb")
	st := open(t, path)
	newer := store.SchemaVersion() + 4
	if _, err := st.ExecText(context.Background(), `UPDATE schema_version SET version = $1`, newer); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, err := store.Open(context.Background(), path, store.Options{})
	want := fmt.Sprintf("database schema version %d is newer than this retryscope (%d); use a newer retryscope", newer, store.SchemaVersion())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open: %v, want %q", err, want)
	}
	if got := rawDump(t, path, `SELECT version FROM schema_version`); got != fmt.Sprint(newer) {
		t.Errorf("schema_version %s after the refusal, want %d", got, newer)
	}
}

// A database without schema_version that is not the previous release's
// (other tables, or ingest tables of another layout) is refused, and
// nothing is added to it.
func TestOpenRefusesAnUnknownDatabase(t *testing.T) {
	for name, ddl := range map[string]string{
		"other":  `CREATE TABLE notes (body VARCHAR)`,
		"layout": `CREATE TABLE ingest_files (file_id BIGINT, path VARCHAR); CREATE TABLE spans (trace_id VARCHAR, span_id VARCHAR)`,
	} {
		path := filepath.Join(t.TempDir(), name+".duckdb")
		rawExec(t, path, ddl)
		st, err := store.Open(context.Background(), path, store.Options{})
		if err == nil {
			st.Close()
			t.Errorf("%s: Open succeeded, want a refusal", name)
			continue
		}
		if !strings.Contains(err.Error(), "no schema version") {
			t.Errorf("%s: %v, want it to say the database has no schema version", name, err)
		}
		if got := rawDump(t, path, `SELECT count(*) FROM duckdb_tables() WHERE NOT temporary`); got != fmt.Sprint(strings.Count(ddl, "CREATE")) {
			t.Errorf("%s: %s tables after the refusal, want the database untouched", name, got)
		}
	}
}

func rawExec(t *testing.T, path, q string) {
	t.Helper()
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
	}
}

func rawDump(t *testing.T, path, q string) string {
	t.Helper()
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var s string
	if err := db.QueryRow(q).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}
