package report

import (
	"fmt"
	"strings"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/texttab"
	"github.com/retryscope/retryscope/model"
)

// yieldTable lays out the yield curves, the workload's first. Text,
// Markdown and HTML label a segment's rows by its number (s1, s2 ...),
// named in the notes; the table keeps the segment in full in a column
// of its own.
func (rep *Report) yieldTable() texttab.Table {
	t := texttab.Table{Title: "Marginal yield: what each further attempt buys", Labels: 2, Columns: []texttab.Column{
		{Key: "curve", Head: "curve"}, {Key: "attempt", Head: "n"}, {Key: "reached", Head: "reached"}, {Key: "cleared", Head: "cleared"},
		{Key: "conditional_success", Head: "c(n)"}, {Key: "cumulative_success", Head: "C(n)"}, {Key: "rescued_per_1000", Head: "rescued/1k"},
		{Key: "p99_ms", Head: "p99 cap n"}, {Key: "added_p99_ms", Head: "+p99"}, {Key: "amplification", Head: "amp cap n"}, {Key: "ceiling", Head: "ceiling"},
		{Key: "segment", Head: "segment"}}}
	my := rep.MarginalYield
	budget := my.P99BudgetMs != nil || my.AmplificationBudget != nil
	var names []string
	add := func(label, name string, c *analysis.YieldCurve) {
		ceil := texttab.Cell{Unit: texttab.Count, Missing: true}
		if c.Ceiling != nil {
			ceil = texttab.Int(*c.Ceiling)
		}
		for _, r := range c.Rows {
			rescued := texttab.Cell{Unit: texttab.Count, Missing: true, Blank: true}
			if r.RescuedPer1000 != nil {
				rescued = texttab.Value(texttab.Count, *r.RescuedPer1000)
			}
			t.Rows = append(t.Rows, []texttab.Cell{texttab.Label(label), texttab.Int(r.Attempt), texttab.Int(r.Reached), texttab.Int(r.Cleared),
				texttab.Value(texttab.Share, r.Conditional), texttab.Value(texttab.Share, r.Cumulative), rescued,
				p99Cell(r.P99Ms, c.Requests), texttab.Maybe(texttab.SignedMs, r.AddedP99Ms), texttab.Value(texttab.Times, r.Amplification), ceil, texttab.Label(name)})
		}
		if label != "all" {
			names = append(names, label+": "+name)
		}
		if budget {
			ceil := "none"
			if c.Ceiling != nil {
				ceil = fmt.Sprint(*c.Ceiling)
			}
			t.Notes = append(t.Notes, fmt.Sprintf("ceiling for %s: %s (%s).", label, ceil, c.CeilingWhy))
		}
	}
	add("all", "every request", &my.Workload)
	if my.Transport != nil {
		add("transport", "each try of one prompt (rows count prompts)", my.Transport)
		add("evaluator", "each prompt after a rejected output", my.Evaluator)
	}
	for i := range my.Segments {
		add(fmt.Sprintf("s%d", i+1), analysis.SegmentName(my.Segments[i].Segment), &my.Segments[i].YieldCurve)
	}
	keys := []string{"reached", "cleared", "conditional_success", "cumulative_success", "rescued_per_1000", "p99_ms",
		"added_p99_ms", "amplification"}
	heads := []string{"reached", "cleared", "c(n)", "C(n)", "rescued/1k", "p99 cap n", "+p99", "amp cap n"}
	if budget {
		keys, heads = append(keys, "ceiling"), append(heads, "ceiling")
	}
	t.Groups = []texttab.Group{{Title: t.Title, Keys: keys, Heads: heads}}
	if !budget {
		t.Notes = append(t.Notes, "No attempt ceiling: "+my.Workload.CeilingWhy+".")
	}
	t.Notes = append([]string{"all: every request; " + strings.Join(names, "; ") + ".",
		"reached: requests that made attempt n; cleared: those answered by it; c(n) = cleared/reached; " +
			"C(n): share of all requests answered by attempt n; rescued/1k: 1,000·(C(n) − C(n−1)); " +
			"p99 cap n: p99 latency had every request stopped after attempt n (at its end, failed); +p99: what allowing attempt n adds."},
		t.Notes...)
	return t
}

// p99Cell is a p99 of requests, or why it is missing.
func p99Cell(v *float64, n int) texttab.Cell {
	if v != nil {
		return texttab.Value(texttab.Ms, *v)
	}
	c := texttab.Cell{Unit: texttab.Ms, Missing: true}
	if n > 0 {
		c.MinN = model.DefaultRule.MinN(99)
	}
	return c
}
