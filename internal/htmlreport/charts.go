package htmlreport

import (
	"bytes"
	"encoding/base64"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is a chart's data, computed by the report: lines over a shared
// x axis, or pairs of bars over named categories.
type Figure struct {
	Title, Caption string
	// XLabel and YLabel name the axes; the tick labels carry the units
	// XUnit and YUnit say.
	XLabel, YLabel string
	XUnit, YUnit   Unit
	// LogX puts x on a logarithmic scale.
	LogX bool
	// YMin, when set, fixes the bottom of the y axis.
	YMin *float64
	// Lines are drawn over x; a NaN in Y is a gap, where the line breaks.
	Lines []Line
	// Categories name the bars; each of Bars has one value per category.
	Categories []string
	Bars       []Line
}

// Unit is what an axis's values are, and so how its ticks read.
type Unit int

const (
	// Number is a plain figure: 0, 20, 40; 25k.
	Number Unit = iota
	// Duration is milliseconds, ticked as the text report writes them:
	// 0, 250 ms, 500 ms, 1 s, 2 min.
	Duration
	// Percent is 0 to 100: 25%.
	Percent
	// Times is a ratio: 1.5x.
	Times
)

// Line is one series. Retried series are drawn in red (dashed when
// Dashed), the others in blue.
type Line struct {
	Name    string
	Retried bool
	Dashed  bool
	X, Y    []float64
}

// chart is one rendered figure: an SVG as a data URI, so the page needs
// no other file and makes no request.
type chart struct {
	Title   string
	Caption string
	DataURI string
}

var (
	colorAll     = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colorRetried = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

// The size a chart is drawn at, which the page gives its image so the
// layout does not wait for it.
const (
	chartW = 13 * vg.Centimeter
	chartH = 7.5 * vg.Centimeter
)

// sans is the charts' typeface: Liberation Sans, which has Arial's and
// Helvetica's metrics, so the SVG names those as fallbacks and the text
// fits where it was measured on any system.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// sansFamily is how the SVG names sans, and sansFallback what it names
// instead.
const (
	sansFamily   = "font-family:Liberation Sans;"
	sansFallback = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"
)

// newPlot is a plot with the page's type: sans, ticks a little smaller
// than the axis labels.
func newPlot() *plot.Plot {
	p := plot.New()
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 10)
	}
	return p
}

func colorOf(l Line) color.Color {
	if l.Retried {
		return colorRetried
	}
	return colorAll
}

// legendEntry is one item of the legend drawn above the plot area.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// drawFigure renders f as an SVG data URI: the plot area below a one-line
// legend, so the legend never covers data.
func drawFigure(f Figure) (*chart, error) {
	p := newPlot()
	p.X.Label.Text = f.XLabel
	p.Y.Label.Text = f.YLabel
	p.Add(plotter.NewGrid())
	var legend []legendEntry
	for _, l := range f.Lines {
		first, err := addLine(p, l)
		if err != nil {
			return nil, err
		}
		if l.Name != "" && first != nil {
			legend = append(legend, legendEntry{l.Name, first})
		}
	}
	if len(f.Bars) > 0 {
		w := vg.Points(10)
		for i, b := range f.Bars {
			bars, err := plotter.NewBarChart(plotter.Values(b.Y), w)
			if err != nil {
				return nil, err
			}
			bars.Color, bars.LineStyle.Width = colorOf(b), 0
			bars.Offset = w * vg.Length(2*i-len(f.Bars)+1) / 2
			p.Add(bars)
			legend = append(legend, legendEntry{b.Name, bars})
		}
		p.NominalX(f.Categories...)
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
	} else {
		for _, l := range f.Lines {
			for _, x := range l.X {
				p.X.Min, p.X.Max = math.Min(p.X.Min, x), math.Max(p.X.Max, x)
			}
		}
		setAxis(&p.X, f.XUnit, f.LogX, nil)
	}
	setAxis(&p.Y, f.YUnit, false, f.YMin)

	c := vgsvg.New(chartW, chartH)
	dc := draw.New(c)
	strip := drawLegend(dc, legend)
	p.Draw(draw.Crop(dc, 0, 0, 0, -strip))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	svg := bytes.ReplaceAll(buf.Bytes(), []byte(sansFamily), []byte(sansFallback))
	return &chart{Title: f.Title, Caption: f.Caption,
		DataURI: "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg)}, nil
}

// addLine draws l as one line per run of values between gaps (a lone
// value as a dot) and returns what the legend shows for it.
func addLine(p *plot.Plot, l Line) (plot.Thumbnailer, error) {
	var first plot.Thumbnailer
	var run plotter.XYs
	flush := func() error {
		defer func() { run = nil }()
		switch len(run) {
		case 0:
			return nil
		case 1:
			dot, err := plotter.NewScatter(run)
			if err != nil {
				return err
			}
			dot.Color, dot.Radius, dot.Shape = colorOf(l), vg.Points(2), draw.CircleGlyph{}
			p.Add(dot)
			if first == nil {
				first = dot
			}
			return nil
		}
		line, err := plotter.NewLine(run)
		if err != nil {
			return err
		}
		line.Color = colorOf(l)
		line.Width = vg.Points(1.5)
		if l.Dashed {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(line)
		first = line
		return nil
	}
	for i := range l.X {
		if math.IsNaN(l.Y[i]) {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		run = append(run, plotter.XY{X: l.X[i], Y: l.Y[i]})
	}
	return first, flush()
}

// drawLegend draws the entries in one row along the top of c, right
// aligned, and returns the height it took.
func drawLegend(c draw.Canvas, entries []legendEntry) vg.Length {
	if len(entries) == 0 {
		return 0
	}
	const gap = 12
	legends := make([]plot.Legend, len(entries))
	var total vg.Length
	for i, e := range entries {
		legends[i] = plot.NewLegend()
		legends[i].Top, legends[i].Left = true, true
		legends[i].TextStyle.Font = font.From(sans, 10)
		legends[i].Add(e.name, e.thumb)
		r := legends[i].Rectangle(c)
		total += r.Max.X - r.Min.X + vg.Points(gap)
	}
	x := c.Max.X - c.Min.X - total
	height := vg.Length(0)
	for i := range legends {
		legends[i].Draw(draw.Crop(c, x, 0, 0, -vg.Points(4)))
		r := legends[i].Rectangle(c)
		x += r.Max.X - r.Min.X + vg.Points(gap)
		height = max(height, r.Max.Y-r.Min.Y)
	}
	return height + vg.Points(8)
}

// setAxis gives an axis nice bounds and ticks labelled in its unit; min,
// when set, fixes the bottom.
func setAxis(a *plot.Axis, u Unit, log bool, min *float64) {
	if math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) || a.Min > a.Max {
		return
	}
	lo, hi := a.Min, a.Max
	if min != nil {
		lo = *min
		hi = math.Max(hi, lo)
	}
	var ticks []plot.Tick
	if log {
		a.Scale = plot.LogScale{}
		lo, hi, ticks = logTicks(lo, hi, u)
	} else {
		lo, hi, ticks = linearTicks(lo, hi, u, min != nil)
	}
	a.Min, a.Max = lo, hi
	a.Tick.Marker = plot.ConstantTicks(ticks)
}
