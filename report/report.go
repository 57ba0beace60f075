// Package report turns the derived tables into the one Report: the
// workload, the baselines and the segments, measured once by the segment
// engine, and renders that Report as text, Markdown, CSV, JSON and HTML
// from one table model (internal/texttab). The Report struct is the JSON contract of
// docs/report.md, "The JSON report" (schema retryscope.report/v1): a key
// means the same thing, with the same type, wherever it appears.
package report

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"time"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/baseline"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/segment"
	"github.com/retryscope/retryscope/whatif"
)

// Schema names the JSON report format (docs/report.md, "The JSON report").
const Schema = "retryscope.report/v1"

// Report is the JSON document docs/report.md, "The JSON report" fixes; fields
// beside the required keys are additions, never renames.
type Report struct {
	Schema    string            `json:"schema"`
	Window    Window            `json:"window"`
	Workload  Workload          `json:"workload"`
	Baselines []baseline.Block  `json:"baselines"`
	Segments  []segment.Segment `json:"segments"`
	// SegmentBy names the dimensions of the segments, in order.
	SegmentBy []string `json:"segment_by"`
	// SegmentsTotal measures the requests the segments cover when a
	// --where filter narrows them; without one they cover the workload.
	SegmentsTotal *segment.Measures `json:"segments_total,omitempty"`
	// Notes say what was left out of the segments and why.
	Notes   []string     `json:"notes,omitempty"`
	Ingest  Ingest       `json:"ingest"`
	Linkage []LinkageRow `json:"linkage"`
	// Findings are the changes the data supports, most costly first.
	Findings []analysis.Finding `json:"findings"`
	// MarginalYield is what each further attempt buys, and Capacity the
	// load retries put on the servers over time (docs/report.md, "The JSON
	// report").
	MarginalYield *analysis.MarginalYield `json:"marginal_yield"`
	Capacity      *analysis.Capacity      `json:"capacity"`
	// Whatif is a replay under another retry policy, when asked
	// (--whatif): every figure in it is modeled.
	Whatif *whatif.Result `json:"whatif,omitempty"`

	// settings is how the report was made, for the renderers' headings.
	settings settings
	// samples are the workload's requests, for the HTML charts.
	samples []segment.Sample
}

// settings are what the renderers need to know of the options.
type settings struct {
	source    string // the database, for headings
	dataset   bool   // Options.Dataset
	explain   bool
	findings  bool   // the findings alone
	baseline  string // the added-latency kind of the segments, "" for none
	ci        bool
	seed      uint64
	resamples int
	minCohort int
	full      bool     // every section (--full)
	sections  []string // the sections asked for (--section), nil for the default
}

// Workload is every request of the window: the segment engine's measures
// with no dimensions, and the figures only the whole workload has.
type Workload struct {
	segment.Measures
	// Ranges bound the figures that rest on joins inferred across traces:
	// the lowest and highest plausible value of each; both ends equal the
	// figure when no join was in doubt.
	Ranges                model.WorkloadRanges `json:"ranges"`
	RangeMethod           string               `json:"range_method"`
	AmplificationByLayers []LayerRow           `json:"amplification_by_layers"`
	Triggers              []TriggerRow         `json:"triggers"`
	Percentiles           string               `json:"percentiles"`
}

// LayerRow is the requests showing Depth nested retry loops; Multipliers
// are tries per layer, outermost first, whose product is
// Attempts/Requests.
type LayerRow struct {
	Depth       int       `json:"depth"`
	Requests    int64     `json:"requests"`
	Attempts    int64     `json:"attempts"`
	Multipliers []float64 `json:"multipliers"`
}

// TriggerRow counts the failed attempts of one trigger.
type TriggerRow struct {
	Trigger  string `json:"trigger"`
	Attempts int64  `json:"attempts"`
}

// LinkageRow counts the requests one rebuild rule built.
type LinkageRow struct {
	Linkage  string `json:"linkage"`
	Requests int64  `json:"requests"`
	Attempts int64  `json:"attempts"`
	Retried  int64  `json:"retried"`
	Inferred int64  `json:"inferred"`
	// InferredShare is Inferred over all the report's requests.
	InferredShare float64 `json:"inferred_share"`
	Example       string  `json:"example"`
}

// Ingest is what the database holds.
type Ingest struct {
	Files     int64 `json:"files"`
	SpansRead int64 `json:"spans_read"`
	Spans     int64 `json:"spans"`
	Rejected  int64 `json:"rejected"`
}

