package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/baseline"
	"github.com/retryscope/retryscope/internal/crashpoint"
	"github.com/retryscope/retryscope/internal/htmlreport"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/segment"
)

// reportFlags choose what a report shows and how it is written; report
// and run share them.
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
	minCohort int
	sortBy    string

	spec    segment.Spec
	window  model.Window
	dbPath  string
	explain bool
	// why says, in the report's header, why it covers its window.
	why string
}

var reportFormats = []string{"table", "markdown", "csv", "json", "html"}

// register adds the flags; outputFlag names the flag for the output file
// ("output" with -o for report, "report" for run).
func (r *reportFlags) register(fs *pflag.FlagSet, outputFlag string) {
	if outputFlag == "output" {
		fs.StringVarP(&r.output, "output", "o", "", "write the report to FILE (format from its extension: .txt .md .csv .json .html) instead of stdout")
	} else {
		fs.StringVar(&r.output, outputFlag, "", "write the report to FILE (format from its extension: .txt .md .csv .json .html)")
	}
	fs.StringVar(&r.format, "format", "", "table, markdown, csv, json or html (default: from -o's extension, else table)")
	fs.StringVar(&r.baseline, "baseline", baseline.KindHealthy, "baseline kind for added latency: "+strings.Join(baseline.Kinds(), ", ")+", all, or none")
	fs.StringVar(&r.by, "by", "trigger", "segment dimensions, comma-separated (see below); none for no segments")
	fs.StringArrayVar(&r.where, "where", nil, "keep segment requests where DIM=V1|V2 or DIM!=V (repeatable)")
	fs.StringVar(&r.since, "since", "", "report the requests started at or after this time (RFC 3339, or a UTC day 2026-11-29)")
	fs.StringVar(&r.until, "until", "", "report the requests started before this time (RFC 3339, or a UTC day)")
	fs.StringVar(&r.bucket, "bucket", "1h", "width of the time dimension (e.g. 15m, 1h, 1d)")
	fs.BoolVar(&r.ci, "ci", false, "add seeded bootstrap 95% confidence intervals to p95/p99 and added latency")
	fs.IntVar(&r.minCohort, "min-cohort", segment.DefaultMinCohort, "segments with fewer requests are pooled into (other)")
	fs.StringVar(&r.sortBy, "sort", "retried_p99", "segment order: retried_p99, amplification, requests or key")
}

// check validates the flags and resolves the format and segment spec.
func (r *reportFlags) check() error {
	if r.format == "" {
		r.format = formatFromExtension(r.output)
	}
	if !contains(reportFormats, r.format) {
		return fmt.Errorf("unknown --format %q (want %s)", r.format, strings.Join(reportFormats, ", "))
	}
	if r.baseline != "all" && r.baseline != "none" && !contains(baseline.Kinds(), r.baseline) {
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
		if *t.dst, err = parseTime(t.val); err != nil {
			return fmt.Errorf("--%s %q: want a time like 2026-11-29T06:00:00Z or a day like 2026-11-29", t.flag, t.val)
		}
	}
	if !spec.Since.IsZero() && !spec.Until.IsZero() && !spec.Until.After(spec.Since) {
		return fmt.Errorf("--until %s is not after --since %s", r.until, r.since)
	}
	if !spec.Since.IsZero() {
		r.window.Since = spec.Since.UnixNano()
	}
	if !spec.Until.IsZero() {
		r.window.Until = spec.Until.UnixNano()
	}
	if spec.Sort, err = segment.ParseSort(r.sortBy); err != nil {
		return fmt.Errorf("--sort: %w", err)
	}
	if r.baseline != "all" && r.baseline != "none" {
		spec.BaselineKind = r.baseline
	}
	r.spec = spec
	return nil
}

// parseTime reads an RFC 3339 time or a day (YYYY-MM-DD, UTC midnight).
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}

