// Package htmlreport renders the report as one self-contained HTML file:
// tables and SVG charts inline, no scripts, no fetches, so it opens from
// disk or as an email attachment.
package htmlreport

import (
	_ "embed"
	"html/template"
	"io"
)

// Table is one table of the report, already formatted.
type Table struct {
	Title  string
	Notes  []string
	Header []string
	Rows   [][]string
	// Numeric marks the columns to right-align.
	Numeric []bool
}

// Page is what the report hands over: its tables, already formatted, and
// its charts' data.
type Page struct {
	Title    string
	Subtitle string
	Tables   []Table
	Figures  []Figure
	Footer   string
}

//go:embed page.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"right": func(t Table, i int) bool { return i < len(t.Numeric) && t.Numeric[i] },
	"uri":   func(s string) template.URL { return template.URL(s) },
}).Parse(pageTemplate))

// Write renders the page, drawing its figures.
func Write(w io.Writer, page Page) error {
	var charts []*chart
	for _, f := range page.Figures {
		c, err := drawFigure(f)
		if err != nil {
			return err
		}
		charts = append(charts, c)
	}
	return tmpl.Execute(w, struct {
		Page
		Charts []*chart
	}{page, charts})
}
