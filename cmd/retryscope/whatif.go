package main

import (
	"context"
	"fmt"

	"github.com/retryscope/retryscope/pipeline"
	"github.com/retryscope/retryscope/report"
)

// runWhatif is "retryscope whatif".
func runWhatif(ctx context.Context, e env, args []string) error {
	fs := newFlags("whatif", whatifSynopsis, whatifExamples)
	var db dbFlags
	db.register(fs, false)
	var wf whatifFlags
	wf.register(fs)
	prices := fs.String("prices", "", pricesHelp)
	var rb rebuildFlags
	rb.register(fs)
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return err
	}
	if err := wf.check(fs.Args()); err != nil {
		return &usageError{"whatif", err}
	}
	wf.prices = report.DefaultPrices()
	if *prices != "" {
		var err error
		if wf.prices, err = loadPrices(*prices); err != nil {
			return &usageError{"whatif", err}
		}
	}
	rbOpt, err := rb.options()
	if err != nil {
		return &usageError{"whatif", err}
	}
	if err := db.check("whatif"); err != nil {
		return err
	}
	st, err := pipeline.OpenDerived(ctx, db.path, db.openMode, rbOpt, e.stderr)
	if err != nil {
		return fmt.Errorf("whatif: %w", err)
	}
	defer st.Close()
	return wf.run(ctx, st, e.stdout)
}
