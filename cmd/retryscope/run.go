package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/progress"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/pipeline"
)

const runExamples = `
  retryscope run --parquet parquet/ --report report.html /var/log/otel/traces/
  retryscope run --db /srv/retryscope.duckdb --keep 30d --wait \
    --parquet /srv/parquet /srv/dumps/
  # crontab: every night at 02:15, mail on failure or rejected input
  15 2 * * * cd /srv/retryscope && retryscope run --wait --keep 30d \
    --report report.html dumps/ || echo "exit $?"
`

// runRun is "retryscope run".
func runRun(ctx context.Context, e env, args []string) error {
	fs := newFlags("run", "run [--db FILE] [--parquet DIR] [--report FILE] PATH...\n\nIngests what is new under PATH, brings requests and baselines up to date, writes\nParquet (with --parquet) and the report (to --report FILE, else to stdout).\nThe report covers the requests this run added or changed, so a night costs\nwhat the night holds; --since/--until choose another window, and\n'retryscope report' covers the whole database.", runExamples)
	var db dbFlags
	db.register(fs, true)
	parquetDir := fs.String("parquet", "", "write Parquet files under DIR (requests, attempts, baselines, daily; one folder per day)")
	keep := fs.String("keep", "", "drop data older than this (e.g. 30d, 12h); default keeps everything")
	nowFlag := fs.String("now", "", "the time --keep counts back from, RFC 3339 (default: the clock; for backfills and tests)")
	var lim ingest.Limits
	checkLimits := registerLimits(fs, &lim)
	var rep reportFlags
	rep.Register(fs, "report")
	var rb rebuildFlags
	rb.register(fs)
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErrorf("run", "run needs at least one PATH to ingest (a file, directory, glob, or -)")
	}
	cutoff, err := pipeline.KeepCutoff(*keep, *nowFlag, time.Now())
	if err != nil {
		return &usageError{"run", err}
	}
	if err := rep.Check(); err != nil {
		return &usageError{"run", err}
	}
	if err := checkLimits(); err != nil {
		return &usageError{"run", err}
	}
	if err := db.check("run"); err != nil {
		return err
	}
	rbOpt, err := rb.options()
	if err != nil {
		return &usageError{"run", err}
	}

	start := time.Now()
	st, err := db.open(ctx, e.stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	logf := func(format string, a ...any) { fmt.Fprintf(e.stderr, "run: "+format+"\n", a...) }
	fail := func(err error) error {
		return store.ExplainFull(err, filepath.Dir(db.path), *parquetDir, filepath.Dir(rep.Output()))
	}

	sum, err := ingestPaths(ctx, st, db, fs.Args(), e, ingest.Options{
		Limits:  lim,
		Exclude: []string{db.path, db.path + ".wal", db.path + ".tmp"},
		Quiet:   true,
	})
	if err != nil {
		return fail(err)
	}
	rejected := sum.Totals().Rejected

	runWindow := !fs.Changed("since") && !fs.Changed("until")
	w, err := pipeline.Nightly(ctx, st, pipeline.NightlyOptions{
		Cutoff:     cutoff,
		Keep:       *keep,
		Rebuild:    rbOpt,
		RunWindow:  runWindow,
		ParquetDir: *parquetDir,
		Prices:     rep.Prices(),
		Logf:       logf,
		Log:        progress.Prefixed{W: e.stderr, Prefix: "run: "},
	})
	if err != nil {
		return fail(err)
	}
	if runWindow {
		why := "the requests the latest run with new data added or changed"
		if w.All() {
			why = ""
		}
		rep.SetWindow(w, why)
	}
	t0 := time.Now()
	prog := progress.NewReporter(progress.Prefixed{W: e.stderr, Prefix: "run: "})
	rep.SetProgress(reportProgress(prog))
	err = rep.Write(ctx, st, e.stdout, db.path, false)
	prog.Done()
	if err != nil {
		return fail(err)
	}
	if rep.Output() != "" {
		logf("report: %s in %s", rep.Output(), time.Since(t0).Round(time.Millisecond))
	}
	logf("done in %s", time.Since(start).Round(time.Millisecond))
	if rejected > 0 {
		return errRejected
	}
	return nil
}
