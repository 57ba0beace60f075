package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/duckdb/duckdb-go/v2/mapping"
)

// The staged spans reach DuckDB through a table function, read by
// INSERT ... SELECT: DuckDB pulls them a vector (2048 rows) at a time, and
// each vector is written whole, in the layout DuckDB reads (a string is 16
// bytes: its length and either the string itself, up to 12 bytes, or its
// first 4 bytes and a pointer to it). The strings stay in the batches'
// buffers, pinned until the statement is done, and DuckDB copies them into
// its tables. duckdb-go's own setters make a cgo call per string and build
// Go maps per MAP entry; this costs a cgo call per vector.

// stagedFunctionName is the table function that yields the spans being
// loaded (see Store.load), with the columns of StageColumns. It is a
// temporary macro, so each store's connection has its own: the table
// function it calls is registered in the database, which the stores of one
// process opened on one file share, under a name of its store's own. The
// queries that read the staged spans (load_spans, store_stage_spans,
// merge_repeats) call it by this name.
const stagedFunctionName = "retryscope_staged"

// stagedFunctions numbers the stores' table functions.
var stagedFunctions atomic.Int64

// staged is one scan of the staged-spans function: the batches, in file
// order, and how far the scan is.
type staged struct {
	batches []*SpanBatch
	batch   int // the next row to yield is batches[batch].Spans[row]
	row     int
	rows    int
}

// segment is a run of one batch's spans that goes into one vector.
type segment struct {
	b        *SpanBatch
	from, to int
}

// next hands out the spans of the next vector: up to n rows, possibly from
// several batches.
func (s *staged) next(n int, into []segment) []segment {
	into = into[:0]
	for n > 0 && s.batch < len(s.batches) {
		b := s.batches[s.batch]
		take := min(n, len(b.Spans)-s.row)
		if take > 0 {
			into = append(into, segment{b, s.row, s.row + take})
		}
		n -= take
		s.row += take
		if s.row == len(b.Spans) {
			s.batch, s.row = s.batch+1, 0
		}
	}
	return into
}

// stagedSource is duckdb-go's view of one scan of the staged spans. The
// scan is sequential, so that the spans are yielded, and stored, in file
// order.
type stagedSource struct {
	s *staged
	f filler
}

func (src *stagedSource) ColumnInfos() []duckdb.ColumnInfo { return stagedColumnInfos }

func (src *stagedSource) Cardinality() *duckdb.CardinalityInfo {
	return &duckdb.CardinalityInfo{Cardinality: uint(src.s.rows), Exact: true}
}

func (src *stagedSource) Init() {}

func (src *stagedSource) FillChunk(chunk duckdb.DataChunk) error {
	f := &src.f
	f.segs = src.s.next(duckdb.GetDataChunkCapacity(), f.segs)
	n := f.rows()
	if n > 0 {
		if err := f.fill(chunk); err != nil {
			return err
		}
	}
	return chunk.SetSize(n)
}

// stagedColumnInfos are the function's columns: StageColumns, typed as in
// spans.
var stagedColumnInfos = func() []duckdb.ColumnInfo {
	varchar := must(duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR))
	bigint := must(duckdb.NewTypeInfo(duckdb.TYPE_BIGINT))
	attrs := must(duckdb.NewMapInfo(varchar, varchar))
	entry := func(name string, t duckdb.TypeInfo) duckdb.StructEntry {
		return must(duckdb.NewStructEntry(t, name))
	}
	event := must(duckdb.NewStructInfo(entry("name", varchar), entry("time_ns", bigint), entry("attributes", attrs)))
	link := must(duckdb.NewStructInfo(entry("trace_id", varchar), entry("span_id", varchar), entry("attributes", attrs)))
	types := map[string]duckdb.TypeInfo{"seq": bigint, "start_ns": bigint, "end_ns": bigint, "offset": bigint, "file_id": bigint,
		"attributes": attrs, "resource_id": bigint,
		"events": must(duckdb.NewListInfo(event)), "links": must(duckdb.NewListInfo(link))}
	infos := make([]duckdb.ColumnInfo, len(StageColumns))
	for i, c := range StageColumns {
		t, ok := types[c]
		if !ok {
			t = varchar
		}
		infos[i] = duckdb.ColumnInfo{Name: c, T: t}
	}
	return infos
}()

