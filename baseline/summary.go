package baseline

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
)

// Block is what the retries added against one baseline kind: the report's
// "baselines" entries. Every figure in it is of this kind and provenance.
type Block struct {
	Kind string `json:"kind"`
	// Provenance is measured, experiment or modeled; a kind whose requests
	// mix measured and modeled L0s (alternate_route) is labelled modeled,
	// the weaker of the two, and flagged.
	Provenance string `json:"provenance"`
	Method     string `json:"method"`
	// N counts the retried requests with a baseline, NWithoutBaseline
	// those with none (too small a cohort, no match, no experiment arm).
	N                int `json:"n"`
	NWithoutBaseline int `json:"n_without_baseline"`
	// AddedLatencyMs is L_retry - L0 and Ratio L_retry / L0, per retried
	// request with a baseline.
	AddedLatencyMs model.Summary `json:"added_latency_ms"`
	Ratio          model.Summary `json:"ratio"`
	// WorkloadAmplification is E[L_with_retry] / E[L0] over the population
	// (every logical request but a policy experiment's control arm; for
	// experiment, the treatment arms only), a
	// request that did not retry counting with L0 = its own latency and
	// a retried one without a baseline left out. nil when no retried
	// request of the population has a baseline.
	WorkloadAmplification *float64 `json:"workload_amplification"`
	// ExpectedAddedMsPerRequest is P(R) · E[ΔL | R]: the share of the
	// population that retried times the mean added latency of those with
	// a baseline. nil when no retried request has one.
	ExpectedAddedMsPerRequest *float64 `json:"expected_added_ms_per_request"`
	// RetryRate is P(R), the share of the population that retried.
	RetryRate *float64 `json:"retry_rate"`
	// ArmContrastMs (experiment only) is E[L | treatment arms] -
	// E[L | control arm] over every request of the arms, failures
	// included: the randomized estimate of what the retry policy adds to
	// the mean logical request, without conditioning on any outcome.
	ArmContrastMs *float64 `json:"arm_contrast_ms,omitempty"`
	// MatchDistance (matched only) is the mean distance of the matches
	// used, over the requests matched: the match quality.
	MatchDistance *float64 `json:"match_distance,omitempty"`
	// Flags call for review: ratio_below_1, no_baseline, mixed_provenance,
	// no_population.
	Flags []string `json:"flags"`
}

// defaultProvenance is a kind's provenance when it has no rows to say so.
func defaultProvenance(kind string) string {
	switch kind {
	case KindNoRetry:
		return ProvenanceMeasured
	case KindExperiment:
		return ProvenanceExperiment
	}
	return ProvenanceModeled
}

// ErrNotComputed is returned by Summarize when Compute has not been run
// on the database.
var ErrNotComputed = errors.New("no baselines computed yet")

