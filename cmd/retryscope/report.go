package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/baseline"
	"github.com/retryscope/retryscope/internal/pipeline"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/queries"
	"github.com/retryscope/retryscope/rebuild"
	"github.com/retryscope/retryscope/segment"
)

const reportExamples = `
  retryscope report
  retryscope report --db traces.duckdb --explain
  retryscope report --baseline all --by model,route
  retryscope report --by trigger,time:1h --since 2026-11-29T00:00:00Z --ci
  retryscope report --by attr:cloud.region --where outcome=error -o report.md
  retryscope report -o report.html
  retryscope report --format json -o report.json
  retryscope report --id-key app.request_id --attempt-key app.try --first-token-event stream.first_chunk

Dimensions for --by and --where: service, operation, model, route,
retry_route, trigger, region, environment, input_tokens, output_tokens,
stream, cache, outcome, time (time:15m), attr:NAME (anchor span attribute),
resource:NAME (resource attribute). --where, --since and --until narrow the
segment table; the workload block always covers every request.

The report rebuilds logical requests and baselines first when they are
missing or older than the last ingest.
`

// reportSchema names the JSON report format (SPEC §10).
const reportSchema = "retryscope.report/v1"

// linkageHelp says what each rebuild rule means, for --explain.
var linkageHelp = map[string]string{
	"grpc":           "gRFC A72 Sent.* call span over Attempt.* spans",
	"orphan":         "attempts whose parent span was never exported, grouped under it",
	"split_inferred": "attempts in traces of their own joined by the dump's retry signature (statuses retried, backoff gaps per attempt, attempt cap, background rate on the target); doubtful joins widen the plausible ranges",
	"wrapped":        "an SDK/GenAI client span over transport attempts; application loops, re-sends included",
	"explicit":       "retryscope.request.id / retryscope.attempt attributes",
	"header":         "captured x-stainless-retry-count, amz-sdk-*, x-envoy-attempt-count headers",
	"resend":         "http.request.resend_count or Envoy's retry.count on sibling attempts",
	"parent":         "one chain of sibling attempts under a span, no counter",
	"single":         "a lone attempt with no logical span around it",
}

// percentileDefinition is printed with every report, as SPEC §6 asks.
const percentileDefinition = "nearest-rank: pX is the ceil(X*n/100)-th smallest value; shown only when n*(100-X)/100 >= 5 (p50 n>=10, p95 n>=100, p99 n>=500), else null"

func runReport(ctx context.Context, e env, args []string) int {
	fs := newFlags("report", "report [--db FILE] [--baseline KIND] [--by DIM,...] [--format table|markdown|csv|json|html] [-o FILE]", reportExamples)
	var db dbFlags
	db.register(fs)
	var out reportFlags
	out.register(fs, "output")
	explain := fs.Bool("explain", false, "also show how many logical requests each rebuild rule built")
	var rb rebuildFlags
	rb.register(fs)
	if code, stop := parseFlags(fs, args, e.stdout, e.stderr); stop {
		return code
	}
	if err := out.check(); err != nil {
		return usageError(e.stderr, "report", err)
	}
	rb.splitSet = fs.Changed("split-window")
	rbOpt, err := rb.options()
	if err != nil {
		return usageError(e.stderr, "report", err)
	}
	if fs.NArg() > 0 {
		return usageError(e.stderr, "report", fmt.Errorf("report takes no arguments (got %q); name the database with --db", fs.Arg(0)))
	}
	st, err := pipeline.OpenDerived(ctx, db.path, db.open, rbOpt, e.stderr)
	if err != nil {
		return failure(e.stderr, fmt.Errorf("report: %w", err))
	}
	defer st.Close()
	out.dbPath, out.explain = db.path, *explain
	if err := out.write(ctx, st, e.stdout); err != nil {
		return failure(e.stderr, fmt.Errorf("report %s: %w", db.path, err))
	}
	return exitOK
}

// rebuildFlags name what the rebuild cannot guess; see rebuild.Keys.
type rebuildFlags struct {
	keys        rebuild.Keys
	splitWindow time.Duration
	splitSet    bool // --split-window was given, so it wins over --config
	config      string
}