// setWindow makes the report cover w (start times, Unix ns), segments
// included; why is said in the report's header.
func (r *reportFlags) setWindow(w model.Window, why string) {
	r.window, r.why = w, why
	r.spec.Since, r.spec.Until = time.Time{}, time.Time{}
	if w.Since != 0 {
		r.spec.Since = time.Unix(0, w.Since).UTC()
	}
	if w.Until != 0 {
		r.spec.Until = time.Unix(0, w.Until).UTC()
	}
}

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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// write renders the report to the output file, or to stdout without one.
// A file is written beside its name and renamed, so a reader never sees
// half a report.
func (r *reportFlags) write(ctx context.Context, st *store.Store, stdout io.Writer) error {
	if r.output == "" || r.output == "-" {
		return r.render(ctx, st, stdout)
	}
	tmp := r.output + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	err = r.render(ctx, st, f)
	if err == nil {
		err = f.Sync() // the rename must not publish a file whose bytes are not on disk
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = crashpoint.Hit("report.tmp")
	}
	if err == nil {
		err = os.Rename(tmp, r.output)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write report %s: %w", r.output, err)
	}
	return crashpoint.Hit("report.renamed")
}

func (r *reportFlags) render(ctx context.Context, st *store.Store, w io.Writer) error {
	rep, err := buildReport(ctx, st, r.window)
	if err != nil {
		return err
	}
	rep.Window = newWindowReport(r.window, r.why)
	if r.baseline != "none" {
		blocks, err := baseline.Summarize(ctx, st, r.baseline, r.window)
		if err != nil && !errors.Is(err, baseline.ErrNotComputed) {
			return fmt.Errorf("baselines: %w", err)
		}
		if blocks != nil {
			rep.Baselines = blocks
		}
	}
	res, err := segment.Compute(ctx, st, r.spec)
	if err != nil {
		return fmt.Errorf("segments: %w", err)
	}
	if len(r.spec.By) > 0 {
		rep.Segments = res.Segments
		rep.SegmentBy = res.Dims
	}
	switch r.format {
	case "json":
		return writeReportJSON(w, rep)
	case "csv":
		if len(r.spec.Where) == 0 {
			// The workload row covers the report's window, as the ranges
			// do; a --where filter narrows it, and the ranges are left out.
			res.WorkloadRanges = &rep.Workload.Ranges
		}
		return segment.WriteCSV(w, res)
	case "markdown":
		return r.writeMarkdown(w, rep, res)
	case "html":
		return r.writeHTML(ctx, w, st, rep, res)
	}
	if err := writeReportTable(w, rep, r.dbPath, r.explain); err != nil {
		return err
	}
	if len(rep.Baselines) > 0 {
		fmt.Fprintln(w, "\nBaselines (added latency L_retry - L0, per retried request)")
		if err := baseline.WriteTable(w, rep.Baselines); err != nil {
			return err
		}
	}
	if len(r.spec.By) > 0 {
		fmt.Fprintf(w, "\nSegments by %s\n", strings.Join(res.Dims, ", "))
		return segment.WriteTable(w, res)
	}
	return nil
}

// baselineSection lays out the baseline blocks, one row per kind.
func baselineSection(blocks []baseline.Block) section {
	rows := [][]string{{"kind", "provenance", "n", "no baseline", "added mean", "added p50", "added p95", "added p99",
		"ratio mean", "ratio p50", "workload ampl.", "added per request", "flags"}}
	for _, b := range blocks {
		rows = append(rows, []string{b.Kind, b.Provenance, fmt.Sprint(b.N), fmt.Sprint(b.NWithoutBaseline),
			cell(b.AddedLatencyMs.Mean), cell(b.AddedLatencyMs.P50), cell(b.AddedLatencyMs.P95), cell(b.AddedLatencyMs.P99),
			ratioCell(b.Ratio.Mean), ratioCell(b.Ratio.P50), ratioCell(b.WorkloadAmplification),
			cell(b.ExpectedAddedMsPerRequest), strings.Join(b.Flags, "; ")})
	}
	var methods []string
	for _, b := range blocks {
		methods = append(methods, b.Kind+": "+b.Method)
	}
	return section{title: "Baselines (added latency in ms, L_retry - L0)", rows: rows, plainHeader: true, note: strings.Join(methods, "\n")}
}

func ratioCell(v *float64) string {
	if v == nil {
		return "too few"
	}
	return fmt.Sprintf("%.2fx", *v)
}

