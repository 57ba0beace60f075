package segment

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit/workload"
	"github.com/retryscope/retryscope/model"
)

// TestGeneratedTraces runs the whole path on generated traces (whose
// api.openai.com route has incidents with twelve times the fault rate):
// sliced by model and route, the segments add up to the requests table,
// and the segment on top of each order is the one a plain query over the
// requests table says it should be.
func TestGeneratedTraces(t *testing.T) {
	st := generated(t, 11, 6000)
	ctx := context.Background()

	type cohortTruth struct {
		key      []string
		requests int
		attempts int64
		retried  []float64
	}
	rows, err := st.QueryText(ctx, `SELECT coalesce(model, '(unset)'), coalesce(route, '(unset)'),
		attempts, latency_ms FROM requests ORDER BY request_id`)
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]*cohortTruth{}
	var total cohortTruth
	for rows.Next() {
		var m, r string
		var attempts int64
		var latency float64
		if err := rows.Scan(&m, &r, &attempts, &latency); err != nil {
			t.Fatal(err)
		}
		c := truth[m+"\x00"+r]
		if c == nil {
			c = &cohortTruth{key: []string{m, r}}
			truth[m+"\x00"+r] = c
		}
		for _, x := range []*cohortTruth{c, &total} {
			x.requests++
			x.attempts += attempts
			if attempts > 1 {
				x.retried = append(x.retried, latency)
			}
		}
	}
	rows.Close()
	if total.requests == 0 {
		t.Fatal("the rebuild of the generated traces produced no requests")
	}

	by := []Dim{{Kind: KindModel}, {Kind: KindRoute}}
	got := compute(t, st, Spec{By: by})
	if got.Workload.LogicalRequests != total.requests || got.Workload.Attempts != total.attempts ||
		got.Workload.Retried != len(total.retried) {
		t.Errorf("workload %d/%d/%d, requests table %d/%d/%d", got.Workload.LogicalRequests, got.Workload.Attempts,
			got.Workload.Retried, total.requests, total.attempts, len(total.retried))
	}
	var sumReq, sumRetried int
	var sumAtt int64
	for _, s := range got.Segments {
		sumReq += s.LogicalRequests
		sumAtt += s.Attempts
		sumRetried += s.Retried
	}
	if sumReq != total.requests || sumAtt != total.attempts || sumRetried != len(total.retried) {
		t.Errorf("segments add up to %d/%d/%d, requests table has %d/%d/%d", sumReq, sumAtt, sumRetried,
			total.requests, total.attempts, len(total.retried))
	}

	var big []*cohortTruth
	for _, c := range truth {
		if c.requests >= DefaultMinCohort {
			slices.Sort(c.retried)
			big = append(big, c)
		}
	}
	amp := func(c *cohortTruth) float64 { return float64(c.attempts) / float64(c.requests) }
	wantAmp := slices.MaxFunc(big, func(a, b *cohortTruth) int {
		return cmp.Or(cmp.Compare(amp(a), amp(b)), cmp.Compare(a.requests, b.requests), -slices.Compare(a.key, b.key))
	})
	if top := compute(t, st, Spec{By: by, Sort: SortAmplification}).Segments[0]; !slices.Equal(top.Values, wantAmp.key) {
		t.Errorf("top by amplification %v, want %v (%.3f)", top.Values, wantAmp.key, amp(wantAmp))
	}
	p99 := func(c *cohortTruth) float64 {
		if p := model.Percentile(c.retried, 99); p != nil {
			return *p
		}
		return -1
	}
	wantP99 := slices.MaxFunc(big, func(a, b *cohortTruth) int { return cmp.Compare(p99(a), p99(b)) })
	if p99(wantP99) >= 0 {
		if top := got.Segments[0]; !slices.Equal(top.Values, wantP99.key) {
			t.Errorf("top by retried p99 %v, want %v (%.0f ms)", top.Values, wantP99.key, p99(wantP99))
		}
	}
	t.Logf("top by amplification: %s (%.3f); by retried p99: %s; %d requests, %d segments",
		strings.Join(wantAmp.key, " / "), amp(wantAmp), strings.Join(got.Segments[0].Values, " / "),
		total.requests, len(got.Segments))
}

// TestSingleAttemptShortcut: segment_rows gives a request of one attempt
// its per-request figures without the windows and aggregates over
// attempts (single_attempt). Sent through those aggregates instead, every
// request of generated traces gets the same row, to the bit.
func TestSingleAttemptShortcut(t *testing.T) {
	st := generated(t, 5, 3000)
	ctx := context.Background()
	// Not vacuous: requests of one attempt, with the figures the shortcut
	// computes for itself (phases, first tokens, tokens, final attempts).
	var single, phases, firstTokens, tokens, notFinal int
	if err := st.QueryRowText(ctx, `SELECT count(*), count(*) FILTER (WHERE a.serve_ms IS NOT NULL),
		count(*) FILTER (WHERE a.ttft_ms IS NOT NULL), count(*) FILTER (WHERE a.input_tokens > 0),
		count(*) FILTER (WHERE NOT a.is_final)
		FROM requests r JOIN attempts a USING (request_id) WHERE r.attempts = 1`).Scan(&single, &phases, &firstTokens, &tokens, &notFinal); err != nil {
		t.Fatal(err)
	}
	if single == 0 || phases == 0 || firstTokens == 0 || tokens == 0 {
		t.Fatalf("generated traces lack what the shortcut computes: %d requests of one attempt, %d with a serve phase, %d with a first token, %d with input tokens",
			single, phases, firstTokens, tokens)
	}
	var q query
	spec := Spec{By: []Dim{{Kind: KindModel}, {Kind: KindRoute}}}
	shortcut := q.build(&spec, math.MinInt64, math.MaxInt64, false, idRange{})
	aggregated := shortcut
	for _, r := range [][2]string{
		{"(SELECT request_id FROM numbered WHERE retried)", "(SELECT request_id FROM numbered)"},
		{"(SELECT request_id FROM numbered WHERE NOT retried)", "(SELECT request_id FROM numbered WHERE false)"},
	} {
		if strings.Count(aggregated, r[0]) != 1 {
			t.Fatalf("segment_rows.sql no longer holds %s once", r[0])
		}
		aggregated = strings.Replace(aggregated, r[0], r[1], 1)
	}
	for _, pair := range [][2]string{{shortcut, aggregated}, {aggregated, shortcut}} {
		var n int
		if err := st.QueryRowText(ctx, "SELECT count(*) FROM (("+pair[0]+") EXCEPT ALL ("+pair[1]+"))", q.args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d rows differ between the shortcut and the aggregates", n)
		}
	}
	t.Logf("%d requests of one attempt (%d with phases, %d not final)", single, phases, notFinal)
}

// generated rebuilds requests generated from seed, half of them streams,
// with the default faults and policy.
func generated(t *testing.T, seed int64, requests int) *store.Store {
	t.Helper()
	cfg := sim.Config{Seed: seed, Requests: requests, StreamShare: 0.5, Faults: sim.DefaultFaults(), Policy: sim.DefaultPolicy()}
	st, _ := workload.Rebuilt(t, cfg)
	return st
}