// Window is the span of request start times a report covers; both ends
// null when it covers every request.
type Window struct {
	Since *string `json:"since"`
	Until *string `json:"until"`
	Why   string  `json:"why,omitempty"`
}

// Options say what a report covers and shows.
type Options struct {
	// Window bounds the requests by start time; Why, when set, says in the
	// heading why it does.
	Window model.Window
	Why    string
	// Segments are the segment dimensions, filters and statistics; its
	// Since and Until are set from Window.
	Segments segment.Spec
	// Baseline is a baseline kind, "all" or "none": the baselines block.
	Baseline string
	// Source names the database in headings.
	Source string
	// Explain adds the requests per rebuild rule.
	Explain bool
	// FindingsOnly shows the findings alone.
	FindingsOnly bool
	// Full shows every section, and Sections, when set, those named (of
	// Sections); else the report shows DefaultSections. JSON holds every
	// section either way.
	Full     bool
	Sections []string
	// YieldBudget is what the marginal yield's attempt ceiling keeps to.
	YieldBudget analysis.YieldBudget
	// Workers is the capacity the offered load is set against; 0
	// estimates it from the plateau of attempts in flight.
	Workers int
	// Dataset: the store holds the union of Parquet datasets (report
	// --dataset), not spans; the heading says so.
	Dataset bool
	// Whatif, when set, replays the requests of the window under another
	// retry policy: the JSON's whatif block, whose tables follow the
	// report's own. The findings alone leave it out.
	Whatif *Replay
	// Progress, when set, is told as each step of the build begins: its
	// name and number, of n.
	Progress func(step string, i, n int)
	// NoCharts leaves out the samples the HTML charts are drawn from (32
	// bytes a request), for a report written in another format.
	NoCharts bool
}

// Replay is a what-if replay a report adds: its policy and options, of
// which the report sets the Window to its own and, when empty, the
// TaskKey to its Segments.TaskKey.
type Replay struct {
	Policy  whatif.Policy
	Options whatif.Options
}

// buildSteps name the steps of Build, for Options.Progress.
var buildSteps = []string{"measuring the requests", "layers, triggers and ranges", "baselines",
	"marginal yield and capacity", "findings", "what if"}

// step tells Options.Progress that step i of buildSteps begins.
func (o Options) step(i int) {
	if o.Progress != nil {
		n := len(buildSteps)
		if o.Whatif == nil || o.FindingsOnly {
			n--
		}
		o.Progress(buildSteps[i], i+1, n)
	}
}

// rangeMethod says how the workload ranges are made, in every format.
const rangeMethod = "requests joined across traces by inference (split_inferred): each doubtful decision " +
	"(an alternative at least 1/20 as likely: no join, another attempt, a join where none was made, a retry " +
	"where a retried failure found no candidate) is counted the way it lowers and the way it raises each " +
	"count; the rates take the extreme counts"