func (r *rebuildFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&r.keys.RequestID, "id-key", nil, "attribute with a logical request id shared by its attempts, tried before retryscope.request.id (repeatable)")
	fs.StringSliceVar(&r.keys.Attempt, "attempt-key", nil, "attribute with the attempt number (1 = first), tried before retryscope.attempt (repeatable)")
	fs.StringSliceVar(&r.keys.FirstToken, "first-token-event", nil, "span event marking a stream's first token, beside gen_ai.first_token (repeatable)")
	fs.StringSliceVar(&r.keys.Route, "route-key", nil, "attribute naming where an attempt went, tried before server.address (repeatable)")
	fs.StringSliceVar(&r.keys.Model, "model-key", nil, "attribute naming the requested model, tried before gen_ai.request.model (repeatable)")
	fs.DurationVar(&r.splitWindow, "split-window", rebuild.DefaultSplitWindow, "longest gap after a failed attempt for a call in another trace to count as its retry")
	fs.StringVar(&r.config, "config", "", "JSON file with request_id_keys, attempt_keys, first_token_events, route_keys, model_keys, split_window (flags add to it)")
}

// rebuildConfig is the --config file.
type rebuildConfig struct {
	rebuild.Keys
	SplitWindow string `json:"split_window,omitempty"`
}

// options merges the config file (if any) with the flags; flags come first.
func (r *rebuildFlags) options() (rebuild.Options, error) {
	opt := rebuild.Options{Keys: r.keys, SplitWindow: r.splitWindow}
	if r.config == "" {
		return opt, nil
	}
	raw, err := os.ReadFile(r.config)
	if err != nil {
		return opt, fmt.Errorf("read --config: %w", err)
	}
	var cfg rebuildConfig
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return opt, fmt.Errorf("--config %s: %w", r.config, err)
	}
	k := &opt.Keys
	k.RequestID = append(k.RequestID, cfg.RequestID...)
	k.Attempt = append(k.Attempt, cfg.Attempt...)
	k.FirstToken = append(k.FirstToken, cfg.FirstToken...)
	k.Route = append(k.Route, cfg.Route...)
	k.Model = append(k.Model, cfg.Model...)
	if cfg.SplitWindow != "" && !r.splitSet {
		if opt.SplitWindow, err = time.ParseDuration(cfg.SplitWindow); err != nil || opt.SplitWindow <= 0 {
			return opt, fmt.Errorf("--config %s: split_window %q is not a positive duration such as 20s", r.config, cfg.SplitWindow)
		}
	}
	return opt, nil
}

// report is the JSON document SPEC §10 fixes; fields beside the required
// keys are additions, never renames.
type report struct {
	Schema    string            `json:"schema"`
	Window    windowReport      `json:"window"`
	Workload  workloadReport    `json:"workload"`
	Baselines []baseline.Block  `json:"baselines"`
	Segments  []segment.Segment `json:"segments"`
	// SegmentBy names the dimensions of the segments, in order.
	SegmentBy []string     `json:"segment_by"`
	Ingest    ingestReport `json:"ingest"`
	Linkage   []linkageRow `json:"linkage"`
}

type workloadReport struct {
	LogicalRequests        int64      `json:"logical_requests"`
	Attempts               int64      `json:"attempts"`
	Amplification          float64    `json:"amplification"`
	RetryRate              float64    `json:"retry_rate"`
	RetrySuccessRate       float64    `json:"retry_success_rate"`
	FinalFailureRate       float64    `json:"final_failure_rate"`
	LatencyMs              allRetried `json:"latency_ms"`
	TTFTMs                 allRetried `json:"ttft_ms"`
	DuplicatedOutputTokens int64      `json:"duplicated_output_tokens"`

	// Ranges bound the figures that rest on joins inferred across traces:
	// the lowest and highest plausible value of each; both ends equal the
	// figure when no join was in doubt.
	Ranges      model.WorkloadRanges `json:"ranges"`
	RangeMethod string               `json:"range_method"`

	RetriedRequests       int64         `json:"retried_requests"`
	FailedRequests        int64         `json:"failed_requests"`
	DuplicatedAttempts    int64         `json:"duplicated_attempts"`
	DuplicatedInputTokens int64         `json:"duplicated_input_tokens"`
	HiddenWorkMs          float64       `json:"hidden_work_ms"`
	HiddenOutputTokens    int64         `json:"hidden_output_tokens"`
	DuplicatedAttemptMs   float64       `json:"duplicated_attempt_ms"`
	GenerationMs          allRetried    `json:"generation_ms"`
	FirstAttemptMs        allRetried    `json:"first_attempt_ms"`
	SecondAttemptMs       model.Summary `json:"second_attempt_ms"`
	AmplificationByLayers []layerRow    `json:"amplification_by_layers"`
	Triggers              []triggerRow  `json:"triggers"`
	Percentiles           string        `json:"percentiles"`
}

