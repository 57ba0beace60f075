// Package baseline estimates, for every retried logical request, the
// latency L0 it would have had under a comparison policy
// (docs/recognition.md, "Baselines"), one labelled kind at a time, and
// summarises what the retries added against each. Figures of different kinds
// are never combined.
//
// Compute materialises the table baselines (one row per retried request and
// kind, columns in queries/migrations/003_derived.sql) from the rebuilt requests
// and attempts; Summarize reads it back as one Block per kind, the shape
// the report prints and writes as JSON.
//
// How each kind finds L0 (the queries/baseline_*.sql headers and match.go
// give the detail):
//
//   - no_retry, measured: T1, the logical start to the first attempt's end.
//   - healthy, modeled: the mean latency of requests of the same cohort
//     (Options.Cohort) that succeeded on their first and only attempt,
//     within Options.Window of the request's start. The mean rather than
//     the median because the figures built on it are means of L - L0.
//   - alternate_route: measured, the request's own successful attempt,
//     where it fell over to another route; otherwise modeled, as healthy
//     but on the operation's other routes, pooled.
//   - matched, modeled: the mean latency of the K nearest first-attempt
//     successes of the same operation, model, route, stream and region, on a
//     distance over log token counts and start time, none beyond
//     MaxDistance.
//   - experiment: the mean latency of the control arm's successes of the
//     same cohort, for retried requests of a treatment arm. Randomization
//     makes the control arm a random sample of the same traffic; taking its
//     successes keeps the selection on the first attempt's outcome that
//     healthy has, so Block.ArmContrastMs also gives the unconditioned
//     difference of the arms' mean latencies.
//
// A retried request with no L0 under a kind keeps its row, with the reason,
// and is counted in Block.NWithoutBaseline; nothing is forced or dropped.
package baseline

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/retryscope/retryscope/internal/store"
)

// The baseline kinds of docs/recognition.md, "Baselines". Each answers a
// different question.
const (
	// KindNoRetry: the request ends at its first attempt's failure, L0 = T1.
	// How much longer did the retry keep the caller waiting?
	KindNoRetry = "no_retry"
	// KindHealthy: comparable requests that succeeded on their first
	// attempt. How much worse than normal service was it?
	KindHealthy = "healthy"
	// KindAlternateRoute: first-attempt successes on another eligible
	// route, or the request's own attempt there when it fell over. What if
	// it had gone elsewhere first?
	KindAlternateRoute = "alternate_route"
	// KindMatched: the nearest non-retried requests on covariates. Healthy
	// service for requests like this one, correcting for size and time.
	KindMatched = "matched"
	// KindExperiment: the control arm of a randomized policy experiment.
	KindExperiment = "experiment"
)

// Kinds lists every kind in the order reports show them.
func Kinds() []string {
	return []string{KindNoRetry, KindHealthy, KindAlternateRoute, KindMatched, KindExperiment}
}

// Provenance says how an L0 was obtained; every figure carries one.
const (
	ProvenanceMeasured   = "measured"   // read off the request's own trace
	ProvenanceExperiment = "experiment" // from a randomized policy experiment
	ProvenanceModeled    = "modeled"    // estimated from other requests
)

// Cohort dimensions Options.Cohort may name.
const (
	DimOperation = "operation"
	DimModel     = "model"
	DimRoute     = "route"
	DimStream    = "stream"
	DimSize      = "size"   // input-token bucket: floor(log2(prompt tokens))
	DimRegion    = "region" // the anchor's resource attribute cloud.region
)

// Defaults of Options, documented here so the report can quote them.
const (
	DefaultWindow      = 5 * time.Minute
	DefaultMinCohort   = 5
	DefaultK           = 5
	DefaultMaxDistance = 1.0
	DefaultTimeScale   = 5 * time.Minute
	DefaultArmKey      = "retryscope.policy.arm"
	DefaultControlArm  = "no_retry"
)

// Unbounded as Options.Window compares with the whole run.
const Unbounded = 100 * 365 * 24 * time.Hour

// DefaultTokenScale makes a doubling of prompt or output tokens count as a
// distance of 1 in the matched baseline.
const DefaultTokenScale = math.Ln2

// DefaultCohort is the cohort of the healthy and experiment baselines:
// same operation, model, route, stream, input-token bucket and region.
func DefaultCohort() []string {
	return []string{DimOperation, DimModel, DimRoute, DimStream, DimSize, DimRegion}
}

