// Package htmlreport renders the report as one self-contained HTML file:
// tables and SVG charts inline, no scripts, no fetches, so it opens from
// disk or as an email attachment.
package htmlreport

import (
	"context"
	_ "embed"
	"html/template"
	"io"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
)

// Table is one table of the report, already formatted.
type Table struct {
	Title  string
	Note   string
	Header []string
	Rows   [][]string
	// Numeric marks the columns to right-align.
	Numeric []bool
}

// Page is what the report command hands over: its tables, and what the
// charts should show.
type Page struct {
	Title        string
	Subtitle     string
	Tables       []Table
	BaselineKind string // the baseline the added-latency chart uses
	Footer       string
	// Window bounds the requests the charts draw, like the tables'.
	Window model.Window
}

//go:embed page.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"right": func(t Table, i int) bool { return i < len(t.Numeric) && t.Numeric[i] },
	"uri":   func(s string) template.URL { return template.URL(s) },
}).Parse(pageTemplate))

// Write renders the page, drawing the charts from the database.
func Write(ctx context.Context, w io.Writer, st *store.Store, page Page) error {
	var charts []*Chart
	add := func(c *Chart, err error) error {
		if err == nil && c != nil {
			charts = append(charts, c)
		}
		return err
	}
	if err := add(latencyDistribution(ctx, st, page.Window)); err != nil {
		return err
	}
	storm, err := stormTimeline(ctx, st, page.Window)
	if err != nil {
		return err
	}
	charts = append(charts, storm...)
	if err := add(addedLatency(ctx, st, page.BaselineKind, page.Window)); err != nil {
		return err
	}
	if err := add(segmentTails(ctx, st, page.Window)); err != nil {
		return err
	}
	return tmpl.Execute(w, struct {
		Page
		Charts []*Chart
	}{page, charts})
}
