package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

type loaded struct {
	id     int64
	name   string
	note   string
	score  *float64
	count  *int64
	ok     bool
	ints   []int
	floats []float64
	texts  []string
}

var loadedColumns = []store.Column[*loaded]{
	store.IntColumn("id", func(v *loaded) int64 { return v.id }),
	store.TextColumn("name", func(v *loaded) string { return v.name }),
	store.NullTextColumn("note", func(v *loaded) string { return v.note }),
	store.NullFloatColumn("score", func(v *loaded) *float64 { return v.score }),
	store.NullIntColumn("count", func(v *loaded) *int64 { return v.count }),
	store.BoolColumn("ok", func(v *loaded) bool { return v.ok }),
	store.IntListColumn("ints", func(v *loaded) []int { return v.ints }),
	store.FloatListColumn("floats", func(v *loaded) []float64 { return v.floats }),
	store.TextListColumn("texts", func(v *loaded) []string { return v.texts }),
}

func loadedRow(i int) *loaded {
	v := &loaded{id: int64(i), name: fmt.Sprint("n", i), ok: i%2 == 1}
	if i%3 == 0 {
		v.name = fmt.Sprint(strings.Repeat("a long name ", 3), i)
	}
	if i%4 != 0 {
		v.note = fmt.Sprint("note ", i, strings.Repeat("!", i%20))
	}
	if i%5 != 0 {
		f, n := float64(i)/4, int64(-i)
		v.score, v.count = &f, &n
	}
	for k := range i % 4 {
		v.ints = append(v.ints, i+k)
		v.floats = append(v.floats, float64(k)/2)
		v.texts = append(v.texts, fmt.Sprint(k, strings.Repeat("x", i%15)))
	}
	return v
}

// A loader writes every kind of column as given, NULLs and empty lists
// included, across several inserts and many vectors, into a table whose
// types are narrower (INTEGER) than the loader's (BIGINT); the table's
// other columns get their defaults.
func TestLoaderWritesEveryColumn(t *testing.T) {
	ctx := context.Background()
	st := testkit.OpenFile(t, filepath.Join(t.TempDir(), "t.duckdb"))
	if _, err := st.ExecText(ctx, `CREATE TABLE loaded (id BIGINT NOT NULL, name VARCHAR NOT NULL, note VARCHAR,
		score DOUBLE, count INTEGER, ok BOOLEAN, ints INTEGER[], floats DOUBLE[], texts VARCHAR[], extra VARCHAR DEFAULT 'd')`); err != nil {
		t.Fatal(err)
	}
	l, err := store.NewLoader(st, "loaded", loadedColumns)
	if err != nil {
		t.Fatal(err)
	}
	const n = 123_457 // more than two inserts' worth
	for i := range n {
		if err := l.Add(ctx, loadedRow(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var got int
	rows := testkit.Dump(t, st, `SELECT id, name, coalesce(note, '<null>'), coalesce((score * 4)::BIGINT::VARCHAR, '<null>'),
		coalesce(count::VARCHAR, '<null>'), ok, ints, floats, texts, extra FROM loaded ORDER BY id`)
	for i, line := range strings.Split(strings.TrimSuffix(rows, "\n"), "\n") {
		v := loadedRow(i)
		note, score, count := "<null>", "<null>", "<null>"
		if v.note != "" {
			note = v.note
		}
		if v.score != nil {
			score, count = fmt.Sprint(*v.score*4), fmt.Sprint(*v.count) // score*4 is whole
		}
		want := fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%v\t%s\t%s\t%s\td", v.id, v.name, note, score, count, v.ok,
			list(v.ints), list(v.floats), list(v.texts))
		if line != want {
			t.Fatalf("row %d:\n got %q\nwant %q", i, line, want)
		}
		got++
	}
	if got != n {
		t.Fatalf("%d rows, want %d", got, n)
	}
}

func list[E any](v []E) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// An insert that fails (here a NOT NULL column given NULL) says why, and
// the loader goes on with the next rows.
func TestLoaderReportsAFailedInsert(t *testing.T) {
	ctx := context.Background()
	st := testkit.OpenFile(t, filepath.Join(t.TempDir(), "t.duckdb"))
	if _, err := st.ExecText(ctx, `CREATE TABLE strict (note VARCHAR NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	l, err := store.NewLoader(st, "strict", []store.Column[string]{store.NullTextColumn("note", func(s string) string { return s })})
	if err != nil {
		t.Fatal(err)
	}
	l.Add(ctx, "a")
	l.Add(ctx, "")
	if err := l.Flush(ctx); err == nil || !strings.Contains(err.Error(), "NOT NULL") {
		t.Fatalf("got %v, want a NOT NULL error", err)
	}
	l.Add(ctx, "b")
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testkit.Dump(t, st, `SELECT string_agg(note, ',') FROM strict`); got != "b\n" {
		t.Fatalf("table holds %q, want only the later row", got)
	}
}
