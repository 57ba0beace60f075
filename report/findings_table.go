package report

import (
	"fmt"
	"strings"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/texttab"
	"github.com/retryscope/retryscope/segment"
)

// findingsTable lays the findings out, most costly first; each finding's
// evidence and change follow as notes.
func (rep *Report) findingsTable() texttab.Table {
	t := texttab.Table{Title: "Findings, most costly first", Labels: 3, Columns: []texttab.Column{{Key: "rank", Head: "#"}, {Key: "kind", Head: "finding"},
		{Key: "segment", Head: "service / operation / route"}, {Key: "cost_attempts", Head: "attempts"}, {Key: "cost_time_ms", Head: "time"}, {Key: "cost_tokens", Head: "tokens"}}}
	for i, f := range rep.Findings {
		t.Rows = append(t.Rows, []texttab.Cell{texttab.Label(fmt.Sprint(i + 1)), texttab.Label(f.Kind), texttab.Label(segmentsText(f)),
			texttab.Int(f.Cost.Attempts), texttab.Value(texttab.Ms, f.Cost.TimeMs), texttab.Int(f.Cost.Tokens)})
		var ev []string
		for _, e := range f.Evidence {
			ev = append(ev, e.Name+" "+evidenceText(e))
		}
		t.Notes = append(t.Notes, fmt.Sprintf("%d. %s. Evidence: %s. Change: %s.%s", i+1, f.Problem, strings.Join(ev, "; "), f.Change,
			segmentCosts(f)))
	}
	if len(rep.Findings) == 0 {
		t.Notes = []string{"No finding: no retry policy here has a problem the data shows."}
	}
	return t
}

// evidenceText formats a figure of evidence as the tables format its
// unit, with its interval when it has one.
func evidenceText(e analysis.Evidence) string {
	u := map[string]texttab.Unit{"count": texttab.Count, "ms": texttab.Ms, "share": texttab.Share, "ratio": texttab.Times, "decimal": texttab.Decimal}[e.Unit]
	s := texttab.Value(u, e.Value).String()
	if e.CI95 != nil {
		s += " (95% CI " + texttab.Cell{Unit: u, V: e.CI95.Lo, Hi: e.CI95.Hi, Range: true}.String() + ")"
	}
	return s
}

// segmentCosts lists the most costly segments of a finding of several
// with what it costs in each: " In: a / b / c 136 attempts, 2.5 min; ...".
func segmentCosts(f analysis.Finding) string {
	if len(f.Segments) <= 1 {
		return ""
	}
	const most = 5
	var each []string
	for i, s := range f.Segments {
		if i == most && len(f.Segments) > most+1 {
			each = append(each, fmt.Sprintf("and %d more (the JSON report lists every one)", len(f.Segments)-most))
			break
		}
		each = append(each, fmt.Sprintf("%s %s attempts, %s", analysis.SegmentValues(s.Segment), texttab.Int(s.Cost.Attempts), texttab.Value(texttab.Ms, s.Cost.TimeMs)))
	}
	return " In: " + strings.Join(each, "; ") + "."
}

// segmentsText lists a finding's segments by their values, as the
// findings tables show them: "10 segments: a / b / c, d / e / f, …".
func segmentsText(f analysis.Finding) string {
	if len(f.Segments) <= 1 {
		return analysis.SegmentValues(f.Segment)
	}
	var names []string
	for _, s := range f.Segments {
		names = append(names, analysis.SegmentValues(s.Segment))
	}
	return fmt.Sprintf("%d segments: %s", len(f.Segments), strings.Join(names, ", "))
}

// hygieneCells adds the retry-hygiene measures to a segment table row.
func hygieneCells(r *row, m *segment.Measures) {
	r.add("client_error_retries", "4xx retries", texttab.Int(m.ClientErrorRetries))
	r.add("client_error_retry_ms", "4xx retry time", texttab.Value(texttab.Ms, m.ClientErrorRetryMs))
	r.add("client_error_retry_tokens", "4xx retry tok", texttab.Int(m.ClientErrorRetryTokens))
	r.add("retry_after_retries", "after RA", texttab.Int(m.RetryAfterRetries))
	r.add("retry_after_ignored", "RA ignored", texttab.Int(m.RetryAfterIgnored))
	r.add("retry_after_early_ms", "early", texttab.Value(texttab.Ms, m.RetryAfterEarlyMs))
	r.add("retry_after_ignored_ms", "early retry time", texttab.Value(texttab.Ms, m.RetryAfterIgnoredMs))
	r.add("retry_gaps", "own gaps", texttab.Int(m.RetryGaps))
	r.add("retry_gap_fixed_share", "fixed", texttab.Maybe(texttab.Share, m.RetryGapFixedShare))
	p := m.RetryPeak
	if p == nil {
		r.add("retry_peak_retries", "peak 100ms", texttab.Cell{Unit: texttab.Count, Missing: true})
		r.add("retry_peak_spread_ms", "spread", texttab.Cell{Unit: texttab.Ms, Missing: true})
		r.add("retry_peak_mean_per_100ms", "mean 100ms", texttab.Cell{Unit: texttab.Number, Missing: true})
		return
	}
	r.add("retry_peak_retries", "peak 100ms", texttab.Int(p.Retries))
	r.add("retry_peak_spread_ms", "spread", texttab.Value(texttab.Ms, p.SpreadMs))
	r.add("retry_peak_mean_per_100ms", "mean 100ms", texttab.Value(texttab.Number, p.MeanPer100ms))
}

// hygieneGroup is the narrower table of the retry-hygiene columns.
func hygieneGroup(by string) texttab.Group {
	g := texttab.Group{Title: "Segments by " + by + ": retry hygiene"}
	for _, kh := range [][2]string{{"client_error_retries", "4xx retr"}, {"retry_after_retries", "after RA"},
		{"retry_after_ignored", "RA ign"}, {"retry_after_early_ms", "early"}, {"retry_gaps", "gaps"},
		{"retry_gap_fixed_share", "fixed"}, {"retry_peak_retries", "peak"}, {"retry_peak_spread_ms", "spread"}} {
		g.Keys, g.Heads = append(g.Keys, kh[0]), append(g.Heads, kh[1])
	}
	return g
}
