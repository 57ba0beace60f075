package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/htmlreport"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/segment"
)

// WriteHTML writes the report as one self-contained page: the tables the
// other formats show, in their order, each chart beside the table whose
// figures it draws.
func WriteHTML(w io.Writer, rep *Report) error {
	page := htmlreport.Page{
		Title:    "retryscope report",
		Subtitle: strings.Join(rep.heading(), ". "),
		Footer:   "Percentiles: " + model.PercentileDefinition + ". Every baseline figure is labelled with its kind and provenance.",
	}
	figures := rep.figures()
	for _, t := range rep.Tables() {
		for _, v := range t.Views() {
			ht := htmlreport.Table{Title: v.Title, Notes: v.Notes, NoHeader: v.NoHeader, Numeric: make([]bool, len(v.Columns))}
			for j, c := range v.Columns {
				ht.Header = append(ht.Header, c.Head)
				ht.Numeric[j] = j >= v.Labels && (len(v.Rows) == 0 || v.Rows[0][j].Numeric())
			}
			for _, r := range v.Rows {
				cells := make([]string, len(r))
				for j, c := range r {
					cells[j] = c.String()
				}
				ht.Rows = append(ht.Rows, cells)
			}
			for i := range figures {
				if f := &figures[i]; !f.placed && f.section == v.Section && (f.column == "" || v.HasColumn(f.column)) {
					ht.Figures, f.placed = append(ht.Figures, f.Figure), true
				}
			}
			page.Tables = append(page.Tables, ht)
		}
	}
	return htmlreport.Write(w, page)
}

// figure is a chart and the table it draws: the first table of section
// with column (any table of it when column is empty). A section the
// report does not show takes its charts with it.
type figure struct {
	htmlreport.Figure
	section, column string
	placed          bool
}

// figures are the report's charts: the latency distribution, load and
// amplification over time, the added latency against the segments'
// baseline, and the tail of each segment.
func (rep *Report) figures() []figure {
	var out []figure
	if f, ok := latencyFigure(rep.samples); ok {
		out = append(out, figure{Figure: f, section: "latency"})
	}
	for _, f := range timeFigures(rep.Capacity) {
		out = append(out, figure{Figure: f, section: "capacity"})
	}
	if f, ok := addedFigure(rep.samples, rep.settings.baseline); ok {
		out = append(out, figure{Figure: f, section: "baselines"})
	}
	if f, ok := rep.tailFigure(); ok {
		out = append(out, figure{Figure: f, section: "segments", column: "latency_retried_p95_ms"})
	}
	return out
}

// latencyFigure is the share of requests per logarithmic latency bin, for
// all requests and for retried ones.
func latencyFigure(samples []segment.Sample) (htmlreport.Figure, bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	var all, retried []float64
	for _, s := range samples {
		all = append(all, s.LatencyMs)
		if s.Attempts > 1 {
			retried = append(retried, s.LatencyMs)
		}
		if s.LatencyMs > 0 {
			lo, hi = math.Min(lo, s.LatencyMs), math.Max(hi, s.LatencyMs)
		}
	}
	if math.IsInf(lo, 1) {
		return htmlreport.Figure{}, false
	}
	const bins = 24
	lo, hi = math.Log10(lo), math.Log10(hi)+1e-9
	if hi-lo < 0.5 {
		lo, hi = lo-0.25, hi+0.25
	}
	width := (hi - lo) / bins
	hist := func(name string, vals []float64, retried bool) htmlreport.Line {
		l := htmlreport.Line{Name: fmt.Sprintf("%s (n=%d)", name, len(vals)), Retried: retried, Dashed: retried,
			X: make([]float64, bins), Y: make([]float64, bins)}
		for _, v := range vals {
			if v > 0 {
				i := int((math.Log10(v) - lo) / width)
				l.Y[min(max(i, 0), bins-1)]++
			}
		}
		for i := range l.X {
			l.X[i] = math.Pow(10, lo+(float64(i)+0.5)*width)
			l.Y[i] = 100 * l.Y[i] / float64(max(len(vals), 1))
		}
		return l
	}
	f := htmlreport.Figure{Title: "Latency distribution",
		Caption: "Client-observed latency of every logical request and of the retried ones, each as a share of its own count, in 24 logarithmic bins.",
		XLabel:  "end-to-end latency (log scale)", XUnit: htmlreport.Duration, LogX: true,
		YLabel: "share of requests", YUnit: htmlreport.Percent,
		Lines: []htmlreport.Line{hist("all", all, false)}}
	if len(retried) > 0 {
		f.Lines = append(f.Lines, hist("retried", retried, true))
	}
	return f, true
}

