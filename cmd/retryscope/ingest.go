package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/progress"
	"github.com/retryscope/retryscope/internal/store"
)

// ingestMemoryLimit is DuckDB's memory limit while ingesting, unless
// --memory-limit says otherwise.
const ingestMemoryLimit = "256MB"

// goMemoryLimit is the Go heap's soft limit during ingest.
const goMemoryLimit = 192 << 20

const ingestExamples = `
  retryscope ingest testdata/sample/traces.jsonl
  retryscope ingest --db traces.duckdb /var/log/otel/traces/
  retryscope ingest 'dumps/2026-11-*.pb.zst'
  zcat traces.json.gz | retryscope ingest -
`

// dbFlags are the flags every database command shares.
type dbFlags struct {
	path        string
	memoryLimit string
	threads     int
	wait        bool
}

func (d *dbFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&d.path, "db", defaultDB, "DuckDB database file, created if missing")
	fs.StringVar(&d.memoryLimit, "memory-limit", "", "DuckDB memory limit (e.g. 512MB, 4GB); beyond it DuckDB spills to disk (default: "+ingestMemoryLimit+" while ingesting, DuckDB's own, 80% of RAM, for the rest)")
	fs.IntVar(&d.threads, "threads", 0, "DuckDB worker threads (default: one per CPU)")
	fs.BoolVar(&d.wait, "wait", false, "if another run holds the database, wait for it instead of failing")
}

// limitFlags bound what one input may cost; ingest and run share them.
type limitFlags struct {
	maxDuration  time.Duration
	maxRecordMiB int64
	maxDocMiB    int64
	maxExpansion int64
}

func (l *limitFlags) register(fs *pflag.FlagSet) {
	fs.DurationVar(&l.maxDuration, "max-span-duration", ingest.DefaultLimits.MaxDuration, "longest believable span; longer ones are quarantined")
	fs.Int64Var(&l.maxRecordMiB, "max-record-mib", ingest.DefaultLimits.MaxRecordBytes>>20,
		fmt.Sprintf("largest record (a JSON line, a framed or raw protobuf message), in MiB, at most %d; larger ones are rejected (record_too_large)", ingest.MaxRecordBytes>>20))
	fs.Int64Var(&l.maxDocMiB, "max-document-mib", ingest.DefaultLimits.MaxDocumentBytes>>20,
		"largest multi-line (pretty-printed) JSON document, in MiB without whitespace; larger ones are rejected (document_too_large)")
	fs.Int64Var(&l.maxExpansion, "max-expansion", ingest.DefaultLimits.MaxExpansion,
		fmt.Sprintf("most bytes a gzip or zstd file may expand to per compressed byte, beyond its first %d MiB; the rest of a file that expands more is rejected (expansion_limit)", ingest.DefaultLimits.ExpansionFloor>>20))
}

// check refuses limits that would switch a bound off.
func (l *limitFlags) check() error {
	switch {
	case l.maxDuration <= 0:
		return fmt.Errorf("--max-span-duration %s: want a positive duration", l.maxDuration)
	case l.maxRecordMiB <= 0 || l.maxRecordMiB > ingest.MaxRecordBytes>>20:
		return fmt.Errorf("--max-record-mib %d: want 1 to %d", l.maxRecordMiB, ingest.MaxRecordBytes>>20)
	case l.maxDocMiB <= 0:
		return fmt.Errorf("--max-document-mib %d: want a positive number of MiB", l.maxDocMiB)
	case l.maxDocMiB > ingest.MaxRecordBytes>>20:
		return fmt.Errorf("--max-document-mib %d: at most %d (the record limit)", l.maxDocMiB, ingest.MaxRecordBytes>>20)
	case l.maxExpansion <= 0:
		return fmt.Errorf("--max-expansion %d: want a positive ratio", l.maxExpansion)
	}
	return nil
}

func (l *limitFlags) limits() ingest.Limits {
	return ingest.Limits{MaxDuration: l.maxDuration, MaxRecordBytes: l.maxRecordMiB << 20, MaxDocumentBytes: l.maxDocMiB << 20,
		MaxExpansion: l.maxExpansion}
}

