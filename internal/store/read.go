package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"unsafe"

	bindings "github.com/duckdb/duckdb-go-bindings"
	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/duckdb/duckdb-go/v2/mapping"
)

// Large results are read here straight from DuckDB's vectors, a chunk of
// up to 2048 rows at a time. Through database/sql every value is boxed in
// an interface by the driver, then converted again by Scan: for the
// rebuild's 40 columns a span that cost more than DuckDB's query. Like the
// driver's, Store.EachChunk's result is materialised, so reading it needs
// no lock on the connection; Store.StreamChunks's is not, for the largest
// results. Readers name the columns they read (resultcols.go).

// Kind is how a result column is read.
type Kind uint8

const (
	KindInt       Kind = iota + 1 // BIGINT, INTEGER, SMALLINT, TINYINT, UBIGINT, HUGEINT within int64
	KindFloat                     // DOUBLE, FLOAT
	KindText                      // VARCHAR
	KindBool                      // BOOLEAN
	KindIntList                   // a list of KindInt values
	KindFloatList                 // a list of KindFloat values
)

func (k Kind) String() string {
	return [...]string{"?", "integer", "float", "text", "boolean", "list of integers", "list of floats"}[min(int(k), 6)]
}

// Chunk is up to 2048 rows of a result; its methods take a column and a
// row (or, for list elements, an element index from List).
type Chunk struct {
	n    int
	cols []chunkCol
}

type chunkCol struct {
	valid  []uint64 // nil when every row is valid
	ints   []int64
	floats []float64
	bools  []bool
	texts  []duckString
	lists  []listEntry
	child  *chunkCol // a list's elements
}

// Len is the number of rows.
func (c *Chunk) Len() int { return c.n }

func (col *chunkCol) ok(i int) bool {
	return col.valid == nil || col.valid[i>>6]>>(i&63)&1 != 0
}

// Int is a KindInt column's value and whether it is not NULL; NULL reads
// as 0.
func (c *Chunk) Int(col, row int) (int64, bool) {
	k := &c.cols[col]
	if !k.ok(row) {
		return 0, false
	}
	return k.ints[row], true
}

// Float is a KindFloat column's value and whether it is not NULL; NULL
// reads as 0.
func (c *Chunk) Float(col, row int) (float64, bool) {
	k := &c.cols[col]
	if !k.ok(row) {
		return 0, false
	}
	return k.floats[row], true
}

// Bool is a KindBool column's value and whether it is not NULL; NULL
// reads as false.
func (c *Chunk) Bool(col, row int) (bool, bool) {
	k := &c.cols[col]
	if !k.ok(row) {
		return false, false
	}
	return k.bools[row], true
}

// Text is a KindText column's value, copied, and whether it is not NULL;
// NULL reads as "".
func (c *Chunk) Text(col, row int) (string, bool) {
	k := &c.cols[col]
	if !k.ok(row) {
		return "", false
	}
	return textOf(&k.texts[row]), true
}

// List is where a list column's elements for row are: indexes [from, to)
// of IntElem or FloatElem; from == to for an empty or NULL list.
func (c *Chunk) List(col, row int) (from, to int) {
	k := &c.cols[col]
	if !k.ok(row) {
		return 0, 0
	}
	e := k.lists[row]
	return int(e.offset), int(e.offset + e.length)
}

// IntElem is element i of a KindIntList column and whether it is not
// NULL; NULL reads as 0.
func (c *Chunk) IntElem(col, i int) (int64, bool) {
	k := c.cols[col].child
	if !k.ok(i) {
		return 0, false
	}
	return k.ints[i], true
}

// FloatElem is element i of a KindFloatList column and whether it is not
// NULL; NULL reads as 0.
func (c *Chunk) FloatElem(col, i int) (float64, bool) {
	k := c.cols[col].child
	if !k.ok(i) {
		return 0, false
	}
	return k.floats[i], true
}

// Row is one row of a chunk, for readers that take NULL as the zero value
// (or, through the Ptr and Or methods, as something else).
type Row struct {
	c *Chunk
	i int
}