// Options tune the baselines. The zero value means every default.
type Options struct {
	// Cohort lists the dimensions (Dim*) that make requests comparable for
	// the healthy and experiment baselines; the alternate_route baseline
	// uses the same list without route and model. nil: DefaultCohort; an
	// empty list compares with the whole workload.
	Cohort []string
	// Window is the half-width of the time window around a request's start
	// from which cohort requests are taken (DefaultWindow); Unbounded takes
	// the whole run.
	Window time.Duration
	// MinCohort is the fewest comparison requests an L0 may rest on
	// (DefaultMinCohort); with fewer the request has no baseline.
	MinCohort int
	// K is how many nearest requests the matched baseline averages
	// (DefaultK); fewer are used when fewer lie within MaxDistance.
	K int
	// MaxDistance is the farthest a match may be (DefaultMaxDistance).
	MaxDistance float64
	// TokenScale is the token distance, in natural-log units, that counts
	// 1 (DefaultTokenScale, a doubling).
	TokenScale float64
	// TimeScale is the start-time difference that counts 1
	// (DefaultTimeScale).
	TimeScale time.Duration
	// readFrom..readTo are the request starts read, targetFrom..targetTo
	// those recomputed when partial (see scope).
	readFrom, readTo, targetFrom, targetTo int64
	partial                                bool
	// ArmKey is the anchor-span attribute naming the policy-experiment arm
	// (DefaultArmKey) and ControlArm its value in the arm without retries
	// (DefaultControlArm); every other value is a treatment arm.
	ArmKey     string
	ControlArm string
	// Progress, when set, is told which step (a kind) is starting, as
	// step i of n.
	Progress func(step string, i, n int)
	// Since and Until, when set, limit the work to what changed: only
	// requests starting in [Since, Until] (Unix ns), and those near enough
	// in time for their cohort to include one of them, get their baselines
	// recomputed; every other row is kept. Both zero: recompute all.
	Since, Until int64
}

