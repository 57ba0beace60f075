package main

import (
	"context"
	"runtime/debug"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/flagval"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/pipeline"
)

// ingestMemoryLimit is DuckDB's memory limit while ingesting, unless
// --memory-limit says otherwise. Ingest streams: DuckDB needs room for the
// row groups it is compressing, and 128MB loads 1M spans as fast as 192MB
// did. DuckDB's memory outside the limit grows with the table (a 10M-span
// ingest peaked at 620 MB with 192MB, 555 MB with 128MB; docs/performance.md).
const ingestMemoryLimit = "128MB"

// ingestThreads is DuckDB's number of threads while ingesting, unless
// --threads says otherwise. DuckDB loads the spans on the thread that runs
// the statement (the load is one ordered stream), and a second DuckDB
// thread only spins waiting for it, taking a core from the decoders.
const ingestThreads = 1

// goMemoryLimit is the Go heap's soft limit during ingest: the decoded
// records in flight are short-lived, and the limit keeps the heap from
// growing beside DuckDB's own memory limit. It must stay well above the
// live heap, which is mostly the store's two chunks of staged spans
// (store.chunkSpans): with the heap at the limit Go collects back to back.
const goMemoryLimit = 128 << 20

const ingestExamples = `
  retryscope ingest testdata/sample/traces.jsonl
  retryscope ingest --db traces.duckdb /var/log/otel/traces/
  retryscope ingest 'dumps/2026-11-*.pb.zst'
  zcat traces.json.gz | retryscope ingest -
`

// maxWorkers is the most decoding goroutines --workers takes.
const maxWorkers = 1024

// runIngest is "retryscope ingest".
func runIngest(ctx context.Context, e env, args []string) error {
	fs := newFlags("ingest", "ingest [--db FILE] PATH...", ingestExamples)
	var db dbFlags
	db.register(fs, true)
	var lim ingest.Limits
	checkLimits := registerLimits(fs, &lim)
	var workers int
	fs.Var(flagval.NewInt(&workers, 0, 1, maxWorkers).OrZero("one per CPU"), "decoders", "decoding goroutines (default: one per CPU)")
	// Its name before report's --workers (the servers' workers) took it.
	fs.Var(flagval.NewInt(&workers, 0, 1, maxWorkers).OrZero("one per CPU"), "workers", "decoding goroutines: use --decoders")
	fs.MarkDeprecated("workers", "use --decoders (report's --workers are the servers' workers)")
	quiet := fs.BoolP("quiet", "q", false, "print only rejections and the summary, not a line per file")
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErrorf("ingest", "ingest needs at least one PATH (a file, directory, glob, or - for stdin)")
	}
	if err := checkLimits(); err != nil {
		return &usageError{"ingest", err}
	}
	if err := db.check("ingest"); err != nil {
		return err
	}
	st, err := db.open(ctx, e.stderr)
	if err != nil {
		return err
	}
	defer st.Close()

	sum, err := ingestPaths(ctx, st, db, fs.Args(), e, ingest.Options{
		Limits:  lim,
		Workers: workers,
		Exclude: []string{db.path, db.path + ".wal", db.path + ".tmp"},
		Quiet:   *quiet,
	})
	if err != nil {
		return err
	}
	if rejected := sum.Totals().Rejected; rejected > 0 {
		return errRejected
	}
	return nil
}

// ingestPaths runs ingest with progress on a terminal and prints the summary.
func ingestPaths(ctx context.Context, st *store.Store, db dbFlags, paths []string, e env, opt ingest.Options) (ingest.Summary, error) {
	opt.Stdin = e.stdin
	// Ingest streams, so a small limit costs little and keeps the process
	// small; the rebuild and reports that follow get defaultMemoryLimit.
	limit := ingestMemoryLimit
	if db.memoryLimit != "" {
		limit = ""
	}
	threads := ingestThreads
	if db.threads != 0 {
		threads = 0
	}
	// The Go heap's soft limit holds while ingesting, and the one before it
	// (none, unless GOMEMLIMIT) for what run does next.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(goMemoryLimit))
	return pipeline.Ingest(ctx, st, paths, opt, limit, threads, e.stderr)
}
