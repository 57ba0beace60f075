package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retryscope/retryscope/export"
	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/crashpoint"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/queries"
	"github.com/retryscope/retryscope/rebuild"
)

const runExamples = `
  retryscope run --parquet parquet/ --report report.html /var/log/otel/traces/
  retryscope run --db /srv/retryscope.duckdb --keep 30d --wait --parquet /srv/parquet /srv/dumps/
  # crontab: every night at 02:15, mail on failure or rejected input
  15 2 * * * cd /srv/retryscope && retryscope run --wait --keep 30d --parquet parquet --report report.html dumps/ || echo "exit $?"
`

func runRun(ctx context.Context, e env, args []string) int {
	fs := newFlags("run", "run [--db FILE] [--parquet DIR] [--report FILE] PATH...\n\nIngests what is new under PATH, brings requests and baselines up to date, writes\nParquet (with --parquet) and the report (to --report FILE, else to stdout).\nThe report covers the requests this run added or changed, so a night costs\nwhat the night holds; --since/--until choose another window, and\n'retryscope report' covers the whole database.", runExamples)
	var db dbFlags
	db.register(fs)
	parquetDir := fs.String("parquet", "", "write Parquet files under DIR (requests, attempts, baselines, daily; one folder per day)")
	keep := fs.String("keep", "", "drop data older than this (e.g. 30d, 12h); default keeps everything")
	nowFlag := fs.String("now", "", "the time --keep counts back from, RFC 3339 (default: the clock; for backfills and tests)")
	var lim limitFlags
	lim.register(fs)
	var rep reportFlags
	rep.register(fs, "report")
	var rb rebuildFlags
	rb.register(fs)
	if code, stop := parseFlags(fs, args, e.stdout, e.stderr); stop {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(e.stderr, "run", fmt.Errorf("run needs at least one PATH to ingest (a file, directory, glob, or -)"))
	}
	var retention time.Duration
	if *keep != "" {
		d, err := parseRetention(*keep)
		if err != nil {
			return usageError(e.stderr, "run", err)
		}
		retention = d
	}
	now := time.Now()
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339, *nowFlag)
		if err != nil {
			return usageError(e.stderr, "run", fmt.Errorf("--now: %v", err))
		}
		now = t
	}
	if err := rep.check(); err != nil {
		return usageError(e.stderr, "run", err)
	}
	if err := lim.check(); err != nil {
		return usageError(e.stderr, "run", err)
	}
	rb.splitSet = fs.Changed("split-window")
	rbOpt, err := rb.options()
	if err != nil {
		return usageError(e.stderr, "run", err)
	}

	start := time.Now()
	st, err := db.open(ctx, e.stderr)
	if err != nil {
		return failure(e.stderr, err)
	}
	defer st.Close()
	logf := func(format string, a ...any) { fmt.Fprintf(e.stderr, "run: "+format+"\n", a...) }
	fail := func(err error) int {
		return failure(e.stderr, explainFull(err, filepath.Dir(db.path), *parquetDir, filepath.Dir(rep.output)))
	}

	sum, err := ingestPaths(ctx, st, db, fs.Args(), e, ingest.Options{
		Limits:  lim.limits(),
		Exclude: []string{db.path, db.path + ".wal", db.path + ".tmp"},
	}, true)
	if err != nil {
		return fail(err)
	}
	_, _, _, _, rejected := sum.Totals()

	pruned := int64(0)
	if retention > 0 {
		pruned, err = rebuild.Prune(ctx, st, now.Add(-retention).UnixNano())
		if err != nil {
			return fail(fmt.Errorf("prune: %w", err))
		}
		logf("dropped %d spans older than %s", pruned, *keep)
	}
	// The report's window is remembered in the transaction that changes
	// the derived tables, so a run stopped after it writes the same report
	// when run again.
	window := func(change derivedChange) error { return nil }
	var w model.Window
	if !fs.Changed("since") && !fs.Changed("until") {
		window = func(change derivedChange) (err error) {
			w, err = runWindow(ctx, st, change)
			return err
		}
	}
	if _, err := updateDerived(ctx, st, rbOpt, prefixed{e.stderr, "run: "}, window); err != nil {
		return fail(err)
	}
	if *parquetDir != "" {
		if err := exportPending(ctx, st, *parquetDir, logf); err != nil {
			return fail(err)
		}
	}
	if !fs.Changed("since") && !fs.Changed("until") {
		rep.setWindow(w, "the requests the latest run with new data added or changed")
		if w.All() {
			rep.why = ""
		}
	}
	rep.dbPath = db.path
	t0 := time.Now()
	if err := rep.write(ctx, st, e.stdout); err != nil {
		return fail(err)
	}
	if rep.output != "" {
		logf("report: %s in %s", rep.output, time.Since(t0).Round(time.Millisecond))
	}
	logf("done in %s", time.Since(start).Round(time.Millisecond))
	if rejected > 0 {
		return exitRejected
	}
	return exitOK
}

