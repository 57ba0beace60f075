package report

import (
	"fmt"
	"strings"

	"github.com/retryscope/retryscope/baseline"
	"github.com/retryscope/retryscope/internal/texttab"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/segment"
)

// row collects one row's cells by column, for tables built a row at a
// time.
type row struct {
	cols  *[]texttab.Column
	cells []texttab.Cell
	first bool // the first row defines the columns
}

func (r *row) add(key, head string, c texttab.Cell) {
	if r.first {
		*r.cols = append(*r.cols, texttab.Column{Key: key, Head: head})
	}
	r.cells = append(r.cells, c)
}

// Tables lays the report out as the tables text, Markdown and HTML show,
// in the order of Sections: by default a screen's worth (DefaultSections),
// with --full every section, with --section those named; or, asked for the
// findings alone, those.
func (rep *Report) Tables() []texttab.Table {
	if rep.settings.findings {
		return []texttab.Table{rep.findingsTable()}
	}
	s := &rep.settings
	var ts []texttab.Table
	add := func(section string, tables ...texttab.Table) {
		for _, t := range tables {
			t.Section = section
			ts = append(ts, t)
		}
	}
	if s.shows("headline") {
		add("headline", rep.headlineTable())
	}
	if s.shows("workload") {
		add("workload", nonZeroRows(rep.workloadTable(), "logical requests", "attempts"))
	}
	if s.shows("findings") {
		if s.compact() {
			add("findings", rep.groupedFindings())
		} else {
			add("findings", rep.findingsTable())
		}
	}
	if s.shows("latency") {
		if s.compact() {
			add("latency", compactLatency(rep.latencyTable()))
		} else {
			add("latency", rep.latencyTable())
		}
	}
	if s.shows("layers") {
		add("layers", rep.layerTable())
	}
	if s.shows("triggers") && len(rep.Workload.Triggers) > 0 {
		add("triggers", rep.triggerTable())
	}
	if s.shows("yield") {
		add("yield", rep.yieldTable())
	}
	if s.shows("capacity") {
		add("capacity", rep.capacityTable())
	}
	if s.shows("linkage") {
		add("linkage", rep.linkageTable())
	}
	if s.shows("baselines") && len(rep.Baselines) > 0 {
		add("baselines", baselineTables(rep.Baselines)...)
	}
	if s.shows("segments") && len(rep.SegmentBy) > 0 {
		add("segments", rep.SegmentTable())
	}
	if s.shows("whatif") && rep.Whatif != nil {
		add("whatif", rep.Whatif.Tables()...)
	}
	if s.compact() {
		ts[len(ts)-1].Notes = append(ts[len(ts)-1].Notes, "More: --full, or --section yield,capacity,baselines,segments,workload,…")
	}
	return ts
}

