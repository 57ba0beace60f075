package main

import (
	"context"
	"fmt"

	"github.com/retryscope/retryscope/export"
	"github.com/retryscope/retryscope/internal/progress"
	"github.com/retryscope/retryscope/pipeline"
	"github.com/retryscope/retryscope/report"
)

const exportExamples = `
  retryscope export --parquet parquet/
  retryscope export --db traces.duckdb --parquet /srv/notebooks/retries

Writes DIR/<table>/date=YYYY-MM-DD/data.parquet for the tables requests,
attempts, baselines and daily; read them all with one glob, e.g. in DuckDB:
  SELECT * FROM read_parquet('parquet/requests/*/*.parquet',
                             hive_partitioning = true)
`

// runExport is "retryscope export".
func runExport(ctx context.Context, e env, args []string) error {
	fs := newFlags("export", "export [--db FILE] --parquet DIR", exportExamples)
	var db dbFlags
	db.register(fs, false)
	dir := fs.String("parquet", "", "directory to write the Parquet files under (required)")
	pricesFile := fs.String("prices", "", pricesHelp)
	var rb rebuildFlags
	rb.register(fs)
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return err
	}
	if *dir == "" {
		return usageErrorf("export", "export needs --parquet DIR")
	}
	if fs.NArg() > 0 {
		return usageErrorf("export", "export takes no arguments (got %q)", fs.Arg(0))
	}
	rbOpt, err := rb.options()
	if err != nil {
		return &usageError{"export", err}
	}
	prices := report.DefaultPrices()
	if *pricesFile != "" {
		if prices, err = loadPrices(*pricesFile); err != nil {
			return &usageError{"export", fmt.Errorf("--prices: %w", err)}
		}
	}
	if err := db.check("export"); err != nil {
		return err
	}
	st, err := pipeline.OpenDerived(ctx, db.path, db.openMode, rbOpt, e.stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	prog := progress.NewReporter(e.stderr)
	res, err := export.Export(ctx, st, *dir, export.Options{Log: e.stderr, Progress: pipeline.ExportProgress(prog), Prices: prices})
	prog.Done()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "export: %d files, %d rows under %s\n", res.Files, res.Rows, *dir)
	return nil
}