// must is for the column types, fixed at build time.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// registerStaged makes the staged-spans function known to the store's
// connection, yielding what s.staged holds.
func (s *Store) registerStaged(ctx context.Context) error {
	if err := checkLayout(vectorLayoutErr, "loaded into"); err != nil {
		return err
	}
	name := fmt.Sprintf("%s_%d", stagedFunctionName, stagedFunctions.Add(1))
	err := duckdb.RegisterTableUDF(s.conn, name, duckdb.ChunkTableFunction{
		BindArguments: func(map[string]any, ...any) (duckdb.ChunkTableSource, error) {
			scan := &staged{} // outside a load (the macro's creation), no rows
			if s.staged != nil {
				scan.batches, scan.rows = s.staged.batches, s.staged.rows
			}
			return &stagedSource{s: scan}, nil
		},
	})
	if err != nil {
		return err
	}
	resources := name + "_resources"
	err = duckdb.RegisterTableUDF(s.conn, resources, duckdb.ChunkTableFunction{
		BindArguments: func(map[string]any, ...any) (duckdb.ChunkTableSource, error) {
			src := &resourceSource{}
			if s.staged != nil {
				src.list = s.staged.resources()
			}
			return src, nil
		},
	})
	if err != nil {
		return err
	}
	// inline SQL: the macros call the table functions registered just now
	// under names of this store's own, and a macro's body takes no
	// parameters.
	for _, m := range [][2]string{{stagedFunctionName, name}, {stagedResourcesName, resources}} {
		_, err = s.conn.ExecContext(ctx, fmt.Sprintf(`CREATE OR REPLACE TEMP MACRO %s() AS TABLE SELECT * FROM %s()`, m[0], m[1]))
		if err != nil {
			return err
		}
	}
	return nil
}

// stagedResourcesName is the table function that yields the resources of
// the spans being loaded, each distinct one once, in the order they first
// come (resource_id BIGINT, attributes MAP(VARCHAR, VARCHAR)): a resource
// is stored once, not with each span (load_resources, merge_resources).
const stagedResourcesName = "retryscope_staged_resources"

// resources lists the distinct resources of the staged batches, by the
// first batch that holds each.
func (s *staged) resources() []resourceRow {
	var list []resourceRow
	seen := map[int64]bool{}
	for _, b := range s.batches {
		for _, r := range b.Resources {
			if !seen[r.ID] {
				seen[r.ID] = true
				list = append(list, resourceRow{r.ID, attrMap{b, r.Attributes}})
			}
		}
	}
	return list
}

// resourceRow is one row of the staged resources.
type resourceRow struct {
	id    int64
	attrs attrMap
}

// resourceSource is duckdb-go's view of one scan of the staged resources.
type resourceSource struct {
	list []resourceRow
	next int
	maps []attrMap
}

var resourceColumnInfos = []duckdb.ColumnInfo{
	{Name: "resource_id", T: must(duckdb.NewTypeInfo(duckdb.TYPE_BIGINT))},
	stagedColumnInfos[slices.Index(StageColumns, "attributes")],
}

func (src *resourceSource) ColumnInfos() []duckdb.ColumnInfo { return resourceColumnInfos }

func (src *resourceSource) Cardinality() *duckdb.CardinalityInfo {
	return &duckdb.CardinalityInfo{Cardinality: uint(len(src.list)), Exact: true}
}

func (src *resourceSource) Init() {}

