package main

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"
)

// Step S is the storing alone: DuckDB copying the spans an ingest stored
// into a fresh database, on one thread, with no decoding and no Go in the
// way. What it costs in CPU is a floor under any ingest into DuckDB: on C
// cores, an ingest cannot take less than S/C seconds even if decoding cost
// nothing, so the bench prints S/(C·R) as the least I/R this machine
// allows, and (S+R)/(C·R) for a decoder as costly as pdata's.
//
// The copy reads the stored spans too; that reading is measured on its own
// first (hashing every row, which costs more than the copy's own reading)
// and taken off, so S errs low.
const (
	storeScan = `SELECT count(*) FROM (SELECT * FROM src.spans) AS t WHERE hash(t) = 0`
	storeCopy = `CREATE TABLE spans AS SELECT * FROM src.spans`
)

// runStore is step S: bench store SRC DST. It prints the CPU seconds of
// the reading and of the copy, as "scan S copy C".
func runStore(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, "usage: bench store SRC DST (SRC: a database ingest made; DST: a new file)")
		return 2
	}
	if _, err := os.Stat(args[1]); err == nil {
		fmt.Fprintf(stderr, "store: %s exists: give a new file to copy into\n", args[1])
		return 2
	}
	db, err := sql.Open("duckdb", args[1])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	steps := []string{"SET threads = 1", "ATTACH '" + strings.ReplaceAll(args[0], "'", "''") + "' AS src (READ_ONLY)"}
	for _, q := range steps {
		if _, err := db.Exec(q); err != nil {
			fmt.Fprintf(stderr, "store: %s: %v\n", q, err)
			return 1
		}
	}
	var cpu [3]float64
	cpu[0] = cpuSeconds()
	var n int64
	if err := db.QueryRow(storeScan).Scan(&n); err != nil {
		fmt.Fprintf(stderr, "store: reading %s: %v\n", args[0], err)
		return 1
	}
	cpu[1] = cpuSeconds()
	for _, q := range []string{storeCopy, "CHECKPOINT"} {
		if _, err := db.Exec(q); err != nil {
			fmt.Fprintf(stderr, "store: %s: %v\n", q, err)
			return 1
		}
	}
	cpu[2] = cpuSeconds()
	fmt.Fprintf(stdout, "scan %.3f copy %.3f\n", cpu[1]-cpu[0], cpu[2]-cpu[1])
	return 0
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
