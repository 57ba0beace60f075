package segment

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retryscope/retryscope/model"
)

// tableWidth is the width WriteTable's lines fit in.
const tableWidth = 100

// column is one measure as the text and Markdown tables show it: text
// gives the cell, with units, or "n<500" for a percentile the sample is
// too small for.
type column struct {
	head string
	text func(r *renderer, m *Measures) string
}

type renderer struct {
	minTail int
}

// pick returns the percentile of d by number.
func pick(d Dist, pct int) *float64 {
	switch pct {
	case 50:
		return d.P50
	case 95:
		return d.P95
	}
	return d.P99
}

// pctCell shows pX of d in ms, or why it is missing: "-" with no
// observations, "n<N" when the sample is smaller than pX needs.
func (r *renderer) pctCell(d Dist, pct int) string {
	if v := pick(d, pct); v != nil {
		return fmtMs(*v)
	}
	if d.N == 0 {
		return "-"
	}
	return "n<" + strconv.Itoa(MinN(pct, r.minTail))
}

func fmtMs(v float64) string {
	switch a := max(v, -v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64) + "ms"
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "ms"
}

func fmtPct(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" }

func fmtX(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "x" }

func num(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

func pctCol(head string, get func(m *Measures) Dist, pct int) column {
	return column{
		head: head,
		text: func(r *renderer, m *Measures) string { return r.pctCell(get(m), pct) },
	}
}

func moveCol(head string, ratio bool) column {
	return column{head: head, text: func(_ *renderer, m *Measures) string {
		mv := m.TailMovement.P99
		switch {
		case mv == nil:
			return "-"
		case ratio:
			return fmtX(mv.Ratio)
		case mv.Ms > 0:
			return "+" + fmtMs(mv.Ms)
		}
		return fmtMs(mv.Ms)
	}}
}

func allDist(m *Measures) Dist      { return m.LatencyMs.All }
func retriedDist(m *Measures) Dist  { return m.LatencyMs.Retried }
func firstDist(m *Measures) Dist    { return m.FirstAttemptMs.All }
func secondDist(m *Measures) Dist   { return m.SecondAttemptMs }
func ttftDist(m *Measures) Dist     { return m.TTFTMs.All }
func ttftRetDist(m *Measures) Dist  { return m.TTFTMs.Retried }
func genDist(m *Measures) Dist      { return m.GenerationMs.All }
func addedDist(m *Measures) Dist    { return addedOf(m).Ms }
func firstRetDist(m *Measures) Dist { return m.FirstAttemptMs.Retried }

func addedOf(m *Measures) AddedLatency {
	if m.AddedLatency == nil {
		return AddedLatency{}
	}
	return *m.AddedLatency
}

// The text tables. Each fits tableWidth with a label column of 20.
var (
	rateColumns = []column{
		{head: "requests", text: func(_ *renderer, m *Measures) string { return strconv.Itoa(m.LogicalRequests) }},
		{head: "amp", text: func(_ *renderer, m *Measures) string { return fmtX(m.Amplification) }},
		{head: "retried", text: func(_ *renderer, m *Measures) string { return fmtPct(m.RetryRate) }},
		{head: "rescued", text: func(_ *renderer, m *Measures) string {
			if m.RetrySuccessRate == nil {
				return "-"
			}
			return fmtPct(*m.RetrySuccessRate)
		}},
		{head: "failed", text: func(_ *renderer, m *Measures) string { return fmtPct(m.FinalFailureRate) }},
		pctCol("p99 all", allDist, 99),
		pctCol("p99 retr", retriedDist, 99),
		moveCol("Δp99", false),
		moveCol("×p99", true),
	}
	latencyColumns = []column{
		pctCol("p50 all", allDist, 50),
		pctCol("p95 all", allDist, 95),
		pctCol("p50 retr", retriedDist, 50),
		pctCol("p95 retr", retriedDist, 95),
		pctCol("1st p50", firstRetDist, 50),
		pctCol("1st p95", firstRetDist, 95),
		pctCol("2nd p50", secondDist, 50),
		pctCol("2nd p95", secondDist, 95),
	}
	streamColumns = []column{
		pctCol("ttft p50", ttftDist, 50),
		pctCol("ttft p99", ttftDist, 99),
		pctCol("ttft p95 r", ttftRetDist, 95),
		pctCol("gen p50", genDist, 50),
		pctCol("gen p99", genDist, 99),
	}
	addedColumns = []column{
		{head: "n", text: func(_ *renderer, m *Measures) string { return strconv.Itoa(addedOf(m).Ms.N) }},
		{head: "missing", text: func(_ *renderer, m *Measures) string { return strconv.Itoa(addedOf(m).Missing) }},
		{head: "mean", text: func(_ *renderer, m *Measures) string {
			if v := addedOf(m).Ms.Mean; v != nil {
				return fmtMs(*v)
			}
			return "-"
		}},
		pctCol("p50", addedDist, 50),
		pctCol("p95", addedDist, 95),
		pctCol("p99", addedDist, 99),
		{head: "per req", text: func(_ *renderer, m *Measures) string {
			if v := addedOf(m).PerRequestMs; v != nil {
				return fmtMs(*v)
			}
			return "-"
		}},
	}
	ciColumns = []column{
		ciCol("p95 all", allDist, 95),
		ciCol("p99 all", allDist, 99),
		ciCol("p95 retr", retriedDist, 95),
		ciCol("p99 retr", retriedDist, 99),
	}
)

func ciCol(head string, get func(m *Measures) Dist, pct int) column {
	return column{head: head, text: func(r *renderer, m *Measures) string {
		d := get(m)
		var iv *Interval
		if d.CI95 != nil {
			iv = d.CI95.P95
			if pct == 99 {
				iv = d.CI95.P99
			}
		}
		if iv == nil {
			return r.pctCell(d, pct)
		}
		return strconv.FormatFloat(iv.Lo, 'f', 0, 64) + "–" + fmtMs(iv.Hi)
	}}
}

// rows returns the workload followed by the segments, as table rows.
func tableRows(res *Result) []Segment {
	rows := []Segment{{Values: []string{"(all requests)"}, Measures: res.Workload}}
	for _, s := range res.Segments {
		if s.RolledUp {
			s.Values = append([]string(nil), s.Values...)
			s.Values[0] = "*" + s.Values[0]
		}
		rows = append(rows, s)
	}
	return rows
}

// WriteTable writes res as aligned text tables that fit 100 columns:
// rates and the p99 tail, latency distributions, streams (when any),
// added latency (with a baseline) and confidence intervals (with CI).
func WriteTable(w io.Writer, res Result) error {
	r := &renderer{minTail: res.MinTail}
	rows := tableRows(&res)
	head := "segment"
	if len(res.Dims) > 0 {
		head = strings.Join(res.Dims, " / ")
	}
	var b strings.Builder
	section := func(title string, cols []column) {
		fmt.Fprintf(&b, "%s\n", title)
		writeAligned(&b, r, head, rows, cols)
		b.WriteByte('\n')
	}
	section("Retries and the tail", rateColumns)
	section("Latency (retr: retried requests; 1st/2nd: attempt elapsed, retried requests)", latencyColumns)
	if res.Workload.TTFTMs.All.N > 0 || res.Workload.GenerationMs.All.N > 0 {
		section("Streams (TTFT and total generation)", streamColumns)
	}
	if res.Baseline != "" {
		section(fmt.Sprintf("Added latency vs baseline %q, retried requests (%s)", res.Baseline,
			strings.Join(res.Workload.addedProvenance(), "+")), addedColumns)
	}
	if res.CI {
		section(fmt.Sprintf("Bootstrap 95%% CI (seed %d, %d resamples)", res.Seed, res.Resamples), ciColumns)
	}
	writeFooter(&b, &res, "")
	_, err := io.WriteString(w, b.String())
	return err
}

func (m *Measures) addedProvenance() []string {
	if m.AddedLatency == nil || len(m.AddedLatency.Provenance) == 0 {
		return []string{"no provenance"}
	}
	return m.AddedLatency.Provenance
}

// writeFooter states the percentile definition, the sample rule, the
// roll-up and the notes, each line prefixed.
func writeFooter(b *strings.Builder, res *Result, prefix string) {
	for _, line := range wrap(PercentileDefinition+".", tableWidth-len(prefix)) {
		fmt.Fprintf(b, "%s%s\n", prefix, line)
	}
	fmt.Fprintf(b, "%spX is shown only when at least %d observations lie at or above it; n<N marks a\n", prefix, res.MinTail)
	fmt.Fprintf(b, "%ssample smaller than N, \"-\" no observations. Δ/× compare retried with all requests.\n", prefix)
	fmt.Fprintf(b, "%s* pools cohorts under %d requests into (other); none is dropped.\n", prefix, res.MinCohort)
	for _, n := range res.Notes {
		fmt.Fprintf(b, "%sNote: %s\n", prefix, n)
	}
}

// writeAligned writes one text table: a left-aligned label column, cut to
// what tableWidth leaves, and right-aligned measure columns.
func writeAligned(b *strings.Builder, r *renderer, head string, rows []Segment, cols []column) {
	const sep = 2
	cells := make([][]string, len(rows))
	widths := make([]int, len(cols))
	for j, c := range cols {
		widths[j] = utf8.RuneCountInString(c.head)
	}
	for i := range rows {
		cells[i] = make([]string, len(cols))
		for j, c := range cols {
			cells[i][j] = c.text(r, &rows[i].Measures)
			widths[j] = max(widths[j], utf8.RuneCountInString(cells[i][j]))
		}
	}
	room := tableWidth
	for _, wd := range widths {
		room -= wd + sep
	}
	labelWidth := utf8.RuneCountInString(head)
	for i := range rows {
		labelWidth = max(labelWidth, utf8.RuneCountInString(rows[i].Label()))
	}
	labelWidth = max(min(labelWidth, room), 8)
	line := func(label string, vals []string) {
		b.WriteString(pad(cut(label, labelWidth), labelWidth, false))
		for j, v := range vals {
			b.WriteString(strings.Repeat(" ", sep))
			b.WriteString(pad(v, widths[j], true))
		}
		b.WriteByte('\n')
	}
	heads := make([]string, len(cols))
	for j, c := range cols {
		heads[j] = c.head
	}
	line(head, heads)
	for i := range rows {
		line(rows[i].Label(), cells[i])
	}
}

// wrap breaks s into lines of at most width runes at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n-1]) + "…"
}

func pad(s string, n int, right bool) string {
	gap := n - utf8.RuneCountInString(s)
	if gap <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", gap) + s
	}
	return s + strings.Repeat(" ", gap)
}

