package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/retryscope/retryscope/internal/progress"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/pipeline"
)

const reportExamples = `
  retryscope report
  retryscope report --db traces.duckdb --explain
  retryscope report --baseline all --by model,route
  retryscope report --by trigger,time:1h --since 2026-11-29T00:00:00Z --ci
  retryscope report --by attr:cloud.region --where outcome=error -o report.md
  retryscope report -o report.html
  retryscope report --format json -o report.json
  retryscope report --id-key app.request_id --attempt-key app.try \
    --first-token-event stream.first_chunk

Dimensions for --by and --where: service, operation, model, route,
retry_route, trigger, region, environment, input_tokens, output_tokens,
stream, cache, outcome, time (time:15m), attr:NAME (anchor span attribute),
resource:NAME (resource attribute). --where, --since and --until narrow the
segment table; the workload block always covers every request.

The report rebuilds logical requests and baselines first when they are
missing or older than the last ingest.
`

func runReport(ctx context.Context, e env, args []string) error {
	fs := newFlags("report", "report [--db FILE] [--baseline KIND] [--by DIM,...] [--format table|markdown|csv|json|html] [-o FILE]", reportExamples)
	var db dbFlags
	db.register(fs, false)
	var out reportFlags
	out.Register(fs, "output")
	explain := fs.Bool("explain", false, "also show how many logical requests each rebuild rule built")
	whatifPolicy := fs.String("whatif", "", "also replay the window's requests under the retry policy of this file (as whatif --policy reads it): a whatif block, every figure modeled (not in CSV, the segment table, nor with --findings)")
	datasets := fs.StringArray("dataset", nil, "report over the union of these Parquet datasets (the --parquet directories of shard runs; repeat the flag) instead of a database: see 'retryscope help shard'")
	var rb rebuildFlags
	rb.register(fs)
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return err
	}
	if err := out.Check(); err != nil {
		return &usageError{"report", err}
	}
	if err := db.check("report"); err != nil {
		return err
	}
	rbOpt, err := rb.options()
	if err != nil {
		return &usageError{"report", err}
	}
	if fs.NArg() > 0 {
		return usageErrorf("report", "report takes no arguments (got %q); name the database with --db", fs.Arg(0))
	}
	if *whatifPolicy != "" {
		block, err := whatifReportBlock(*whatifPolicy)
		if err != nil {
			return &usageError{"report", fmt.Errorf("--whatif: %w", err)}
		}
		out.SetWhatif(block)
	}
	if len(*datasets) > 0 {
		if fs.Changed("db") {
			return usageErrorf("report", "--dataset reads Parquet datasets instead of a database: give --db or --dataset, not both")
		}
		if *whatifPolicy != "" {
			return usageErrorf("report", "--whatif replays attempts with their spans, which a --dataset does not carry: run it on a shard's database (--db)")
		}
		for _, name := range []string{"id-key", "attempt-key", "first-token-event", "route-key", "model-key", "split-window", "config"} {
			if fs.Changed(name) {
				return usageErrorf("report", "--%s: the shards rebuilt their requests, so a --dataset takes no rebuild flags; give it to the shards' runs", name)
			}
		}
		for _, name := range []string{"by", "where", "task-key"} {
			if f := fs.Lookup(name); f != nil && (strings.Contains(f.Value.String(), "attr:") || strings.Contains(f.Value.String(), "resource:") || name == "task-key" && f.Changed) {
				return usageErrorf("report", "--%s %s needs the spans, which a --dataset does not carry: report it from a shard's database (--db)", name, f.Value.String())
			}
		}
		st, closeAll, err := pipeline.OpenDataset(ctx, slices.Compact(slices.Sorted(slices.Values(*datasets))), db.storeOptions())
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		defer closeAll()
		out.SetDataset()
		return writeReport(ctx, e, &out, st, strings.Join(*datasets, ", "), *explain)
	}
	st, err := pipeline.OpenDerived(ctx, db.path, db.openMode, rbOpt, e.stderr)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer st.Close()
	return writeReport(ctx, e, &out, st, db.path, *explain)
}

// writeReport writes the report of st, whose source source names.
func writeReport(ctx context.Context, e env, out *reportFlags, st *store.Store, source string, explain bool) error {
	prog := progress.NewReporter(e.stderr)
	defer prog.Done()
	out.SetProgress(reportProgress(prog))
	if err := out.Write(ctx, st, e.stdout, source, explain); err != nil {
		return fmt.Errorf("report %s: %w", source, err)
	}
	return nil
}

// reportProgress shows the report's build steps on rep.
func reportProgress(rep *progress.Reporter) func(step string, i, n int) {
	return func(step string, i, n int) {
		rep.Update(progress.Bar("report", int64(i-1), int64(n), step))
	}
}
