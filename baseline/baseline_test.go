package baseline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/model"
)

// t0 is an arbitrary start of the synthetic workloads, in Unix ns.
const t0 = int64(1_795_000_000_000_000_000)

// try is one attempt of a synthetic request, in ms after the request's start.
type try struct {
	from, to float64
	ok       bool
	route    string // "" : the request's route
}

// synth is a logical request built to known numbers. Its latency runs from
// its start to the end of its last attempt.
type synth struct {
	id, op, model, route string
	stream               bool
	atMs                 float64 // start, ms after t0
	inTokens, outTokens  int64
	arm, region          string
	tries                []try
}

// single is a request that succeeded on its first attempt in ms.
func single(id, op, route string, atMs, ms float64) synth {
	return synth{id: id, op: op, model: "m", route: route, atMs: atMs, inTokens: 800, outTokens: 200,
		tries: []try{{0, ms, true, ""}}}
}

func (s synth) latency() float64 { return s.tries[len(s.tries)-1].to }

// load creates empty rebuilt tables and inserts the requests, with an
// anchor span carrying the policy arm where one is set.
func load(t *testing.T, st *store.Store, reqs ...synth) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Exec(ctx, "rebuild_clear"); err != nil {
		t.Fatal(err)
	}
	ns := func(ms float64) int64 { return int64(math.Round(ms * 1e6)) }
	for _, r := range reqs {
		start := t0 + ns(r.atMs)
		last := r.tries[len(r.tries)-1]
		outcome := map[bool]string{true: "ok", false: "error"}[last.ok]
		trace := fmt.Sprintf("%032x", len(r.id)*7919+int(r.atMs))
		anchor := "a" + r.id
		insertRow(t, st, "requests", map[string]any{"request_id": r.id, "trace_id": trace, "span_id": anchor,
			"linkage": "explicit", "operation": r.op, "route": r.route, "final_route": routeOf(r, last),
			"model": r.model, "final_model": r.model, "stream": r.stream, "start_ns": start,
			"end_ns": start + ns(r.latency()), "latency_ms": r.latency(), "attempts": len(r.tries),
			"outcome": outcome, "input_tokens": r.inTokens, "output_tokens": r.outTokens})
		for i, a := range r.tries {
			final := i == len(r.tries)-1
			var out any
			if final && a.ok {
				out = r.outTokens
			}
			insertRow(t, st, "attempts", map[string]any{"request_id": r.id, "trace_id": trace,
				"span_id": fmt.Sprintf("t%s%d", r.id, i), "ordinal": i + 1, "route": routeOf(r, a), "model": r.model,
				"start_ns": start + ns(a.from), "end_ns": start + ns(a.to), "elapsed_ms": a.to - a.from,
				"outcome": map[bool]string{true: "ok", false: "error"}[a.ok], "is_final": final,
				"input_tokens": r.inTokens, "output_tokens": out})
		}
		if r.arm != "" || r.region != "" {
			// The region's resource, once per region.
			_, err := st.ExecText(ctx, `INSERT INTO resources
				SELECT hash($1::VARCHAR) >> 1, MAP {'cloud.region': $1::VARCHAR}
				WHERE NOT EXISTS (SELECT 1 FROM resources WHERE resource_id = hash($1::VARCHAR) >> 1)`, nullIfEmpty(r.region))
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.ExecText(ctx, `INSERT INTO spans (trace_id, span_id, start_ns, end_ns, duration_ns,
				attributes, resource_id, file_id)
				VALUES ($1, $2, $3, $4, $5, MAP {'retryscope.policy.arm': $6::VARCHAR}, hash($7::VARCHAR) >> 1, 1)`,
				trace, anchor, start, start+ns(r.latency()), ns(r.latency()), nullIfEmpty(r.arm), nullIfEmpty(r.region))
			if err != nil {
				t.Fatal(err)
			}
		}

	}
}