// segmentSection lays out segments compactly for the HTML page.
func segmentSection(res segment.Result) section {
	head := append([]string(nil), res.Dims...)
	head = append(head, "requests", "attempts", "ampl.", "retry rate", "failure rate", "p50 all", "p99 all", "p99 retried")
	rows := [][]string{head}
	for _, s := range res.Segments {
		row := append([]string(nil), s.Values...)
		if s.RolledUp {
			row[0] += " (rolled up)"
		}
		m := s.Measures
		row = append(row, fmt.Sprint(m.LogicalRequests), fmt.Sprint(m.Attempts), fmt.Sprintf("%.3f", m.Amplification),
			fmt.Sprintf("%.3f", m.RetryRate), fmt.Sprintf("%.3f", m.FinalFailureRate),
			cell(m.LatencyMs.All.P50), cell(m.LatencyMs.All.P99), cell(m.LatencyMs.Retried.P99))
		rows = append(rows, row)
	}
	return section{title: "Segments by " + strings.Join(res.Dims, ", "), rows: rows, plainHeader: true,
		note: "latency in ms; " + res.Definition}
}

func (r *reportFlags) allSections(rep *report, res segment.Result) []section {
	secs := workloadSections(rep, r.explain)
	if len(rep.Baselines) > 0 {
		secs = append(secs, baselineSection(rep.Baselines))
	}
	if len(r.spec.By) > 0 {
		secs = append(secs, segmentSection(res))
	}
	return secs
}

func (r *reportFlags) writeMarkdown(w io.Writer, rep *report, res segment.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# retryscope report\n\n%s: %d files, %d spans, %d rejected records\n", r.dbPath,
		rep.Ingest.Files, rep.Ingest.Spans, rep.Ingest.Rejected)
	if w := rep.Window.text(); w != "" {
		fmt.Fprintf(&b, "\n%s\n", w)
	}
	for _, sec := range workloadSections(rep, r.explain) {
		writeMarkdownSection(&b, sec)
	}
	if len(rep.Baselines) > 0 {
		writeMarkdownSection(&b, baselineSection(rep.Baselines))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(r.spec.By) > 0 {
		fmt.Fprintf(w, "\n## Segments by %s\n\n", strings.Join(res.Dims, ", "))
		return segment.WriteMarkdown(w, res)
	}
	return nil
}

func writeMarkdownSection(b *strings.Builder, sec section) {
	fmt.Fprintf(b, "\n## %s\n\n", sec.title)
	for i, row := range sec.rows {
		cells := make([]string, len(row))
		for j, c := range row {
			cells[j] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
		if i == 0 {
			seps := make([]string, len(row))
			for j := range seps {
				seps[j] = "---:"
				if j == 0 {
					seps[j] = "---"
				}
			}
			fmt.Fprintf(b, "| %s |\n", strings.Join(seps, " | "))
		}
	}
	if sec.note != "" {
		fmt.Fprintf(b, "\n%s\n", strings.ReplaceAll(sec.note, "\n", "  \n"))
	}
}

func (r *reportFlags) writeHTML(ctx context.Context, w io.Writer, st *store.Store, rep *report, res segment.Result) error {
	page := htmlreport.Page{
		Title: "retryscope report",
		Subtitle: strings.TrimSpace(fmt.Sprintf("%s: %d files, %d spans, %d rejected records. %s", r.dbPath,
			rep.Ingest.Files, rep.Ingest.Spans, rep.Ingest.Rejected, rep.Window.text())),
		Window: r.window,
		Footer: "Percentiles: " + percentileDefinition + ". Every baseline figure is labelled with its kind and provenance.",
	}
	if r.baseline != "all" && r.baseline != "none" {
		page.BaselineKind = r.baseline
	}
	for _, sec := range r.allSections(rep, res) {
		t := htmlreport.Table{Title: sec.title, Note: sec.note, Header: sec.rows[0], Rows: sec.rows[1:]}
		t.Numeric = make([]bool, len(t.Header))
		for i := range t.Header {
			t.Numeric[i] = numericColumn(t.Rows, i)
		}
		page.Tables = append(page.Tables, t)
	}
	return htmlreport.Write(ctx, w, st, page)
}

// numericColumn reports whether every cell of column i is a figure, so the
// HTML page right-aligns it.
func numericColumn(rows [][]string, i int) bool {
	seen := false
	for _, row := range rows {
		if i >= len(row) || row[i] == "" || row[i] == "too few" {
			continue
		}
		c := strings.TrimSuffix(row[i], "x")
		for _, ch := range c {
			if !strings.ContainsRune("0123456789.-+e", ch) {
				return false
			}
		}
		seen = true
	}
	return seen
}