type allRetried struct {
	All     model.Summary `json:"all"`
	Retried model.Summary `json:"retried"`
}

// layerRow: requests showing Depth nested retry loops; Multipliers are
// tries per layer, outermost first, whose product is Attempts/Requests.
type layerRow struct {
	Depth       int       `json:"depth"`
	Requests    int64     `json:"requests"`
	Attempts    int64     `json:"attempts"`
	Multipliers []float64 `json:"multipliers"`
}

type triggerRow struct {
	Trigger  string `json:"trigger"`
	Attempts int64  `json:"attempts"`
}

type linkageRow struct {
	Linkage  string `json:"linkage"`
	Requests int64  `json:"requests"`
	Attempts int64  `json:"attempts"`
	Retried  int64  `json:"retried"`
	Inferred int64  `json:"inferred"`
	// InferredShare is Inferred over all the report's requests.
	InferredShare float64 `json:"inferred_share"`
	Example       string  `json:"example"`
}

// rangeMethod says how the workload ranges are made, in every format.
const rangeMethod = "requests joined across traces by inference (split_inferred): each doubtful decision " +
	"(an alternative at least 1/20 as likely: no join, another attempt, a join where none was made, a retry " +
	"where a retried failure found no candidate) is counted the way it lowers and the way it raises each " +
	"count; the rates take the extreme counts"

// windowReport is the span of request start times a report covers; both
// ends null when it covers every request.
type windowReport struct {
	Since *string `json:"since"`
	Until *string `json:"until"`
	Why   string  `json:"why,omitempty"`
}

func newWindowReport(w model.Window, why string) windowReport {
	out := windowReport{Why: why}
	if w.Since != 0 {
		s := time.Unix(0, w.Since).UTC().Format(time.RFC3339Nano)
		out.Since = &s
	}
	if w.Until != 0 {
		s := time.Unix(0, w.Until).UTC().Format(time.RFC3339Nano)
		out.Until = &s
	}
	return out
}

// text is the window as a header line, empty when it covers every request.
func (w windowReport) text() string {
	if w.Since == nil && w.Until == nil {
		return ""
	}
	side := func(s *string, open string) string {
		if s == nil {
			return open
		}
		return *s
	}
	line := fmt.Sprintf("Requests started from %s until %s", side(w.Since, "the first"), side(w.Until, "the last"))
	if w.Why != "" {
		line += " (" + w.Why + ")"
	}
	return line + "."
}

type ingestReport struct {
	Files     int64 `json:"files"`
	SpansRead int64 `json:"spans_read"`
	Spans     int64 `json:"spans"`
	Rejected  int64 `json:"rejected"`
}

