package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The storing step copies every span and prints the CPU of the reading
// and of the copy; the report turns it into the least I/R this machine
// allows.
func TestStoreCopiesTheSpans(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.duckdb"), filepath.Join(dir, "dst.duckdb")
	db, err := sql.Open("duckdb", src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE spans AS SELECT range AS start_ns, 'span ' || range AS name,
		MAP {'http.request.method': 'POST'} AS attributes FROM range(50000)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	var stdout, stderr strings.Builder
	if rc := runStore([]string{src, dst}, &stdout, &stderr); rc != 0 {
		t.Fatalf("store: rc %d: %s", rc, stderr.String())
	}
	var scan, copied float64
	if _, err := fmt.Sscanf(stdout.String(), "scan %g copy %g", &scan, &copied); err != nil || copied <= 0 {
		t.Fatalf("store printed %q", stdout.String())
	}
	db, err = sql.Open("duckdb", dst)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, methods int
	if err := db.QueryRow(`SELECT count(*), count(attributes['http.request.method']) FROM spans`).Scan(&n, &methods); err != nil {
		t.Fatal(err)
	}
	if n != 50000 || methods != 50000 {
		t.Errorf("copied %d spans, %d with their attributes; want 50000 of each", n, methods)
	}

	// A second copy into the same file is refused, not appended.
	stderr.Reset()
	if rc := runStore([]string{src, dst}, &stdout, &stderr); rc != 2 || !strings.Contains(stderr.String(), "exists") {
		t.Errorf("store into an existing file: rc %d, %q", rc, stderr.String())
	}
}

// A source that is missing, or holds no spans, is refused by name, and
// the new file is not left behind to block the next try.
func TestStoreBadSource(t *testing.T) {
	dir := t.TempDir()
	noSpans := filepath.Join(dir, "empty.duckdb")
	db, err := sql.Open("duckdb", noSpans)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE other (x INT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, c := range []struct {
		src, want string
		rc        int
	}{
		{filepath.Join(dir, "missing.duckdb"), "missing.duckdb", 2},
		{noSpans, "spans", 1},
	} {
		dst := filepath.Join(dir, "dst.duckdb")
		var stdout, stderr strings.Builder
		rc := runStore([]string{c.src, dst}, &stdout, &stderr)
		if rc != c.rc || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("store from %s: rc %d, %q; want rc %d naming %q", c.src, rc, stderr.String(), c.rc, c.want)
		}
		if _, err := os.Stat(dst); err == nil {
			t.Errorf("store from %s left %s behind", c.src, dst)
		}
	}
}

func TestReportLeastIngestRatio(t *testing.T) {
	var out strings.Builder
	report(&out, []result{
		{dump: "proto-1000", spans: 1000, step: "R", seconds: 2, cpu: 2},
		{dump: "proto-1000", spans: 1000, step: "I", seconds: 9, cpu: 14},
		{dump: "proto-1000", spans: 1000, step: "S", seconds: 7, cpu: 6},
		{dump: "proto-1000", spans: 1000, step: "Q", seconds: 5, cpu: 7},
	})
	cores := float64(runtime.NumCPU())
	want := fmt.Sprintf("least I/R %.2f, %.2f decoding as R", 6/cores/2, (6+2)/cores/2)
	for _, w := range []string{want, "I/R 4.50", "Q/R 2.50"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, out.String())
		}
	}
}
