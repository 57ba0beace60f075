// Package segment slices the rebuilt logical requests by dimensions
// (model, route, trigger, time, any span or resource attribute ...) and
// reports the workload measures (docs/report.md, "report") for each slice,
// with the tail statistics stated honestly (docs/report.md, "report"):
//
//   - percentiles are nearest-rank (PercentileDefinition) and a cell is
//     null unless at least Spec.MinTail (default 5) observations lie at or
//     above it, so p99 needs 500 requests; each cell follows the rule on
//     its own;
//   - cohorts under Spec.MinCohort (default 30) requests are pooled into
//     "(other)" segments marked rolled_up, never dropped, so the segments
//     always add up to the workload;
//   - Spec.CI adds seeded bootstrap 95% intervals for p95 and p99;
//   - user-given names and values (attributes, filters, the baseline
//     kind) are bound as query parameters, never written into SQL.
//
// Compute does one query (queries/segment_rows.sql) and the statistics in
// Go. It is the report's one measure engine: the workload is a Compute
// with no dimensions. Package report renders a Result; its struct tags
// give the JSON.
package segment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
)

// Defaults of Spec's statistical settings.
const (
	// DefaultMinCohort is the smallest cohort reported on its own. 30
	// requests give a stable mean and rates to a few points; they do not
	// give a p95 (100) or p99 (500), and the sample rule leaves those cells
	// empty on its own.
	DefaultMinCohort = 30
	// DefaultMaxSegments is Spec.MaxSegments' default.
	DefaultMaxSegments = 1000
	// DefaultResamples is the number of bootstrap resamples behind a CI.
	DefaultResamples = 1000
	// DefaultSeed seeds the bootstrap when Spec.Seed is zero.
	DefaultSeed = 1
)

// Sort orders the segments of a Result.
type Sort string

// The segment orders. Ties fall through to amplification, then request
// count (both descending), then the dimension values (ascending). Rolled-up
// segments always come after the cohorts reported on their own.
const (
	// SortRetriedP99 (the default) puts the worst retry tail first: retried
	// p99 descending, segments without one (too few retried requests)
	// after those with one, ordered among themselves by retried p95 the
	// same way.
	SortRetriedP99 Sort = "retried_p99"
	// SortAmplification puts the most attempts per logical request first.
	SortAmplification Sort = "amplification"
	// SortRequests puts the largest segments first.
	SortRequests Sort = "requests"
	// SortKey orders by the dimension values alone, e.g. for time buckets.
	SortKey Sort = "key"
)

// ParseSort checks a sort name ("" is the default, SortRetriedP99).
func ParseSort(s string) (Sort, error) {
	switch so := Sort(strings.TrimSpace(s)); so {
	case "":
		return SortRetriedP99, nil
	case SortRetriedP99, SortAmplification, SortRequests, SortKey:
		return so, nil
	}
	return "", fmt.Errorf("unknown sort %q (want %s, %s, %s or %s)", s, SortRetriedP99, SortAmplification, SortRequests, SortKey)
}