// insertRow inserts values into table, and the zero of its type into every
// other NOT NULL column, so the tests do not break when the rebuild adds
// columns they do not care about.
func insertRow(t *testing.T, st *store.Store, table string, values map[string]any) {
	t.Helper()
	ctx := context.Background()
	rows, err := st.QueryText(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_name = $1 AND is_nullable = 'NO' ORDER BY ordinal_position`, table)
	if err != nil {
		t.Fatal(err)
	}
	var cols, exprs []string
	var args []any
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		if _, set := values[name]; set {
			continue
		}
		zero := "0"
		switch {
		case strings.HasSuffix(typ, "[]"):
			zero = "[]"
		case typ == "BOOLEAN":
			zero = "false"
		case typ == "VARCHAR":
			zero = "''"
		}
		cols, exprs = append(cols, name), append(exprs, zero)
	}
	rows.Close()
	for name, v := range values {
		cols = append(cols, name)
		args = append(args, v)
		exprs = append(exprs, fmt.Sprintf("$%d", len(args)))
	}
	query := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(cols, ", "), strings.Join(exprs, ", "))
	if _, err := st.ExecText(ctx, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func routeOf(r synth, a try) string {
	if a.route != "" {
		return a.route
	}
	return r.route
}

// workedExample is the seed's request: the first attempt times out at
// 800 ms, a 100 ms backoff and 20 ms of overhead follow, and the second
// attempt takes 700 ms: 1,620 ms in all.
func workedExample() synth {
	return synth{id: "worked", op: "chat", model: "m", route: "r1", stream: true, atMs: 60_000,
		inTokens: 800, outTokens: 200, tries: []try{{0, 800, false, ""}, {920, 1620, true, ""}}}
}

// healthyCohort is n first-attempt successes of 600 ms like the worked
// example's request, spread over a minute around it.
func healthyCohort(n int) []synth {
	var out []synth
	for i := range n {
		s := single(fmt.Sprintf("h%02d", i), "chat", "r1", 30_000+float64(i)*60_000/float64(n), 600)
		s.stream = true
		out = append(out, s)
	}
	return out
}

func compute(t *testing.T, st *store.Store, opt Options) map[string]Block {
	t.Helper()
	if err := Compute(context.Background(), st, opt); err != nil {
		t.Fatal(err)
	}
	blocks, err := Summarize(context.Background(), st, "all", model.Window{})
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]Block{}
	for _, b := range blocks {
		if _, dup := byKind[b.Kind]; dup {
			t.Fatalf("two blocks of kind %s", b.Kind)
		}
		byKind[b.Kind] = b
	}
	return byKind
}

func near(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = nil, want %.4g", what, want)
		return
	}
	if math.Abs(*got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.6g, want %.6g", what, *got, want)
	}
}

// TestWorkedExample is the seed's example: 800 + 100 + 20 + 700 = 1,620 ms
// is +1,020 ms and 2.7x against a 600 ms healthy baseline, and +820 ms
// against ending at the 800 ms timeout.
func TestWorkedExample(t *testing.T) {
	st := testkit.Open(t)
	reqs := append(healthyCohort(10), workedExample())
	load(t, st, reqs...)
	blocks := compute(t, st, Options{})

	healthy := blocks[KindHealthy]
	if healthy.N != 1 || healthy.NWithoutBaseline != 0 || healthy.Provenance != ProvenanceModeled {
		t.Errorf("healthy: n=%d without=%d provenance=%s, want 1, 0, modeled", healthy.N, healthy.NWithoutBaseline, healthy.Provenance)
	}
	near(t, "healthy added mean", healthy.AddedLatencyMs.Mean, 1620-600)
	near(t, "healthy ratio mean", healthy.Ratio.Mean, 2.7)
	// Ten requests of 600 ms and one of 1,620 ms whose L0 is 600 ms.
	near(t, "healthy workload amplification", healthy.WorkloadAmplification, (10*600+1620)/(11*600.0))
	near(t, "healthy expected added per request", healthy.ExpectedAddedMsPerRequest, 1020.0/11)
	if healthy.AddedLatencyMs.P50 != nil {
		t.Errorf("p50 of one observation = %v, want nil (sample too small)", *healthy.AddedLatencyMs.P50)
	}

	noRetry := blocks[KindNoRetry]
	if noRetry.Provenance != ProvenanceMeasured || noRetry.N != 1 {
		t.Errorf("no_retry: provenance %s n %d, want measured 1", noRetry.Provenance, noRetry.N)
	}
	near(t, "no_retry added mean", noRetry.AddedLatencyMs.Mean, 1620-800)
	near(t, "no_retry ratio mean", noRetry.Ratio.Mean, 1620.0/800)

	matched := blocks[KindMatched]
	near(t, "matched added mean", matched.AddedLatencyMs.Mean, 1020)
	if matched.Provenance != ProvenanceModeled {
		t.Errorf("matched provenance %s, want modeled", matched.Provenance)
	}
	for _, b := range blocks {
		for _, f := range b.Flags {
			if strings.HasPrefix(f, "ratio_below_1") {
				t.Errorf("%s flagged %q, but every ratio is above 1", b.Kind, f)
			}
		}
	}
}

// TestKindsNeverMixed: every retried request has exactly one row per kind,
// each block carries its own kind and provenance, and one kind's block
// holds only that kind's figures.
func TestKindsNeverMixed(t *testing.T) {
	st := testkit.Open(t)
	reqs := append(healthyCohort(10), workedExample())
	load(t, st, reqs...)
	blocks := compute(t, st, Options{})
	rows := testkit.Dump(t, st, `SELECT kind, count(*), count(DISTINCT request_id), string_agg(DISTINCT provenance, '+')
		FROM baselines GROUP BY kind ORDER BY kind`)
	want := "alternate_route\t1\t1\tmodeled\nexperiment\t1\t1\texperiment\nhealthy\t1\t1\tmodeled\n" +
		"matched\t1\t1\tmodeled\nno_retry\t1\t1\tmeasured\n"
	if rows != want {
		t.Errorf("baselines rows per kind:\n%s\nwant:\n%s", rows, want)
	}
	wantProvenance := map[string]string{KindNoRetry: ProvenanceMeasured, KindHealthy: ProvenanceModeled,
		KindAlternateRoute: ProvenanceModeled, KindMatched: ProvenanceModeled, KindExperiment: ProvenanceExperiment}
	for kind, prov := range wantProvenance {
		if blocks[kind].Provenance != prov {
			t.Errorf("%s provenance %q, want %q", kind, blocks[kind].Provenance, prov)
		}
	}
	one, err := Summarize(context.Background(), st, KindNoRetry, model.Window{})
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 1 || one[0].Kind != KindNoRetry {
		t.Fatalf("Summarize(no_retry) = %d blocks, want one no_retry block", len(one))
	}
	// The healthy figure (+1,020) must not leak into the no_retry block (+820).
	near(t, "no_retry block alone", one[0].AddedLatencyMs.Mean, 820)
	if _, err := Summarize(context.Background(), st, "healthy+no_retry", model.Window{}); err == nil {
		t.Error("an unknown kind was accepted")
	}
}

// TestRatioBelowOneFlagged: a retried request faster than its healthy
// cohort gets a ratio below 1, which is flagged, not presented as a win.
func TestRatioBelowOneFlagged(t *testing.T) {
	st := testkit.Open(t)
	var reqs []synth
	for i := range 6 {
		reqs = append(reqs, single(fmt.Sprintf("slow%d", i), "report", "r1", float64(i)*1000, 1000))
	}
	quick := synth{id: "quick", op: "report", model: "m", route: "r1", atMs: 2500, inTokens: 800, outTokens: 200,
		tries: []try{{0, 50, false, ""}, {60, 500, true, ""}}}
	load(t, st, append(reqs, quick)...)
	b := compute(t, st, Options{})[KindHealthy]
	near(t, "ratio", b.Ratio.Mean, 0.5)
	if !hasFlag(b, "ratio_below_1") {
		t.Errorf("flags %q lack ratio_below_1", b.Flags)
	}
}

// TestWithoutBaselineCounted: a retried request with no comparable requests
// is counted as without a baseline, with its reason, not dropped.
func TestWithoutBaselineCounted(t *testing.T) {
	st := testkit.Open(t)
	lonely := synth{id: "lonely", op: "rare", model: "m", route: "r9", atMs: 1000, inTokens: 800, outTokens: 200,
		tries: []try{{0, 300, false, ""}, {400, 900, true, ""}}}
	reqs := append(healthyCohort(10), workedExample(), lonely)
	load(t, st, reqs...)
	blocks := compute(t, st, Options{})
	for _, kind := range []string{KindHealthy, KindMatched} {
		b := blocks[kind]
		if b.N != 1 || b.NWithoutBaseline != 1 || !hasFlag(b, "no_baseline") {
			t.Errorf("%s: n=%d without=%d flags=%q, want 1, 1 and no_baseline", kind, b.N, b.NWithoutBaseline, b.Flags)
		}
	}
	// No request went to another route: no alternate_route baseline at all.
	if b := blocks[KindAlternateRoute]; b.N != 0 || b.NWithoutBaseline != 2 || b.AddedLatencyMs.Mean != nil {
		t.Errorf("alternate_route: n=%d without=%d, want 0, 2 and no figures", b.N, b.NWithoutBaseline)
	}
	if b := blocks[KindNoRetry]; b.N != 2 || b.NWithoutBaseline != 0 {
		t.Errorf("no_retry: n=%d without=%d, want 2, 0", b.N, b.NWithoutBaseline)
	}
	// The retried request without a baseline is left out of the workload
	// ratio: 10 x 600 and the worked example against 600.
	near(t, "healthy workload amplification", blocks[KindHealthy].WorkloadAmplification, (10*600+1620)/(11*600.0))
	// P(R) counts both retried requests among 12; E[ΔL|R] only the one with a baseline.
	near(t, "healthy expected added", blocks[KindHealthy].ExpectedAddedMsPerRequest, 2.0/12*1020)
	reason := testkit.Dump(t, st, `SELECT reason FROM baselines WHERE request_id = 'lonely' AND kind = 'matched'`)
	if !strings.Contains(reason, "no first-attempt success within the maximum distance") {
		t.Errorf("matched reason %q", reason)
	}
}

// TestHealthyWindow: cohort requests outside the window do not count.
func TestHealthyWindow(t *testing.T) {
	st := testkit.Open(t)
	reqs := append(healthyCohort(10), workedExample())
	for i := range 10 {
		far := single(fmt.Sprintf("far%d", i), "chat", "r1", 60_000+3_600_000+float64(i), 5000)
		far.stream = true
		reqs = append(reqs, far)
	}
	load(t, st, reqs...)
	near(t, "within 5 minutes", compute(t, st, Options{})[KindHealthy].AddedLatencyMs.Mean, 1020)
	// The whole run: ten at 600 ms and ten at 5,000 ms.
	near(t, "whole run", compute(t, st, Options{Window: Unbounded})[KindHealthy].AddedLatencyMs.Mean, 1620-2800)
}

// TestAlternateRoute: a request that fell over to another route and
// succeeded there is measured against that attempt; one retried on the same
// route is modeled from first-attempt successes on the other route.
func TestAlternateRoute(t *testing.T) {
	st := testkit.Open(t)
	var reqs []synth
	for i := range 6 {
		reqs = append(reqs, single(fmt.Sprintf("b%d", i), "chat", "r2", float64(i)*1000, 500))
		reqs = append(reqs, single(fmt.Sprintf("a%d", i), "chat", "r1", float64(i)*1000, 900))
	}
	fell := synth{id: "fell", op: "chat", model: "m", route: "r1", atMs: 3000, inTokens: 800, outTokens: 200,
		tries: []try{{0, 800, false, ""}, {900, 1600, true, "r2"}}}
	same := synth{id: "same", op: "chat", model: "m", route: "r1", atMs: 3000, inTokens: 800, outTokens: 200,
		tries: []try{{0, 800, false, ""}, {900, 1800, true, ""}}}
	load(t, st, append(reqs, fell, same)...)
	b := compute(t, st, Options{})[KindAlternateRoute]
	got := testkit.Dump(t, st, `SELECT request_id, l0_ms, provenance, cohort_size FROM baselines
		WHERE kind = 'alternate_route' ORDER BY request_id`)
	want := "fell\t700\tmeasured\t<nil>\nsame\t500\tmodeled\t6\n"
	if got != want {
		t.Errorf("alternate_route rows:\n%s\nwant:\n%s", got, want)
	}
	near(t, "mean added", b.AddedLatencyMs.Mean, ((1600-700)+(1800-500))/2.0)
	if b.Provenance != ProvenanceModeled || !hasFlag(b, "mixed_provenance") {
		t.Errorf("provenance %s flags %q, want modeled and mixed_provenance", b.Provenance, b.Flags)
	}
}

// TestExperiment: retried requests of the retry arm are compared with the
// no_retry arm's successes of the same cohort; the no_retry arm is not in
// the population.
func TestExperiment(t *testing.T) {
	st := testkit.Open(t)
	var reqs []synth
	for i := range 6 {
		c := single(fmt.Sprintf("c%d", i), "chat", "r1", float64(i)*1000, 700)
		c.arm = "no_retry"
		reqs = append(reqs, c)
		tr := single(fmt.Sprintf("t%d", i), "chat", "r1", float64(i)*1000, 650)
		tr.arm = "retry"
		reqs = append(reqs, tr)
	}
	failed := single("cfail", "chat", "r1", 2000, 30)
	failed.tries[0].ok, failed.arm = false, "no_retry"
	retried := synth{id: "retried", op: "chat", model: "m", route: "r1", atMs: 3000, inTokens: 800, outTokens: 200,
		arm: "retry", tries: []try{{0, 100, false, ""}, {300, 1000, true, ""}}}
	unarmed := retried
	unarmed.id, unarmed.arm = "unarmed", ""
	load(t, st, append(reqs, failed, retried, unarmed)...)
	b := compute(t, st, Options{})[KindExperiment]
	if b.N != 1 || b.NWithoutBaseline != 1 || b.Provenance != ProvenanceExperiment {
		t.Errorf("n=%d without=%d provenance=%s, want 1, 1, experiment", b.N, b.NWithoutBaseline, b.Provenance)
	}
	near(t, "added", b.AddedLatencyMs.Mean, 1000-700)
	// Population: the retry arm, six at 650 ms and the retried one.
	near(t, "retry rate", b.RetryRate, 1.0/7)
	near(t, "workload amplification", b.WorkloadAmplification, (6*650+1000)/(6*650+700.0))
	// Arms: the retry arm's 6 x 650 and 1,000 against the control's 6 x 700 and 30.
	near(t, "arm contrast", b.ArmContrastMs, (6*650+1000)/7.0-(6*700+30)/7.0)
}

func hasFlag(b Block, name string) bool {
	for _, f := range b.Flags {
		if strings.HasPrefix(f, name+":") {
			return true
		}
	}
	return false
}

// TestMatchedNearest: the matched baseline takes the nearest first-attempt
// successes within the maximum distance, reports their number and mean
// distance, and takes no match farther away even when k is not reached.
func TestMatchedNearest(t *testing.T) {
	st := testkit.Open(t)
	var reqs []synth
	for i := range 3 {
		near := single(fmt.Sprintf("near%d", i), "chat", "r1", 30_000, 500) // 30 s before, same tokens
		big := single(fmt.Sprintf("big%d", i), "chat", "r1", 60_000, 2000)  // same time, 8x the prompt
		big.inTokens = 6400
		reqs = append(reqs, near, big)
	}
	retried := synth{id: "retried", op: "chat", model: "m", route: "r1", atMs: 60_000, inTokens: 800, outTokens: 200,
		tries: []try{{0, 300, false, ""}, {400, 900, true, ""}}}
	load(t, st, append(reqs, retried)...)
	compute(t, st, Options{})
	got := testkit.Dump(t, st, `SELECT l0_ms, cohort_size, round(match_distance, 6) FROM baselines WHERE kind = 'matched'`)
	// 30 s at a time scale of 5 min is a distance of 0.1; the big ones are
	// three doublings (distance 3) away, beyond the maximum of 1.
	if want := "500\t3\t0.1\n"; got != want {
		t.Errorf("matched row %q, want %q", got, want)
	}
	if b := compute(t, st, Options{})[KindMatched]; b.MatchDistance == nil || math.Abs(*b.MatchDistance-0.1) > 1e-9 {
		t.Errorf("block match distance %v, want 0.1", b.MatchDistance)
	}
	compute(t, st, Options{K: 2})
	if got := testkit.Dump(t, st, `SELECT cohort_size FROM baselines WHERE kind = 'matched'`); got != "2\n" {
		t.Errorf("k=2: %q matches", got)
	}
	compute(t, st, Options{MaxDistance: 5})
	// With room for them, the two nearest big ones complete k = 5.
	got = testkit.Dump(t, st, `SELECT l0_ms, cohort_size FROM baselines WHERE kind = 'matched'`)
	if want := fmt.Sprintf("%g\t5\n", (3*500+2*2000)/5.0); got != want {
		t.Errorf("max distance 5: %q, want %q", got, want)
	}
}

// TestJSONKeys: a block marshals with exactly the report's key names, and
// Summarize says when there is nothing to summarize yet.
func TestJSONKeys(t *testing.T) {
	st := testkit.Open(t)
	if _, err := Summarize(context.Background(), st, "all", model.Window{}); !errors.Is(err, ErrNotComputed) {
		t.Errorf("before Compute: %v, want ErrNotComputed", err)
	}
	load(t, st, append(healthyCohort(10), workedExample())...)
	blocks := compute(t, st, Options{})
	data, err := json.Marshal(blocks[KindHealthy])
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "provenance", "method", "n", "n_without_baseline", "added_latency_ms", "ratio",
		"workload_amplification", "expected_added_ms_per_request", "flags"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, data)
		}
	}
	var added map[string]*float64
	if err := json.Unmarshal(keys["added_latency_ms"], &added); err != nil {
		t.Fatal(err)
	}
	if len(added) != 5 || added["n"] == nil || *added["n"] != 1 || added["mean"] == nil || *added["mean"] != 1020 || added["p99"] != nil {
		t.Errorf("added_latency_ms = %s, want n 1, mean 1020 and null percentiles", keys["added_latency_ms"])
	}
}

// TestRegion: requests of another region are neither in the healthy cohort
// nor matches.
func TestRegion(t *testing.T) {
	st := testkit.Open(t)
	var reqs []synth
	for i, h := range healthyCohort(10) {
		h.region = "eu-west-1"
		far := h
		far.id, far.region, far.tries = fmt.Sprintf("us%d", i), "us-east-1", []try{{0, 3000, true, ""}}
		reqs = append(reqs, h, far)
	}
	worked := workedExample()
	worked.region = "eu-west-1"
	load(t, st, append(reqs, worked)...)
	blocks := compute(t, st, Options{})
	near(t, "healthy", blocks[KindHealthy].AddedLatencyMs.Mean, 1020)
	near(t, "matched", blocks[KindMatched].AddedLatencyMs.Mean, 1020)
}