// buildReport runs the report queries against rebuilt tables, over the
// requests starting in win.
func buildReport(ctx context.Context, st *store.Store, win model.Window) (*report, error) {
	lo, hi := win.Bounds()
	// No attempt starts much before its request: an hour covers clock skew
	// between services and lets the queries skip older attempts.
	from := lo
	if from > math.MinInt64+int64(time.Hour) {
		from -= int64(time.Hour)
	}
	rep := &report{Schema: reportSchema, Baselines: []baseline.Block{}, Segments: []segment.Segment{}, SegmentBy: []string{}}
	w := &rep.Workload
	w.Percentiles = percentileDefinition
	var retriedOK int64
	err := st.Conn.QueryRowContext(ctx, queries.Get("report_workload"), lo, hi, from).Scan(&w.LogicalRequests, &w.Attempts,
		&w.RetriedRequests, &retriedOK, &w.FailedRequests, &w.DuplicatedAttempts, &w.DuplicatedInputTokens,
		&w.DuplicatedOutputTokens, &w.HiddenWorkMs, &w.HiddenOutputTokens, &w.DuplicatedAttemptMs)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	if n := float64(w.LogicalRequests); n > 0 {
		w.Amplification = float64(w.Attempts) / n
		w.RetryRate = float64(w.RetriedRequests) / n
		w.FinalFailureRate = float64(w.FailedRequests) / n
	}
	if w.RetriedRequests > 0 {
		w.RetrySuccessRate = float64(retriedOK) / float64(w.RetriedRequests)
	}
	if err := distributions(ctx, st.Conn, w, lo, hi, from); err != nil {
		return nil, fmt.Errorf("latency distributions: %w", err)
	}
	if w.AmplificationByLayers, err = layers(ctx, st.Conn, lo, hi); err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	w.Triggers = []triggerRow{}
	err = eachRow(ctx, st.Conn, "report_triggers", []any{lo, hi, from}, func(rows *sql.Rows) error {
		var r triggerRow
		err := rows.Scan(&r.Trigger, &r.Attempts)
		w.Triggers = append(w.Triggers, r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("triggers: %w", err)
	}
	rep.Linkage = []linkageRow{}
	err = eachRow(ctx, st.Conn, "report_linkage", []any{lo, hi}, func(rows *sql.Rows) error {
		var r linkageRow
		err := rows.Scan(&r.Linkage, &r.Requests, &r.Attempts, &r.Retried, &r.Inferred, &r.Example)
		rep.Linkage = append(rep.Linkage, r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("linkage: %w", err)
	}
	for k := range rep.Linkage {
		if w.LogicalRequests > 0 {
			rep.Linkage[k].InferredShare = float64(rep.Linkage[k].Inferred) / float64(w.LogicalRequests)
		}
	}
	if err := workloadRanges(ctx, st.Conn, w, retriedOK, lo, hi); err != nil {
		return nil, fmt.Errorf("ranges: %w", err)
	}
	i := &rep.Ingest
	if err := st.Conn.QueryRowContext(ctx, queries.Get("report_ingest")).Scan(&i.Files, &i.SpansRead, &i.Spans, &i.Rejected); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	return rep, nil
}

// workloadRanges bounds the workload figures by the alternatives recorded
// for doubtful joins across traces (report_ranges).
func workloadRanges(ctx context.Context, conn *sql.Conn, w *workloadReport, retriedOK, lo, hi int64) error {
	var shifts model.CountShifts
	d, u := &shifts.Down, &shifts.Up
	err := conn.QueryRowContext(ctx, queries.Get("report_ranges"), lo, hi).Scan(&d.Requests, &d.Retried, &d.RetriedOK, &d.Failed,
		&u.Requests, &u.Retried, &u.RetriedOK, &u.Failed)
	if err != nil {
		return err
	}
	w.Ranges = shifts.Ranges(model.Counts{Requests: w.LogicalRequests, Attempts: w.Attempts, Retried: w.RetriedRequests,
		RetriedOK: retriedOK, Failed: w.FailedRequests})
	w.RangeMethod = rangeMethod
	return nil
}

func eachRow(ctx context.Context, conn *sql.Conn, query string, args []any, each func(*sql.Rows) error) error {
	rows, err := conn.QueryContext(ctx, queries.Get(query), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// distributions fills the workload's latency summaries from every
// observation (report_distributions), with model's percentile definition.
func distributions(ctx context.Context, conn *sql.Conn, w *workloadReport, lo, hi, from int64) error {
	type key struct {
		measure string
		retried bool
	}
	values := map[key][]float64{}
	err := eachRow(ctx, conn, "report_distributions", []any{lo, hi, from}, func(rows *sql.Rows) error {
		var k key
		var v float64
		if err := rows.Scan(&k.measure, &k.retried, &v); err != nil {
			return err
		}
		values[k] = append(values[k], v)
		return nil
	})
	if err != nil {
		return err
	}
	split := func(measure string) allRetried {
		retried := values[key{measure, true}]
		all := append(append([]float64(nil), values[key{measure, false}]...), retried...)
		return allRetried{All: model.Summarize(all), Retried: model.Summarize(retried)}
	}
	w.LatencyMs, w.TTFTMs, w.FirstAttemptMs = split("latency_ms"), split("ttft_ms"), split("first_attempt_ms")
	w.GenerationMs = split("generation_ms")
	w.SecondAttemptMs = model.Summarize(values[key{"second_attempt_ms", true}])
	return nil
}

// layers turns tries per layer into multipliers per depth of nesting.
func layers(ctx context.Context, conn *sql.Conn, lo, hi int64) ([]layerRow, error) {
	out := []layerRow{}
	var prev int64
	err := eachRow(ctx, conn, "report_layers", []any{lo, hi}, func(rows *sql.Rows) error {
		var depth, layer int
		var requests, tries int64
		if err := rows.Scan(&depth, &requests, &layer, &tries); err != nil {
			return err
		}
		if n := len(out); n == 0 || out[n-1].Depth != depth {
			out = append(out, layerRow{Depth: depth, Requests: requests, Multipliers: []float64{}})
			prev = requests
		}
		row := &out[len(out)-1]
		if prev > 0 {
			row.Multipliers = append(row.Multipliers, float64(tries)/float64(prev))
		}
		row.Attempts, prev = tries, tries
		return nil
	})
	return out, err
}

func writeReportJSON(w io.Writer, rep *report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// section is one table of the report, rendered alike as text, Markdown
// and HTML. The first row is the header; text output skips it when
// plainHeader is false (a two-column list reads better without one).
type section struct {
	title       string
	rows        [][]string
	note        string
	plainHeader bool
}

// workloadSections lays out the workload measures.
func workloadSections(rep *report, explain bool) []section {
	wl := rep.Workload
	secs := []section{{title: "Workload", rows: [][]string{
		{"measure", "value"},
		{"logical requests", fmt.Sprint(wl.LogicalRequests)},
		{"attempts", fmt.Sprint(wl.Attempts)},
		{"amplification (attempts per request)", fmt.Sprintf("%.4f", wl.Amplification)},
		{"retry rate", fmt.Sprintf("%.4f", wl.RetryRate)},
		{"retry success rate", fmt.Sprintf("%.4f", wl.RetrySuccessRate)},
		{"final failure rate", fmt.Sprintf("%.4f", wl.FinalFailureRate)},
		{"duplicated attempts", fmt.Sprint(wl.DuplicatedAttempts)},
		{"time in duplicated attempts (ms)", fmt.Sprintf("%.1f", wl.DuplicatedAttemptMs)},
		{"duplicated input tokens", fmt.Sprint(wl.DuplicatedInputTokens)},
		{"duplicated output tokens", fmt.Sprint(wl.DuplicatedOutputTokens)},
		{"hidden work (ms)", fmt.Sprintf("%.1f", wl.HiddenWorkMs)},
		{"hidden output tokens", fmt.Sprint(wl.HiddenOutputTokens)},
	}}}
	if wl.Ranges.Wide() {
		addRanges(&secs[0], wl.Ranges)
	}

	dist := [][]string{{"measure", "requests", "n", "mean", "p50", "p95", "p99"}}
	add := func(name, who string, s model.Summary) {
		dist = append(dist, []string{name, who, fmt.Sprint(s.N), cell(s.Mean), cell(s.P50), cell(s.P95), cell(s.P99)})
	}
	add("end-to-end", "all", wl.LatencyMs.All)
	add("end-to-end", "retried", wl.LatencyMs.Retried)
	add("ttft", "all", wl.TTFTMs.All)
	add("ttft", "retried", wl.TTFTMs.Retried)
	add("generation", "all", wl.GenerationMs.All)
	add("generation", "retried", wl.GenerationMs.Retried)
	add("first attempt", "all", wl.FirstAttemptMs.All)
	add("first attempt", "retried", wl.FirstAttemptMs.Retried)
	add("second attempt", "retried", wl.SecondAttemptMs)
	secs = append(secs, section{title: "Latency (ms)", rows: dist, plainHeader: true, note: "percentiles: " + percentileDefinition})

	lay := [][]string{{"layers", "requests", "attempts", "multipliers (outermost first)"}}
	for _, l := range wl.AmplificationByLayers {
		var m []string
		for _, x := range l.Multipliers {
			m = append(m, fmt.Sprintf("%.4f", x))
		}
		lay = append(lay, []string{fmt.Sprint(l.Depth), fmt.Sprint(l.Requests), fmt.Sprint(l.Attempts), strings.Join(m, " x ")})
	}
	secs = append(secs, section{title: "Amplification by retry layer", rows: lay, plainHeader: true})

	if len(wl.Triggers) > 0 {
		trig := [][]string{{"trigger", "attempts"}}
		for _, t := range wl.Triggers {
			trig = append(trig, []string{t.Trigger, fmt.Sprint(t.Attempts)})
		}
		secs = append(secs, section{title: "Failed attempts by trigger", rows: trig, plainHeader: true})
	}
	if explain {
		link := [][]string{{"rule", "requests", "retried", "inferred", "inferred share", "example request_id"}}
		var meanings []string
		for _, l := range rep.Linkage {
			link = append(link, []string{l.Linkage, fmt.Sprint(l.Requests), fmt.Sprint(l.Retried),
				fmt.Sprint(l.Inferred), fmt.Sprintf("%.4f", l.InferredShare), l.Example})
			meanings = append(meanings, l.Linkage+": "+linkageHelp[l.Linkage])
		}
		meanings = append(meanings, "see one: SELECT * FROM attempts WHERE request_id = '<example>' ORDER BY ordinal")
		secs = append(secs, section{title: "Requests by linkage rule", rows: link, plainHeader: true,
			note: strings.Join(meanings, "\n  ")})
	}
	return secs
}

// addRanges adds a column with the plausible range of the figures that
// rest on inferred joins, and says how it is made.
func addRanges(sec *section, r model.WorkloadRanges) {
	ranges := map[string]string{
		"logical requests":                     fmt.Sprintf("%.0f - %.0f", r.LogicalRequests[0], r.LogicalRequests[1]),
		"amplification (attempts per request)": fmt.Sprintf("%.4f - %.4f", r.Amplification[0], r.Amplification[1]),
		"retry rate":                           fmt.Sprintf("%.4f - %.4f", r.RetryRate[0], r.RetryRate[1]),
		"retry success rate":                   fmt.Sprintf("%.4f - %.4f", r.RetrySuccessRate[0], r.RetrySuccessRate[1]),
		"final failure rate":                   fmt.Sprintf("%.4f - %.4f", r.FinalFailureRate[0], r.FinalFailureRate[1]),
	}
	sec.rows[0] = append(sec.rows[0], "plausible range")
	for i := 1; i < len(sec.rows); i++ {
		sec.rows[i] = append(sec.rows[i], ranges[sec.rows[i][0]])
	}
	sec.plainHeader = true
	sec.note = "plausible range: " + rangeMethod
}

// writeReportTable prints the workload as aligned text for a terminal.
func writeReportTable(w io.Writer, rep *report, dbPath string, explain bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "retryscope report: %s (%d files, %d spans, %d rejected records)\n", dbPath,
		rep.Ingest.Files, rep.Ingest.Spans, rep.Ingest.Rejected)
	if w := rep.Window.text(); w != "" {
		for _, l := range wrapText(w, 96) {
			fmt.Fprintln(&b, l)
		}
	}
	for _, sec := range workloadSections(rep, explain) {
		fmt.Fprintf(&b, "\n%s\n", sec.title)
		rows := sec.rows
		if !sec.plainHeader {
			rows = rows[1:]
		}
		writeAligned(&b, rows)
		for _, line := range strings.Split(sec.note, "\n") {
			for _, l := range wrapText(strings.TrimSpace(line), 96) {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrapText breaks s into lines of at most width characters, at spaces.
func wrapText(s string, width int) []string {
	var lines []string
	for len([]rune(s)) > width {
		cut := strings.LastIndex(string([]rune(s)[:width]), " ")
		if cut <= 0 {
			break
		}
		lines = append(lines, s[:cut])
		s = strings.TrimSpace(s[cut:])
	}
	if s != "" {
		lines = append(lines, s)
	}
	return lines
}

// cell formats a figure in ms, or says the sample is too small for it.
func cell(v *float64) string {
	if v == nil {
		return "too few"
	}
	return fmt.Sprintf("%.1f", *v)
}

// writeAligned prints rows as columns, two spaces apart, indented; the
// first column is left-aligned and the others right-aligned.
func writeAligned(b *strings.Builder, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		b.WriteString("  ")
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteString("\n")
	}
}