// Spec says how to segment.
type Spec struct {
	// By are the dimensions; none gives a single segment, the workload.
	By []Dim
	// Where keeps only the requests every filter accepts.
	Where []Filter
	// Since and Until bound requests' start times, Since inclusive, Until
	// exclusive; zero means unbounded.
	Since, Until time.Time
	// MinCohort is the smallest cohort reported on its own; smaller ones
	// are pooled into "(other)". DefaultMinCohort when zero; 1 pools none.
	MinCohort int
	// MaxSegments is the most segments reported (DefaultMaxSegments when
	// zero): beyond it the smallest cohorts are pooled into "(other)" too,
	// with a note, so that a dimension with a million values (a user id)
	// costs what a thousand do.
	MaxSegments int
	// MinTail is how many observations must lie at or above a percentile
	// for it to be reported. model.MinTail (5) when zero.
	MinTail int
	// CI adds bootstrap 95% intervals for p95 and p99 of latency (all and
	// retried) and of added latency, per segment and for the workload,
	// wherever the percentile itself is reported. The interval is the
	// percentile bootstrap widened by one rank at each end, which brings
	// the far tail's coverage back to about 95% (bootstrapTail says why).
	CI bool
	// Seed and Resamples drive the bootstrap (DefaultSeed and
	// DefaultResamples when zero). The same seed gives the same intervals.
	Seed      uint64
	Resamples int
	// BaselineKind, when set and baselines have been computed, adds added
	// latency against that kind to every segment.
	BaselineKind string
	// TaskKey, when set, names the anchor-span attribute that says which
	// task a request belongs to; requests without it, and every request
	// when it is empty, belong to the task of their trace.
	TaskKey string
	// Prices price the tokens for spend (Measures.SpendUSD); with none,
	// every request with tokens is unpriced.
	Prices model.Prices
	// Sort orders the segments; SortRetriedP99 when empty.
	Sort Sort
	// Samples keeps each request's start, latency and added latency in
	// Result.Samples, for charts drawn from the same rows.
	Samples bool
}

// Result is a segmentation: the workload over every request that passed
// the filters, and its segments. The segments partition the workload, so
// their counts add up to it.
type Result struct {
	// Dims are the dimensions' keys (Dim.Key), the keys of every by map.
	Dims []string `json:"dims"`
	// Definition is model.PercentileDefinition.
	Definition string `json:"percentile_definition"`
	// MinCohort, MinTail, CI, Seed, Resamples and Sort are the settings
	// used, defaults filled in.
	MinCohort int    `json:"min_cohort"`
	MinTail   int    `json:"min_tail"`
	CI        bool   `json:"ci"`
	Seed      uint64 `json:"seed,omitempty"`
	Resamples int    `json:"resamples,omitempty"`
	Sort      Sort   `json:"sort"`
	// Baseline is the kind added latency is measured against, "" when none.
	Baseline string `json:"baseline,omitempty"`
	// Workload measures every request that passed Where, Since and Until.
	Workload Measures `json:"workload"`
	// Segments partition the workload, in Sort order.
	Segments []Segment `json:"segments"`
	// Notes say what was left out and why (e.g. no baselines computed).
	Notes []string `json:"notes,omitempty"`
	// Samples are the requests measured, in request_id order, when
	// Spec.Samples asks for them.
	Samples []Sample `json:"-"`
}

// Sample is one request as a chart draws it.
type Sample struct {
	StartNs   int64
	LatencyMs float64
	Attempts  int
	// AddedMs is latency − L0 against Spec.BaselineKind, NaN without one.
	AddedMs float64
}

// Segment is one slice: its dimension values and the measures of its
// requests, under the same keys as the workload.
type Segment struct {
	// By maps each dimension's key to the segment's value.
	By map[string]string `json:"by"`
	// Values are By's values in the order of Result.Dims.
	Values []string `json:"-"`
	// RolledUp marks a pool of cohorts smaller than MinCohort; its values
	// are "(other)" from the level at which they were pooled.
	RolledUp bool `json:"rolled_up"`
	// Cohorts is how many value combinations a rolled-up segment pools.
	Cohorts int `json:"cohorts,omitempty"`
	Measures
}

// Label is the segment's values joined with " / ", or "(all)" when there
// are no dimensions.
func (s *Segment) Label() string {
	if len(s.Values) == 0 {
		return "(all)"
	}
	return strings.Join(s.Values, " / ")
}

