// Package htmlreport renders the report as one self-contained HTML file:
// tables and SVG charts inline, no scripts, no fetches, so it opens from
// disk or as an email attachment.
package htmlreport

import (
	_ "embed"
	"html/template"
	"io"
	"math"

	"gonum.org/v1/plot/vg"
)

// Table is one table of the report, already formatted, and the charts
// drawn from it, which the page shows beside it.
type Table struct {
	Title  string
	Notes  []string
	Header []string
	Rows   [][]string
	// Numeric marks the columns to right-align.
	Numeric []bool
	// NoHeader leaves out the heading row, for a list of figures.
	NoHeader bool
	Figures  []Figure
}

// Page is what the report hands over: its tables in reading order, each
// with its charts' data.
type Page struct {
	Title    string
	Subtitle string
	Tables   []Table
	Footer   string
}

//go:embed page.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"right": func(t Table, i int) bool { return i < len(t.Numeric) && t.Numeric[i] },
	"uri":   func(s string) template.URL { return template.URL(s) },
}).Parse(pageTemplate))

// section is a table and its rendered charts.
type section struct {
	Table
	Charts []*chart
}

// Write renders the page, drawing every table's figures.
func Write(w io.Writer, page Page) error {
	sections := make([]section, len(page.Tables))
	for i, t := range page.Tables {
		sections[i].Table = t
		for _, f := range t.Figures {
			c, err := drawFigure(f)
			if err != nil {
				return err
			}
			sections[i].Charts = append(sections[i].Charts, c)
		}
	}
	return tmpl.Execute(w, struct {
		Page
		Sections []section
		W, H     int
	}{page, sections, px(chartW), px(chartH)})
}

// px is a length in CSS pixels (96 to the inch; a point is 1/72).
func px(l vg.Length) int { return int(math.Round(float64(l) * 96 / 72)) }