// Build measures the requests of opt.Window in the derived tables of st.
func Build(ctx context.Context, st *store.Store, opt Options) (*Report, error) {
	spec := opt.Segments
	if spec.Prices == nil {
		spec.Prices = DefaultPrices()
	}
	spec.Since, spec.Until = time.Time{}, time.Time{}
	if opt.Window.Since != 0 {
		spec.Since = time.Unix(0, opt.Window.Since).UTC()
	}
	if opt.Window.Until != 0 {
		spec.Until = time.Unix(0, opt.Window.Until).UTC()
	}
	rep := &Report{Schema: Schema, Window: newWindow(opt.Window, opt.Why), Baselines: []baseline.Block{},
		Segments: []segment.Segment{}, SegmentBy: []string{}}
	rep.settings = settings{source: opt.Source, dataset: opt.Dataset, explain: opt.Explain, findings: opt.FindingsOnly, ci: spec.CI,
		full: opt.Full, sections: opt.Sections}

	// The workload is the segment engine with no filter; in the same pass
	// it segments the requests by FindingDims, every cohort on its own,
	// for the findings to judge.
	whole := segment.Spec{Since: spec.Since, Until: spec.Until, CI: spec.CI, Seed: spec.Seed,
		Resamples: spec.Resamples, MinTail: spec.MinTail, BaselineKind: spec.BaselineKind, Samples: !opt.NoCharts, Prices: spec.Prices,
		TaskKey: spec.TaskKey, By: analysis.FindingSegmentDims(), MinCohort: 1}
	// Without filters the segments read the workload's requests, so both
	// are computed from one read.
	specs := []segment.Spec{whole}
	if len(spec.By) > 0 && len(spec.Where) == 0 {
		specs = append(specs, spec)
	}
	opt.step(0)
	loaded, err := segment.Load(ctx, st, specs)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	// Measuring the rows is Go's work alone. For a window whose rows and
	// the marginal yield's requests fit beside each other (the small
	// windows of store.CacheReturnRequests, for which LoadAlone keeps
	// DuckDB's cache as well), it runs while
	// DuckDB answers the queries of the next three steps; a larger
	// window's rows are measured first, and their memory goes back to the
	// system before DuckDB's queries instead of staying beside DuckDB's
	// until Go next collects (at 10M spans, 1.4 GB for 8 s).
	var results []segment.Result
	measured := make(chan struct{})
	// A step's error returns once the rows are measured: nothing is left
	// running after Build.
	defer func() { <-measured }()
	n := int64(loaded.Requests())
	if n <= store.CacheReturnRequests {
		go func() {
			defer close(measured)
			results = loaded.Measure()
		}()
	} else {
		results = loaded.Measure()
		close(measured)
		debug.FreeOSMemory()
	}
	opt.step(1)
	extras, err := workloadExtras(ctx, st, opt.Window)
	if err != nil {
		return nil, err
	}
	opt.step(2)
	if opt.Baseline != "" && opt.Baseline != "none" {
		blocks, err := baseline.Summarize(ctx, st, opt.Baseline, opt.Window)
		if err != nil && !errors.Is(err, baseline.ErrNotComputed) {
			return nil, fmt.Errorf("baselines: %w", err)
		}
		if blocks != nil {
			rep.Baselines = blocks
		}
	}
	opt.step(3)
	// The requests and their attempts are Go's second largest hold, used
	// by Go alone from here.
	var reqs []*analysis.Request
	err = st.LoadAlone(ctx, n, func() (err error) {
		reqs, err = analysis.LoadRequests(ctx, st, opt.Window)
		return err
	})
	<-measured
	if err != nil {
		return nil, fmt.Errorf("marginal yield: %w", err)
	}
	all := results[0]
	rep.Workload.Measures, rep.samples = all.Workload, all.Samples
	rep.addExtras(extras)
	rep.settings.baseline, rep.settings.seed, rep.settings.resamples = all.Baseline, all.Seed, all.Resamples
	rep.settings.minCohort = cmp.Or(spec.MinCohort, segment.DefaultMinCohort)
	rep.Notes = all.Notes
	if len(spec.By) > 0 || len(spec.Where) > 0 {
		var res segment.Result
		if len(results) > 1 {
			res = results[1]
		} else if res, err = segment.Compute(ctx, st, spec); err != nil {
			return nil, fmt.Errorf("segments: %w", err)
		}
		rep.Segments, rep.SegmentBy, rep.Notes = res.Segments, res.Dims, res.Notes
		rep.settings.minCohort = res.MinCohort
		if rep.SegmentBy == nil {
			rep.SegmentBy = []string{}
		}
		if len(spec.Where) > 0 {
			rep.SegmentsTotal = &res.Workload
		}
	}
	// The marginal yield, the capacity and the findings read the requests
	// and write nothing they share: the first two, Go's alone, run beside
	// the findings, which query the store too.
	var wg sync.WaitGroup
	rule, minCohort, hiddenMs := model.Rule{MinTail: all.MinTail}, rep.settings.minCohort, all.Workload.HiddenWorkMs
	wg.Go(func() { rep.MarginalYield = analysis.MarginalYieldOf(reqs, rule, opt.YieldBudget, minCohort) })
	wg.Go(func() {
		rep.Capacity = analysis.MeasureCapacity(reqs, analysis.CapacityStep(reqs), hiddenMs)
		rep.Capacity.AgainstWorkers(opt.Workers)
	})
	opt.step(4)
	rep.Findings, err = analysis.Findings(analysis.WithRequests(ctx, opt.Window, reqs), st, opt.Window, &all)
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("findings: %w", err)
	}
	i := &rep.Ingest
	if err := st.QueryRow(ctx, "report_ingest").Scan(&i.Files, &i.SpansRead, &i.Spans, &i.Rejected); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if opt.Whatif != nil && !opt.FindingsOnly {
		opt.step(5)
		wopt := opt.Whatif.Options
		wopt.Window, wopt.TaskKey = opt.Window, cmp.Or(wopt.TaskKey, opt.Segments.TaskKey)
		if wopt.Prices == nil {
			wopt.Prices = spec.Prices
		}
		if rep.Whatif, err = whatif.Replay(ctx, st, opt.Whatif.Policy, wopt); err != nil {
			return nil, fmt.Errorf("whatif: %w", err)
		}
	}
	return rep, nil
}