func (src *resourceSource) FillChunk(chunk duckdb.DataChunk) error {
	rows := src.list[src.next:]
	rows = rows[:min(len(rows), duckdb.GetDataChunkCapacity())]
	src.next += len(rows)
	if len(rows) == 0 {
		return chunk.SetSize(0)
	}
	if v, err := chunk.GetVector(0); err == nil {
		ids := vectorData[int64](rawVector(v), len(rows))
		for i, r := range rows {
			ids[i] = r.id
		}
	}
	if v, err := chunk.GetVector(1); err == nil {
		src.maps = src.maps[:0]
		for _, r := range rows {
			src.maps = append(src.maps, r.attrs)
		}
		writeMapsAt(rawVector(v), 0, src.maps)
	}
	return chunk.SetSize(len(rows))
}

// withStaged runs f, whose statements may read batches from the
// staged-spans function (each call of it in a statement scans them all).
func (s *Store) withStaged(batches []*SpanBatch, f func() error) error {
	st := &staged{batches: batches}
	var pin runtime.Pinner
	for _, b := range batches {
		st.rows += len(b.Spans)
		if len(b.text) > 0 {
			pin.Pin(unsafe.SliceData(b.text))
		}
	}
	s.staged = st
	defer func() {
		s.staged = nil
		pin.Unpin()
	}()
	return f()
}

