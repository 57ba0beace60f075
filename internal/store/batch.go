package store

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
)

// SpanBatch holds decoded spans ready to load: every string they hold is in
// one buffer, and maps, events and links are ranges of shared slices, so
// that building a batch allocates little and loading it copies no string
// twice. The ingest's decoders each fill their own batches in parallel;
// FileTx.Add takes them in file order.
type SpanBatch struct {
	text  []byte
	Spans []BatchSpan
	Attrs []Attr // the entries of every attribute map of the batch
	// Resources are the resources the batch's spans refer to (by
	// BatchSpan.ResourceID), each once per resource of the record (see
	// AddResource); the store writes each distinct one once.
	Resources []Resource
	Events    []Event
	Links     []Link
	// seq is the file-order number of Spans[0] (see stage.sql).
	seq int64
	// fileID is the file_id its spans are stored with.
	fileID int64
}

// NewSpanBatch returns an empty batch with room for spans spans and
// textBytes bytes of text.
func NewSpanBatch(spans, textBytes int) *SpanBatch {
	return &SpanBatch{Spans: make([]BatchSpan, 0, spans), text: make([]byte, 0, textBytes)}
}

// Text is a string held in its batch.
type Text struct{ off, n uint32 }

// Range is a run of entries of one of the batch's slices (Attrs, Events or
// Links).
type Range struct{ Start, N uint32 }

// BatchSpan is one span of a batch. Its columns are those of stage.sql;
// empty texts become NULL where spans allows NULL.
type BatchSpan struct {
	TraceID, SpanID, ParentSpanID, TraceState, Name, Kind Text
	StatusCode, StatusMessage, ServiceName, ScopeName     Text
	ScopeVersion                                          Text
	StartNS, EndNS                                        int64
	Attributes                                            Range // of Attrs
	Events                                                Range // of Events
	Links                                                 Range // of Links
	// ResourceID is the span's resource: the ID of one of the batch's
	// Resources.
	ResourceID int64
	// Offset is where the record holding the span starts in its file.
	Offset int64
}

// Resource is a resource's attribute map (a range of Attrs) and its id.
type Resource struct {
	ID         int64
	Attributes Range
}

// Attr is one entry of an attribute map: its value as text.
type Attr struct{ Key, Value Text }

// Event is a span event.
type Event struct {
	Name       Text
	TimeNS     int64
	Attributes Range
}

// Link is a span link.
type Link struct {
	TraceID, SpanID Text
	Attributes      Range
}

// Text adds s to the batch. s must be valid UTF-8. A batch holds one
// record's spans, and a record is at most 256 MB (ingest.MaxRecordBytes),
// whose text, even with ids in hex and numbers in decimal, is a few times
// that: far from the 4 GB a Text can address.
func (b *SpanBatch) Text(s string) Text { return addText(b, s) }

// BytesText adds s, which must be valid UTF-8, as Text does.
func (b *SpanBatch) BytesText(s []byte) Text { return addText(b, s) }

func addText[S string | []byte](b *SpanBatch, s S) Text {
	t := Text{b.offset(len(s)), uint32(len(s))}
	b.text = append(b.text, s...)
	return t
}

// HexText adds id in lowercase hex.
func (b *SpanBatch) HexText(id []byte) Text {
	t := Text{b.offset(2 * len(id)), uint32(2 * len(id))}
	b.text = hex.AppendEncode(b.text, id)
	return t
}

func (b *SpanBatch) offset(n int) uint32 {
	if uint64(len(b.text))+uint64(n) > math.MaxUint32 {
		panic("store: a span batch holds more than 4 GB of text")
	}
	return uint32(len(b.text))
}

// String returns a text of the batch as a Go string (a copy).
func (b *SpanBatch) String(t Text) string { return string(b.bytes(t)) }

func (b *SpanBatch) bytes(t Text) []byte { return b.text[t.off : t.off+t.n] }

// AddAttr appends an attribute entry; a map is the Range of the entries
// appended for it (see AttrRange).
func (b *SpanBatch) AddAttr(key, value Text) { b.Attrs = append(b.Attrs, Attr{key, value}) }

// AttrsSince is the range of the attribute entries appended since Attrs
// had n entries.
func (b *SpanBatch) AttrsSince(n int) Range {
	return Range{uint32(n), uint32(len(b.Attrs) - n)}
}

// TextBytes is the size of the batch's text buffer: with the spans, most
// of what the batch holds in memory.
func (b *SpanBatch) TextBytes() int { return len(b.text) }

// Len is the number of spans in the batch.
func (b *SpanBatch) Len() int { return len(b.Spans) }

// IntText adds i in decimal.
func (b *SpanBatch) IntText(i int64) Text {
	var digits [20]byte
	return addText(b, strconv.AppendInt(digits[:0], i, 10))
}

// AddResource adds a resource whose attribute map is r (entries appended
// by AddAttr, one per key) and returns its id: a content hash of the map,
// the same for the same entries in any order, in every run and every
// database (resources.resource_id, see queries/migrations/005_resources.sql,
// which computes the same in SQL): the entries sorted by key, each written
// as <bytes of key>:<key><bytes of value>:<value>, and the first 8 bytes of
// that text's MD5, big endian, shifted right by one.
func (b *SpanBatch) AddResource(r Range) int64 {
	entries := slices.Clone(b.Attrs[r.Start : r.Start+r.N])
	slices.SortFunc(entries, func(x, y Attr) int {
		if c := bytes.Compare(b.bytes(x.Key), b.bytes(y.Key)); c != 0 {
			return c
		}
		return bytes.Compare(b.bytes(x.Value), b.bytes(y.Value))
	})
	h := md5.New()
	var num [24]byte
	for _, e := range entries {
		for _, t := range [2]Text{e.Key, e.Value} {
			h.Write(append(strconv.AppendUint(num[:0], uint64(t.n), 10), ':'))
			h.Write(b.bytes(t))
		}
	}
	var sum [md5.Size]byte
	id := int64(binary.BigEndian.Uint64(h.Sum(sum[:0])[:8]) >> 1)
	b.Resources = append(b.Resources, Resource{ID: id, Attributes: r})
	return id
}