func (spec *Spec) normalize() (stats, error) {
	if spec.MinCohort == 0 {
		spec.MinCohort = DefaultMinCohort
	}
	if spec.MaxSegments == 0 {
		spec.MaxSegments = DefaultMaxSegments
	}
	if spec.MinTail == 0 {
		spec.MinTail = model.MinTail
	}
	if spec.Seed == 0 {
		spec.Seed = DefaultSeed
	}
	if spec.Resamples == 0 {
		spec.Resamples = DefaultResamples
	}
	if spec.Sort == "" {
		spec.Sort = SortRetriedP99
	}
	var errs []error
	if spec.MinCohort < 0 || spec.MinTail < 0 || spec.Resamples < 0 {
		errs = append(errs, errors.New("min cohort, min tail and resamples must not be negative"))
	}
	if _, err := ParseSort(string(spec.Sort)); err != nil {
		errs = append(errs, err)
	}
	if !spec.Since.IsZero() && !spec.Until.IsZero() && !spec.Until.After(spec.Since) {
		errs = append(errs, fmt.Errorf("until %s is not after since %s", spec.Until, spec.Since))
	}
	for i := range spec.By {
		spec.By[i] = spec.By[i].withDefaults()
		errs = append(errs, spec.By[i].validate())
	}
	for i := range spec.Where {
		spec.Where[i].Dim = spec.Where[i].Dim.withDefaults()
		errs = append(errs, spec.Where[i].Dim.validate())
	}
	return stats{rule: model.Rule{MinTail: spec.MinTail}, ci: spec.CI, seed: spec.Seed, resamples: spec.Resamples,
		prices: spec.Prices}, errors.Join(errs...)
}

// Compute segments the requests table of st as spec says.
func Compute(ctx context.Context, st *store.Store, spec Spec) (Result, error) {
	res, err := ComputeMany(ctx, st, []Spec{spec})
	if err != nil {
		return Result{}, err
	}
	return res[0], nil
}

// ComputeMany is Compute for several specs that read the same requests
// (the same Where, Since, Until, BaselineKind and TaskKey) and may differ
// in everything else: it reads the requests once, with the dimensions of
// every spec, and gives one Result per spec, in order.
func ComputeMany(ctx context.Context, st *store.Store, specs []Spec) ([]Result, error) {
	l, err := Load(ctx, st, specs)
	if err != nil {
		return nil, err
	}
	return l.Measure(), nil
}

// Loaded is the requests ComputeMany reads, before they are measured.
type Loaded struct {
	specs        []Spec
	all          []stats
	rows         []reqRow
	values       []name
	names        *names
	dims         int
	withBaseline bool
}

// Requests is how many requests l holds.
func (l *Loaded) Requests() int {
	if l == nil {
		return 0
	}
	return len(l.rows)
}