func (o Options) withDefaults() (Options, error) {
	if o.Cohort == nil {
		o.Cohort = DefaultCohort()
	}
	for _, d := range o.Cohort {
		if !slices.Contains(DefaultCohort(), d) {
			return o, fmt.Errorf("unknown cohort dimension %q (want %s)", d, strings.Join(DefaultCohort(), ", "))
		}
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	o.Window = min(o.Window, Unbounded)
	if o.MinCohort <= 0 {
		o.MinCohort = DefaultMinCohort
	}
	if o.K <= 0 {
		o.K = DefaultK
	}
	if o.MaxDistance <= 0 {
		o.MaxDistance = DefaultMaxDistance
	}
	if o.TokenScale <= 0 {
		o.TokenScale = DefaultTokenScale
	}
	if o.TimeScale <= 0 {
		o.TimeScale = DefaultTimeScale
	}
	if o.ArmKey == "" {
		o.ArmKey = DefaultArmKey
	}
	if o.ControlArm == "" {
		o.ControlArm = DefaultControlArm
	}
	return o, nil
}

func (o Options) windowText() string {
	if o.Window >= Unbounded {
		return "anywhere in the run"
	}
	return "starting within ±" + o.Window.String()
}

func (o Options) cohortText(dims []string) string {
	words := make([]string, len(dims))
	for i, d := range dims {
		words[i] = d
		if d == DimSize {
			words[i] = "input-token bucket (log2)"
		}
	}
	return "same " + strings.Join(words, ", ")
}

// altCohort is the cohort without the dimensions that change with the route.
func (o Options) altCohort() []string {
	var dims []string
	for _, d := range o.Cohort {
		if d != DimRoute && d != DimModel {
			dims = append(dims, d)
		}
	}
	return dims
}

// step is one statement of Compute, or, with run set, Go code.
type step struct {
	what  string
	query string
	args  []any
	run   func(context.Context, *store.Store) error
}

// input is the step that reads the requests into the temporary table
// baseline_input, which every kind reads.
func (o Options) input() step {
	has := func(d string) bool { return slices.Contains(o.Cohort, d) }
	return step{what: "read requests", query: "baseline_input", args: []any{o.ArmKey,
		has(DimOperation), has(DimModel), has(DimRoute), has(DimStream), has(DimSize), has(DimRegion),
		o.readFrom, o.readTo}}
}

func (o Options) steps() []step {
	window := int64(o.Window)
	cohort := o.cohortText(o.Cohort) + ", " + o.windowText()
	return []step{
		o.clear(),
		{what: "record arms", query: "baseline_arms", args: []any{o.ControlArm}},
		{what: KindNoRetry, query: "baseline_no_retry", args: []any{
			"L0 = T1: logical start to the end of the first attempt"}},
		{what: KindHealthy, query: "baseline_healthy", args: []any{window, o.MinCohort,
			fmt.Sprintf("mean latency of first-attempt successes, %s (at least %d)", cohort, o.MinCohort)}},
		{what: KindAlternateRoute, query: "baseline_alternate_route", args: []any{window, o.MinCohort,
			"L0 = the request's own successful attempt on the route it fell over to",
			fmt.Sprintf("mean latency of first-attempt successes on the operation's other routes, %s, %s (at least %d)",
				o.cohortText(o.altCohort()), o.windowText(), o.MinCohort)}},
		{what: KindMatched, run: func(ctx context.Context, st *store.Store) error {
			return computeMatched(ctx, st, o, fmt.Sprintf("mean latency of the %d nearest first-attempt successes of the same "+
				"operation, model, route, stream and region; distance on log tokens (scale %.3g) and start time (scale %s), "+
				"max distance %.3g", o.K, o.TokenScale, o.TimeScale, o.MaxDistance))
		}},
		{what: KindExperiment, query: "baseline_experiment", args: []any{o.ControlArm, window, o.MinCohort,
			fmt.Sprintf("mean latency of the %s arm's successes (%s), %s (at least %d)", o.ControlArm, o.ArmKey, cohort, o.MinCohort)}},
	}
}

// clear is the step that empties what the recompute rewrites: every row,
// or, when partial, the rows near the change (see baseline_keep).
func (o Options) clear() step {
	if o.partial {
		return step{what: "clear tables", run: func(ctx context.Context, st *store.Store) error {
			return st.ExecScript(ctx, "baseline_keep", o.readFrom, o.readTo, o.targetFrom, o.targetTo)
		}}
	}
	return step{what: "clear tables", query: "baseline_clear"}
}

func (s step) exec(ctx context.Context, st *store.Store) error {
	if s.run != nil {
		return s.run(ctx, st)
	}
	_, err := st.Exec(ctx, s.query, s.args...)
	return err
}

// Compute replaces the rows of the baselines table with every kind's L0 for every
// retried logical request. It needs the requests and attempts tables of the
// rebuild.
func Compute(ctx context.Context, st *store.Store, opt Options) error {
	opt, err := opt.withDefaults()
	if err != nil {
		return err
	}
	if err := opt.scope(ctx, st); err != nil {
		return err
	}
	// The input is a temporary table of this connection, so it needs no
	// transaction; and DuckDB joins a table created inside the open
	// transaction about ten times slower than a committed one.
	if err := opt.input().exec(ctx, st); err != nil {
		return fmt.Errorf("read requests: %w", err)
	}
	defer st.Exec(context.WithoutCancel(ctx), "baseline_input_drop")
	return st.Tx(ctx, func() error {
		steps := opt.steps()
		for i, s := range steps {
			if opt.Progress != nil {
				opt.Progress(s.what, i+1, len(steps))
			}
			if err := s.exec(ctx, st); err != nil {
				return fmt.Errorf("%s: %w", s.what, err)
			}
		}
		if opt.partial {
			if err := st.ExecScript(ctx, "baseline_merge"); err != nil {
				return fmt.Errorf("merge the recomputed rows: %w", err)
			}
		}
		if err := st.MarkBaselinesFresh(ctx); err != nil {
			return fmt.Errorf("record them: %w", err)
		}
		return nil
	})
}

// Reach is how far in start time a change to one request can move other
// requests' baselines: a partial recompute after changes in [Since, Until]
// changes only requests starting in [Since-Reach, Until+Reach].
func (o Options) Reach() (time.Duration, error) {
	o, err := o.withDefaults()
	return o.reach(), err
}

// reach is Reach of options with their defaults set. A request's cohort
// lies within Window of its start (healthy, alternate route, experiment)
// and its matches within TimeScale x MaxDistance; requests farther than
// that from every change keep their baseline, and the ones recomputed need
// their cohorts read whole.
func (o Options) reach() time.Duration {
	return max(o.Window, time.Duration(float64(o.TimeScale)*o.MaxDistance)) + 1
}

// scope sets the ranges of start times to read and to recompute. A partial
// recompute needs baselines computed before and a bounded window;
// otherwise everything is read and recomputed.
func (o *Options) scope(ctx context.Context, st *store.Store) error {
	o.readFrom, o.readTo, o.partial = math.MinInt64, math.MaxInt64, false
	if o.Since == 0 && o.Until == 0 || o.Window >= Unbounded {
		return nil
	}
	computed, err := st.BaselinesComputed(ctx)
	if err != nil || !computed {
		return err
	}
	margin := int64(o.reach())
	o.targetFrom, o.targetTo = o.Since-margin, o.Until+margin
	o.readFrom, o.readTo = o.targetFrom-margin, o.targetTo+margin
	o.partial = true
	return nil
}