// load runs query, which reads batches from the staged-spans function,
// and returns the number of rows it affected.
func (s *Store) load(ctx context.Context, batches []*SpanBatch, query string, args ...any) (int64, error) {
	var n int64
	err := s.withStaged(batches, func() error {
		res, err := s.conn.ExecContext(ctx, query, args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// A duckdb.Vector keeps its C handle in an unexported field; filler needs
// it to write whole vectors. The layout is checked against the driver's
// types once, so that a driver whose layout differs fails loudly instead
// of writing at the wrong place.
var rawVectorOffset, vectorLayoutErr = func() (uintptr, error) {
	outer := reflect.TypeOf(duckdb.Vector{})
	if outer.NumField() == 0 || outer.Field(0).Offset != 0 || outer.Field(0).Type.Kind() != reflect.Pointer {
		return 0, errors.New("duckdb.Vector does not start with a pointer to its vector")
	}
	f, ok := outer.Field(0).Type.Elem().FieldByName("vec")
	if !ok || f.Type != reflect.TypeOf(mapping.Vector{}) {
		return 0, errors.New("duckdb-go's vector has no field vec of type mapping.Vector")
	}
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return 0, errors.New("big-endian machine")
	}
	return f.Offset, nil
}()

// checkLayout turns the error of a layout check into one that says what
// this build of duckdb-go cannot do.
func checkLayout(err error, what string) error {
	if err != nil {
		return fmt.Errorf("this build of duckdb-go cannot be %s directly: %w", what, err)
	}
	return nil
}

func rawVector(v duckdb.Vector) mapping.Vector {
	inner := *(*unsafe.Pointer)(unsafe.Pointer(&v))
	return *(*mapping.Vector)(unsafe.Add(inner, rawVectorOffset))
}

// duckString is DuckDB's string_t.
type duckString [16]byte

// listEntry is DuckDB's list_entry_t: where a row's list is in the child
// vector.
type listEntry struct{ offset, length uint64 }

func vectorData[T any](v mapping.Vector, n int) []T {
	return unsafe.Slice((*T)(mapping.VectorGetData(v)), n)
}

// putText writes t, a text of b, as a DuckDB string.
func putText(dst *duckString, b *SpanBatch, t Text) {
	binary.LittleEndian.PutUint32(dst[0:4], t.n)
	s := b.text[t.off : t.off+t.n]
	if t.n <= 12 {
		clear(dst[4+copy(dst[4:], s):])
		return
	}
	copy(dst[4:8], s)
	binary.LittleEndian.PutUint64(dst[8:], uint64(uintptr(unsafe.Pointer(unsafe.SliceData(s)))))
}

// filler writes the vectors of a scan; its slices are reused.
type filler struct {
	segs []segment
	maps []attrMap
}

// attrMap is one attribute map to write: a range of b.Attrs.
type attrMap struct {
	b *SpanBatch
	r Range
}

func (f *filler) fill(chunk duckdb.DataChunk) error {
	for col, name := range StageColumns {
		v, err := chunk.GetVector(col)
		if err != nil {
			continue // a column the statement does not read
		}
		vec := rawVector(v)
		switch name {
		case "seq":
			f.ints(vec, func(b *SpanBatch, i int) int64 { return b.seq + int64(i) })
		case "start_ns":
			f.ints(vec, func(b *SpanBatch, i int) int64 { return b.Spans[i].StartNS })
		case "end_ns":
			f.ints(vec, func(b *SpanBatch, i int) int64 { return b.Spans[i].EndNS })
		case "offset":
			f.ints(vec, func(b *SpanBatch, i int) int64 { return b.Spans[i].Offset })
		case "file_id":
			f.ints(vec, func(b *SpanBatch, i int) int64 { return b.fileID })
		case "attributes":
			f.spanMaps(vec, func(sp *BatchSpan) Range { return sp.Attributes })
		case "resource_id":
			f.ints(vec, func(b *SpanBatch, i int) int64 { return b.Spans[i].ResourceID })
		case "events":
			f.events(vec)
		case "links":
			f.links(vec)
		default:
			get, ok := textColumns[name]
			if !ok {
				return fmt.Errorf("staged column %s has no writer", name)
			}
			f.texts(vec, get)
		}
	}
	return nil
}

var textColumns = map[string]func(*BatchSpan) Text{
	"trace_id":       func(sp *BatchSpan) Text { return sp.TraceID },
	"span_id":        func(sp *BatchSpan) Text { return sp.SpanID },
	"parent_span_id": func(sp *BatchSpan) Text { return sp.ParentSpanID },
	"trace_state":    func(sp *BatchSpan) Text { return sp.TraceState },
	"name":           func(sp *BatchSpan) Text { return sp.Name },
	"kind":           func(sp *BatchSpan) Text { return sp.Kind },
	"status_code":    func(sp *BatchSpan) Text { return sp.StatusCode },
	"status_message": func(sp *BatchSpan) Text { return sp.StatusMessage },
	"service_name":   func(sp *BatchSpan) Text { return sp.ServiceName },
	"scope_name":     func(sp *BatchSpan) Text { return sp.ScopeName },
	"scope_version":  func(sp *BatchSpan) Text { return sp.ScopeVersion },
}

func (f *filler) rows() int {
	n := 0
	for _, sg := range f.segs {
		n += sg.to - sg.from
	}
	return n
}

func (f *filler) ints(vec mapping.Vector, get func(*SpanBatch, int) int64) {
	out := vectorData[int64](vec, f.rows())
	k := 0
	for _, sg := range f.segs {
		for i := sg.from; i < sg.to; i++ {
			out[k] = get(sg.b, i)
			k++
		}
	}
}

func (f *filler) texts(vec mapping.Vector, get func(*BatchSpan) Text) {
	out := vectorData[duckString](vec, f.rows())
	k := 0
	for _, sg := range f.segs {
		for i := sg.from; i < sg.to; i++ {
			putText(&out[k], sg.b, get(&sg.b.Spans[i]))
			k++
		}
	}
}

// spanMaps writes one attribute map per span.
func (f *filler) spanMaps(vec mapping.Vector, get func(*BatchSpan) Range) {
	f.maps = f.maps[:0]
	for _, sg := range f.segs {
		for i := sg.from; i < sg.to; i++ {
			f.maps = append(f.maps, attrMap{sg.b, get(&sg.b.Spans[i])})
		}
	}
	writeMapsAt(vec, 0, f.maps)
}

// reserveChildren makes room for n more entries in the child of vec, a
// list of structs, and returns the first two fields of the new entries
// (strings) and where they start in the child.
func reserveChildren(vec mapping.Vector, n int) (first, second []duckString, base int) {
	child, base := reserve(vec, n)
	first = vectorData[duckString](mapping.StructVectorGetChild(child, 0), base+n)[base:]
	second = vectorData[duckString](mapping.StructVectorGetChild(child, 1), base+n)[base:]
	return first, second, base
}

// reserve grows the child of vec, a list vector, by n entries and returns
// it and where the new entries start.
func reserve(vec mapping.Vector, n int) (mapping.Vector, int) {
	base := int(mapping.ListVectorGetSize(vec))
	mapping.ListVectorReserve(vec, mapping.IdxT(base+n))
	mapping.ListVectorSetSize(vec, mapping.IdxT(base+n))
	return mapping.ListVectorGetChild(vec), base
}

// events writes each span's events: a list of (name, time_ns, attributes).
func (f *filler) events(vec mapping.Vector) {
	total := 0
	for _, sg := range f.segs {
		for i := sg.from; i < sg.to; i++ {
			total += int(sg.b.Spans[i].Events.N)
		}
	}
	entries := vectorData[listEntry](vec, f.rows())
	child, base := reserve(vec, total)
	names := vectorData[duckString](mapping.StructVectorGetChild(child, 0), base+total)[base:]
	times := vectorData[int64](mapping.StructVectorGetChild(child, 1), base+total)[base:]
	f.maps = f.maps[:0]
	row, k := 0, 0
	for _, sg := range f.segs {
		for i := sg.from; i < sg.to; i++ {
			r := sg.b.Spans[i].Events
			entries[row] = listEntry{uint64(base + k), uint64(r.N)}
			row++
			for _, e := range sg.b.Events[r.Start : r.Start+r.N] {
				putText(&names[k], sg.b, e.Name)
				times[k] = e.TimeNS
				f.maps = append(f.maps, attrMap{sg.b, e.Attributes})
				k++
			}
		}
	}
	writeMapsAt(mapping.StructVectorGetChild(child, 2), base, f.maps)
}

// links writes each span's links: a list of (trace_id, span_id,
// attributes).
func (f *filler) links(vec mapping.Vector) {
	total := 0
	for _, sg := range f.segs {
		for i := sg.from; i < sg.to; i++ {
			total += int(sg.b.Spans[i].Links.N)
		}
	}
	entries := vectorData[listEntry](vec, f.rows())
	traces, spans, base := reserveChildren(vec, total)
	f.maps = f.maps[:0]
	row, k := 0, 0
	for _, sg := range f.segs {
		for i := sg.from; i < sg.to; i++ {
			r := sg.b.Spans[i].Links
			entries[row] = listEntry{uint64(base + k), uint64(r.N)}
			row++
			for _, l := range sg.b.Links[r.Start : r.Start+r.N] {
				putText(&traces[k], sg.b, l.TraceID)
				putText(&spans[k], sg.b, l.SpanID)
				f.maps = append(f.maps, attrMap{sg.b, l.Attributes})
				k++
			}
		}
	}
	writeMapsAt(mapping.StructVectorGetChild(mapping.ListVectorGetChild(vec), 2), base, f.maps)
}

// writeMapsAt writes maps as the rows of vec, a MAP(VARCHAR, VARCHAR)
// vector, from row first on.
func writeMapsAt(vec mapping.Vector, first int, maps []attrMap) {
	if len(maps) == 0 {
		return
	}
	total := 0
	for _, m := range maps {
		total += int(m.r.N)
	}
	entries := vectorData[listEntry](vec, first+len(maps))[first:]
	keys, values, base := reserveChildren(vec, total)
	k := 0
	for i, m := range maps {
		entries[i] = listEntry{uint64(base + k), uint64(m.r.N)}
		for _, a := range m.b.Attrs[m.r.Start : m.r.Start+m.r.N] {
			putText(&keys[k], m.b, a.Key)
			putText(&values[k], m.b, a.Value)
			k++
		}
	}
}
