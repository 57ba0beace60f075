package whatif

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/retryscope/retryscope/internal/texttab"
	"github.com/retryscope/retryscope/model"
)

// WriteJSON writes res as indented JSON.
func WriteJSON(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// Tables are res as a report shows it: every request's figures recorded
// and modeled with the change, one row per segment, and the policy, the
// model and its assumptions.
func (res *Result) Tables() []texttab.Table {
	overall, segs := overallTable(res.Overall), segmentTable(res.Segments)
	overall.Title = fmt.Sprintf("What if %s: %s", res.Policy, strings.ToLower(overall.Title[:1])+overall.Title[1:])
	segs.Title = fmt.Sprintf("What if %s: %s", res.Policy, strings.ToLower(segs.Title[:1])+segs.Title[1:])
	overall.Notes = append(append([]string{fmt.Sprintf("Model: %s; every %q figure comes from the model, not from traces.", res.Model, res.Label)},
		res.quotaLines()...), bullets(res.Assumptions)...)
	return []texttab.Table{overall, segs}
}

// WriteText writes res as the report writes its tables: every request's
// figures recorded and modeled with the change, then one row per segment
// (when there are several), then the assumptions.
func WriteText(w io.Writer, res *Result) error {
	head := fmt.Sprintf("What if: %s\nModel: %s; every %q figure comes from the model, not from traces.\n",
		res.Policy, res.Model, res.Label)
	for _, l := range res.quotaLines() {
		head += l + "\n"
	}
	tables := []texttab.Table{overallTable(res.Overall)}
	if len(res.Segments) > 1 {
		tables = append(tables, segmentTable(res.Segments))
	}
	if err := texttab.WriteText(w, head, tables...); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("\nAssumptions:\n")
	for _, a := range res.Assumptions {
		for i, l := range texttab.Wrap(a, texttab.Width-4) {
			lead := "  - "
			if i > 0 {
				lead = "    "
			}
			b.WriteString(lead + l + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// latency is a percentile of n requests, or why it is missing.
func latency(v *float64, n, pct int) texttab.Cell {
	c := texttab.Maybe(texttab.Ms, v)
	if v == nil && n > 0 {
		c.MinN = model.DefaultRule.MinN(pct)
	}
	return c
}

// change is mod relative to rec, nothing when either is missing or rec is 0.
func change(rec, mod *float64) texttab.Cell {
	if rec == nil || mod == nil || *rec == 0 {
		return texttab.Cell{Unit: texttab.Change, Missing: true}
	}
	return texttab.Value(texttab.Change, (*mod-*rec) / *rec)
}

// points is the change of a share in percentage points.
func points(rec, mod *float64) texttab.Cell {
	if rec == nil || mod == nil {
		return texttab.Cell{Unit: texttab.Points, Missing: true}
	}
	return texttab.Value(texttab.Points, *mod-*rec)
}

func ptr(v float64) *float64 { return &v }

// overallTable is every request's figures, recorded and modeled.
func overallTable(r Row) texttab.Table {
	rec, mod := r.Recorded, r.Modeled
	t := texttab.Table{Title: fmt.Sprintf("All %d requests", rec.Requests), Labels: 1, Columns: []texttab.Column{
		{Key: "figure", Head: "figure"}, {Key: "recorded", Head: "recorded"}, {Key: "modeled", Head: "modeled"}, {Key: "change", Head: "change"}}}
	add := func(name string, r, m, c texttab.Cell) {
		t.Rows = append(t.Rows, []texttab.Cell{texttab.Label(name), r, m, c})
	}
	recAtt, modAtt := float64(rec.Attempts), float64(mod.Attempts)
	add("attempts", texttab.Value(texttab.Count, recAtt), texttab.Value(texttab.Count, modAtt), change(&recAtt, &modAtt))
	perRequest := func(v float64) *float64 { // nothing per request without requests
		if rec.Requests == 0 {
			return nil
		}
		return &v
	}
	recAmp, modAmp := perRequest(rec.Amplification), perRequest(mod.Amplification)
	recFail, modFail := perRequest(rec.FinalFailureRate), perRequest(mod.FinalFailureRate)
	add("amplification", texttab.Maybe(texttab.Times, recAmp), texttab.Maybe(texttab.Times, modAmp), change(recAmp, modAmp))
	add("final failure rate", texttab.Maybe(texttab.Share, recFail), texttab.Maybe(texttab.Share, modFail), points(recFail, modFail))
	add("retry success rate", texttab.Maybe(texttab.Share, rec.RetrySuccessRate), texttab.Maybe(texttab.Share, mod.RetrySuccessRate),
		points(rec.RetrySuccessRate, mod.RetrySuccessRate))
	for _, p := range []struct {
		pct      int
		rec, mod *float64
	}{{50, rec.P50, mod.P50}, {95, rec.P95, mod.P95}, {99, rec.P99, mod.P99}} {
		add(fmt.Sprintf("p%d latency", p.pct), latency(p.rec, rec.Requests, p.pct), latency(p.mod, mod.Requests, p.pct), change(p.rec, p.mod))
	}
	add("tokens", texttab.Value(texttab.Count, float64(rec.Tokens)), texttab.Value(texttab.Count, float64(mod.Tokens)),
		change(ptr(float64(rec.Tokens)), ptr(float64(mod.Tokens))))
	if rec.SpendUSD != nil || mod.SpendUSD != nil {
		add("spend", texttab.Maybe(texttab.USD, rec.SpendUSD), texttab.Maybe(texttab.USD, mod.SpendUSD), change(rec.SpendUSD, mod.SpendUSD))
	}
	add("offered load λ·S", texttab.Value(texttab.Decimal, rec.OfferedLoad), texttab.Value(texttab.Decimal, mod.OfferedLoad),
		change(&rec.OfferedLoad, &mod.OfferedLoad))
	if rec.Utilisation != nil {
		add("utilisation (--workers)", texttab.Value(texttab.Share, *rec.Utilisation), texttab.Value(texttab.Share, *mod.Utilisation),
			points(rec.Utilisation, mod.Utilisation))
	}
	recPeak, modPeak := float64(rec.PeakInFlight), float64(mod.PeakInFlight)
	add("peak attempts in flight", texttab.Value(texttab.Count, recPeak), texttab.Value(texttab.Count, modPeak), change(&recPeak, &modPeak))
	// Why the failed requests stopped, recorded (their outcome_detail)
	// and modeled (the policy's reason).
	whys := slices.AppendSeq(slices.Collect(maps.Keys(rec.FailedBy)), maps.Keys(mod.FailedBy))
	slices.Sort(whys)
	for _, why := range slices.Compact(whys) {
		r, m := float64(rec.FailedBy[why]), float64(mod.FailedBy[why])
		add("failed: "+why, texttab.Value(texttab.Count, r), texttab.Value(texttab.Count, m), change(&r, &m))
	}
	return t
}

// segmentTable is each segment's figures, recorded and modeled, in groups
// narrow enough for a terminal.
func segmentTable(rows []Row) texttab.Table {
	t := texttab.Table{Title: "Segments (service / operation / route)", Labels: 1}
	type figure struct {
		key, head string
		cell      func(Figures) texttab.Cell
	}
	figs := []figure{
		{"requests", "requests", func(f Figures) texttab.Cell { return texttab.Value(texttab.Count, float64(f.Requests)) }},
		{"attempts", "attempts", func(f Figures) texttab.Cell { return texttab.Value(texttab.Count, float64(f.Attempts)) }},
		{"amplification", "amp", func(f Figures) texttab.Cell { return texttab.Value(texttab.Times, f.Amplification) }},
		{"final_failure_rate", "failed", func(f Figures) texttab.Cell { return texttab.Value(texttab.Share, f.FinalFailureRate) }},
		{"retry_success_rate", "retry ok", func(f Figures) texttab.Cell { return texttab.Maybe(texttab.Share, f.RetrySuccessRate) }},
		{"p50", "p50", func(f Figures) texttab.Cell { return latency(f.P50, f.Requests, 50) }},
		{"p95", "p95", func(f Figures) texttab.Cell { return latency(f.P95, f.Requests, 95) }},
		{"p99", "p99", func(f Figures) texttab.Cell { return latency(f.P99, f.Requests, 99) }},
		{"tokens", "tokens", func(f Figures) texttab.Cell { return texttab.Value(texttab.Count, float64(f.Tokens)) }},
		{"offered_load", "λ·S", func(f Figures) texttab.Cell { return texttab.Value(texttab.Decimal, f.OfferedLoad) }},
	}
	t.Columns = []texttab.Column{{Key: "segment", Head: "segment"}}
	for _, f := range figs[1:] {
		t.Columns = append(t.Columns, texttab.Column{Key: f.key, Head: f.head}, texttab.Column{Key: "modeled_" + f.key, Head: "modeled"})
	}
	t.Columns = append(t.Columns[:1], append([]texttab.Column{{Key: "requests", Head: "requests"}}, t.Columns[1:]...)...)
	group := func(title string, keys ...string) texttab.Group {
		g := texttab.Group{Title: title}
		for _, k := range keys {
			for _, c := range t.Columns {
				if c.Key == k {
					g.Keys, g.Heads = append(g.Keys, k), append(g.Heads, c.Head)
				}
			}
		}
		return g
	}
	t.Groups = []texttab.Group{
		group(t.Title+": attempts and outcomes", "requests", "amplification", "modeled_amplification", "final_failure_rate",
			"modeled_final_failure_rate", "retry_success_rate", "modeled_retry_success_rate"),
		group(t.Title+": latency", "p50", "modeled_p50", "p95", "modeled_p95", "p99", "modeled_p99"),
		group(t.Title+": cost", "attempts", "modeled_attempts", "tokens", "modeled_tokens", "offered_load", "modeled_offered_load"),
	}
	for _, r := range rows {
		row := []texttab.Cell{texttab.Label(strings.Join([]string{r.Segment.Service, r.Segment.Operation, r.Segment.Route}, " / ")),
			figs[0].cell(r.Recorded)}
		for _, f := range figs[1:] {
			row = append(row, f.cell(r.Recorded), f.cell(r.Modeled))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// bullets marks each item as one of a list.
func bullets(items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = "- " + s
	}
	return out
}

// quotaLines name the recorded retry quotas the replay used, one line a
// service.
func (res *Result) quotaLines() []string {
	var out []string
	for _, q := range res.RecordedQuotas {
		out = append(out, fmt.Sprintf("Recorded retry quota of %s: --retry-quota %g,%g,%g,%g (inferred from %d requests it stopped; --retry-quota off replays without it).",
			q.Service, q.Tokens, q.Cost, q.TimeoutCost, q.Gain, q.Stopped))
	}
	return out
}
