// Package texttab is the table model the report and the what-if replay
// are laid out in (titled tables of typed cells, split into groups for
// narrow formats) and its text, Markdown and CSV writers.
package texttab

import "slices"

// Table is one table, as every format shows it: the text,
// Markdown and HTML writers show its groups (or, without groups, all its
// columns), and CSV writes every column.
type Table struct {
	Title   string
	Columns []Column
	Rows    [][]Cell
	// Labels is how many leading columns label a row (left-aligned).
	Labels int
	// Groups split a wide table into narrower ones that share its label
	// columns; the columns no group names are CSV's alone.
	Groups []Group
	// Notes are said under the table, one paragraph each.
	Notes []string
	// NoHeader drops the heading row in text, for a list of figures.
	NoHeader bool
	// Section is the part of the report the table shows; the HTML page
	// draws each section's charts beside its table.
	Section string
}

// Column names one column: Key in CSV, Head in the other formats.
type Column struct {
	Key, Head string
}

// Group is a narrower table cut from a wide one: its columns by key,
// under headings of its own.
type Group struct {
	Title string
	Keys  []string
	Heads []string
}

// Col returns the index of the column with key k.
func (t *Table) Col(k string) int {
	for i, c := range t.Columns {
		if c.Key == k {
			return i
		}
	}
	panic("texttab: no column " + k + " in " + t.Title)
}

// Views returns the tables as text, Markdown and HTML show them: each
// group as a table of its own (label columns first), or t whole.
func (t *Table) Views() []Table {
	if len(t.Groups) == 0 {
		return []Table{*t}
	}
	var out []Table
	for _, g := range t.Groups {
		v := Table{Title: g.Title, Labels: t.Labels, Section: t.Section, Columns: append([]Column(nil), t.Columns[:t.Labels]...)}
		idx := make([]int, len(g.Keys))
		for i, k := range g.Keys {
			idx[i] = t.Col(k)
			v.Columns = append(v.Columns, Column{Key: k, Head: g.Heads[i]})
		}
		for _, r := range t.Rows {
			row := append([]Cell(nil), r[:t.Labels]...)
			for _, i := range idx {
				row = append(row, r[i])
			}
			v.Rows = append(v.Rows, row)
		}
		out = append(out, v)
	}
	out[len(out)-1].Notes = t.Notes
	return out
}

// HasColumn reports whether t has a column with key k.
func (t *Table) HasColumn(k string) bool {
	return slices.ContainsFunc(t.Columns, func(c Column) bool { return c.Key == k })
}
