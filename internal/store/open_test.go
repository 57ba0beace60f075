package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
)

// The database path is a file name and the settings are checked: neither
// can smuggle a DuckDB setting in, and an in-memory database, whose data
// would be discarded, is refused.
func TestOpenTakesNoSettingsFromItsArguments(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, bad := range []struct {
		path  string
		opt   store.Options
		error string
	}{
		{filepath.Join(dir, "x?threads=1.duckdb"), store.Options{}, "'?'"},
		{":memory:", store.Options{}, "in-memory"},
		{"", store.Options{}, "in-memory"},
		{filepath.Join(dir, "a.duckdb"), store.Options{MemoryLimit: "256MB&access_mode=READ_ONLY"}, "memory limit"},
		{filepath.Join(dir, "a.duckdb"), store.Options{MemoryLimit: "1GB' ; SET access_mode='READ_ONLY"}, "memory limit"},
	} {
		st, err := store.Open(ctx, bad.path, bad.opt)
		if err == nil {
			st.Close()
			t.Errorf("Open(%q, %+v) succeeded, want an error", bad.path, bad.opt)
			continue
		}
		if !strings.Contains(err.Error(), bad.error) {
			t.Errorf("Open(%q, %+v): %v, want it to mention %s", bad.path, bad.opt, err, bad.error)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("a database named x was created from x?threads=1.duckdb")
	}

	// Valid settings are applied, and the database stays writable.
	path := filepath.Join(dir, "ok & fine=1.duckdb")
	st, err := store.Open(ctx, path, store.Options{MemoryLimit: "300MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var limit, threads, mode string
	if err := st.QueryRowText(ctx, `SELECT current_setting('memory_limit'), current_setting('threads')::VARCHAR, current_setting('access_mode')`).Scan(&limit, &threads, &mode); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(limit, "286") || threads != "1" || mode == "read_only" {
		t.Errorf("memory_limit %s, threads %s, access_mode %s; want 286.1 MiB, 1, writable", limit, threads, mode)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not created under its literal name: %v", err)
	}
}
