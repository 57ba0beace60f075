package testkit

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/queries"
)

// Open creates a fresh database in a temporary directory.
func Open(t testing.TB) *store.Store {
	t.Helper()
	return OpenFile(t, filepath.Join(t.TempDir(), "t.duckdb"))
}

// StoreOptions are the settings every test database is opened with.
var StoreOptions = store.Options{MemoryLimit: "1GB"}

// OpenFile opens the database at path, creating it if it is not there, and
// closes it when the test ends (closing it earlier as well is harmless). It
// is the one way tests open a database.
func OpenFile(t testing.TB, path string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path, StoreOptions)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// SpansColumns are the spans columns that depend only on the input, not on
// which file or run brought a span in (those queries/testkit_spans.sql
// dumps), as select items of FROM spans: the resource's attributes are
// looked up in resources.
const SpansColumns = `trace_id, span_id, parent_span_id, trace_state, name, kind, start_ns, end_ns,
	duration_ns, status_code, status_message, service_name, scope_name, scope_version,
	attributes::VARCHAR,
	(SELECT r.attributes FROM resources r WHERE r.resource_id = spans.resource_id)::VARCHAR AS resource_attributes,
	events::VARCHAR, links::VARCHAR`

// Dump returns every row of the query as tab-separated text, one line a row.
func Dump(t testing.TB, st *store.Store, query string, args ...any) string {
	t.Helper()
	rows, err := st.QueryText(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if i > 0 {
				b.WriteByte('\t')
			}
			fmt.Fprint(&b, v)
		}
		b.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// DumpSpans dumps the spans table in a stable order.
func DumpSpans(t testing.TB, st *store.Store) string {
	return Dump(t, st, queries.Get("testkit_spans"))
}

// Count returns a single integer the query yields.
func Count(t testing.TB, st *store.Store, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := st.QueryRowText(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// FirstDiff describes where two dumps first differ, for a test failure:
// the first unequal line of each, or how their line counts differ.
func FirstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  first:  %s\n  second: %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d lines", len(al), len(bl))
}

// LegacyDB decompresses the database the last release before schema
// versions wrote (internal/store/testdata/v0-18b8751.duckdb.gz, see the
// README there) into a temporary directory and returns its path.
func LegacyDB(t testing.TB) string {
	t.Helper()
	return gunzipStoreTestdata(t, "v0-18b8751.duckdb.gz", "v0.duckdb")
}

// LegacyTraces decompresses the traces LegacyDB was written from (the
// bundled sample as it was then; gen's sample has changed since) into a
// temporary directory and returns its path.
func LegacyTraces(t testing.TB) string {
	t.Helper()
	return gunzipStoreTestdata(t, "v0-18b8751.traces.jsonl.gz", "v0-traces.jsonl")
}

// gunzipStoreTestdata decompresses internal/store/testdata/name into a
// temporary file called as and returns its path.
func gunzipStoreTestdata(t testing.TB, name, as string) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	f, err := os.Open(filepath.Join(filepath.Dir(here), "..", "store", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), as)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// CheckColumns fails the test unless columns, the list an appender on
// table gives its values in (see store.NewAppender), names every column of
// the table once and nothing else: a column added to the DDL and not to
// the list would be left to its default, silently. catalog is "" for the
// database, "temp" for a temporary table.
func CheckColumns(t testing.TB, st *store.Store, catalog, table string, columns []string) {
	t.Helper()
	ddl := strings.Fields(Dump(t, st, queries.Get("testkit_table_columns"), catalog, table))
	if len(ddl) == 0 {
		t.Fatalf("%s: no such table", table)
	}
	inDDL, appended := countOf(ddl), countOf(columns)
	for _, c := range ddl {
		if appended[c] == 0 {
			t.Errorf("%s: column %s is in the DDL but not among the appended columns", table, c)
		}
	}
	for _, c := range columns {
		switch {
		case inDDL[c] == 0:
			t.Errorf("%s: appended column %s is not in the DDL", table, c)
		case appended[c] > 1:
			t.Errorf("%s: column %s appended %d times", table, c, appended[c])
		}
	}
}

func countOf(names []string) map[string]int {
	n := map[string]int{}
	for _, s := range names {
		n[s]++
	}
	return n
}

// ReplaceOnce replaces old by new in a query's text, failing t unless old
// occurs exactly once: a test that edits a query must edit what it meant.
func ReplaceOnce(t testing.TB, s, old, new string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("%q occurs %d times in the query, want 1", old, n)
	}
	return strings.Replace(s, old, new, 1)
}
