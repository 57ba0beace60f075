package main

import (
	"context"
	"fmt"

	"github.com/retryscope/retryscope/export"
	"github.com/retryscope/retryscope/internal/pipeline"
)

const exportExamples = `
  retryscope export --parquet parquet/
  retryscope export --db traces.duckdb --parquet /srv/notebooks/retries

Writes DIR/<table>/date=YYYY-MM-DD/data.parquet for the tables requests,
attempts, baselines and daily; read them all with one glob, e.g. in DuckDB:
  SELECT * FROM read_parquet('parquet/requests/*/*.parquet', hive_partitioning = true)
`

func runExport(ctx context.Context, e env, args []string) int {
	fs := newFlags("export", "export [--db FILE] --parquet DIR", exportExamples)
	var db dbFlags
	db.register(fs)
	dir := fs.String("parquet", "", "directory to write the Parquet files under (required)")
	var rb rebuildFlags
	rb.register(fs)
	if code, stop := parseFlags(fs, args, e.stdout, e.stderr); stop {
		return code
	}
	if *dir == "" {
		return usageError(e.stderr, "export", fmt.Errorf("export needs --parquet DIR"))
	}
	if fs.NArg() > 0 {
		return usageError(e.stderr, "export", fmt.Errorf("export takes no arguments (got %q)", fs.Arg(0)))
	}
	rb.splitSet = fs.Changed("split-window")
	rbOpt, err := rb.options()
	if err != nil {
		return usageError(e.stderr, "export", err)
	}
	st, err := pipeline.OpenDerived(ctx, db.path, db.open, rbOpt, e.stderr)
	if err != nil {
		return failure(e.stderr, err)
	}
	defer st.Close()
	res, err := export.Export(ctx, st, *dir, export.Options{Log: e.stderr})
	if err != nil {
		return failure(e.stderr, err)
	}
	fmt.Fprintf(e.stderr, "export: %d files, %d rows under %s\n", res.Files, res.Rows, *dir)
	return exitOK
}
