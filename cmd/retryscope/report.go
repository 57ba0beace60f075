package main

import (
	"context"
	"fmt"

	"github.com/retryscope/retryscope/internal/pipeline"
	"github.com/retryscope/retryscope/internal/progress"
	"github.com/retryscope/retryscope/rebuild"
	"github.com/retryscope/retryscope/report"
	"github.com/retryscope/retryscope/whatif"
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
	var out report.Flags
	out.Register(fs, "output")
	explain := fs.Bool("explain", false, "also show how many logical requests each rebuild rule built")
	whatifPolicy := fs.String("whatif", "", "also replay the window's requests under the retry policy of this file (as whatif --policy reads it): a whatif block, every figure modeled (not in CSV, the segment table, nor with --findings)")
	var rb rebuild.Flags
	rb.Register(fs)
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return err
	}
	if err := out.Check(); err != nil {
		return &usageError{"report", err}
	}
	if err := db.check("report"); err != nil {
		return err
	}
	rbOpt, err := rb.Options()
	if err != nil {
		return &usageError{"report", err}
	}
	if fs.NArg() > 0 {
		return usageErrorf("report", "report takes no arguments (got %q); name the database with --db", fs.Arg(0))
	}
	if *whatifPolicy != "" {
		block, err := whatif.ReportBlock(*whatifPolicy)
		if err != nil {
			return &usageError{"report", fmt.Errorf("--whatif: %w", err)}
		}
		out.SetWhatif(block)
	}
	st, err := pipeline.OpenDerived(ctx, db.path, db.openMode, rbOpt, e.stderr)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer st.Close()
	prog := progress.NewReporter(e.stderr)
	defer prog.Done()
	out.SetProgress(reportProgress(prog))
	if err := out.Write(ctx, st, e.stdout, db.path, *explain); err != nil {
		return fmt.Errorf("report %s: %w", db.path, err)
	}
	return nil
}

// reportProgress shows the report's build steps on rep.
func reportProgress(rep *progress.Reporter) func(step string, i, n int) {
	return func(step string, i, n int) {
		rep.Update(progress.Bar("report", int64(i-1), int64(n), step))
	}
}