// Load is ComputeMany's reading of the store; Measure is the rest, which
// is Go's alone: it may run while the store runs other queries.
func Load(ctx context.Context, st *store.Store, specs []Spec) (*Loaded, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	read := specs[0]
	read.By = nil
	all := make([]stats, len(specs))
	for i := range specs {
		spec := &specs[i]
		spec.By = slices.Clone(spec.By)
		spec.Where = slices.Clone(spec.Where)
		s, err := spec.normalize()
		if err != nil {
			return nil, fmt.Errorf("segment: %w", err)
		}
		if !sameRequests(spec, &specs[0]) {
			return nil, fmt.Errorf("segment: spec %d reads other requests than spec 0", i)
		}
		all[i] = s
		read.By = append(read.By, spec.By...)
	}
	read.Where = specs[0].Where
	withBaseline := false
	if read.BaselineKind != "" {
		var err error
		if withBaseline, err = st.BaselinesComputed(ctx); err != nil {
			return nil, fmt.Errorf("segment: look for baselines: %w", err)
		}
	}
	since, until := int64(math.MinInt64), int64(math.MaxInt64)
	if !read.Since.IsZero() {
		since = read.Since.UnixNano()
	}
	if !read.Until.IsZero() {
		until = read.Until.UnixNano()
	}
	// The rows are the largest thing Go holds (at 10M spans 0.6 GB), and
	// measuring them is Go's work alone.
	var rows []reqRow
	var values []name
	var nm *names
	var n int64
	if err := st.QueryRow(ctx, "segment_count", since, until).Scan(&n); err != nil {
		return nil, fmt.Errorf("segment requests: %w", err)
	}
	err := st.LoadAlone(ctx, n, func() (err error) {
		rows, values, nm, err = loadRows(ctx, st, &read, since, until, withBaseline, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Loaded{specs: specs, all: all, rows: rows, values: values, names: nm, dims: len(read.By), withBaseline: withBaseline}, nil
}

// Measure gives one Result per spec of Load, in order. It reads nothing
// from the store. l holds no rows after it.
func (l *Loaded) Measure() []Result {
	if l == nil {
		return nil
	}
	out := make([]Result, len(l.specs))
	first := 0
	for i := range l.specs {
		l.all[i].names = l.names
		n := len(l.specs[i].By)
		out[i] = measureSpec(&l.specs[i], l.all[i], l.rows, cohortsOf(len(l.rows), l.values, l.names, l.dims, first, n), l.withBaseline)
		first += n
	}
	l.rows, l.values = nil, nil
	return out
}

// sameRequests: specs a and b read the same requests.
func sameRequests(a, b *Spec) bool {
	return a.Since.Equal(b.Since) && a.Until.Equal(b.Until) && a.BaselineKind == b.BaselineKind &&
		a.TaskKey == b.TaskKey && slices.EqualFunc(a.Where, b.Where, func(x, y Filter) bool {
		return x.Dim.Key() == y.Dim.Key() && x.Exclude == y.Exclude && slices.Equal(x.Values, y.Values)
	})
}

// measureSpec measures the requests rows, grouped into cohorts by spec's
// dimensions, as spec asks.
func measureSpec(spec *Spec, s stats, rows []reqRow, cohorts []cohort, withBaseline bool) Result {
	res := Result{
		Definition: model.PercentileDefinition,
		MinCohort:  spec.MinCohort,
		MinTail:    spec.MinTail,
		CI:         spec.CI,
		Sort:       spec.Sort,
		Segments:   []Segment{},
	}
	if spec.CI {
		res.Seed, res.Resamples = spec.Seed, spec.Resamples
	}
	for _, d := range spec.By {
		res.Dims = append(res.Dims, d.Key())
	}
	if spec.BaselineKind != "" {
		if withBaseline {
			s.baseline, res.Baseline = spec.BaselineKind, spec.BaselineKind
		} else {
			res.Notes = append(res.Notes, fmt.Sprintf("added latency against %q left out: no baselines computed yet", spec.BaselineKind))
		}
	}
	if spec.Samples {
		res.Samples = make([]Sample, len(rows))
		for i, r := range rows {
			res.Samples[i] = Sample{StartNs: r.startNs, LatencyMs: r.latency, Attempts: int(r.attempts), AddedMs: r.latency - r.l0}
		}
	}
	all := make([]int32, len(rows))
	for i := range all {
		all[i] = int32(i)
	}
	pools, capped := rollUp(cohorts, len(spec.By), spec.MinCohort, spec.MaxSegments)
	if capped > 0 {
		shown := len(pools) - 1
		res.Notes = append(res.Notes, fmt.Sprintf("%d segments are too many to show: the %d largest are, and the other %d are pooled into %s (see --min-cohort, --where)",
			shown+capped, shown, capped, Other))
	}
	res.Segments = make([]Segment, len(pools))
	// The measures of each segment are independent (each bootstrap has a
	// generator of its own), so they are computed side by side.
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	parallel := func(f func()) {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			f()
		}()
	}
	parallel(func() { res.Workload = s.measure(rows, all, "(workload)") })
	for i, g := range pools {
		seg := &res.Segments[i]
		*seg = Segment{By: make(map[string]string, len(g.values)), Values: g.values, RolledUp: g.pooled > 0, Cohorts: g.pooled}
		for j, d := range res.Dims {
			seg.By[d] = g.values[j]
		}
		parallel(func() { seg.Measures = s.measure(rows, g.rows, strings.Join(g.values, "\x00")) })
	}
	wg.Wait()
	sortSegments(res.Segments, spec.Sort)
	return res
}

// pool is a segment to report: a cohort, or cohorts pooled into "(other)".
type pool struct {
	values []string
	rows   []int32
	pooled int // cohorts pooled; 0 for a cohort reported on its own
}

// rollUp keeps cohorts of at least minCohort requests and pools the rest
// level by level: small cohorts sharing their first level-1 values are
// pooled as (v1, ..., (other), ...) when the pool reaches minCohort;
// what is still too small moves one level up, and what is left at the top
// becomes the all-"(other)" segment, however small. No request is lost.
// Past maxSegments, the smallest segments go into the all-"(other)" one
// as well; capped is how many.
func rollUp(cohorts []cohort, ndims, minCohort, maxSegments int) (pools []pool, capped int) {
	out := rollUpLevels(cohorts, ndims, minCohort)
	if len(out) <= maxSegments || ndims == 0 {
		return out, 0
	}
	slices.SortStableFunc(out, func(a, b pool) int {
		return cmp.Or(cmp.Compare(len(b.rows), len(a.rows)), slices.Compare(a.values, b.values))
	})
	others := make([]string, ndims)
	for i := range others {
		others[i] = Other
	}
	rest := pool{values: others}
	kept := out[:0]
	for i, p := range out {
		if i < maxSegments-1 && !slices.Equal(p.values, others) {
			kept = append(kept, p)
			continue
		}
		rest.rows = append(rest.rows, p.rows...)
		rest.pooled += max(p.pooled, 1)
		if !slices.Equal(p.values, others) {
			capped++
		}
	}
	return append(kept, rest), capped
}

// rollUpLevels is rollUp without its cap.
func rollUpLevels(cohorts []cohort, ndims, minCohort int) []pool {
	var out []pool
	var small []pool
	for _, c := range cohorts {
		p := pool{values: c.values, rows: c.rows}
		if len(c.rows) >= minCohort || ndims == 0 {
			out = append(out, p)
		} else {
			small = append(small, p)
		}
	}
	for level := ndims - 1; level >= 0 && len(small) > 0; level-- {
		groups := make(map[string]*pool)
		var order []string
		for _, p := range small {
			key := strings.Join(p.values[:level], "\x00")
			g := groups[key]
			if g == nil {
				values := slices.Clone(p.values[:level])
				for len(values) < ndims {
					values = append(values, Other)
				}
				g = &pool{values: values}
				groups[key] = g
				order = append(order, key)
			}
			g.rows = append(g.rows, p.rows...)
			g.pooled += max(p.pooled, 1)
		}
		small = small[:0]
		for _, key := range order {
			g := groups[key]
			if len(g.rows) >= minCohort || level == 0 {
				out = append(out, *g)
			} else {
				small = append(small, *g)
			}
		}
	}
	return out
}

func sortSegments(segs []Segment, by Sort) {
	slices.SortStableFunc(segs, func(a, b Segment) int {
		if a.RolledUp != b.RolledUp {
			if a.RolledUp {
				return 1
			}
			return -1
		}
		var c int
		switch by {
		case SortRetriedP99:
			c = cmp.Or(descNullsLast(a.LatencyMs.Retried.P99, b.LatencyMs.Retried.P99),
				descNullsLast(a.LatencyMs.Retried.P95, b.LatencyMs.Retried.P95))
		case SortRequests:
			c = cmp.Compare(b.LogicalRequests, a.LogicalRequests)
		}
		if by != SortKey {
			c = cmp.Or(c,
				cmp.Compare(b.Amplification, a.Amplification),
				cmp.Compare(b.LogicalRequests, a.LogicalRequests))
		}
		return cmp.Or(c, slices.Compare(a.Values, b.Values))
	})
}

// descNullsLast orders larger values first and nil after every value.
func descNullsLast(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*b, *a)
}
