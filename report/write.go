package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/retryscope/retryscope/internal/atomicfile"
	"github.com/retryscope/retryscope/internal/crashpoint"
)

// Formats are the formats Write knows.
var Formats = []string{"table", "markdown", "csv", "json", "html"}

// Width is the widest line of the text format.
const Width = 100

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
			Schema   string    `json:"schema"`
			Window   Window    `json:"window"`
			Findings []Finding `json:"findings"`
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
		head = append(head, Wrap(l, Width)...)
	}
	return writeTables(w, rep.Tables(), "retryscope report\n"+strings.Join(head, "\n")+"\n", writeAligned)
}

// WriteTablesText writes head, then tables aligned as WriteText aligns a
// report's, for other commands' tables (whatif).
func WriteTablesText(w io.Writer, head string, tables ...Table) error {
	return writeTables(w, tables, head, writeAligned)
}

// writeTables writes head, then each table as the format's table writer
// lays it out.
func writeTables(w io.Writer, tables []Table, head string, table func(*strings.Builder, *Table)) error {
	var b strings.Builder
	b.WriteString(head)
	for _, t := range tables {
		for _, v := range t.views() {
			table(&b, &v)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAligned writes one table: a title, left-aligned label columns (the
// first cut to what Width leaves) and right-aligned figures, then notes.
func writeAligned(b *strings.Builder, t *Table) {
	const sep = 2
	fmt.Fprintf(b, "\n%s\n", t.Title)
	cells := make([][]string, len(t.Rows))
	widths := make([]int, len(t.Columns))
	if !t.NoHeader {
		for j, c := range t.Columns {
			widths[j] = utf8.RuneCountInString(c.Head)
		}
	}
	for i, r := range t.Rows {
		cells[i] = make([]string, len(r))
		for j, c := range r {
			cells[i][j] = c.String()
			widths[j] = max(widths[j], utf8.RuneCountInString(cells[i][j]))
		}
	}
	// Too wide: narrow the widest label column, a character at a time.
	total := 2 - sep
	for _, wd := range widths {
		total += wd + sep
	}
	for ; total > Width; total-- {
		widest := -1
		for j := 0; j < t.Labels; j++ {
			if widths[j] > 8 && (widest < 0 || widths[j] > widths[widest]) {
				widest = j
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
	}
	line := func(vals []string, numeric func(j int) bool) {
		b.WriteString("  ")
		for j, v := range vals {
			if j > 0 {
				b.WriteString(strings.Repeat(" ", sep))
			}
			if j < t.Labels {
				v = cut(v, widths[j])
			}
			if j == len(vals)-1 && !numeric(j) {
				b.WriteString(v)
				continue
			}
			b.WriteString(pad(v, widths[j], numeric(j)))
		}
		b.WriteString("\n")
	}
	if !t.NoHeader {
		heads := make([]string, len(t.Columns))
		for j, c := range t.Columns {
			heads[j] = c.Head
		}
		line(heads, func(j int) bool { return j >= t.Labels && (len(t.Rows) == 0 || t.Rows[0][j].numeric()) })
	}
	for i := range cells {
		line(cells[i], func(j int) bool { return j >= t.Labels && t.Rows[i][j].numeric() })
	}
	for _, n := range t.Notes {
		for _, l := range Wrap(n, Width-2) {
			fmt.Fprintf(b, "  %s\n", l)
		}
	}
}

// WriteMarkdown writes every table as a Markdown table.
func WriteMarkdown(w io.Writer, rep *Report) error {
	return writeTables(w, rep.Tables(), "# retryscope report\n\n"+strings.Join(rep.heading(), "  \n")+"\n", writeMarkdownTable)
}

func writeMarkdownTable(b *strings.Builder, t *Table) {
	fmt.Fprintf(b, "\n## %s\n\n", mdEscape(t.Title))
	heads := make([]string, len(t.Columns))
	seps := make([]string, len(t.Columns))
	for j, c := range t.Columns {
		heads[j], seps[j] = mdEscape(c.Head), "---:"
		if j < t.Labels {
			seps[j] = "---"
		}
	}
	fmt.Fprintf(b, "| %s |\n| %s |\n", strings.Join(heads, " | "), strings.Join(seps, " | "))
	for _, r := range t.Rows {
		cells := make([]string, len(r))
		for j, c := range r {
			cells[j] = mdEscape(c.String())
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			b.WriteString(mdEscape(n) + "  \n")
		}
	}
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`).Replace(s)
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
	cw := csv.NewWriter(w)
	var header []string
	for j, c := range t.Columns {
		if len(t.Rows) > 0 && t.Rows[0][j].Range {
			base := strings.TrimSuffix(c.Key, "_range")
			header = append(header, base+"_lo", base+"_hi")
			continue
		}
		header = append(header, c.Key)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range t.Rows {
		var rec []string
		for _, c := range r {
			rec = append(rec, c.raw()...)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Wrap breaks s into lines of at most width runes at spaces.
func Wrap(s string, width int) []string {
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
