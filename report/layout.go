package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/texttab"
)

// Sections are the parts of a report the text, Markdown and HTML formats
// can show, in the order they show them (--section). JSON always holds
// every one of them; CSV is the segment table.
var Sections = []string{"headline", "workload", "findings", "latency", "layers", "triggers", "yield",
	"capacity", "linkage", "baselines", "segments", "whatif"}

// DefaultSections are what a report shows unless asked for more: a
// screen's worth (a what-if replay, when asked for, follows them).
var DefaultSections = []string{"headline", "findings", "latency", "layers", "triggers"}

// ParseSections reads --section: section names, comma-separated, or
// "all".
func ParseSections(s string) ([]string, error) {
	if s == "all" {
		return slices.Clone(Sections), nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(Sections, name) {
			return nil, fmt.Errorf("unknown section %q (want %s, or all)", name, strings.Join(Sections, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// shows reports whether the text, Markdown and HTML formats show section
// name: asked for by --section or --full, or in the default view.
func (s *settings) shows(name string) bool {
	switch {
	case s.sections != nil:
		return slices.Contains(s.sections, name)
	case s.full:
		return name != "linkage" || s.explain
	}
	return slices.Contains(DefaultSections, name) || name == "whatif" || (name == "linkage" && s.explain)
}

// compact reports whether the tables are the default view's short forms:
// the main latency rows, the findings grouped by kind.
func (s *settings) compact() bool { return s.sections == nil && !s.full }

// headlineTable is the report in six lines: the retry tax, the share
// still failing, what the retries cost in time and tokens, and the
// latency of retried requests against all.
func (rep *Report) headlineTable() texttab.Table {
	w := &rep.Workload
	t := texttab.Table{Title: "Headline", Labels: 1, NoHeader: true, Columns: []texttab.Column{{Key: "measure", Head: "measure"}, {Key: "value", Head: "value"}}}
	add := func(label, v string) { t.Rows = append(t.Rows, []texttab.Cell{texttab.Label(label), texttab.Label(v)}) }
	if w.LogicalRequests == 0 {
		add("requests", "none in the window")
		return t
	}
	add("retry tax", fmt.Sprintf("%s attempts per request (%d attempts for %d requests)",
		strings.TrimSuffix(texttab.Format(texttab.Times, w.Amplification), "x"), w.Attempts, w.LogicalRequests))
	rescued := "-"
	if w.RetrySuccessRate != nil {
		rescued = texttab.Format(texttab.Share, *w.RetrySuccessRate)
	}
	add("retried", fmt.Sprintf("%s of requests (%d); %s of those rescued by a retry", texttab.Format(texttab.Share, w.RetryRate), w.Retried, rescued))
	add("still failing", fmt.Sprintf("%s of requests (%d)", texttab.Format(texttab.Share, w.FinalFailureRate), w.Failed))
	add("time cost", fmt.Sprintf("%s in duplicated attempts; %s of server work after clients gave up",
		texttab.Format(texttab.Ms, w.DuplicatedAttemptMs), texttab.Format(texttab.Ms, w.HiddenWorkMs)))
	tokens := fmt.Sprintf("%d input, %d output tokens sent again", w.DuplicatedInputTokens, w.DuplicatedOutputTokens)
	if w.SpendUSD > 0 {
		tokens += fmt.Sprintf(": %s of %s spend", texttab.Format(texttab.USD, w.DuplicatedSpendUSD), texttab.Format(texttab.USD, w.SpendUSD))
	}
	add("token cost", tokens)
	if all, retried := w.LatencyMs.All, w.LatencyMs.Retried; retried.N > 0 {
		add("latency", fmt.Sprintf("retried vs all: p50 %s vs %s; p95 %s vs %s; mean %s vs %s",
			pct(texttab.Ms, retried, 50), pct(texttab.Ms, all, 50), pct(texttab.Ms, retried, 95), pct(texttab.Ms, all, 95),
			texttab.Maybe(texttab.Ms, retried.Mean), texttab.Maybe(texttab.Ms, all.Mean)))
	}
	return t
}

// compactLatency keeps the latency rows a reader compares first: end to
// end, time to first token, generation and the first two attempts, each
// with observations.
func compactLatency(t texttab.Table) texttab.Table {
	keep := []string{"end-to-end", "ttft", "generation (token 1 → end)", "first attempt", "second attempt"}
	n := t.Col("n")
	var rows [][]texttab.Cell
	for _, r := range t.Rows {
		if slices.Contains(keep, r[0].Text) && r[n].V > 0 {
			rows = append(rows, r)
		}
	}
	t.Rows = rows
	t.Notes = []string{"ttft: the request's start to the first token of the answer used; generation: its first token to its end.",
		"pX: nearest-rank percentile, shown with at least 5 values at or above it; n<N: too few requests."}
	return t
}

// groupedFindings lays the findings out a kind to a row, most costly
// kind first, the costs summed over the segments it was found in: the
// default view's form of findingsTable.
func (rep *Report) groupedFindings() texttab.Table {
	const most = 5
	t := texttab.Table{Title: "Findings, most costly first", Labels: 3, Columns: []texttab.Column{{Key: "rank", Head: "#"}, {Key: "kind", Head: "finding"},
		{Key: "segment", Head: "where (service / operation / route)"}, {Key: "cost_attempts", Head: "attempts"}, {Key: "cost_time_ms", Head: "time"}, {Key: "cost_tokens", Head: "tokens"}}}
	var kinds []string
	by := map[string][]analysis.Finding{}
	for _, f := range rep.Findings {
		if _, ok := by[f.Kind]; !ok {
			kinds = append(kinds, f.Kind)
		}
		by[f.Kind] = append(by[f.Kind], f)
	}
	for i, k := range kinds {
		if i == most {
			t.Notes = append(t.Notes, fmt.Sprintf("%d more kinds of finding: --section findings lists every one.", len(kinds)-most))
			break
		}
		fs := by[k]
		var c analysis.Cost
		for _, f := range fs {
			c.Attempts, c.TimeMs, c.Tokens = c.Attempts+f.Cost.Attempts, c.TimeMs+f.Cost.TimeMs, c.Tokens+f.Cost.Tokens
		}
		all := analysis.Finding{Segment: fs[0].Segment}
		for _, f := range fs {
			all.Segments = append(all.Segments, f.Segments...)
		}
		where := segmentsText(all)
		t.Rows = append(t.Rows, []texttab.Cell{texttab.Label(fmt.Sprint(i + 1)), texttab.Label(k), texttab.Label(where), texttab.Int(c.Attempts), texttab.Value(texttab.Ms, c.TimeMs), texttab.Int(c.Tokens)})
		t.Notes = append(t.Notes, fmt.Sprintf("%d. %s. Change: %s.", i+1, fs[0].Problem, fs[0].Change))
	}
	if len(rep.Findings) == 0 {
		t.Notes = []string{"No finding: no retry policy here has a problem the data shows."}
	}
	return t
}

// nonZeroRows drops the rows of a list of figures whose every figure is
// zero, but for the rows named in keep.
func nonZeroRows(t texttab.Table, keep ...string) texttab.Table {
	var rows [][]texttab.Cell
	for _, r := range t.Rows {
		zero := true
		for _, c := range r[t.Labels:] {
			if c.Unit != texttab.Text && (c.Missing || c.V != 0) || c.Unit == texttab.Text && c.Text != "" {
				zero = false
			}
		}
		if !zero || slices.Contains(keep, r[0].Text) {
			rows = append(rows, r)
		}
	}
	t.Rows = rows
	return t
}
