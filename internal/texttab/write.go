package texttab

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Width is the widest line of the text format.
const Width = 100

// WriteText writes head, then the tables aligned for a terminal, Width
// columns wide.
func WriteText(w io.Writer, head string, tables ...Table) error {
	return writeTables(w, tables, head, writeAligned)
}

// WriteMarkdown writes head, then the tables as Markdown tables.
func WriteMarkdown(w io.Writer, head string, tables ...Table) error {
	return writeTables(w, tables, head, writeMarkdownTable)
}

// writeTables writes head, then each table as the format's table writer
// lays it out.
func writeTables(w io.Writer, tables []Table, head string, table func(*strings.Builder, *Table)) error {
	var b strings.Builder
	b.WriteString(head)
	for _, t := range tables {
		for _, v := range t.Views() {
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
		line(heads, func(j int) bool { return j >= t.Labels && (len(t.Rows) == 0 || t.Rows[0][j].Numeric()) })
	}
	for i := range cells {
		line(cells[i], func(j int) bool { return j >= t.Labels && t.Rows[i][j].Numeric() })
	}
	for _, n := range t.Notes {
		for _, l := range Wrap(n, Width-2) {
			fmt.Fprintf(b, "  %s\n", l)
		}
	}
}

// writeMarkdownTable writes one table as Markdown: label columns
// left-aligned, figures right-aligned, then notes.
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

// WriteCSV writes every column of t: a range or interval is two
// columns, _lo and _hi, and each cell is its Raw value.
func WriteCSV(w io.Writer, t Table) error {
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
			rec = append(rec, c.Raw()...)
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
