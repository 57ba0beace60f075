package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/atomicfile"
	"github.com/retryscope/retryscope/internal/crashpoint"
	"github.com/retryscope/retryscope/internal/texttab"
)

// Formats are the formats Write knows.
var Formats = []string{"table", "markdown", "csv", "json", "html"}

// Write renders rep in format, one of Formats.
func Write(w io.Writer, rep *Report, format string) error {
	switch format {
	case "json":
		return WriteJSON(w, rep)
	case "csv":
		return WriteCSV(w, rep)
	case "markdown":
		return WriteMarkdown(w, rep)
	case "html":
		return WriteHTML(w, rep)
	case "table":
		return WriteText(w, rep)
	}
	return fmt.Errorf("unknown report format %q (want %s)", format, strings.Join(Formats, ", "))
}

// WriteFile writes rep in format to the file path. A regular file is
// written beside its name and renamed, so a reader never sees half a
// report.
func WriteFile(path string, rep *Report, format string) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := f.Fill("report.tmp", func(w io.Writer) error { return Write(w, rep, format) }); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return crashpoint.Hit("report.renamed")
}

// WriteJSON writes the Report as the JSON document docs/report.md, "The JSON
// report" fixes; asked for the findings alone, the schema, the window and the
// findings.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if rep.settings.findings {
		return enc.Encode(struct {
			Schema   string             `json:"schema"`
			Window   Window             `json:"window"`
			Findings []analysis.Finding `json:"findings"`
		}{rep.Schema, rep.Window, rep.Findings})
	}
	return enc.Encode(rep)
}

// heading is the report's first lines: the database and the window.
func (rep *Report) heading() []string {
	lines := []string{fmt.Sprintf("%s: %d files, %d spans, %d rejected records", rep.settings.source,
		rep.Ingest.Files, rep.Ingest.Spans, rep.Ingest.Rejected)}
	if rep.settings.dataset {
		lines[0] = rep.settings.source + ": the requests of Parquet datasets (their spans, files and rejections stay in the shards' databases)"
	}
	if w := rep.Window.text(); w != "" {
		lines = append(lines, w)
	}
	return lines
}

// WriteText writes every table aligned for a terminal, Width columns wide.
func WriteText(w io.Writer, rep *Report) error {
	var head []string
	for _, l := range rep.heading() {
		head = append(head, texttab.Wrap(l, texttab.Width)...)
	}
	return texttab.WriteText(w, "retryscope report\n"+strings.Join(head, "\n")+"\n", rep.Tables()...)
}

// WriteMarkdown writes every table as a Markdown table.
func WriteMarkdown(w io.Writer, rep *Report) error {
	return texttab.WriteMarkdown(w, "# retryscope report\n\n"+strings.Join(rep.heading(), "  \n")+"\n", rep.Tables()...)
}

// WriteCSV writes the segment table, every column of it: one row for all
// the requests the segments cover, then one per segment (asked for the
// findings alone, the findings table). Figures are in
// their base unit at full precision (ms, shares of 1, ratios); a missing
// figure is an empty cell; a range or interval is two columns, _lo and
// _hi.
func WriteCSV(w io.Writer, rep *Report) error {
	t := rep.SegmentTable()
	if rep.settings.findings {
		t = rep.findingsTable()
	}
	return texttab.WriteCSV(w, t)
}