func (rep *Report) workloadTable() texttab.Table {
	w := &rep.Workload
	t := texttab.Table{Title: "Workload", Labels: 1, NoHeader: true,
		Columns: []texttab.Column{{Key: "measure", Head: "measure"}, {Key: "value", Head: "value"}}}
	add := func(label string, c texttab.Cell) { t.Rows = append(t.Rows, []texttab.Cell{texttab.Label(label), c}) }
	add("logical requests", texttab.Int(w.LogicalRequests))
	add("attempts", texttab.Int(w.Attempts))
	add("amplification (attempts per request)", perRequest(texttab.Times, w.Amplification, w.LogicalRequests))
	add("retry rate", perRequest(texttab.Share, w.RetryRate, w.LogicalRequests))
	add("retry success rate", texttab.Maybe(texttab.Share, w.RetrySuccessRate))
	add("final failure rate", perRequest(texttab.Share, w.FinalFailureRate, w.LogicalRequests))
	add("duplicated attempts", texttab.Int(w.DuplicatedAttempts))
	add("time in duplicated attempts", texttab.Value(texttab.Ms, w.DuplicatedAttemptMs))
	add("duplicated input tokens", texttab.Int(w.DuplicatedInputTokens))
	add("duplicated output tokens", texttab.Int(w.DuplicatedOutputTokens))
	add("hidden work", texttab.Value(texttab.Ms, w.HiddenWorkMs))
	add("hidden output tokens", texttab.Int(w.HiddenOutputTokens))
	add("spend (price table)", texttab.Value(texttab.USD, w.SpendUSD))
	add("spend in duplicated attempts", texttab.Value(texttab.USD, w.DuplicatedSpendUSD))
	add("requests with tokens but no price", texttab.Int(w.UnpricedRequests))
	o := w.Outcomes
	add("failed at the attempt cap", texttab.Int(o.AttemptCap))
	add("ended by a deadline", texttab.Int(o.Deadline))
	add("failed for want of capacity (429/503)", texttab.Int(o.NoCapacity))
	add("stopped at the output token cap", texttab.Int(o.TokenCap))
	add("cancelled by the client", texttab.Int(o.Cancelled))
	add("unfinished at the end of the dump", texttab.Int(o.Unfinished))
	add("gave up for want of progress (stated)", texttab.Int(o.NoProgress))
	add("stopped by a retry budget or quota", texttab.Int(o.RetryBudget))
	add("stopped on a failure no retry fixes", texttab.Int(o.NotRetryable))
	add("streams abandoned part-way", texttab.Int(w.AbandonedStreams))
	add("output tokens read from abandoned streams", texttab.Int(w.AbandonedStreamTokens))
	add("requests with nested retry loops", texttab.Int(w.NestedRequests))
	add("most app tries seen (nested)", texttab.Int(w.AppTriesMax))
	add("most SDK attempts in one app try (nested)", texttab.Int(w.SDKAttemptsMax))
	add("tasks of several requests", texttab.Int(w.Tasks))
	add("most requests in one task", texttab.Int(w.TaskCallsMax))
	add("most attempts in one task", texttab.Int(w.TaskAttemptsMax))
	add("worst case attempts per task", texttab.Int(w.TaskWorstAttempts))
	if w.Ranges.Wide() {
		r := w.Ranges
		ranges := map[string]texttab.Cell{
			"logical requests":                     {Unit: texttab.Count, V: r.LogicalRequests[0], Hi: r.LogicalRequests[1], Range: true},
			"amplification (attempts per request)": {Unit: texttab.Number, V: r.Amplification[0], Hi: r.Amplification[1], Range: true},
			"retry rate":                           {Unit: texttab.Share, V: r.RetryRate[0], Hi: r.RetryRate[1], Range: true},
			"retry success rate":                   {Unit: texttab.Share, V: r.RetrySuccessRate[0], Hi: r.RetrySuccessRate[1], Range: true},
			"final failure rate":                   {Unit: texttab.Share, V: r.FinalFailureRate[0], Hi: r.FinalFailureRate[1], Range: true},
		}
		t.Columns = append(t.Columns, texttab.Column{Key: "plausible_range", Head: "plausible range"})
		for i, row := range t.Rows {
			c, ok := ranges[row[0].Text]
			if !ok {
				c = texttab.Cell{Unit: texttab.Text}
			}
			t.Rows[i] = append(row, c)
		}
		t.NoHeader = false
		t.Notes = []string{"plausible range: " + rangeMethod}
	}
	return t
}

