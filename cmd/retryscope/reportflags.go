package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/baseline"
	"github.com/retryscope/retryscope/internal/flagval"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/report"
	"github.com/retryscope/retryscope/segment"
)

// reportFlags are the command-line flags that choose what a report shows
// and where it is written; the report and run commands share them.
type reportFlags struct {
	format    string
	output    string
	baseline  string
	by        string
	where     []string
	since     string
	until     string
	bucket    string
	ci        bool
	findings  bool
	minCohort int
	sortBy    string
	p99Budget string
	ampBudget string
	prices    string
	taskKey   string
	full      bool
	sections  string
	workers   int

	opt report.Options
}

// Register adds the flags; outputFlag names the flag for the output file
// ("output" with -o for report, "report" for run).
func (r *reportFlags) Register(fs *pflag.FlagSet, outputFlag string) {
	if outputFlag == "output" {
		fs.StringVarP(&r.output, "output", "o", "", "write the report to FILE (format from its extension: .txt .md .csv .json .html) instead of stdout")
	} else {
		fs.StringVar(&r.output, outputFlag, "", "write the report to FILE (format from its extension: .txt .md .csv .json .html)")
	}
	fs.StringVar(&r.format, "format", "", "table, markdown, csv, json or html (default: from --"+outputFlag+"'s extension, else table)")
	fs.StringVar(&r.baseline, "baseline", baseline.KindHealthy, "baseline kind for added latency: "+strings.Join(baseline.Kinds(), ", ")+", all, or none")
	fs.StringVar(&r.by, "by", "trigger", "segment dimensions, comma-separated: "+strings.Join(segment.KindNames(), ", ")+" (time:15m for a width), attr:NAME, resource:NAME; none for no segments")
	fs.StringArrayVar(&r.where, "where", nil, "keep segment requests where DIM=V1|V2 or DIM!=V (repeatable)")
	fs.StringVar(&r.since, "since", "", "report the requests started at or after this time (RFC 3339, or a UTC day 2026-11-29)")
	fs.StringVar(&r.until, "until", "", "report the requests started before this time (RFC 3339, or a UTC day)")
	fs.StringVar(&r.bucket, "bucket", "1h", "width of the time dimension (e.g. 15m, 1h, 1d)")
	fs.BoolVar(&r.ci, "ci", false, "add seeded bootstrap 95% confidence intervals to p95/p99 and added latency")
	fs.BoolVar(&r.full, "full", false, "show every section, not a screen's worth (JSON always holds every one)")
	fs.StringVar(&r.sections, "section", "", "show these sections, comma-separated, in this order: "+strings.Join(report.Sections, ", ")+"; or all")
	fs.BoolVar(&r.findings, "findings", false, "print only the findings: what to change in the retry policy, most costly first")
	fs.Var(flagval.NewInt(&r.minCohort, report.DefaultMinCohort, 1, report.MaxMinCohort), "min-cohort", "segments with fewer requests are pooled into (other)")
	fs.StringVar(&r.sortBy, "sort", "retried_p99", "segment order: retried_p99, amplification, requests or key")
	fs.StringVar(&r.p99Budget, "p99-budget", "none", "p99 latency the marginal yield's attempt ceiling keeps to (e.g. 2s, 800ms), or none")
	fs.StringVar(&r.ampBudget, "amplification-budget", "none", "attempts per request the attempt ceiling keeps to (e.g. 1.2), or none")
	fs.StringVar(&r.taskKey, "task-key", "", "anchor-span attribute naming the task a request belongs to (default: its trace)")
	fs.StringVar(&r.prices, "prices", "", pricesHelp)
	fs.Var(flagval.NewInt(&r.workers, 0, 1, report.MaxWorkers).OrZero("an estimate"), "workers",
		"servers' concurrent workers the offered load λ·S is set against: utilisation λ·S/N (default: estimated from the plateau of attempts in flight)")
}

// pricesHelp is the help of --prices, which report, run, export and whatif share:
// the report's spend and the Parquet's are priced by the same table.
const pricesHelp = `price table for spend: JSON {"model": {"input_per_mtok": 2.5, "output_per_mtok": 10}}, USD per 1M tokens, over the built-in list prices (default: built-in only)`

// loadPrices reads the --prices file path over the built-in list prices
// (report.ReadPrices).
func loadPrices(path string) (model.Prices, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	return report.ReadPrices(bytes.NewReader(b), path)
}

// Prices is the table spend is priced by: --prices laid over the
// built-in list prices. Call it after Check.
func (r *reportFlags) Prices() model.Prices {
	if p := r.opt.Segments.Prices; p != nil {
		return p
	}
	return report.DefaultPrices()
}