// Row is row i of the chunk.
func (c *Chunk) Row(i int) Row { return Row{c, i} }

// Int is a KindInt column's value, 0 for NULL.
func (r Row) Int(col int) int64 { v, _ := r.c.Int(col, r.i); return v }

// Float is a KindFloat column's value, 0 for NULL.
func (r Row) Float(col int) float64 { v, _ := r.c.Float(col, r.i); return v }

// Bool is a KindBool column's value, false for NULL.
func (r Row) Bool(col int) bool { v, _ := r.c.Bool(col, r.i); return v }

// Text is a KindText column's value, "" for NULL.
func (r Row) Text(col int) string { v, _ := r.c.Text(col, r.i); return v }

// TextIs says whether a KindText column holds s (not NULL), without
// copying the text.
func (r Row) TextIs(col int, s string) bool {
	k := &r.c.cols[col]
	if !k.ok(r.i) {
		return false
	}
	return string(textBytes(&k.texts[r.i])) == s
}

// TextBytes is a KindText column's value without copying it, nil for
// NULL: valid only until the callback it was read in returns.
func (r Row) TextBytes(col int) []byte {
	k := &r.c.cols[col]
	if !k.ok(r.i) {
		return nil
	}
	return textBytes(&k.texts[r.i])
}

// IntPtr is a KindInt column's value, nil for NULL.
func (r Row) IntPtr(col int) *int64 {
	if v, ok := r.c.Int(col, r.i); ok {
		return &v
	}
	return nil
}

// FloatPtr is a KindFloat column's value, nil for NULL.
func (r Row) FloatPtr(col int) *float64 {
	if v, ok := r.c.Float(col, r.i); ok {
		return &v
	}
	return nil
}

// FloatOr is a KindFloat column's value, null for NULL.
func (r Row) FloatOr(col int, null float64) float64 {
	if v, ok := r.c.Float(col, r.i); ok {
		return v
	}
	return null
}

// Ints are a KindIntList column's elements but NULL ones; nil when none.
func (r Row) Ints(col int) []int64 { return listOf(r, col, (*Chunk).IntElem) }

// Floats are a KindFloatList column's elements but NULL ones; nil when
// none.
func (r Row) Floats(col int) []float64 { return listOf(r, col, (*Chunk).FloatElem) }

// listOf gathers the valid elements of row r's list in column col.
func listOf[V any](r Row, col int, elem func(c *Chunk, col, i int) (V, bool)) []V {
	var out []V
	from, to := r.c.List(col, r.i)
	for e := from; e < to; e++ {
		if v, ok := elem(r.c, col, e); ok {
			out = append(out, v)
		}
	}
	return out
}

// textBytes are the bytes of a DuckDB string, where they are: valid only
// while its chunk is.
func textBytes(s *duckString) []byte {
	n := binary.LittleEndian.Uint32(s[0:4])
	if n <= 12 {
		return s[4 : 4+n]
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&s[8])) // the string's pointer, little-endian like the length
	return unsafe.Slice((*byte)(p), n)
}

func textOf(s *duckString) string { return string(textBytes(s)) }

// EachChunk runs q with args and calls each with every chunk of its
// result, in order. The chunk's column i is cols[i], read by its name
// wherever q puts it; a column q lacks, has twice or of a type other than
// its kind is an error naming q and the column. The chunk is valid only
// during the call. Args may be int64, int, float64, string, bool or nil.
// The result is materialised before the first call, so the store may run
// other statements while it is read.
func (s *Store) EachChunk(ctx context.Context, q SQL, args []any, cols []Col, each func(*Chunk) error) error {
	return s.chunks(ctx, q, args, cols, each, false)
}

// StreamChunks is EachChunk with the result streamed: DuckDB works out
// each chunk as it is fetched, holding what its operators need (a sort's
// rows, spilled when they pass the memory limit) but never the whole
// result beside them. Until it returns, the store must run nothing else.
func (s *Store) StreamChunks(ctx context.Context, q SQL, args []any, cols []Col, each func(*Chunk) error) error {
	return s.chunks(ctx, q, args, cols, each, true)
}