func (rep *Report) latencyTable() texttab.Table {
	w := &rep.Workload
	t := texttab.Table{Title: "Latency", Labels: 2}
	first := true
	add := func(measure, who string, s model.Summary) {
		r := row{cols: &t.Columns, first: first}
		first = false
		r.add("measure", "measure", texttab.Label(measure))
		r.add("requests", "requests", texttab.Label(who))
		r.add("n", "n", texttab.Int(s.N))
		r.add("mean", "mean", texttab.Maybe(texttab.Ms, s.Mean))
		for _, p := range []int{50, 95, 99} {
			r.add(fmt.Sprintf("p%d", p), fmt.Sprintf("p%d", p), pct(texttab.Ms, s, p))
		}
		r.add("p95_ci", "p95", ci(s, 95))
		r.add("p99_ci", "p99", ci(s, 99))
		t.Rows = append(t.Rows, r.cells)
	}
	split := func(measure string, s segment.Split) {
		add(measure, "all", s.All)
		add(measure, "retried", s.Retried)
	}
	split("end-to-end", w.LatencyMs)
	split("ttft", w.TTFTMs)
	split("first token seen", w.FirstTokenSeenMs)
	split("generation (token 1 → end)", w.GenerationMs)
	split("total generation", w.StreamTotalMs)
	split("first attempt", w.FirstAttemptMs)
	add("second attempt", "retried", w.SecondAttemptMs)
	t.Groups = []texttab.Group{{Title: "Latency", Keys: []string{"n", "mean", "p50", "p95", "p99"},
		Heads: []string{"n", "mean", "p50", "p95", "p99"}}}
	if rep.settings.ci {
		t.Groups = append(t.Groups, texttab.Group{Title: fmt.Sprintf("Latency: bootstrap 95%% CI of the tail (seed %d, %d resamples)",
			rep.settings.seed, rep.settings.resamples), Keys: []string{"p95_ci", "p99_ci"}, Heads: []string{"p95 95% CI", "p99 95% CI"}})
	}
	t.Notes = []string{"ttft: the request's start to the first token of the answer used; first token seen: to the first " +
		"token of any attempt; generation: the answer used's first token to its end; total generation: the request's " +
		"start to the end of the stream used, retries included.",
		"percentiles: " + model.PercentileDefinition + "."}
	return t
}

func (rep *Report) layerTable() texttab.Table {
	t := texttab.Table{Title: "Amplification by retry layer", Labels: 1, Columns: []texttab.Column{{Key: "layers", Head: "layers"},
		{Key: "requests", Head: "requests"}, {Key: "attempts", Head: "attempts"}, {Key: "multipliers", Head: "multipliers (outermost first)"}}}
	for _, l := range rep.Workload.AmplificationByLayers {
		m := make([]string, len(l.Multipliers))
		for i, x := range l.Multipliers {
			m[i] = texttab.Format(texttab.Number, x)
		}
		t.Rows = append(t.Rows, []texttab.Cell{texttab.Int(l.Depth), texttab.Int(l.Requests), texttab.Int(l.Attempts), texttab.Label(strings.Join(m, " x "))})
	}
	return t
}

func (rep *Report) triggerTable() texttab.Table {
	t := texttab.Table{Title: "Failed attempts by trigger", Labels: 1, Columns: []texttab.Column{{Key: "trigger", Head: "trigger"}, {Key: "attempts", Head: "attempts"}}}
	for _, tr := range rep.Workload.Triggers {
		t.Rows = append(t.Rows, []texttab.Cell{texttab.Label(tr.Trigger), texttab.Int(tr.Attempts)})
	}
	return t
}

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

func (rep *Report) linkageTable() texttab.Table {
	t := texttab.Table{Title: "Requests by linkage rule", Labels: 1, Columns: []texttab.Column{{Key: "rule", Head: "rule"}, {Key: "requests", Head: "requests"},
		{Key: "retried", Head: "retried"}, {Key: "inferred", Head: "inferred"}, {Key: "inferred_share", Head: "inferred share"}}}
	for _, l := range rep.Linkage {
		t.Rows = append(t.Rows, []texttab.Cell{texttab.Label(l.Linkage), texttab.Int(l.Requests), texttab.Int(l.Retried), texttab.Int(l.Inferred),
			texttab.Value(texttab.Share, l.InferredShare)})
		t.Notes = append(t.Notes, fmt.Sprintf("%s: %s; for example request %s", l.Linkage, linkageHelp[l.Linkage], l.Example))
	}
	t.Notes = append(t.Notes, "see one: SELECT * FROM attempts WHERE request_id = '<example>' ORDER BY ordinal")
	return t
}