// Summarize reads the baselines table back as one Block for kind, or one
// per kind, in Kinds order, for "all", over the requests starting in w.
func Summarize(ctx context.Context, st *store.Store, kind string, w model.Window) ([]Block, error) {
	kinds := []string{kind}
	if kind == "all" {
		kinds = Kinds()
	} else if !slices.Contains(Kinds(), kind) {
		return nil, fmt.Errorf("unknown baseline kind %q (want %s or all)", kind, strings.Join(Kinds(), ", "))
	}
	computed, err := st.BaselinesComputed(ctx)
	if err != nil {
		return nil, err
	}
	if !computed {
		return nil, ErrNotComputed
	}
	blocks := make([]Block, 0, len(kinds))
	for _, k := range kinds {
		b, err := summarizeKind(ctx, st, k, w)
		if err == nil && k == KindExperiment {
			b.ArmContrastMs, err = armContrast(ctx, st, w)
		}
		if err != nil {
			return nil, fmt.Errorf("summarize %s baseline: %w", k, err)
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// armContrast is the difference in mean latency between the treatment arms
// and the control arm, nil unless both have requests.
func armContrast(ctx context.Context, st *store.Store, w model.Window) (*float64, error) {
	var contrast sql.NullFloat64
	lo, hi := w.Bounds()
	err := st.QueryRow(ctx, "baseline_arm_contrast", lo, hi).Scan(&contrast)
	if err != nil || !contrast.Valid {
		return nil, err
	}
	return &contrast.Float64, nil
}

// tally accumulates one kind's rows.
type tally struct {
	added, ratios    []float64
	distances        []float64
	provenances      map[string]int
	methods          map[string]string // by provenance
	reasons          map[string]int
	popN, popRetried int
	sumL, sumL0      float64
	popAddedSum      float64
	popAddedN        int
}

// The columns of baseline_summary_rows, read by name.
const (
	bsRetried = iota
	bsLatency
	bsHasRow
	bsL0
	bsProvenance
	bsMethod
	bsReason
	bsDistance
	bsInPopulation
	bsColumns
)

var summaryCols = [bsColumns]store.Col{
	bsRetried:      store.BoolCol("retried"),
	bsLatency:      store.FloatCol("latency_ms"),
	bsHasRow:       store.BoolCol("has_row"),
	bsL0:           store.FloatCol("l0_ms"),
	bsProvenance:   store.TextCol("provenance"),
	bsMethod:       store.TextCol("method"),
	bsReason:       store.TextCol("reason"),
	bsDistance:     store.FloatCol("match_distance"),
	bsInPopulation: store.BoolCol("in_population"),
}

func summarizeKind(ctx context.Context, st *store.Store, kind string, w model.Window) (Block, error) {
	t := tally{provenances: map[string]int{}, methods: map[string]string{}, reasons: map[string]int{}}
	lo, hi := w.Bounds()
	// A row a request, read a chunk at a time: through database/sql each
	// row's scan cost as much as DuckDB's query.
	err := st.StreamChunks(ctx, store.QueryFile("baseline_summary_rows"), []any{kind, lo, hi}, summaryCols[:], func(c *store.Chunk) error {
		for i := range c.Len() {
			row := c.Row(i)
			if d, ok := c.Float(bsDistance, i); ok {
				t.distances = append(t.distances, d)
			}
			var l0 sql.NullFloat64
			l0.Float64, l0.Valid = c.Float(bsL0, i)
			t.add(row.Bool(bsRetried), row.Bool(bsHasRow), row.Bool(bsInPopulation), row.Float(bsLatency), l0,
				row.Text(bsProvenance), row.Text(bsMethod), row.Text(bsReason))
		}
		return nil
	})
	if err != nil {
		return Block{}, err
	}
	return t.block(kind), nil
}

func (t *tally) add(retried, hasRow, inPop bool, latency float64, l0 sql.NullFloat64, provenance, method, reason string) {
	if hasRow {
		if l0.Valid {
			t.added = append(t.added, latency-l0.Float64)
			if l0.Float64 > 0 { // an L0 of zero has no ratio (and JSON no Inf)
				t.ratios = append(t.ratios, latency/l0.Float64)
			}
			t.provenances[provenance]++
			t.methods[provenance] = method
		} else {
			t.reasons[reason]++
		}
	}
	if !inPop {
		return
	}
	t.popN++
	switch {
	case !retried:
		t.sumL += latency
		t.sumL0 += latency
	case l0.Valid:
		t.popRetried++
		t.sumL += latency
		t.sumL0 += l0.Float64
		t.popAddedSum += latency - l0.Float64
		t.popAddedN++
	default:
		t.popRetried++
	}
}

func (t *tally) block(kind string) Block {
	b := Block{Kind: kind, Provenance: defaultProvenance(kind), N: len(t.added),
		AddedLatencyMs: model.Summarize(t.added), Ratio: model.Summarize(t.ratios), Flags: []string{}}
	for _, r := range t.reasons {
		b.NWithoutBaseline += r
	}
	b.Provenance, b.Method = t.label(kind)
	if t.popN > 0 {
		rate := float64(t.popRetried) / float64(t.popN)
		b.RetryRate = &rate
		// Without a single retried request with a baseline both figures
		// would only restate the non-retried requests: leave them unknown.
		if t.popAddedN > 0 {
			amp := t.sumL / t.sumL0
			exp := rate * t.popAddedSum / float64(t.popAddedN)
			b.WorkloadAmplification, b.ExpectedAddedMsPerRequest = &amp, &exp
		}
	}
	if len(t.distances) > 0 {
		b.MatchDistance = model.Summarize(t.distances).Mean
	}
	b.Flags = t.flags(b)
	return b
}

// label picks the block's provenance and method: the one present, or, when
// measured and modeled L0s are mixed, modeled with both methods named.
func (t *tally) label(kind string) (provenance, method string) {
	present := make([]string, 0, len(t.provenances))
	for p := range t.provenances {
		present = append(present, p)
	}
	rank := map[string]int{ProvenanceMeasured: 0, ProvenanceExperiment: 1, ProvenanceModeled: 2}
	slices.SortFunc(present, func(a, b string) int { return cmp.Compare(rank[a], rank[b]) })
	switch len(present) {
	case 0:
		return defaultProvenance(kind), ""
	case 1:
		return present[0], t.methods[present[0]]
	}
	var parts []string
	for _, p := range present {
		parts = append(parts, fmt.Sprintf("%s for %d: %s", p, t.provenances[p], t.methods[p]))
	}
	return present[len(present)-1], strings.Join(parts, "; ")
}

func (t *tally) flags(b Block) []string {
	flags := []string{}
	if m := b.Ratio.Mean; m != nil && *m < 1 {
		flags = append(flags, fmt.Sprintf("ratio_below_1: mean ratio %.3g; review the baseline, this is not a win", *m))
	} else if p := b.Ratio.P50; p != nil && *p < 1 {
		flags = append(flags, fmt.Sprintf("ratio_below_1: median ratio %.3g; review the baseline, this is not a win", *p))
	}
	if len(t.provenances) > 1 {
		var parts []string
		for _, p := range []string{ProvenanceMeasured, ProvenanceExperiment, ProvenanceModeled} {
			if n := t.provenances[p]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, p))
			}
		}
		flags = append(flags, "mixed_provenance: "+strings.Join(parts, ", ")+"; labelled by the weaker")
	}
	if b.NWithoutBaseline > 0 {
		total := b.N + b.NWithoutBaseline
		flags = append(flags, fmt.Sprintf("no_baseline: %d of %d retried requests (%.1f%%) have none; most often: %s",
			b.NWithoutBaseline, total, 100*float64(b.NWithoutBaseline)/float64(total), t.topReason()))
	}
	switch {
	case t.popN == 0 && b.Kind == KindExperiment:
		flags = append(flags, "no_population: no logical request is in a treatment arm of a policy experiment")
	case t.popN == 0:
		flags = append(flags, "no_population: no logical requests")
	}
	return flags
}

// topReason is the commonest reason for a missing baseline, ties broken by
// name so the output is stable.
func (t *tally) topReason() string {
	best, bestN := "", -1
	for r, n := range t.reasons {
		if n > bestN || (n == bestN && r < best) {
			best, bestN = r, n
		}
	}
	return best
}
