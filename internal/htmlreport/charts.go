package htmlreport

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image/color"
	"math"
	"sort"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
)

// Chart is one rendered figure: an SVG as a data URI, so the page needs
// no other file and makes no request.
type Chart struct {
	Title   string
	Caption string
	DataURI string
}

var (
	colorAll     = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colorRetried = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

const (
	chartW = 16 * vg.Centimeter
	chartH = 8 * vg.Centimeter
)

func render(p *plot.Plot) (string, error) {
	c := vgsvg.New(chartW, chartH)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	return "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

func styledLine(xys plotter.XYs, c color.Color, dashed bool) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color = c
	l.Width = vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	return l, nil
}

// latencyDistribution draws the share of requests per logarithmic latency
// bin, for all requests and for retried ones, on a log latency axis.
func latencyDistribution(ctx context.Context, st *store.Store, w model.Window) (*Chart, error) {
	all, retried, err := latencies(ctx, st, w)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range all {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return nil, nil
	}
	const bins = 40
	lo, hi = math.Log10(lo), math.Log10(hi)+1e-9
	if hi-lo < 0.5 {
		lo, hi = lo-0.25, hi+0.25
	}
	width := (hi - lo) / bins
	hist := func(vals []float64) plotter.XYs {
		counts := make([]float64, bins)
		for _, v := range vals {
			if v <= 0 {
				continue
			}
			i := int((math.Log10(v) - lo) / width)
			counts[min(max(i, 0), bins-1)]++
		}
		xys := make(plotter.XYs, bins)
		for i, c := range counts {
			xys[i].X = math.Pow(10, lo+(float64(i)+0.5)*width)
			xys[i].Y = 100 * c / float64(max(len(vals), 1))
		}
		return xys
	}
	p := newPlot("End-to-end latency", "latency (ms, log scale)", "share of requests (%)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	la, err := styledLine(hist(all), colorAll, false)
	if err != nil {
		return nil, err
	}
	p.Add(la)
	p.Legend.Add(fmt.Sprintf("all (n=%d)", len(all)), la)
	if len(retried) > 0 {
		lr, err := styledLine(hist(retried), colorRetried, true)
		if err != nil {
			return nil, err
		}
		p.Add(lr)
		p.Legend.Add(fmt.Sprintf("retried (n=%d)", len(retried)), lr)
	}
	uri, err := render(p)
	if err != nil {
		return nil, err
	}
	return &Chart{Title: "Latency distribution",
		Caption: "Client-observed latency of every logical request and of the retried ones, each as a share of its own count, in 40 logarithmic bins.",
		DataURI: uri}, nil
}

func latencies(ctx context.Context, st *store.Store, w model.Window) (all, retried []float64, err error) {
	lo, hi := w.Bounds()
	rows, err := st.Conn.QueryContext(ctx, `SELECT latency_ms, attempts > 1 FROM requests WHERE start_ns BETWEEN $1 AND $2`, lo, hi)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var v float64
		var r bool
		if err := rows.Scan(&v, &r); err != nil {
			return nil, nil, err
		}
		all = append(all, v)
		if r {
			retried = append(retried, v)
		}
	}
	return all, retried, rows.Err()
}

// niceSteps are the bucket widths the storm timeline picks from.
var niceSteps = []time.Duration{time.Second, 5 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 24 * time.Hour}

// stormTimeline draws attempts and logical requests started per bucket,
// and the amplification of each bucket: retry storms show as spikes.
func stormTimeline(ctx context.Context, st *store.Store, w model.Window) ([]*Chart, error) {
	from, to := w.Bounds()
	var lo, hi int64
	if err := st.Conn.QueryRowContext(ctx, `SELECT coalesce(min(start_ns), 0), coalesce(max(start_ns), 0) FROM requests
		WHERE start_ns BETWEEN $1 AND $2`, from, to).Scan(&lo, &hi); err != nil {
		return nil, err
	}
	if hi <= lo {
		return nil, nil
	}
	step := niceSteps[len(niceSteps)-1]
	for _, s := range niceSteps {
		if (hi-lo)/int64(s) <= 120 {
			step = s
			break
		}
	}
	rows, err := st.Conn.QueryContext(ctx, `SELECT (start_ns - $1) // $2 AS b, count(*), sum(attempts)
		FROM requests WHERE start_ns BETWEEN $1 AND $3 GROUP BY b ORDER BY b`, lo, int64(step), hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	unit, unitName := time.Hour, "hours"
	switch span := time.Duration(hi - lo); {
	case span < 10*time.Minute:
		unit, unitName = time.Second, "seconds"
	case span < 10*time.Hour:
		unit, unitName = time.Minute, "minutes"
	}
	var reqs, atts, amp plotter.XYs
	next := int64(0)
	for rows.Next() {
		var b, n, a int64
		if err := rows.Scan(&b, &n, &a); err != nil {
			return nil, err
		}
		for ; next < b; next++ { // quiet buckets: no requests started
			x := float64(next*int64(step)) / float64(unit)
			reqs = append(reqs, plotter.XY{X: x})
			atts = append(atts, plotter.XY{X: x})
		}
		next = b + 1
		x := float64(b*int64(step)) / float64(unit)
		reqs = append(reqs, plotter.XY{X: x, Y: float64(n)})
		atts = append(atts, plotter.XY{X: x, Y: float64(a)})
		amp = append(amp, plotter.XY{X: x, Y: float64(a) / float64(n)})
	}
	if err := rows.Err(); err != nil || len(reqs) == 0 {
		return nil, err
	}
	xLabel := fmt.Sprintf("%s since %s (buckets of %s)", unitName, time.Unix(0, lo).UTC().Format("2006-01-02 15:04:05 MST"), step)
	p1 := newPlot("Attempts and logical requests over time", xLabel, "started per bucket")
	la, err := styledLine(atts, colorRetried, false)
	if err != nil {
		return nil, err
	}
	lr, err := styledLine(reqs, colorAll, true)
	if err != nil {
		return nil, err
	}
	p1.Add(la, lr)
	p1.Legend.Add("attempts", la)
	p1.Legend.Add("logical requests", lr)
	p2 := newPlot("Amplification over time", xLabel, "attempts / logical request")
	lamp, err := styledLine(amp, colorRetried, false)
	if err != nil {
		return nil, err
	}
	p2.Add(lamp)
	p2.Y.Min = 1
	u1, err := render(p1)
	if err != nil {
		return nil, err
	}
	u2, err := render(p2)
	if err != nil {
		return nil, err
	}
	return []*Chart{
		{Title: "Load over time", Caption: "Physical attempts against the logical requests that caused them, by request start. The gap between the lines is traffic nobody scheduled.", DataURI: u1},
		{Title: "Storm timeline", Caption: "Amplification per bucket; spikes are retry storms.", DataURI: u2},
	}, nil
}

// addedLatency draws the cumulative distribution of latency added by the
// retry against one baseline kind, when baselines exist.
func addedLatency(ctx context.Context, st *store.Store, kind string, w model.Window) (*Chart, error) {
	if kind == "" || kind == "all" {
		return nil, nil
	}
	computed, err := st.BaselinesComputed(ctx)
	if err != nil || !computed {
		return nil, err
	}
	lo, hi := w.Bounds()
	rows, err := st.Conn.QueryContext(ctx, `SELECT r.latency_ms - b.l0_ms FROM baselines b JOIN requests r USING (request_id)
		WHERE b.kind = $1 AND b.l0_ms IS NOT NULL AND r.start_ns BETWEEN $2 AND $3 ORDER BY 1`, kind, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var vals []float64
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	if err := rows.Err(); err != nil || len(vals) == 0 {
		return nil, err
	}
	xys := make(plotter.XYs, len(vals))
	for i, v := range vals {
		xys[i] = plotter.XY{X: v, Y: 100 * float64(i+1) / float64(len(vals))}
	}
	p := newPlot("Latency added by retries against the "+kind+" baseline", "added latency (ms)", "retried requests at or below (%)")
	l, err := styledLine(xys, colorRetried, false)
	if err != nil {
		return nil, err
	}
	p.Add(l)
	uri, err := render(p)
	if err != nil {
		return nil, err
	}
	return &Chart{Title: "Added latency (" + kind + ")",
		Caption: fmt.Sprintf("Cumulative distribution of L_retry − L0 over %d retried requests with a %s baseline.", len(vals), kind),
		DataURI: uri}, nil
}

// segmentTails draws, per operation, the p99 latency of all requests and
// of the retried ones, where the sample supports a p99.
func segmentTails(ctx context.Context, st *store.Store, win model.Window) (*Chart, error) {
	lo, hi := win.Bounds()
	rows, err := st.Conn.QueryContext(ctx, `SELECT coalesce(operation, '(none)'), latency_ms, attempts > 1 FROM requests
		WHERE start_ns BETWEEN $1 AND $2 ORDER BY 1`, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	all, retried := map[string][]float64{}, map[string][]float64{}
	for rows.Next() {
		var op string
		var v float64
		var r bool
		if err := rows.Scan(&op, &v, &r); err != nil {
			return nil, err
		}
		all[op] = append(all[op], v)
		if r {
			retried[op] = append(retried[op], v)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	type bar struct {
		op           string
		pAll, pRetry float64
	}
	var bars []bar
	for op, vals := range all {
		sort.Float64s(vals)
		pa := model.Percentile(vals, 95)
		if pa == nil {
			continue
		}
		b := bar{op: op, pAll: *pa}
		r := retried[op]
		sort.Float64s(r)
		if pr := model.Percentile(r, 95); pr != nil {
			b.pRetry = *pr
		}
		bars = append(bars, b)
	}
	if len(bars) == 0 {
		return nil, nil
	}
	sort.Slice(bars, func(i, j int) bool {
		if bars[i].pRetry != bars[j].pRetry {
			return bars[i].pRetry > bars[j].pRetry
		}
		return bars[i].op < bars[j].op
	})
	if len(bars) > 12 {
		bars = bars[:12]
	}
	va, vr := make(plotter.Values, len(bars)), make(plotter.Values, len(bars))
	names := make([]string, len(bars))
	for i, b := range bars {
		va[i], vr[i], names[i] = b.pAll, b.pRetry, b.op
	}
	p := newPlot("p95 latency by operation", "", "p95 latency (ms)")
	w := vg.Points(10)
	ba, err := plotter.NewBarChart(va, w)
	if err != nil {
		return nil, err
	}
	ba.Color, ba.LineStyle.Width = colorAll, 0
	ba.Offset = -w / 2
	br, err := plotter.NewBarChart(vr, w)
	if err != nil {
		return nil, err
	}
	br.Color, br.LineStyle.Width = colorRetried, 0
	br.Offset = w / 2
	p.Add(ba, br)
	p.Legend.Add("all", ba)
	p.Legend.Add("retried", br)
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	uri, err := render(p)
	if err != nil {
		return nil, err
	}
	return &Chart{Title: "Tail by operation",
		Caption: "p95 (nearest rank) of all and of retried requests per operation, where at least 5 observations lie at or above it; a missing bar means too few retried requests.",
		DataURI: uri}, nil
}