// Check validates the flags and resolves the format and the options.
func (r *reportFlags) Check() error {
	if r.format == "" {
		r.format = formatFromExtension(r.output)
	}
	if !slices.Contains(report.Formats, r.format) {
		return fmt.Errorf("unknown --format %q (want %s)", r.format, strings.Join(report.Formats, ", "))
	}
	if r.baseline != "all" && r.baseline != "none" && !slices.Contains(baseline.Kinds(), r.baseline) {
		return fmt.Errorf("unknown --baseline %q (want %s, all or none)", r.baseline, strings.Join(baseline.Kinds(), ", "))
	}
	width, err := segment.ParseWidth(r.bucket)
	if err != nil {
		return fmt.Errorf("--bucket: %w", err)
	}
	opt := segment.DimOptions{Bucket: width}
	spec := segment.Spec{MinCohort: r.minCohort, CI: r.ci}
	if r.by != "none" && r.by != "" {
		if spec.By, err = segment.ParseDims(r.by, opt); err != nil {
			return fmt.Errorf("--by: %w", err)
		}
	}
	for _, w := range r.where {
		f, err := segment.ParseFilter(w, opt)
		if err != nil {
			return fmt.Errorf("--where %q: %w", w, err)
		}
		spec.Where = append(spec.Where, f)
	}
	for _, t := range []struct {
		flag, val string
		dst       *time.Time
	}{{"since", r.since, &spec.Since}, {"until", r.until, &spec.Until}} {
		if t.val == "" {
			continue
		}
		if *t.dst, err = parseTime(t.val); err != nil || !model.InNanoRange(*t.dst) {
			return fmt.Errorf("--%s %q: want a time from 1970 to 2262 like 2026-11-29T06:00:00Z or a day like 2026-11-29", t.flag, t.val)
		}
	}
	if !spec.Since.IsZero() && !spec.Until.IsZero() && !spec.Until.After(spec.Since) {
		return fmt.Errorf("--until %s is not after --since %s", r.until, r.since)
	}
	if !spec.Since.IsZero() {
		r.opt.Window.Since = spec.Since.UnixNano()
	}
	if !spec.Until.IsZero() {
		r.opt.Window.Until = spec.Until.UnixNano()
	}
	if spec.Sort, err = segment.ParseSort(r.sortBy); err != nil {
		return fmt.Errorf("--sort: %w", err)
	}
	if r.baseline != "all" && r.baseline != "none" {
		spec.BaselineKind = r.baseline
	}
	spec.TaskKey = r.taskKey
	if r.prices != "" {
		if spec.Prices, err = loadPrices(r.prices); err != nil {
			return fmt.Errorf("--prices: %w", err)
		}
	}
	r.opt.Segments, r.opt.Baseline, r.opt.FindingsOnly, r.opt.Full = spec, r.baseline, r.findings, r.full
	r.opt.Workers = r.workers
	r.opt.NoCharts = r.format != "html"
	if r.sections != "" {
		if r.opt.Sections, err = report.ParseSections(r.sections); err != nil {
			return fmt.Errorf("--section: %w", err)
		}
	}
	if err := r.checkBudgets(); err != nil {
		return err
	}
	// The flags' own checks above name the flag; what they let through,
	// the report takes.
	return r.opt.Validate()
}

// checkBudgets reads --p99-budget and --amplification-budget.
func (r *reportFlags) checkBudgets() error {
	b := &r.opt.YieldBudget
	if r.p99Budget != "none" && r.p99Budget != "" {
		d, err := model.ParseDuration(r.p99Budget)
		if err != nil || d < time.Millisecond || d > report.MaxP99Budget {
			return fmt.Errorf("--p99-budget %q: want a duration from 1ms to %s like 2s or 800ms, or none", r.p99Budget, model.FormatDuration(report.MaxP99Budget))
		}
		ms := float64(d) / 1e6
		b.P99Ms = &ms
	}
	if r.ampBudget != "none" && r.ampBudget != "" {
		x, err := strconv.ParseFloat(r.ampBudget, 64)
		if err != nil || !(x >= 1) || x > report.MaxAmplificationBudget {
			return fmt.Errorf("--amplification-budget %q: want attempts per request from 1 to %d, or none", r.ampBudget, report.MaxAmplificationBudget)
		}
		b.Amplification = &x
	}
	return nil
}

// parseTime reads an RFC 3339 time or a day (YYYY-MM-DD, UTC midnight).
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}

// SetWindow makes the report cover w (start times, Unix ns), segments
// included; why, unless empty, is said in the report's heading.
func (r *reportFlags) SetWindow(w model.Window, why string) { r.opt.Window, r.opt.Why = w, why }

// Output is the file the report goes to, "" for stdout.
func (r *reportFlags) Output() string { return r.output }

func formatFromExtension(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return "json"
	case ".md", ".markdown":
		return "markdown"
	case ".csv":
		return "csv"
	case ".html", ".htm":
		return "html"
	}
	return "table"
}

// Write builds the report of st, naming it source, and writes it to the
// output file (report.WriteFile), or to stdout without one. The report is
// built before its file is made, so a run that fails or is killed while
// building leaves no empty file behind.
func (r *reportFlags) Write(ctx context.Context, st *store.Store, stdout io.Writer, source string, explain bool) error {
	r.opt.Source, r.opt.Explain = source, explain
	rep, err := report.Build(ctx, st, r.opt)
	if err != nil {
		return err
	}
	if r.output == "" || r.output == "-" {
		return report.Write(stdout, rep, r.format)
	}
	return report.WriteFile(r.output, rep, r.format)
}

// SetWhatif adds a replay under another retry policy to the report
// (report.Options.Whatif).
func (r *reportFlags) SetWhatif(replay *report.Replay) { r.opt.Whatif = replay }

// SetDataset says the store holds the union of Parquet datasets (report
// --dataset), whose spans, files and rejections stay with the shards.
func (r *reportFlags) SetDataset() { r.opt.Dataset = true }

// SetProgress has progress told as each step of building the report
// begins (report.Options.Progress).
func (r *reportFlags) SetProgress(progress func(step string, i, n int)) { r.opt.Progress = progress }
