package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// readers are the two ways to read a result, materialised and streamed.
var readers = []struct {
	name string
	f    func(context.Context, *store.Store, string, []any, []store.Kind, func(*store.Chunk) error) error
}{{"materialised", store.EachChunkInOrder}, {"streamed", store.StreamChunksInOrder}}

// EachChunk and StreamChunks give what database/sql would: every row in
// order across chunks, NULLs, short and long texts, integers of every
// width (sums are HUGEINT), lists with NULL elements, and bound
// parameters of each kind.

func TestEachChunkReadsWhatTheQueryReturns(t *testing.T) {
	for _, read := range readers {
		t.Run(read.name, func(t *testing.T) {
			ctx := context.Background()
			st := testkit.OpenFile(t, filepath.Join(t.TempDir(), "t.duckdb"))
			const n = 5000 // three chunks
			query := `SELECT i,
				CASE WHEN i % 3 = 0 THEN NULL ELSE i * 1.5::DOUBLE END,
				CASE WHEN i % 4 = 0 THEN NULL WHEN i % 2 = 0 THEN 'short' || i ELSE repeat('long', 5) || i END,
				i % 2 = 0,
				(i * 7)::INTEGER, sum(i) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), i::UBIGINT,
				CASE WHEN i % 5 = 0 THEN NULL ELSE [i, NULL, i + 1] END,
				[i / 2.0],
				$2::VARCHAR, $3::DOUBLE, $4::BOOLEAN, $5::BIGINT
			FROM range($1) t(i) ORDER BY i`
			kinds := []store.Kind{store.KindInt, store.KindFloat, store.KindText, store.KindBool,
				store.KindInt, store.KindInt, store.KindInt, store.KindIntList, store.KindFloatList,
				store.KindText, store.KindFloat, store.KindBool, store.KindInt}
			var rows, chunks int
			err := read.f(ctx, st, query, []any{int64(n), "param", 2.5, true, nil}, kinds, func(c *store.Chunk) error {
				chunks++
				for r := range c.Len() {
					i := int64(rows)
					rows++
					if v, ok := c.Int(0, r); !ok || v != i {
						return fmt.Errorf("row %d: i = %d, %v", i, v, ok)
					}
					if v, ok := c.Float(1, r); ok != (i%3 != 0) || (ok && v != float64(i)*1.5) || (!ok && v != 0) {
						return fmt.Errorf("row %d: float %v, %v", i, v, ok)
					}
					want := ""
					if i%2 == 0 {
						want = fmt.Sprint("short", i)
					} else {
						want = fmt.Sprint(strings.Repeat("long", 5), i)
					}
					if v, ok := c.Text(2, r); ok != (i%4 != 0) || (ok && v != want) {
						return fmt.Errorf("row %d: text %q, %v; want %q", i, v, ok, want)
					}
					if v, ok := c.Bool(3, r); !ok || v != (i%2 == 0) {
						return fmt.Errorf("row %d: bool %v", i, v)
					}
					if v, _ := c.Int(4, r); v != i*7 {
						return fmt.Errorf("row %d: INTEGER %d", i, v)
					}
					if v, _ := c.Int(5, r); v != i+max(i-1, 0) {
						return fmt.Errorf("row %d: HUGEINT %d", i, v)
					}
					if v, _ := c.Int(6, r); v != i {
						return fmt.Errorf("row %d: UBIGINT %d", i, v)
					}
					from, to := c.List(7, r)
					if i%5 == 0 {
						if from != to {
							return fmt.Errorf("row %d: a NULL list has %d elements", i, to-from)
						}
					} else {
						a, okA := c.IntElem(7, from)
						_, okB := c.IntElem(7, from+1)
						b, okC := c.IntElem(7, from+2)
						if to-from != 3 || a != i || !okA || okB || b != i+1 || !okC {
							return fmt.Errorf("row %d: list [%d %v %d]", i, a, okB, b)
						}
					}
					if from, to := c.List(8, r); to-from != 1 {
						return fmt.Errorf("row %d: float list of %d", i, to-from)
					} else if v, _ := c.FloatElem(8, from); v != float64(i)/2 {
						return fmt.Errorf("row %d: float list [%v]", i, v)
					}
					row := c.Row(r)
					wantF, wantText := float64(i)*1.5, want
					if i%3 == 0 {
						wantF = -1
					}
					if i%4 == 0 {
						wantText = ""
					}
					if p := row.FloatPtr(1); (p == nil) != (i%3 == 0) || row.FloatOr(1, -1) != wantF {
						return fmt.Errorf("row %d: Row.FloatPtr %v, FloatOr %v", i, p, row.FloatOr(1, -1))
					}
					if p := row.IntPtr(12); p != nil || row.Int(12) != 0 || row.Text(2) != wantText {
						return fmt.Errorf("row %d: Row.IntPtr %v, Text %q", i, p, row.Text(2))
					}
					if !row.TextIs(2, wantText) && i%4 != 0 || row.TextIs(2, "x") || (i%4 == 0 && row.TextIs(2, "")) {
						return fmt.Errorf("row %d: Row.TextIs", i)
					}
					if got := row.Ints(7); (i%5 == 0 && got != nil) || (i%5 != 0 && !slices.Equal(got, []int64{i, i + 1})) {
						return fmt.Errorf("row %d: Row.Ints %v (NULL elements left out)", i, got)
					}
					if got := row.Floats(8); !slices.Equal(got, []float64{float64(i) / 2}) {
						return fmt.Errorf("row %d: Row.Floats %v", i, got)
					}
					s, _ := c.Text(9, r)
					f, _ := c.Float(10, r)
					b, _ := c.Bool(11, r)
					_, null := c.Int(12, r)
					if from, _ := c.List(7, r); i%5 != 0 {
						if v, ok := c.IntElem(7, from+1); ok || v != 0 {
							return fmt.Errorf("row %d: a NULL element reads as %d", i, v)
						}
					}
					if s != "param" || f != 2.5 || !b || null {
						return fmt.Errorf("row %d: parameters %q %v %v %v", i, s, f, b, null)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if rows != n || chunks < 3 {
				t.Fatalf("%d rows in %d chunks, want %d rows in at least 3", rows, chunks, n)
			}
			// Here DuckDB leaves whatever was there in some NULLs' slots.
			err = read.f(ctx, st, `SELECT i, CASE WHEN i % 2 = 0 THEN i * 1000003 END FROM range($1) t(i)`, []any{int64(n)},
				[]store.Kind{store.KindInt, store.KindInt}, func(c *store.Chunk) error {
					for r := range c.Len() {
						i, _ := c.Int(0, r)
						if v, ok := c.Int(1, r); ok != (i%2 == 0) || (ok && v != i*1000003) || (!ok && v != 0) {
							return fmt.Errorf("row %d: %d, %v", i, v, ok)
						}
					}
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A column read as the wrong kind, or a value out of range, names the
// column instead of reading garbage; an error from the callback stops the
// read and is returned.
func TestEachChunkRefusesWhatItCannotRead(t *testing.T) {
	for _, read := range readers {
		t.Run(read.name, func(t *testing.T) {
			ctx := context.Background()
			st := testkit.OpenFile(t, filepath.Join(t.TempDir(), "t.duckdb"))
			none := func(*store.Chunk) error { return nil }
			cases := []struct {
				query string
				kinds []store.Kind
				want  string
			}{
				{`SELECT 'a' AS name`, []store.Kind{store.KindInt}, "column name is VARCHAR, read as integer"},
				{`SELECT 1 AS a, 2 AS b`, []store.Kind{store.KindInt}, "2 columns, read as 1"},
				{`SELECT 1 AS a`, []store.Kind{store.KindIntList}, "column a is INTEGER, read as a list of integers"},
				{`SELECT ['x'] AS l`, []store.Kind{store.KindIntList}, "column l is a list, read as list of integers"},
				{`SELECT (1::HUGEINT << 80) AS big`, []store.Kind{store.KindInt}, "column big: value is out of the range"},
				{`SELECT 18446744073709551615::UBIGINT AS u`, []store.Kind{store.KindInt}, "column u: value 18446744073709551615 is out of range"},
				{`SELECT nosuch FROM range(1)`, []store.Kind{store.KindInt}, "nosuch"},
			}
			for _, c := range cases {
				err := read.f(ctx, st, c.query, nil, c.kinds, none)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: got %v, want an error with %q", c.query, err, c.want)
				}
			}
			if err := read.f(ctx, st, `SELECT 1`, []any{struct{}{}}, []store.Kind{store.KindInt}, none); err == nil ||
				!strings.Contains(err.Error(), "cannot bind a struct {}") {
				t.Errorf("binding a struct: %v", err)
			}
			stop := fmt.Errorf("stop")
			calls := 0
			err := read.f(ctx, st, `SELECT * FROM range(10000)`, nil, []store.Kind{store.KindInt}, func(*store.Chunk) error {
				calls++
				return stop
			})
			if err != stop || calls != 1 {
				t.Errorf("callback error: got %v after %d calls", err, calls)
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if err := read.f(cancelled, st, `SELECT * FROM range(10)`, nil, []store.Kind{store.KindInt}, none); err == nil {
				t.Error("a cancelled context read the query")
			}
			// A query failing after its first chunks (past what DuckDB
			// works out before the first fetch) fails the read. It runs before
			// the deadlines below: once, under load, an interrupt sent to one
			// of them reached this query instead (DuckDB kept it for the
			// connection's next statement that checks for one).
			err = read.f(ctx, st, `SELECT CASE WHEN i < 3000000 THEN i ELSE error('late failure') END FROM range(4000000) t(i)`, nil,
				[]store.Kind{store.KindInt}, func(*store.Chunk) error { calls++; return nil })
			if err == nil || !strings.Contains(err.Error(), "late failure") {
				t.Errorf("a query failing after its first chunks: %v", err)
			}
			// A long query is interrupted when its context ends.
			short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancelShort()
			err = read.f(short, st, `SELECT count(*) FROM range(1000000000000)`, nil, []store.Kind{store.KindInt}, none)
			if err != context.DeadlineExceeded {
				t.Errorf("a query past its deadline: %v", err)
			}
			// The connection is still usable after all of that.
			var one int
			if err := st.QueryRowText(ctx, `SELECT 1`).Scan(&one); err != nil || one != 1 {
				t.Fatalf("connection after the errors: %v", err)
			}
			// A long query is interrupted when its context ends, also while a
			// streamed result looks for its next row after its first ones.
			expired, cancelExpired := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancelExpired()
			err = read.f(expired, st, `SELECT i FROM range(1000000000000) t(i) WHERE i < 1000000 OR i = -1`, nil, []store.Kind{store.KindInt}, none)
			if err != context.DeadlineExceeded {
				t.Errorf("a read past its deadline: %v", err)
			}
			if err := st.QueryRowText(ctx, `SELECT 1`).Scan(&one); err != nil || one != 1 {
				t.Fatalf("connection after an interrupted read: %v", err)
			}
		})
	}
}