// timeFigures are, per bucket of the capacity timeline, the logical
// requests that started and their attempts, and their amplification:
// retry storms show as spikes. They draw the Capacity table's series; a
// bucket where no request started (or one the timeline leaves out) is a
// gap in the lines, not a value.
func timeFigures(c *analysis.Capacity) []htmlreport.Figure {
	if c == nil || len(c.Buckets) < 2 {
		return nil
	}
	step := time.Duration(c.BucketMs * 1e6)
	start := c.Buckets[0].StartNs
	var x, reqs, atts, amp []float64
	gap := func(ns int64) {
		x, reqs, atts, amp = append(x, float64(ns-start)/1e6), append(reqs, math.NaN()), append(atts, math.NaN()), append(amp, math.NaN())
	}
	for i, b := range c.Buckets {
		if i > 0 && b.StartNs-c.Buckets[i-1].StartNs > int64(step) {
			gap(c.Buckets[i-1].StartNs + int64(step))
		}
		if b.Requests == 0 || b.Amplification == nil {
			gap(b.StartNs)
			continue
		}
		x = append(x, float64(b.StartNs-start)/1e6)
		reqs, atts, amp = append(reqs, float64(b.Requests)), append(atts, float64(b.RequestAttempts)), append(amp, *b.Amplification)
	}
	xLabel := fmt.Sprintf("time since %s (%s buckets)", time.Unix(0, start).UTC().Format("2006-01-02 15:04:05 MST"),
		htmlreport.FormatDuration(c.BucketMs))
	one := 1.0
	return []htmlreport.Figure{
		{Title: "Load over time", Caption: "Physical attempts against the logical requests that caused them, by request start. The gap between the lines is traffic nobody scheduled; a break is a bucket where no request started.",
			XLabel: xLabel, XUnit: htmlreport.Duration, YLabel: "started per bucket",
			Lines: []htmlreport.Line{{Name: "attempts", Retried: true, X: x, Y: atts}, {Name: "logical requests", Dashed: true, X: x, Y: reqs}}},
		{Title: "Storm timeline", Caption: "Amplification per bucket, as the Capacity table lists it; spikes are retry storms, a break is a bucket where no request started.",
			XLabel: xLabel, XUnit: htmlreport.Duration, YLabel: "attempts per logical request", YUnit: htmlreport.Times, YMin: &one,
			Lines: []htmlreport.Line{{Retried: true, X: x, Y: amp}}},
	}
}

// addedFigure is the cumulative distribution of the latency retries added
// against kind.
func addedFigure(samples []segment.Sample, kind string) (htmlreport.Figure, bool) {
	var vals []float64
	for _, s := range samples {
		if kind != "" && s.Attempts > 1 && !math.IsNaN(s.AddedMs) {
			vals = append(vals, s.AddedMs)
		}
	}
	if len(vals) == 0 {
		return htmlreport.Figure{}, false
	}
	slices.Sort(vals)
	l := htmlreport.Line{Retried: true, X: vals, Y: make([]float64, len(vals))}
	for i := range vals {
		l.Y[i] = 100 * float64(i+1) / float64(len(vals))
	}
	return htmlreport.Figure{Title: "Added latency (" + kind + ")",
		Caption: fmt.Sprintf("Cumulative distribution of L_retry − L0 over %d retried requests with a %s baseline.", len(vals), kind),
		XLabel:  "latency added by retries (L_retry − L0)", XUnit: htmlreport.Duration,
		YLabel: "retried requests at or below", YUnit: htmlreport.Percent, Lines: []htmlreport.Line{l}}, true
}

// tailFigure is the p95 of all and of retried requests of the segments
// that have one, worst retried tail first, at most 12.
func (rep *Report) tailFigure() (htmlreport.Figure, bool) {
	type bar struct {
		name         string
		pAll, pRetry float64
	}
	var bars []bar
	for _, s := range rep.Segments {
		pa := s.LatencyMs.All.P95
		if pa == nil {
			continue
		}
		b := bar{name: strings.Join(s.Values, " / "), pAll: *pa}
		if pr := s.LatencyMs.Retried.P95; pr != nil {
			b.pRetry = *pr
		}
		bars = append(bars, b)
	}
	if len(bars) == 0 {
		return htmlreport.Figure{}, false
	}
	slices.SortStableFunc(bars, func(a, b bar) int {
		if a.pRetry != b.pRetry {
			if a.pRetry > b.pRetry {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	bars = bars[:min(len(bars), 12)]
	all, retried := htmlreport.Line{Name: "all"}, htmlreport.Line{Name: "retried", Retried: true}
	var names []string
	for _, b := range bars {
		all.Y, retried.Y, names = append(all.Y, b.pAll), append(retried.Y, b.pRetry), append(names, b.name)
	}
	return htmlreport.Figure{Title: "Tail by " + strings.Join(rep.SegmentBy, ", "),
		Caption: "p95 (nearest rank) of all and of retried requests per segment, where at least 5 observations lie at or above it; a missing bar means too few retried requests.",
		YLabel:  "p95 latency", YUnit: htmlreport.Duration,
		Categories: names, Bars: []htmlreport.Line{all, retried}}, true
}