// WriteMarkdown writes res as one Markdown table of every column the text
// tables show, then the percentile definition and notes.
func WriteMarkdown(w io.Writer, res Result) error {
	r := &renderer{minTail: res.MinTail}
	cols := append(append(append([]column(nil), rateColumns...), latencyColumns...), streamColumns...)
	if res.Baseline != "" {
		for _, c := range addedColumns {
			c.head = "added " + c.head
			cols = append(cols, c)
		}
	}
	if res.CI {
		for _, c := range ciColumns {
			c.head = c.head + " 95% CI"
			cols = append(cols, c)
		}
	}
	var b strings.Builder
	head := "segment"
	if len(res.Dims) > 0 {
		head = strings.Join(res.Dims, " / ")
	}
	b.WriteString("| " + mdEscape(head))
	for _, c := range cols {
		b.WriteString(" | " + c.head)
	}
	b.WriteString(" |\n|---")
	for range cols {
		b.WriteString("|---:")
	}
	b.WriteString("|\n")
	for _, s := range tableRows(&res) {
		b.WriteString("| " + mdEscape(s.Label()))
		for _, c := range cols {
			b.WriteString(" | " + c.text(r, &s.Measures))
		}
		b.WriteString(" |\n")
	}
	b.WriteByte('\n')
	writeFooter(&b, &res, "")
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`).Replace(s)
}

// csvDists are the distributions WriteCSV flattens, by column prefix.
var csvDists = []struct {
	name string
	get  func(m *Measures) Dist
}{
	{"latency_all", allDist},
	{"latency_retried", retriedDist},
	{"first_attempt_all", firstDist},
	{"first_attempt_retried", firstRetDist},
	{"second_attempt", secondDist},
	{"ttft_all", ttftDist},
	{"ttft_retried", ttftRetDist},
	{"generation_all", genDist},
	{"generation_retried", func(m *Measures) Dist { return m.GenerationMs.Retried }},
	{"added", addedDist},
}

// WriteCSV writes one row for the workload (dimension columns "(all)")
// and one per segment: the dimension values, rolled_up, the rates and
// every distribution's n, mean, p50, p95, p99 in ms, with CI bounds when
// computed. A null is an empty cell.
func WriteCSV(w io.Writer, res Result) error {
	cw := csv.NewWriter(w)
	header := append([]string(nil), res.Dims...)
	header = append(header, "rolled_up", "cohorts", "logical_requests", "attempts", "amplification",
		"retry_rate", "retry_success_rate", "final_failure_rate", "duplicated_output_tokens",
		"tail_p99_ms", "tail_p99_ratio", "baseline", "added_missing", "added_per_request_ms")
	for _, d := range csvDists {
		for _, f := range []string{"n", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "p95_ci_lo", "p95_ci_hi", "p99_ci_lo", "p99_ci_hi"} {
			header = append(header, d.name+"_"+f)
		}
	}
	for _, f := range rangedFigures {
		header = append(header, f+"_lo", f+"_hi")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	workload := Segment{Measures: res.Workload}
	write := func(values []string, s *Segment) error {
		m := &s.Measures
		rec := append([]string(nil), values...)
		var p99ms, p99ratio string
		if mv := m.TailMovement.P99; mv != nil {
			p99ms, p99ratio = num(&mv.Ms), num(&mv.Ratio)
		}
		a := addedOf(m)
		rec = append(rec, strconv.FormatBool(s.RolledUp), strconv.Itoa(s.Cohorts),
			strconv.Itoa(m.LogicalRequests), strconv.FormatInt(m.Attempts, 10), num(&m.Amplification),
			num(&m.RetryRate), num(m.RetrySuccessRate), num(&m.FinalFailureRate),
			strconv.FormatInt(m.DuplicatedOutputTokens, 10), p99ms, p99ratio,
			a.Kind, strconv.Itoa(a.Missing), num(a.PerRequestMs))
		for _, d := range csvDists {
			rec = append(rec, distCells(d.get(m))...)
		}
		rec = append(rec, rangeCells(s == &workload, res.WorkloadRanges)...)
		return cw.Write(rec)
	}
	all := make([]string, len(res.Dims))
	for i := range all {
		all[i] = "(all)"
	}
	if err := write(all, &workload); err != nil {
		return err
	}
	for i := range res.Segments {
		if err := write(res.Segments[i].Values, &res.Segments[i]); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// rangedFigures are the workload figures a report bounds when they rest
// on joins inferred across traces, in model.WorkloadRanges order.
var rangedFigures = []string{"logical_requests", "amplification", "retry_rate", "retry_success_rate", "final_failure_rate"}

// rangeCells are the lowest and highest plausible values of rangedFigures
// on the workload row, empty elsewhere.
func rangeCells(workload bool, r *model.WorkloadRanges) []string {
	cells := make([]string, 2*len(rangedFigures))
	if !workload || r == nil {
		return cells
	}
	for i, x := range []model.Range{r.LogicalRequests, r.Amplification, r.RetryRate, r.RetrySuccessRate, r.FinalFailureRate} {
		cells[2*i] = strconv.FormatFloat(x[0], 'f', -1, 64)
		cells[2*i+1] = strconv.FormatFloat(x[1], 'f', -1, 64)
	}
	return cells
}

func distCells(d Dist) []string {
	cells := []string{strconv.Itoa(d.N), num(d.Mean), num(d.P50), num(d.P95), num(d.P99)}
	for _, iv := range []*Interval{ciOf(d, 95), ciOf(d, 99)} {
		if iv == nil {
			cells = append(cells, "", "")
			continue
		}
		cells = append(cells, num(&iv.Lo), num(&iv.Hi))
	}
	return cells
}

func ciOf(d Dist, pct int) *Interval {
	if d.CI95 == nil {
		return nil
	}
	if pct == 95 {
		return d.CI95.P95
	}
	return d.CI95.P99
}