// baselineTables are the added latency per kind, and the workload figures
// with each kind's method and flags.
func baselineTables(blocks []baseline.Block) []texttab.Table {
	added := texttab.Table{Title: "Baselines: latency added per retried request (L_retry - L0)", Labels: 3,
		Columns: []texttab.Column{{Key: "baseline", Head: "baseline"}, {Key: "provenance", Head: "provenance"}, {Key: "figure", Head: "figure"}, {Key: "n", Head: "n"},
			{Key: "n_without_baseline", Head: "no L0"}, {Key: "mean", Head: "mean"}, {Key: "p50", Head: "p50"}, {Key: "p95", Head: "p95"}, {Key: "p99", Head: "p99"}}}
	whole := texttab.Table{Title: "Baselines: the whole workload", Labels: 2,
		Columns: []texttab.Column{{Key: "baseline", Head: "baseline"}, {Key: "provenance", Head: "provenance"}, {Key: "workload_amplification", Head: "E[L]/E[L0]"},
			{Key: "retry_rate", Head: "P(R)"}, {Key: "expected_added_ms_per_request", Head: "P(R)·E[ΔL|R]"}}}
	for _, b := range blocks {
		for _, f := range []struct {
			name string
			unit texttab.Unit
			s    model.Summary
		}{{"added", texttab.SignedMs, b.AddedLatencyMs}, {"ratio", texttab.Times, b.Ratio}} {
			added.Rows = append(added.Rows, []texttab.Cell{texttab.Label(b.Kind), texttab.Label(b.Provenance), texttab.Label(f.name), texttab.Int(b.N),
				texttab.Int(b.NWithoutBaseline), texttab.Maybe(f.unit, f.s.Mean), pct(f.unit, f.s, 50), pct(f.unit, f.s, 95), pct(f.unit, f.s, 99)})
		}
		whole.Rows = append(whole.Rows, []texttab.Cell{texttab.Label(b.Kind), texttab.Label(b.Provenance), texttab.Maybe(texttab.Times, b.WorkloadAmplification),
			texttab.Maybe(texttab.Share, b.RetryRate), texttab.Maybe(texttab.SignedMs, b.ExpectedAddedMsPerRequest)})
		if b.Method != "" {
			whole.Notes = append(whole.Notes, b.Kind+" method: "+b.Method)
		}
		for _, f := range b.Flags {
			whole.Notes = append(whole.Notes, b.Kind+" flag: "+f)
		}
	}
	added.Notes = []string{"a ratio below 1 asks for the baseline to be reviewed; it is not a win"}
	return []texttab.Table{added, whole}
}

// SegmentTable is the segments as one wide table, the whole first: CSV
// writes all of it, the other formats its groups.
func (rep *Report) SegmentTable() texttab.Table {
	t := texttab.Table{Title: "Segments"}
	dims := rep.SegmentBy
	if len(dims) == 0 {
		dims = []string{"segment"}
	}
	t.Labels = len(dims)
	total := rep.Workload.Measures
	if rep.SegmentsTotal != nil {
		total = *rep.SegmentsTotal
	}
	labels := make([]string, len(dims))
	labels[0] = "(all requests)"
	t.Rows = append(t.Rows, rep.segmentRow(&t, labels, false, 0, &total, true))
	for i := range rep.Segments {
		s := &rep.Segments[i]
		t.Rows = append(t.Rows, rep.segmentRow(&t, s.Values, s.RolledUp, s.Cohorts, &s.Measures, false))
	}
	t.Groups = rep.segmentGroups()
	t.Notes = []string{"percentiles: " + model.PercentileDefinition + "; - marks no observations.",
		"Δ and × compare retried requests' p99 with all requests'; retr: retried requests; 1st/2nd: attempt elapsed, retried requests.",
		fmt.Sprintf("(other) pools cohorts under %d requests; none is dropped.", rep.settings.minCohort)}
	for _, n := range rep.Notes {
		t.Notes = append(t.Notes, "Note: "+n)
	}
	return t
}