func (s *Store) chunks(ctx context.Context, q SQL, args []any, cols []Col, each func(*Chunk) error, streamed bool) error {
	kinds := make([]Kind, len(cols))
	for i, c := range cols {
		kinds[i] = c.Kind
	}
	columns := func(res *mapping.Result) ([]mapping.IdxT, error) { return resolve(res, cols) }
	return eachChunk(ctx, s.conn, q.Name, q.Text, args, kinds, columns, each, streamed)
}

// eachChunk reads query's result as kinds, the chunk's column i from the
// result's column columns(res)[i]. A column it cannot read is an error
// that names the query (name, when given) and the column.
func eachChunk(ctx context.Context, conn *sql.Conn, name, query string, args []any, kinds []Kind,
	columns func(*mapping.Result) ([]mapping.IdxT, error), each func(*Chunk) error, streamed bool) error {
	res, stop, err := execute(ctx, conn, query, args, streamed)
	if err != nil {
		return err
	}
	defer mapping.DestroyResult(res)
	defer stop()
	order, err := columns(res)
	if err != nil {
		return named(name, err)
	}
	c := &Chunk{cols: make([]chunkCol, len(kinds))}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		dc := mapping.FetchChunk(*res)
		if dc.Ptr == nil {
			// A streamed result can fail while it is read.
			if msg := mapping.ResultError(res); msg != "" {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return resultError(res, msg)
			}
			return nil
		}
		c.n = int(mapping.DataChunkGetSize(dc))
		if c.n == 0 {
			mapping.DestroyDataChunk(&dc)
			return nil
		}
		err := named(name, c.load(dc, res, kinds, order))
		if err == nil {
			err = each(c)
		}
		mapping.DestroyDataChunk(&dc)
		if err != nil {
			return err
		}
	}
}

// resultError is res's failure as the driver gives its own, a
// *duckdb.Error of DuckDB's type, so callers tell failures apart by type.
func resultError(res *mapping.Result, msg string) error {
	return &duckdb.Error{Type: duckdb.ErrorType(mapping.ResultErrorType(res)), Msg: msg}
}

