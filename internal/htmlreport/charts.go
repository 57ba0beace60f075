package htmlreport

import (
	"bytes"
	"encoding/base64"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is a chart's data, computed by the report: lines over a shared
// x axis, or pairs of bars over named categories.
type Figure struct {
	Title, Caption string
	// PlotTitle, XLabel and YLabel are drawn on the chart.
	PlotTitle, XLabel, YLabel string
	// LogX puts x on a logarithmic scale.
	LogX bool
	// YMin, when set, fixes the bottom of the y axis.
	YMin  *float64
	Lines []Line
	// Categories name the bars; each of Bars has one value per category.
	Categories []string
	Bars       []Line
}

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

const (
	chartW = 16 * vg.Centimeter
	chartH = 8 * vg.Centimeter
)

func colorOf(l Line) color.Color {
	if l.Retried {
		return colorRetried
	}
	return colorAll
}

// drawFigure renders f as an SVG data URI.
func drawFigure(f Figure) (*chart, error) {
	p := plot.New()
	p.Title.Text = f.PlotTitle
	p.X.Label.Text = f.XLabel
	p.Y.Label.Text = f.YLabel
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	if f.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	for _, l := range f.Lines {
		xys := make(plotter.XYs, len(l.X))
		for i := range l.X {
			xys[i] = plotter.XY{X: l.X[i], Y: l.Y[i]}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		line.Color = colorOf(l)
		line.Width = vg.Points(1.5)
		if l.Dashed {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(line)
		if l.Name != "" {
			p.Legend.Add(l.Name, line)
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
			p.Legend.Add(b.Name, bars)
		}
		p.NominalX(f.Categories...)
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
	}
	if f.YMin != nil {
		p.Y.Min = *f.YMin
	}
	c := vgsvg.New(chartW, chartH)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return &chart{Title: f.Title, Caption: f.Caption,
		DataURI: "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())}, nil
}