// dists are the distributions of a segment row, by key prefix.
var dists = []struct {
	key string
	get func(m *segment.Measures) model.Summary
}{
	{"latency_all", func(m *segment.Measures) model.Summary { return m.LatencyMs.All }},
	{"latency_retried", func(m *segment.Measures) model.Summary { return m.LatencyMs.Retried }},
	{"first_attempt_all", func(m *segment.Measures) model.Summary { return m.FirstAttemptMs.All }},
	{"first_attempt_retried", func(m *segment.Measures) model.Summary { return m.FirstAttemptMs.Retried }},
	{"second_attempt", func(m *segment.Measures) model.Summary { return m.SecondAttemptMs }},
	{"ttft_all", func(m *segment.Measures) model.Summary { return m.TTFTMs.All }},
	{"ttft_retried", func(m *segment.Measures) model.Summary { return m.TTFTMs.Retried }},
	{"generation_all", func(m *segment.Measures) model.Summary { return m.GenerationMs.All }},
	{"generation_retried", func(m *segment.Measures) model.Summary { return m.GenerationMs.Retried }},
	{"stream_total_all", func(m *segment.Measures) model.Summary { return m.StreamTotalMs.All }},
	{"stream_total_retried", func(m *segment.Measures) model.Summary { return m.StreamTotalMs.Retried }},
	{"first_token_seen_all", func(m *segment.Measures) model.Summary { return m.FirstTokenSeenMs.All }},
	{"first_token_seen_retried", func(m *segment.Measures) model.Summary { return m.FirstTokenSeenMs.Retried }},
	{"added", func(m *segment.Measures) model.Summary {
		if m.AddedLatency == nil {
			return model.Summary{}
		}
		return m.AddedLatency.Ms
	}},
}