// named prefixes err with the query's name, when it has one.
func named(name string, err error) error {
	if err == nil || name == "" {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// checkKind says whether column i of res can be read as k.
func checkKind(res *mapping.Result, i mapping.IdxT, k Kind) error {
	t := mapping.ColumnType(res, i)
	elem := t
	if k == KindIntList || k == KindFloatList {
		if t != mapping.TypeList {
			return fmt.Errorf("column %s is %s, read as a %s", mapping.ColumnName(res, i), typeName(t), k)
		}
		lt := mapping.ColumnLogicalType(res, i)
		ct := mapping.ListTypeChildType(lt)
		elem = mapping.GetTypeId(ct)
		mapping.DestroyLogicalType(&ct)
		mapping.DestroyLogicalType(&lt)
	}
	ok := false
	switch k {
	case KindInt, KindIntList:
		_, ok = intTypes[elem]
	case KindFloat, KindFloatList:
		ok = elem == mapping.TypeDouble || elem == mapping.TypeFloat
	case KindText:
		ok = t == mapping.TypeVarchar
	case KindBool:
		ok = t == mapping.TypeBoolean
	}
	if !ok {
		return fmt.Errorf("column %s is %s, read as %s", mapping.ColumnName(res, i), typeName(t), k)
	}
	return nil
}

func typeName(t mapping.Type) string {
	if name, ok := typeNames[t]; ok {
		return name
	}
	return fmt.Sprintf("DuckDB type %d", t)
}

var typeNames = map[mapping.Type]string{mapping.TypeBoolean: "BOOLEAN", mapping.TypeTinyInt: "TINYINT",
	mapping.TypeSmallInt: "SMALLINT", mapping.TypeInteger: "INTEGER", mapping.TypeBigInt: "BIGINT",
	mapping.TypeUBigInt: "UBIGINT", mapping.TypeHugeInt: "HUGEINT", mapping.TypeFloat: "FLOAT",
	mapping.TypeDouble: "DOUBLE", mapping.TypeVarchar: "VARCHAR", mapping.TypeList: "a list",
	mapping.TypeStruct: "a struct", mapping.TypeMap: "a map", mapping.TypeDecimal: "DECIMAL"}

// intTypes are the integer types an Int column may have.
var intTypes = map[mapping.Type]struct{}{mapping.TypeTinyInt: {}, mapping.TypeSmallInt: {},
	mapping.TypeInteger: {}, mapping.TypeBigInt: {}, mapping.TypeUBigInt: {}, mapping.TypeHugeInt: {}}

// load points c's columns at the vectors of dc: column i at vector
// order[i], read as kinds[i].
func (c *Chunk) load(dc mapping.DataChunk, res *mapping.Result, kinds []Kind, order []mapping.IdxT) error {
	for i, k := range kinds {
		vec := mapping.DataChunkGetVector(dc, order[i])
		col := &c.cols[i]
		col.valid = validity(vec, c.n)
		switch k {
		case KindInt, KindFloat:
			if err := col.loadNumbers(vec, c.n, k); err != nil {
				return fmt.Errorf("column %s: %w", mapping.ColumnName(res, order[i]), err)
			}
		case KindText:
			col.texts = vectorData[duckString](vec, c.n)
		case KindBool:
			col.bools = vectorData[bool](vec, c.n)
		case KindIntList, KindFloatList:
			col.lists = vectorData[listEntry](vec, c.n)
			if col.child == nil {
				col.child = &chunkCol{}
			}
			child := mapping.ListVectorGetChild(vec)
			n := int(mapping.ListVectorGetSize(vec))
			col.child.valid = validity(child, n)
			elem := KindInt
			if k == KindFloatList {
				elem = KindFloat
			}
			if err := col.child.loadNumbers(child, n, elem); err != nil {
				return fmt.Errorf("column %s: %w", mapping.ColumnName(res, order[i]), err)
			}
		}
	}
	return nil
}

func validity(vec mapping.Vector, n int) []uint64 {
	p := mapping.VectorGetValidity(vec)
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(p), (n+63)/64)
}

// loadNumbers reads n numbers of vec: BIGINT and DOUBLE in place, the
// other types converted into the column's own slice.
func (col *chunkCol) loadNumbers(vec mapping.Vector, n int, k Kind) error {
	lt := mapping.VectorGetColumnType(vec)
	t := mapping.GetTypeId(lt)
	mapping.DestroyLogicalType(&lt)
	if n == 0 {
		col.ints, col.floats = nil, nil
		return nil
	}
	switch t {
	case mapping.TypeBigInt:
		col.ints = vectorData[int64](vec, n)
	case mapping.TypeDouble:
		col.floats = vectorData[float64](vec, n)
	case mapping.TypeFloat:
		col.floats = convert(col.floats, vectorData[float32](vec, n), func(v float32) float64 { return float64(v) })
	case mapping.TypeInteger:
		col.ints = convert(col.ints, vectorData[int32](vec, n), func(v int32) int64 { return int64(v) })
	case mapping.TypeSmallInt:
		col.ints = convert(col.ints, vectorData[int16](vec, n), func(v int16) int64 { return int64(v) })
	case mapping.TypeTinyInt:
		col.ints = convert(col.ints, vectorData[int8](vec, n), func(v int8) int64 { return int64(v) })
	case mapping.TypeUBigInt:
		src := vectorData[uint64](vec, n)
		col.ints = convert(col.ints, src, func(v uint64) int64 { return int64(v) })
		for i, v := range src {
			if v > math.MaxInt64 && col.ok(i) {
				return fmt.Errorf("value %d is out of range", v)
			}
		}
	case mapping.TypeHugeInt:
		src := vectorData[[2]uint64](vec, n) // lower, upper
		col.ints = convert(col.ints, src, func(v [2]uint64) int64 { return int64(v[0]) })
		for i, v := range src {
			if fits := (v[1] == 0 && v[0] <= math.MaxInt64) || (v[1] == math.MaxUint64 && v[0] > math.MaxInt64); !fits && col.ok(i) {
				return errors.New("value is out of the range of a 64-bit integer")
			}
		}
	default:
		return fmt.Errorf("%s is not read as %s", typeName(t), k)
	}
	return nil
}

// convert converts src into dst's storage, grown as needed.
func convert[S, D any](dst []D, src []S, f func(S) D) []D {
	if cap(dst) < len(src) {
		dst = make([]D, len(src), max(len(src), duckdb.GetDataChunkCapacity()))
	}
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = f(v)
	}
	return dst
}

