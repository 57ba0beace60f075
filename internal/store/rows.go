package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/duckdb/duckdb-go/v2/mapping"
)

// A Loader writes Go values into a table, a column per field, through a
// table function of its own that DuckDB reads by INSERT ... SELECT, a
// vector at a time, as the staged spans are (load.go). duckdb-go's
// Appender boxes every value in an interface, converts it again, and makes
// a cgo call for every text longer than 12 bytes; at a million spans the
// rebuild's appenders cost more than grouping the spans.

// Column is how a Loader takes one column's value from a T.
type Column[T any] struct {
	name string
	typ  duckdb.Type // of the value, or of a list's elements
	list bool
	// One of these gives the value; valid false is NULL.
	text   func(T) (string, bool)
	num    func(T) (int64, bool)
	float  func(T) (float64, bool)
	flag   func(T) bool
	nums   func(T) []int
	floats func(T) []float64
	texts  func(T) []string
}

// Name is the column's name.
func (c Column[T]) Name() string { return c.name }

// TextColumn writes f's text, "" included.
func TextColumn[T any](name string, f func(T) string) Column[T] {
	return Column[T]{name: name, typ: duckdb.TYPE_VARCHAR, text: always(f)}
}

// NullTextColumn writes f's text, "" as NULL.
func NullTextColumn[T any](name string, f func(T) string) Column[T] {
	return Column[T]{name: name, typ: duckdb.TYPE_VARCHAR, text: func(v T) (string, bool) { s := f(v); return s, s != "" }}
}

// IntColumn writes f's number.
func IntColumn[T any](name string, f func(T) int64) Column[T] {
	return Column[T]{name: name, typ: duckdb.TYPE_BIGINT, num: always(f)}
}

// NullIntColumn writes f's number, nil as NULL.
func NullIntColumn[T any](name string, f func(T) *int64) Column[T] {
	return Column[T]{name: name, typ: duckdb.TYPE_BIGINT, num: orNull(f)}
}

// FloatColumn writes f's number.
func FloatColumn[T any](name string, f func(T) float64) Column[T] {
	return Column[T]{name: name, typ: duckdb.TYPE_DOUBLE, float: always(f)}
}

// NullFloatColumn writes f's number, nil as NULL.
func NullFloatColumn[T any](name string, f func(T) *float64) Column[T] {
	return Column[T]{name: name, typ: duckdb.TYPE_DOUBLE, float: orNull(f)}
}

// BoolColumn writes f's flag.
func BoolColumn[T any](name string, f func(T) bool) Column[T] {
	return Column[T]{name: name, typ: duckdb.TYPE_BOOLEAN, flag: f}
}

// IntListColumn writes f's numbers as a list, nil as an empty one.
func IntListColumn[T any](name string, f func(T) []int) Column[T] {
	return Column[T]{name: name, typ: duckdb.TYPE_BIGINT, list: true, nums: f}
}

// FloatListColumn writes f's numbers as a list, nil as an empty one.
func FloatListColumn[T any](name string, f func(T) []float64) Column[T] {
	return Column[T]{name: name, typ: duckdb.TYPE_DOUBLE, list: true, floats: f}
}

// TextListColumn writes f's texts as a list, nil as an empty one.
func TextListColumn[T any](name string, f func(T) []string) Column[T] {
	return Column[T]{name: name, typ: duckdb.TYPE_VARCHAR, list: true, texts: f}
}

// always is f's value, never NULL.
func always[T, V any](f func(T) V) func(T) (V, bool) {
	return func(v T) (V, bool) { return f(v), true }
}

// orNull is what f points to, NULL for nil.
func orNull[T, V any](f func(T) *V) func(T) (V, bool) {
	return func(v T) (V, bool) {
		if p := f(v); p != nil {
			return *p, true
		}
		var zero V
		return zero, false
	}
}

// loaderRows is how many rows a Loader gathers before it inserts them.
const loaderRows = 50_000

// Loader inserts values of T into a table: Add gathers them, and every
// loaderRows of them, and Close, insert those gathered. Values must not
// change until they are inserted.
type Loader[T any] struct {
	s      *Store
	cols   []Column[T]
	insert string
	rows   []T
	// scan is the rows being inserted and how far DuckDB has read them.
	scan struct {
		rows []T
		next int
	}
	arena  [][]byte // texts longer than 12 bytes, pinned until the insert ends
	pinner runtime.Pinner
}

// loaders numbers the loaders' table functions.
var loaders atomic.Int64