// segmentRow is one row of the segment table; whole marks the row of
// every request, which alone carries the plausible ranges.
func (rep *Report) segmentRow(t *texttab.Table, labels []string, rolledUp bool, cohorts int, m *segment.Measures, whole bool) []texttab.Cell {
	r := row{cols: &t.Columns, first: whole}
	for i, l := range labels {
		key := "segment"
		if len(rep.SegmentBy) > 0 {
			key = rep.SegmentBy[i]
		}
		r.add(key, key, texttab.Label(l))
	}
	r.add("rolled_up", "rolled up", texttab.Label(fmt.Sprint(rolledUp)))
	r.add("cohorts", "cohorts", texttab.Int(cohorts))
	r.add("logical_requests", "requests", texttab.Int(m.LogicalRequests))
	r.add("attempts", "attempts", texttab.Int(m.Attempts))
	r.add("amplification", "amp", perRequest(texttab.Times, m.Amplification, m.LogicalRequests))
	r.add("retry_rate", "retried", perRequest(texttab.Share, m.RetryRate, m.LogicalRequests))
	r.add("retry_success_rate", "rescued", texttab.Maybe(texttab.Share, m.RetrySuccessRate))
	r.add("final_failure_rate", "failed", perRequest(texttab.Share, m.FinalFailureRate, m.LogicalRequests))
	r.add("retried_requests", "retried requests", texttab.Int(m.Retried))
	r.add("rescued_requests", "rescued requests", texttab.Int(m.Rescued))
	r.add("failed_requests", "failed requests", texttab.Int(m.Failed))
	r.add("duplicated_attempts", "dup attempts", texttab.Int(m.DuplicatedAttempts))
	r.add("duplicated_attempt_ms", "dup time", texttab.Value(texttab.Ms, m.DuplicatedAttemptMs))
	r.add("duplicated_input_tokens", "dup in tok", texttab.Int(m.DuplicatedInputTokens))
	r.add("duplicated_output_tokens", "dup out tok", texttab.Int(m.DuplicatedOutputTokens))
	r.add("hidden_work_ms", "hidden work", texttab.Value(texttab.Ms, m.HiddenWorkMs))
	r.add("hidden_output_tokens", "hidden tok", texttab.Int(m.HiddenOutputTokens))
	rr := &m.RouteRetries
	r.add("same_route_retries", "same", texttab.Int(rr.SameRouteRetries))
	r.add("same_route_retry_success_rate", "same ok", texttab.Maybe(texttab.Share, rr.SameRouteRetrySuccessRate))
	r.add("same_route_retry_added_ms", "same time", texttab.Maybe(texttab.Ms, rr.SameRouteRetryAddedMs))
	r.add("same_route_failed_ms", "same failed time", texttab.Value(texttab.Ms, rr.SameRouteFailedMs))
	r.add("same_route_failed_tokens", "same failed tok", texttab.Int(rr.SameRouteFailedTokens))
	r.add("alternate_route_retries", "alt", texttab.Int(rr.AlternateRouteRetries))
	r.add("alternate_route_retry_success_rate", "alt ok", texttab.Maybe(texttab.Share, rr.AlternateRouteRetrySuccessRate))
	r.add("alternate_route_retry_added_ms", "alt time", texttab.Maybe(texttab.Ms, rr.AlternateRouteRetryAddedMs))
	hygieneCells(&r, m)
	r.add("spend_usd", "spend", texttab.Value(texttab.USD, m.SpendUSD))
	r.add("duplicated_spend_usd", "dup spend", texttab.Value(texttab.USD, m.DuplicatedSpendUSD))
	r.add("unpriced_requests", "unpriced", texttab.Int(m.UnpricedRequests))
	r.add("outcome_attempt_cap", "cap", texttab.Int(m.Outcomes.AttemptCap))
	r.add("outcome_deadline", "deadline", texttab.Int(m.Outcomes.Deadline))
	r.add("outcome_no_capacity", "no cap", texttab.Int(m.Outcomes.NoCapacity))
	r.add("outcome_token_cap", "tok cap", texttab.Int(m.Outcomes.TokenCap))
	r.add("outcome_cancelled", "cancel", texttab.Int(m.Outcomes.Cancelled))
	r.add("outcome_unfinished", "unfin", texttab.Int(m.Outcomes.Unfinished))
	r.add("outcome_no_progress", "no prog", texttab.Int(m.Outcomes.NoProgress))
	r.add("outcome_retry_budget", "budget", texttab.Int(m.Outcomes.RetryBudget))
	r.add("outcome_not_retryable", "not retr", texttab.Int(m.Outcomes.NotRetryable))
	r.add("abandoned_streams", "abandoned", texttab.Int(m.AbandonedStreams))
	r.add("abandoned_stream_tokens", "aband tok", texttab.Int(m.AbandonedStreamTokens))
	r.add("abandoned_stream_ms", "aband time", texttab.Value(texttab.Ms, m.AbandonedStreamMs))
	r.add("nested_requests", "nested", texttab.Int(m.NestedRequests))
	r.add("app_tries_max", "app tries", texttab.Int(m.AppTriesMax))
	r.add("sdk_attempts_max", "sdk att", texttab.Int(m.SDKAttemptsMax))
	for _, ph := range []struct {
		key string
		p   segment.Phase
	}{{"queue", m.AttemptPhases.Queue}, {"connect", m.AttemptPhases.Connect}, {"serve", m.AttemptPhases.Serve},
		{"generate", m.AttemptPhases.Generate}} {
		r.add("attempt_"+ph.key+"_n", ph.key+" n", texttab.Int(ph.p.N))
		r.add("attempt_"+ph.key+"_mean_ms", ph.key, texttab.Maybe(texttab.Ms, ph.p.MeanMs))
	}
	r.add("tasks", "tasks", texttab.Int(m.Tasks))
	r.add("task_requests", "task reqs", texttab.Int(m.TaskRequests))
	r.add("task_calls_max", "max calls", texttab.Int(m.TaskCallsMax))
	r.add("task_attempts_max", "max att", texttab.Int(m.TaskAttemptsMax))
	r.add("task_worst_attempts", "worst", texttab.Int(m.TaskWorstAttempts))
	var mv *segment.Movement = m.TailMovement.P99
	if mv != nil {
		r.add("tail_p99_ms", "Δp99", texttab.Value(texttab.SignedMs, mv.Ms))
		r.add("tail_p99_ratio", "×p99", texttab.Value(texttab.Times, mv.Ratio))
	} else {
		r.add("tail_p99_ms", "Δp99", texttab.Cell{Unit: texttab.SignedMs, Missing: true})
		r.add("tail_p99_ratio", "×p99", texttab.Cell{Unit: texttab.Times, Missing: true})
	}
	a := segment.AddedLatency{}
	if m.AddedLatency != nil {
		a = *m.AddedLatency
	}
	r.add("baseline", "baseline", texttab.Label(a.Kind))
	r.add("added_missing", "missing", texttab.Int(a.Missing))
	r.add("added_per_request_ms", "per req", texttab.Maybe(texttab.SignedMs, a.PerRequestMs))
	for _, d := range dists {
		s := d.get(m)
		unit := texttab.Ms
		if d.key == "added" {
			unit = texttab.SignedMs
		}
		r.add(d.key+"_n", "n", texttab.Int(s.N))
		r.add(d.key+"_mean_ms", "mean", texttab.Maybe(unit, s.Mean))
		for _, p := range []int{50, 95, 99} {
			r.add(fmt.Sprintf("%s_p%d_ms", d.key, p), fmt.Sprintf("p%d", p), pct(unit, s, p))
		}
		r.add(d.key+"_p95_ci", "p95 CI", ci(s, 95))
		r.add(d.key+"_p99_ci", "p99 CI", ci(s, 99))
	}
	w := rep.Workload.Ranges
	for _, f := range []struct {
		key string
		r   model.Range
	}{{"logical_requests", w.LogicalRequests}, {"amplification", w.Amplification}, {"retry_rate", w.RetryRate},
		{"retry_success_rate", w.RetrySuccessRate}, {"final_failure_rate", w.FinalFailureRate}} {
		c := texttab.Cell{Unit: texttab.Number, V: f.r[0], Hi: f.r[1], Range: true, Missing: !whole || rep.SegmentsTotal != nil}
		r.add(f.key+"_range", "plausible range", c)
	}
	return r.cells
}