// extras is what only the whole workload has: nesting, triggers, rebuild
// rules and the count shifts behind the plausible ranges.
type extras struct {
	layers   []LayerRow
	triggers []TriggerRow
	linkage  []LinkageRow
	shifts   model.CountShifts
}

// workloadExtras reads the extras of the requests of win.
func workloadExtras(ctx context.Context, st *store.Store, win model.Window) (extras, error) {
	lo, hi := win.Bounds()
	// No attempt starts much before its request: an hour covers clock skew
	// between services and lets the queries skip older attempts.
	from := lo
	if from > math.MinInt64+int64(time.Hour) {
		from -= int64(time.Hour)
	}
	var x extras
	var err error
	if x.layers, err = layers(ctx, st, lo, hi); err != nil {
		return x, fmt.Errorf("layers: %w", err)
	}
	x.triggers = []TriggerRow{}
	err = st.EachRow(ctx, "report_triggers", []any{lo, hi, from}, func(rows *sql.Rows) error {
		var r TriggerRow
		err := rows.Scan(&r.Trigger, &r.Attempts)
		x.triggers = append(x.triggers, r)
		return err
	})
	if err != nil {
		return x, fmt.Errorf("triggers: %w", err)
	}
	x.linkage = []LinkageRow{}
	err = st.EachRow(ctx, "report_linkage", []any{lo, hi}, func(rows *sql.Rows) error {
		var r LinkageRow
		err := rows.Scan(&r.Linkage, &r.Requests, &r.Attempts, &r.Retried, &r.Inferred, &r.Example)
		x.linkage = append(x.linkage, r)
		return err
	})
	if err != nil {
		return x, fmt.Errorf("linkage: %w", err)
	}
	d, u := &x.shifts.Down, &x.shifts.Up
	err = st.QueryRow(ctx, "report_ranges", lo, hi).Scan(&d.Requests, &d.Retried, &d.RetriedOK, &d.Failed,
		&u.Requests, &u.Retried, &u.RetriedOK, &u.Failed)
	if err != nil {
		return x, fmt.Errorf("ranges: %w", err)
	}
	return x, nil
}

// addExtras adds x to the workload, whose measures are in: the shares and
// ranges are of its counts.
func (rep *Report) addExtras(x extras) {
	w := &rep.Workload
	w.Percentiles = model.PercentileDefinition
	w.AmplificationByLayers, w.Triggers, rep.Linkage = x.layers, x.triggers, x.linkage
	for i := range rep.Linkage {
		if r := &rep.Linkage[i]; w.LogicalRequests > 0 {
			r.InferredShare = float64(r.Inferred) / float64(w.LogicalRequests)
		}
	}
	w.Ranges = x.shifts.Ranges(model.Counts{Requests: int64(w.LogicalRequests), Attempts: w.Attempts,
		Retried: int64(w.Retried), RetriedOK: int64(w.Rescued), Failed: int64(w.Failed)})
	w.RangeMethod = rangeMethod
}

// layers turns tries per layer into multipliers per depth of nesting.
func layers(ctx context.Context, st *store.Store, lo, hi int64) ([]LayerRow, error) {
	out := []LayerRow{}
	var prev int64
	err := st.EachRow(ctx, "report_layers", []any{lo, hi}, func(rows *sql.Rows) error {
		var depth, layer int
		var requests, tries int64
		if err := rows.Scan(&depth, &requests, &layer, &tries); err != nil {
			return err
		}
		if n := len(out); n == 0 || out[n-1].Depth != depth {
			out = append(out, LayerRow{Depth: depth, Requests: requests, Multipliers: []float64{}})
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

func newWindow(w model.Window, why string) Window {
	out := Window{Why: why}
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

// text is the window as a heading line, empty when it covers every
// request.
func (w Window) text() string {
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
