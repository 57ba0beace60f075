package store_test

import (
	"context"
	"errors"
	"path/filepath"
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

	// LoadAlone over a small window: DuckDB keeps what the load read.
	var sum int64
	read := func() error {
		return st.QueryRowText(ctx, `SELECT sum(length(s)) FROM big`).Scan(&sum)
	}
	if err := st.LoadAlone(ctx, store.CacheReturnRequests, read); err != nil || sum != 2000000*32 {
		t.Fatalf("LoadAlone read %d, %v; want %d", sum, err, 2000000*32)
	}
	if kept := cachedBytes(t, st); kept < before/2 {
		t.Errorf("after LoadAlone of a small window DuckDB holds %d of %d bytes of the table it read; want them kept", kept, before)
	}
	// Over a large one, what the load read goes back after it, and its
	// error is returned as it is.
	sum = 0
	if err := st.LoadAlone(ctx, store.CacheReturnRequests+1, read); err != nil || sum != 2000000*32 {
		t.Fatalf("LoadAlone read %d, %v; want %d", sum, err, 2000000*32)
	}
	if after := cachedBytes(t, st); after > before/10 {
		t.Errorf("after LoadAlone DuckDB still holds %d of %d bytes of the table it read", after, before)
	}
	failed := errors.New("load failed")
	for _, n := range []int64{1, store.CacheReturnRequests + 1} {
		if err := st.LoadAlone(ctx, n, func() error { return failed }); err != failed {
			t.Errorf("LoadAlone(%d) with a failing load: %v, want %v", n, err, failed)
		}
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