// runWindow is the window the nightly report covers: the requests this
// run's new data added or changed, so a night's report costs what the
// night does, however long the history; every request when this run
// rebuilt everything; and, when the run changed nothing, the window of the
// last run that did, so its report comes out the same. It is remembered in
// the table run_window.
func runWindow(ctx context.Context, st *store.Store, change derivedChange) (model.Window, error) {
	var w model.Window
	switch {
	case change.all:
	case !change.requests.All():
		w = change.requests
	default:
		if !hasTable(ctx, st, "run_window") {
			return w, nil
		}
		err := st.Conn.QueryRowContext(ctx, `SELECT since_ns, until_ns FROM run_window`).Scan(&w.Since, &w.Until)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return w, fmt.Errorf("read the last run's window: %w", err)
		}
		return w, nil
	}
	if _, err := st.Conn.ExecContext(ctx, queries.Get("run_window"), w.Since, w.Until); err != nil {
		return w, fmt.Errorf("remember the run's window: %w", err)
	}
	return w, nil
}

// exportPending writes the Parquet days that parquet_pending lists (every
// day for "*", or when dir holds no export yet), then empties it. The days
// are recorded before the first file is written and cleared only after the
// last, so an export stopped by a kill or a full disk is done again, whole,
// by the next run.
func exportPending(ctx context.Context, st *store.Store, dir string, logf func(string, ...any)) error {
	if _, err := st.Conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS parquet_pending (day VARCHAR NOT NULL)`); err != nil {
		return err
	}
	if !hasParquet(dir) {
		if _, err := st.Conn.ExecContext(ctx, `INSERT INTO parquet_pending SELECT '*' WHERE '*' NOT IN (SELECT day FROM parquet_pending)`); err != nil {
			return err
		}
	}
	rows, err := st.Conn.QueryContext(ctx, `SELECT day FROM parquet_pending ORDER BY day`)
	if err != nil {
		return err
	}
	days := []string{} // none, not nil (every day)
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return err
		}
		days = append(days, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(days) == 0 {
		logf("parquet: unchanged")
		return nil
	}
	if slices.Contains(days, "*") {
		days = nil
	}
	if err := crashpoint.Hit("export.pending"); err != nil {
		return err
	}
	t0 := time.Now()
	res, err := export.Export(ctx, st, dir, export.Options{Days: days})
	if err != nil {
		return err
	}
	if err := crashpoint.Hit("export.done"); err != nil {
		return err
	}
	if _, err := st.Conn.ExecContext(ctx, `DELETE FROM parquet_pending`); err != nil {
		return err
	}
	logf("parquet: %d files, %d rows, %d old days removed under %s in %s", res.Files, res.Rows, res.Removed, dir,
		time.Since(t0).Round(time.Millisecond))
	return nil
}

// prefixed writes each line with a prefix, for plain cron-mail logs.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	for _, l := range lines {
		if l != "" {
			io.WriteString(p.w, p.prefix+l)
		}
	}
	return len(b), nil
}

// hasParquet reports whether an export was written under dir before.
func hasParquet(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "requests", "date=*", "data.parquet"))
	return len(m) > 0
}

// parseRetention reads a span of time such as 30d, 36h or 90m.
func parseRetention(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("--keep %q: want a positive number of days like 30d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--keep %q: want a span like 30d, 36h or 90m", s)
	}
	return d, nil
}