// NewLoader makes a loader of table's columns cols; the table's other
// columns get their defaults.
func NewLoader[T any](s *Store, table string, cols []Column[T]) (*Loader[T], error) {
	if err := checkLayout(vectorLayoutErr, "loaded into"); err != nil {
		return nil, err
	}
	l := &Loader[T]{s: s, cols: cols}
	infos := make([]duckdb.ColumnInfo, len(cols))
	names := make([]string, len(cols))
	for i, c := range cols {
		t, err := duckdb.NewTypeInfo(c.typ)
		if err == nil && c.list {
			t, err = duckdb.NewListInfo(t)
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		infos[i] = duckdb.ColumnInfo{Name: c.name, T: t}
		names[i] = c.name
	}
	name := fmt.Sprintf("retryscope_rows_%d", loaders.Add(1))
	err := duckdb.RegisterTableUDF(s.conn, name, duckdb.ChunkTableFunction{
		BindArguments: func(map[string]any, ...any) (duckdb.ChunkTableSource, error) {
			return &loaderSource[T]{l: l, infos: infos}, nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("register a loader for %s: %w", table, err)
	}
	// inline SQL: the table and columns are the caller's (a fixed set in
	// Go), the function the one registered just now; none can be a
	// parameter.
	l.insert = fmt.Sprintf("INSERT INTO %s (%s) SELECT * FROM %s()", table, strings.Join(names, ", "), name)
	return l, nil
}

// Add gathers v, and inserts what is gathered once there are enough.
func (l *Loader[T]) Add(ctx context.Context, v T) error {
	l.rows = append(l.rows, v)
	if len(l.rows) < loaderRows {
		return nil
	}
	return l.Flush(ctx)
}

// Flush inserts the values gathered.
func (l *Loader[T]) Flush(ctx context.Context) error {
	if len(l.rows) == 0 {
		return nil
	}
	l.scan.rows, l.scan.next = l.rows, 0
	_, err := l.s.conn.ExecContext(ctx, l.insert)
	l.pinner.Unpin()
	clear(l.arena)
	l.arena = l.arena[:0]
	clear(l.rows)
	l.rows, l.scan.rows = l.rows[:0], nil
	return err
}

// loaderSource is one scan of a loader's rows.
type loaderSource[T any] struct {
	l     *Loader[T]
	infos []duckdb.ColumnInfo
}

func (src *loaderSource[T]) ColumnInfos() []duckdb.ColumnInfo { return src.infos }

func (src *loaderSource[T]) Cardinality() *duckdb.CardinalityInfo {
	return &duckdb.CardinalityInfo{Cardinality: uint(len(src.l.scan.rows)), Exact: true}
}

func (src *loaderSource[T]) Init() {}

func (src *loaderSource[T]) FillChunk(chunk duckdb.DataChunk) error {
	l := src.l
	rows := l.scan.rows[l.scan.next:]
	rows = rows[:min(len(rows), duckdb.GetDataChunkCapacity())]
	l.scan.next += len(rows)
	if len(rows) == 0 {
		return chunk.SetSize(0)
	}
	for i, c := range l.cols {
		v, err := chunk.GetVector(i)
		if err != nil {
			return err
		}
		l.fill(rawVector(v), c, rows)
	}
	return chunk.SetSize(len(rows))
}

// fill writes column c of rows into vec.
func (l *Loader[T]) fill(vec mapping.Vector, c Column[T], rows []T) {
	n := len(rows)
	var nulls []uint64 // the validity mask, once a NULL needs it
	null := func(i int) {
		if nulls == nil {
			mapping.VectorEnsureValidityWritable(vec)
			nulls = unsafe.Slice((*uint64)(mapping.VectorGetValidity(vec)), (n+63)/64)
		}
		nulls[i>>6] &^= 1 << (i & 63)
	}
	switch {
	case c.list:
		l.fillList(vec, c, rows)
	case c.text != nil:
		out := vectorData[duckString](vec, n)
		for i, v := range rows {
			if s, ok := c.text(v); ok {
				l.putString(&out[i], s)
			} else {
				null(i)
			}
		}
	case c.num != nil:
		fillValues(vectorData[int64](vec, n), rows, c.num, null)
	case c.float != nil:
		fillValues(vectorData[float64](vec, n), rows, c.float, null)
	case c.flag != nil:
		out := vectorData[bool](vec, n)
		for i, v := range rows {
			out[i] = c.flag(v)
		}
	}
}

// fillValues writes get's value of each row into out, or marks it NULL.
func fillValues[T, V any](out []V, rows []T, get func(T) (V, bool), null func(int)) {
	for i, v := range rows {
		var ok bool
		if out[i], ok = get(v); !ok {
			null(i)
		}
	}
}

// fillList writes the lists of column c of rows into vec.
func (l *Loader[T]) fillList(vec mapping.Vector, c Column[T], rows []T) {
	length := func(v T) int {
		switch {
		case c.nums != nil:
			return len(c.nums(v))
		case c.floats != nil:
			return len(c.floats(v))
		}
		return len(c.texts(v))
	}
	total := 0
	for _, v := range rows {
		total += length(v)
	}
	entries := vectorData[listEntry](vec, len(rows))
	child, base := reserve(vec, total)
	k := 0
	for i, v := range rows {
		n := length(v)
		entries[i] = listEntry{uint64(base + k), uint64(n)}
		switch {
		case c.nums != nil:
			out := vectorData[int64](child, base+total)[base+k:]
			for j, x := range c.nums(v) {
				out[j] = int64(x)
			}
		case c.floats != nil:
			copy(vectorData[float64](child, base+total)[base+k:], c.floats(v))
		default:
			out := vectorData[duckString](child, base+total)[base+k:]
			for j, s := range c.texts(v) {
				l.putString(&out[j], s)
			}
		}
		k += n
	}
}

// putString writes s as a DuckDB string: inline up to 12 bytes, else a
// pointer to a copy in the loader's arena, which stays pinned until the
// insert is done.
func (l *Loader[T]) putString(dst *duckString, s string) {
	n := len(s)
	binary.LittleEndian.PutUint32(dst[0:4], uint32(n))
	if n <= 12 {
		clear(dst[4+copy(dst[4:], s):])
		return
	}
	if len(l.arena) == 0 || cap(l.arena[len(l.arena)-1])-len(l.arena[len(l.arena)-1]) < n {
		b := make([]byte, 0, max(n, 256<<10))
		l.pinner.Pin(unsafe.SliceData(b))
		l.arena = append(l.arena, b)
	}
	last := &l.arena[len(l.arena)-1]
	at := len(*last)
	*last = append(*last, s...)
	copy(dst[4:8], s)
	binary.LittleEndian.PutUint64(dst[8:], uint64(uintptr(unsafe.Pointer(&(*last)[at]))))
}