// segmentGroups are the narrower tables text, Markdown and HTML show of
// the segment table.
func (rep *Report) segmentGroups() []texttab.Group {
	g := func(title string, kh ...string) texttab.Group {
		var out texttab.Group
		out.Title = title
		for i := 0; i < len(kh); i += 2 {
			out.Keys = append(out.Keys, kh[i])
			out.Heads = append(out.Heads, kh[i+1])
		}
		return out
	}
	by := strings.Join(rep.SegmentBy, ", ")
	groups := []texttab.Group{
		g("Segments by "+by+": retries and the tail", "logical_requests", "requests", "amplification", "amp",
			"retry_rate", "retried", "retry_success_rate", "rescued", "final_failure_rate", "failed",
			"latency_all_p99_ms", "p99 all", "latency_retried_p99_ms", "p99 retr", "tail_p99_ms", "Δp99", "tail_p99_ratio", "×p99"),
		g("Segments by "+by+": latency", "latency_all_p50_ms", "p50 all", "latency_all_p95_ms", "p95 all",
			"latency_retried_p50_ms", "p50 retr", "latency_retried_p95_ms", "p95 retr",
			"first_attempt_retried_p50_ms", "1st p50", "first_attempt_retried_p95_ms", "1st p95",
			"second_attempt_p50_ms", "2nd p50", "second_attempt_p95_ms", "2nd p95"),
	}
	w := &rep.Workload
	if w.TTFTMs.All.N > 0 || w.StreamTotalMs.All.N > 0 {
		groups = append(groups, g("Segments by "+by+": streams", "ttft_all_p50_ms", "ttft p50", "ttft_all_p99_ms", "ttft p99",
			"ttft_retried_p95_ms", "ttft p95 r", "generation_all_p50_ms", "gen p50", "generation_all_p99_ms", "gen p99",
			"stream_total_all_p50_ms", "tot gen p50", "stream_total_all_p99_ms", "tot gen p99"))
	}
	groups = append(groups, g("Segments by "+by+": duplicated and hidden work", "duplicated_attempts", "dup att",
		"duplicated_attempt_ms", "dup time", "duplicated_input_tokens", "dup in tok", "duplicated_output_tokens", "dup out tok",
		"hidden_work_ms", "hidden", "hidden_output_tokens", "hidden tok", "duplicated_spend_usd", "dup spend"))
	if w.SameRouteRetries+w.AlternateRouteRetries > 0 {
		groups = append(groups, g("Segments by "+by+": retries on the same route vs another route, per retry attempt",
			"same_route_retries", "same", "same_route_retry_success_rate", "same ok", "same_route_retry_added_ms", "same time",
			"alternate_route_retries", "alt", "alternate_route_retry_success_rate", "alt ok", "alternate_route_retry_added_ms", "alt time"))
	}
	groups = append(groups, hygieneGroup(by))
	groups = append(groups, g("Segments by "+by+": how requests ended, spend, nesting", "outcome_attempt_cap", "cap",
		"outcome_deadline", "deadline", "outcome_no_capacity", "no cap", "outcome_cancelled", "cancel",
		"outcome_unfinished", "unfin", "spend_usd", "spend",
		"nested_requests", "nested", "app_tries_max", "app", "sdk_attempts_max", "sdk"))
	if ph := w.AttemptPhases; ph.Serve.N > 0 || ph.Generate.N > 0 || ph.Connect.N > 0 {
		groups = append(groups, g("Segments by "+by+": attempt time as queue + connect + serve + generate (mean where shown)",
			"attempt_queue_n", "queue n", "attempt_queue_mean_ms", "queue", "attempt_connect_n", "conn n",
			"attempt_connect_mean_ms", "connect", "attempt_serve_mean_ms", "serve", "attempt_generate_n", "gen n",
			"attempt_generate_mean_ms", "generate"))
	}
	if w.Tasks > 0 {
		groups = append(groups, g("Segments by "+by+": tasks of several requests (a trace or --task-key)", "tasks", "tasks",
			"task_requests", "requests", "task_calls_max", "most calls", "task_attempts_max", "most attempts",
			"task_worst_attempts", "worst case"))
	}
	if kind := rep.settings.baseline; kind != "" {
		prov := "no provenance"
		if a := w.AddedLatency; a != nil && len(a.Provenance) > 0 {
			prov = strings.Join(a.Provenance, "+")
		}
		groups = append(groups, g(fmt.Sprintf("Segments by %s: latency added vs baseline %q, retried requests (%s)", by, kind, prov),
			"added_n", "n", "added_missing", "missing", "added_mean_ms", "mean", "added_p50_ms", "p50",
			"added_p95_ms", "p95", "added_p99_ms", "p99", "added_per_request_ms", "per req"))
	}
	if rep.settings.ci {
		groups = append(groups, g(fmt.Sprintf("Segments by %s: bootstrap 95%% CI (seed %d, %d resamples)", by, rep.settings.seed, rep.settings.resamples),
			"latency_all_p95_ci", "p95 all", "latency_all_p99_ci", "p99 all", "latency_retried_p95_ci", "p95 retr",
			"latency_retried_p99_ci", "p99 retr"))
	}
	return groups
}
