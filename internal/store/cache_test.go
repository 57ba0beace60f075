package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
)

// cachedBytes is what DuckDB holds of stored tables' blocks.
func cachedBytes(t *testing.T, st *store.Store) int64 {
	t.Helper()
	var n int64
	err := st.QueryRowText(context.Background(),
		`SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory() WHERE tag = 'BASE_TABLE'`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// DropCache gives back what DuckDB keeps of a table it read and leaves the
// memory limit as it was, exactly. Inside a transaction it leaves the
// transaction working: DuckDB refusing the lower limit there (as it did in
// the middle of a rebuild) would abort it.
func TestDropCache(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "cache.duckdb"), store.Options{MemoryLimit: "512MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := st.ExecText(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	limit := func() string {
		var s string
		if err := st.QueryRowText(ctx, `SELECT current_setting('memory_limit')`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	exec(`CREATE TABLE big AS SELECT i, md5(i::VARCHAR) AS s FROM range(2000000) t(i)`)
	exec(`CHECKPOINT`)
	exec(`SELECT sum(length(s)) FROM big`)
	before, was := cachedBytes(t, st), limit()
	if before < 16<<20 {
		t.Fatalf("DuckDB holds %d bytes of the table it read; the test needs more", before)
	}
	if err := st.DropCache(ctx); err != nil {
		t.Fatal(err)
	}
	if after := cachedBytes(t, st); after > before/10 {
		t.Errorf("DuckDB still holds %d of %d bytes of the table it read", after, before)
	}
	if now := limit(); now != was {
		t.Errorf("memory limit %s after DropCache, want %s", now, was)
	}

	// LoadAlone: what the load read goes back after it, and its error is
	// returned as it is.
	var sum int64
	err = st.LoadAlone(ctx, func() error {
		return st.QueryRowText(ctx, `SELECT sum(length(s)) FROM big`).Scan(&sum)
	})
	if err != nil || sum != 2000000*32 {
		t.Fatalf("LoadAlone read %d, %v; want %d", sum, err, 2000000*32)
	}
	if after := cachedBytes(t, st); after > before/10 {
		t.Errorf("after LoadAlone DuckDB still holds %d of %d bytes of the table it read", after, before)
	}
	failed := errors.New("load failed")
	if err := st.LoadAlone(ctx, func() error { return failed }); err != failed {
		t.Errorf("LoadAlone with a failing load: %v, want %v", err, failed)
	}

	err = st.Tx(ctx, func() error {
		exec(`CREATE TEMP TABLE scratch AS SELECT i, md5(i::VARCHAR) AS s FROM range(2000000) t(i)`)
		exec(`DROP TABLE scratch`)
		if err := st.DropCache(ctx); err != nil {
			return err
		}
		exec(`INSERT INTO big VALUES (-1, 'in the transaction')`)
		return nil
	})
	if err != nil {
		t.Fatalf("transaction with DropCache: %v", err)
	}
	var n int
	if err := st.QueryRowText(ctx, `SELECT count(*) FROM big WHERE i = -1`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the transaction's row: %d rows, %v; want it committed", n, err)
	}
}

// The sort memory holds for the statement given it alone, and the store's
// limit is back after it, whether the statement fails or not; without a
// sort memory the statement runs under the store's limit.
func TestWithSortMemory(t *testing.T) {
	ctx := context.Background()
	limitOf := func(st *store.Store) string {
		var s string
		if err := st.QueryRowText(ctx, `SELECT current_setting('memory_limit')`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, sort := range []string{"1.5GB", ""} {
		st, err := store.Open(ctx, filepath.Join(t.TempDir(), "x.duckdb"), store.Options{MemoryLimit: "256MB", SortMemoryLimit: sort})
		if err != nil {
			t.Fatal(err)
		}
		base := limitOf(st)
		var during string
		if err := st.WithSortMemory(ctx, func() error { during = limitOf(st); return nil }); err != nil {
			t.Fatal(err)
		}
		failed := errors.New("the statement failed")
		if err := st.WithSortMemory(ctx, func() error { return failed }); !errors.Is(err, failed) {
			t.Fatalf("sort memory %q: error %v, want the statement's", sort, err)
		}
		if after := limitOf(st); after != base {
			t.Errorf("sort memory %q: limit %s after the statement, want the store's %s back", sort, after, base)
		}
		if sort == "" && during != base {
			t.Errorf("no sort memory: limit %s during the statement, want the store's %s", during, base)
		}
		if sort != "" && (during == base || !strings.HasPrefix(during, "1.3 GiB") && !strings.HasPrefix(during, "1.4 GiB")) {
			t.Errorf("sort memory 1.5GB: limit %s during the statement (the store's is %s)", during, base)
		}
		st.Close()
	}
}
