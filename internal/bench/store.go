package main

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/retryscope/retryscope/queries"
)

// Step S is the storing alone: DuckDB copying the spans an ingest stored
// into a fresh database, on one thread, with no decoding and no Go in the
// way. What it costs in CPU is a floor under any ingest into DuckDB: on C
// cores, an ingest cannot take less than S/C seconds even if decoding cost
// nothing, so the bench prints S/(C·R) as the least I/R this machine
// allows, and (S+R)/(C·R) for a decoder as costly as pdata's.
//
// The copy reads the stored spans too; that reading is measured on its own
// first (bench_store_scan) and taken off, so S errs low.

// runStore is step S: bench store SRC DST. It prints the CPU seconds of
// the reading and of the copy, as "scan S copy C". DST must be new; it is
// removed again when the copy fails.
func runStore(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, "usage: bench store SRC DST (SRC: a database ingest made; DST: a new file)")
		return 2
	}
	src, dst := args[0], args[1]
	if _, err := os.Stat(src); err != nil {
		fmt.Fprintf(stderr, "store: %v: give a database ingest made\n", err)
		return 2
	}
	if _, err := os.Stat(dst); err == nil {
		fmt.Fprintf(stderr, "store: %s exists: give a new file to copy into\n", dst)
		return 2
	}
	scan, copied, err := storeCopyCPU(src, dst)
	if err != nil {
		removeDB(dst)
		fmt.Fprintf(stderr, "store: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "scan %.3f copy %.3f\n", scan, copied)
	return 0
}

// storeCopyCPU copies src's spans into dst and returns the CPU seconds of
// reading them alone and of the copy.
func storeCopyCPU(src, dst string) (scan, copied float64, err error) {
	db, err := sql.Open("duckdb", dst)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// inline SQL: ATTACH takes its file name as a literal only, not as a
	// parameter.
	attach := "ATTACH '" + strings.ReplaceAll(src, "'", "''") + "' AS src (READ_ONLY)"
	for _, q := range []string{queries.Get("bench_store_threads"), attach} {
		if _, err := db.Exec(q); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", q, err)
		}
	}
	t0 := cpuSeconds()
	var n int64
	if err := db.QueryRow(queries.Get("bench_store_scan")).Scan(&n); err != nil {
		return 0, 0, fmt.Errorf("reading the spans of %s: %w", src, err)
	}
	t1 := cpuSeconds()
	if _, err := db.Exec(queries.Get("bench_store_copy")); err != nil {
		return 0, 0, fmt.Errorf("bench_store_copy: %w", err)
	}
	return t1 - t0, cpuSeconds() - t1, nil
}

// cpuSeconds is the user and system time this process has used so far,
// DuckDB's threads included.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return rusageSeconds(&ru)
}

func rusageSeconds(ru *syscall.Rusage) float64 {
	return (time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())).Seconds()
}