// open opens the database; with --wait it polls while another process
// holds the file, saying so once on log.
func (d *dbFlags) open(ctx context.Context, log io.Writer) (*store.Store, error) {
	said := false
	for {
		st, err := store.Open(ctx, d.path, store.Options{MemoryLimit: d.memoryLimit, Threads: d.threads})
		if err == nil || !d.wait || !errors.Is(err, store.ErrLocked) {
			return st, err
		}
		if !said {
			fmt.Fprintf(log, "retryscope: %s is held by another process; waiting (--wait)\n", d.path)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func runIngest(ctx context.Context, e env, args []string) int {
	fs := newFlags("ingest", "ingest [--db FILE] PATH...", ingestExamples)
	var db dbFlags
	db.register(fs)
	var lim limitFlags
	lim.register(fs)
	workers := fs.Int("workers", 0, "decoding goroutines (default: one per CPU)")
	quiet := fs.BoolP("quiet", "q", false, "print only rejections and the summary, not a line per file")
	if code, stop := parseFlags(fs, args, e.stdout, e.stderr); stop {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(e.stderr, "ingest", fmt.Errorf("ingest needs at least one PATH (a file, directory, glob, or - for stdin)"))
	}
	if err := lim.check(); err != nil {
		return usageError(e.stderr, "ingest", err)
	}
	// The decoded records in flight are short-lived; a soft limit keeps
	// the Go heap from growing beside DuckDB's own memory limit.
	debug.SetMemoryLimit(goMemoryLimit)
	st, err := db.open(ctx, e.stderr)
	if err != nil {
		return failure(e.stderr, err)
	}
	defer st.Close()

	sum, err := ingestPaths(ctx, st, db, fs.Args(), e, ingest.Options{
		Limits:  lim.limits(),
		Workers: *workers,
		Exclude: []string{db.path, db.path + ".wal", db.path + ".tmp"},
	}, *quiet)
	if err != nil {
		return failure(e.stderr, err)
	}
	if _, _, _, _, rejected := sum.Totals(); rejected > 0 {
		return exitRejected
	}
	return exitOK
}

// ingestPaths runs ingest with progress on a terminal and prints the summary.
func ingestPaths(ctx context.Context, st *store.Store, db dbFlags, paths []string, e env, opt ingest.Options, quiet bool) (ingest.Summary, error) {
	// Ingest streams, so a small limit costs little and keeps the process
	// small; the rebuild and reports that follow get DuckDB's default.
	if db.memoryLimit == "" {
		prev, err := st.SetMemoryLimit(ctx, ingestMemoryLimit)
		if err != nil {
			return ingest.Summary{}, err
		}
		defer st.SetMemoryLimit(context.WithoutCancel(ctx), prev)
	}
	line := progress.New(e.stderr)
	opt.Stdin = e.stdin
	opt.Log = line
	if quiet {
		opt.Log = rejectionsOnly{line}
	}
	opt.Progress = func(path string, read, size, spans int64) {
		line.Set(progress.Bar(path, read, size, fmt.Sprintf("%d spans", spans)))
	}
	sum, err := ingest.Run(ctx, st, paths, opt)
	line.Clear()
	if err != nil {
		return sum, err
	}
	stored, err := st.CountSpans(ctx)
	if err != nil {
		return sum, err
	}
	fmt.Fprintln(e.stderr, summaryLine(sum, stored))
	return sum, nil
}

func summaryLine(sum ingest.Summary, stored int64) string {
	ingested, skipped, spans, spansNew, rejected := sum.Totals()
	var b strings.Builder
	fmt.Fprintf(&b, "ingest: %d files read, %d skipped as already ingested; %d spans (%d new), %d in the database",
		ingested, skipped, spans, spansNew, stored)
	if secs := sum.Elapsed.Seconds(); secs > 0 && spans > 0 {
		fmt.Fprintf(&b, "; %.1fs, %.0f spans/s", secs, float64(spans)/secs)
	} else {
		fmt.Fprintf(&b, "; %s", sum.Elapsed.Round(time.Millisecond))
	}
	if rejected > 0 {
		var parts []string
		for _, r := range ingest.SortedReasons(sum.Rejected) {
			parts = append(parts, fmt.Sprintf("%s %d", r, sum.Rejected[r]))
		}
		fmt.Fprintf(&b, "\ningest: %d rejected (%s); see the ingest_errors table", rejected, strings.Join(parts, ", "))
	}
	return b.String()
}

// rejectionsOnly passes through the log lines that report a problem.
type rejectionsOnly struct{ w *progress.Line }

func (r rejectionsOnly) Write(p []byte) (int, error) {
	s := string(p)
	if strings.Contains(s, " spans (") || strings.Contains(s, ": skipped, ") {
		return len(p), nil
	}
	return r.w.Write(p)
}
