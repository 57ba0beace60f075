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

// namedReaders are the two ways to read a result by column name.
var namedReaders = []struct {
	name string
	f    func(*store.Store, context.Context, store.SQL, []any, []store.Col, func(*store.Chunk) error) error
}{{"materialised", (*store.Store).EachChunk}, {"streamed", (*store.Store).StreamChunks}}

// A reader's column i is the column it names, wherever the query puts it
// and whatever else the query yields; a chunk of 2048 rows and more keeps
// that through every chunk.
func TestNamedColumnsAreReadWhereverTheQueryPutsThem(t *testing.T) {
	cols := []store.Col{store.IntCol("a"), store.IntCol("b"), store.TextCol("t"), store.FloatListCol("l")}
	orders := []string{
		`SELECT i AS a, i * 10 AS b, 'x' || i AS t, [i / 2.0] AS l FROM range(3000) r(i)`,
		`SELECT [i / 2.0] AS l, i * 10 AS b, 'x' || i AS t, i AS a FROM range(3000) r(i)`,
		`SELECT 'unread' AS u, i * 10 AS b, i AS a, [i / 2.0] AS l, 0 AS v, 'x' || i AS t FROM range(3000) r(i)`,
	}
	for _, read := range namedReaders {
		t.Run(read.name, func(t *testing.T) {
			st := testkit.OpenFile(t, filepath.Join(t.TempDir(), "t.duckdb"))
			for _, query := range orders {
				rows := 0
				err := read.f(st, context.Background(), store.SQL{Name: "test_query", Text: query}, nil, cols, func(c *store.Chunk) error {
					for r := range c.Len() {
						row, i := c.Row(r), int64(rows)
						rows++
						if row.Int(0) != i || row.Int(1) != 10*i || row.Text(2) != fmt.Sprint("x", i) || row.Floats(3)[0] != float64(i)/2 {
							return fmt.Errorf("row %d: %d %d %q %v", i, row.Int(0), row.Int(1), row.Text(2), row.Floats(3))
						}
					}
					return nil
				})
				if err != nil || rows != 3000 {
					t.Errorf("%s: %d rows, %v", query, rows, err)
				}
			}
		})
	}
}

// A column the reader names that the query lacks, has twice or has of
// another type, and a column the reader names twice, are errors that name
// the query and the column; so is a value out of range.
func TestNamedColumnsRefuseWhatTheQueryDoesNotHave(t *testing.T) {
	cases := []struct {
		query string
		cols  []store.Col
		want  string
	}{
		{`SELECT 1 AS a, 2 AS c`, []store.Col{store.IntCol("a"), store.IntCol("b")}, "test_query: the query has no column b"},
		{`SELECT 1 AS a, 2 AS a`, []store.Col{store.IntCol("a")}, "test_query: the query has two columns a"},
		{`SELECT 1 AS a`, []store.Col{store.IntCol("a"), store.IntCol("a")}, "test_query: column a is read twice"},
		{`SELECT 1 AS a, 'x' AS b`, []store.Col{store.IntCol("a"), store.IntCol("b")}, "test_query: column b is VARCHAR, read as integer"},
		{`SELECT 1 AS a`, []store.Col{store.IntListCol("a")}, "test_query: column a is INTEGER, read as a list of integers"},
		{`SELECT 18446744073709551615::UBIGINT AS u`, []store.Col{store.IntCol("u")}, "test_query: column u: value 18446744073709551615 is out of range"},
	}
	for _, read := range namedReaders {
		t.Run(read.name, func(t *testing.T) {
			ctx := context.Background()
			st := testkit.OpenFile(t, filepath.Join(t.TempDir(), "t.duckdb"))
			for _, c := range cases {
				err := read.f(st, ctx, store.SQL{Name: "test_query", Text: c.query}, nil, c.cols, func(*store.Chunk) error { return nil })
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: got %v, want an error with %q", c.query, err, c.want)
				}
			}
		})
	}
}