// execute prepares query on conn's DuckDB connection, binds args and runs
// it, materialising its result unless streamed. A cancelled ctx
// interrupts it, streamed chunks included, until stop is called, which
// waits for an interrupt already sent: sent later, it would stop the
// connection's next statement instead.
func execute(ctx context.Context, conn *sql.Conn, query string, args []any, streamed bool) (res *mapping.Result, stop func(), err error) {
	if err := checkLayout(connLayoutErr, "read from"); err != nil {
		return nil, nil, err
	}
	err = conn.Raw(func(dc any) error {
		d, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("connection is a %T, not DuckDB's", dc)
		}
		c := *(*mapping.Connection)(unsafe.Add(unsafe.Pointer(d), rawConnOffset))
		var stmt mapping.PreparedStatement
		defer mapping.DestroyPrepare(&stmt)
		if mapping.Prepare(c, query, &stmt) == mapping.StateError {
			return errors.New(mapping.PrepareError(stmt))
		}
		for i, a := range args {
			if err := bind(stmt, mapping.IdxT(i+1), a); err != nil {
				return fmt.Errorf("parameter $%d: %w", i+1, err)
			}
		}
		var pending mapping.PendingResult
		defer mapping.DestroyPending(&pending)
		prepare := mapping.PendingPrepared
		if streamed {
			// mapping leaves this one out; the bindings are its own.
			prepare = bindings.PendingPreparedStreaming
		}
		if prepare(stmt, &pending) == mapping.StateError {
			return errors.New(mapping.PendingError(pending))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		interrupted := make(chan struct{})
		after := context.AfterFunc(ctx, func() {
			mapping.Interrupt(c)
			close(interrupted)
		})
		stop = sync.OnceFunc(func() {
			if !after() {
				<-interrupted
			}
		})
		var r mapping.Result
		if mapping.ExecutePending(pending, &r) == mapping.StateError {
			stop()
			err := resultError(&r, mapping.ResultError(&r))
			mapping.DestroyResult(&r)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		res = &r
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return res, stop, nil
}

func bind(stmt mapping.PreparedStatement, i mapping.IdxT, a any) error {
	var state mapping.State
	switch v := a.(type) {
	case nil:
		state = mapping.BindNull(stmt, i)
	case int64:
		state = mapping.BindInt64(stmt, i, v)
	case int:
		state = mapping.BindInt64(stmt, i, int64(v))
	case float64:
		state = mapping.BindDouble(stmt, i, v)
	case string:
		state = mapping.BindVarchar(stmt, i, v)
	case bool:
		state = mapping.BindBoolean(stmt, i, v)
	default:
		return fmt.Errorf("cannot bind a %T", a)
	}
	if state == mapping.StateError {
		return fmt.Errorf("cannot bind %v", a)
	}
	return nil
}

// duckdb.Conn keeps its C connection in an unexported field; execute
// needs it to read results whole chunks at a time. The layout is checked
// once against the driver's types, as for vectors (load.go).
var rawConnOffset, connLayoutErr = func() (uintptr, error) {
	f, ok := reflect.TypeOf(duckdb.Conn{}).FieldByName("conn")
	if !ok || f.Type != reflect.TypeOf(mapping.Connection{}) {
		return 0, errors.New("duckdb-go's Conn has no field conn of type mapping.Connection")
	}
	return f.Offset, nil
}()
