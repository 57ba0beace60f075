package ingest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Format names the framing of a trace export, as detected from its bytes.
type Format string

// The framings retryscope reads.
const (
	FormatJSONLines   Format = "otlp-json-lines"   // one ExportTraceServiceRequest per line
	FormatJSONDoc     Format = "otlp-json"         // one (possibly pretty-printed) document
	FormatProtoFramed Format = "otlp-proto-framed" // Collector format: proto, 4-byte big-endian length
	FormatProtoVarint Format = "otlp-proto-varint" // varint-delimited messages
	FormatProtoRaw    Format = "otlp-proto"        // one undelimited message (an OTLP/HTTP body)
	FormatUnknown     Format = "unknown"           // not an OTLP trace export
	FormatEmpty       Format = "empty"             // nothing to read
)

// MaxRecordBytes is the most Limits.MaxRecordBytes may be. A length prefix
// above it cannot be trusted, so the rest of such a file is given up; one
// under it but over the limit costs only its record.
const MaxRecordBytes = 256 << 20

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// record is one decodable unit cut from a stream: a JSON object or an
// ExportTraceServiceRequest in protobuf. A record with a non-nil problem
// carries no data: it stands for bytes that could not be framed.
type record struct {
	offset  int64
	data    []byte
	json    bool
	problem *problem
}

type problem struct {
	reason string
	detail string
}

// stream is an opened export: decompressed, its framing detected.
type stream struct {
	br          *bufio.Reader
	pos         int64  // bytes consumed from br
	format      Format // how next() reads; Empty once nothing more can be read
	detected    Format // the framing, for the ledger
	compression string
	zdec        *zstd.Decoder // for per-message zstd frames
	json        jsonState
	maxDoc      int64 // Limits.MaxDocumentBytes
	maxRecord   int64 // Limits.MaxRecordBytes
	closers     []func()
}

func (s *stream) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

const peekSize = 64 << 10

// errExpansion ends a compressed stream that expands beyond its limit.
var errExpansion = errors.New("expands beyond the limit")

// expansionGuard stops a decompressor whose output outgrows the compressed
// bytes read so far by more than the allowed ratio: a small file of
// repeated bytes would otherwise be read for minutes.
type expansionGuard struct {
	r        io.Reader
	read     func() int64 // compressed bytes consumed so far
	ratio    int64
	floor    int64
	expanded int64
}

func (g *expansionGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.expanded += int64(n)
	if g.expanded > g.floor && g.expanded > g.ratio*g.read() {
		return n, fmt.Errorf("%w: %d bytes from %d compressed (over %dx; see --max-expansion)", errExpansion, g.expanded, g.read(), g.ratio)
	}
	return n, err
}

// readBufferSize is the buffer a file is read through: 1 MiB, or less for
// a smaller file, but never less than what detecting its framing peeks
// at. A directory of small files otherwise allocates, and clears, 1 MiB a
// file (at 1 KB a file, more of the time than decoding them).
func readBufferSize(size int64) int {
	const full = 1 << 20
	if size < 0 || size >= full {
		return full
	}
	return max(int(size)+1, peekSize)
}

// openStream unwraps whole-file gzip or zstd and detects the framing.
// compressedRead says how many bytes of the file were consumed so far, for
// the expansion limit; size is the file's size, -1 when unknown.
func openStream(r io.Reader, compressedRead func() int64, size int64, lim Limits) (*stream, error) {
	lim = lim.withDefaults()
	s := &stream{compression: "none", maxDoc: lim.MaxDocumentBytes, maxRecord: lim.MaxRecordBytes}
	br := bufio.NewReaderSize(r, readBufferSize(size))
	for layer := 0; layer < 2; layer++ {
		head, _ := br.Peek(4)
		switch {
		case bytes.HasPrefix(head, gzipMagic):
			zr, err := gzip.NewReader(br)
			if err != nil {
				return nil, fmt.Errorf("gzip header: %w", err)
			}
			s.closers = append(s.closers, func() { zr.Close() })
			s.compression = joinCompression(s.compression, "gzip")
			br = bufio.NewReaderSize(&expansionGuard{r: zr, read: compressedRead, ratio: lim.MaxExpansion, floor: lim.ExpansionFloor}, 1<<20)
			continue
		case bytes.HasPrefix(head, zstdMagic):
			zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
			if err != nil {
				return nil, fmt.Errorf("zstd header: %w", err)
			}
			s.closers = append(s.closers, zr.Close)
			s.compression = joinCompression(s.compression, "zstd")
			br = bufio.NewReaderSize(&expansionGuard{r: zr, read: compressedRead, ratio: lim.MaxExpansion, floor: lim.ExpansionFloor}, 1<<20)
			continue
		}
		break
	}
	s.br = br
	head, err := br.Peek(peekSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		if len(head) == 0 {
			return nil, err
		}
	}
	s.format = detect(head, err != nil)
	s.detected = s.format
	if s.format == FormatProtoFramed || s.format == FormatProtoVarint {
		s.zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(s.maxRecord)))
		s.closers = append(s.closers, s.zdec.Close)
	}
	return s, nil
}

// finalFormat is the framing as known after reading.
func (s *stream) finalFormat() Format { return s.detected }

func joinCompression(have, add string) string {
	if have == "none" {
		return add
	}
	return have + "+" + add
}

// detect tells the framing from the first bytes. whole is true when head
// holds the entire stream.
func detect(head []byte, whole bool) Format {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case len(trimmed) == 0 && len(head) == len(trimmed):
		return FormatEmpty
	case len(trimmed) == 0:
		return FormatUnknown
	case trimmed[0] == '{':
		return FormatJSONLines // JSON lines or a document: told apart while reading
	}
	if len(head) >= 5 && head[0] == 0 && (head[4] == 0x0a || head[4] == '{') {
		return FormatProtoFramed
	}
	if len(head) >= 8 && bytes.Equal(head[4:8], zstdMagic) {
		return FormatProtoFramed
	}
	if head[0] == 0x0a && walksAsRaw(head, whole) {
		return FormatProtoRaw
	}
	if walksAsVarint(head, whole) {
		return FormatProtoVarint
	}
	// A raw body whose first field is one this version does not know.
	if walksAsRaw(head, whole) {
		return FormatProtoRaw
	}
	return FormatUnknown
}

// errBadWireType is a field tag protobuf cannot skip: wire type 3, 4
// (groups, long deprecated) or 6, 7, or field number 0.
var errBadWireType = errors.New("no wire type protobuf can skip")

// skipField reads past the value of a field with the given tag.
func (s *stream) skipField(tag uint64) error {
	if tag>>3 == 0 {
		return errBadWireType
	}
	var n uint64
	switch tag & 7 {
	case 0: // varint
		_, err := s.readVarintLength()
		return err
	case 1: // 64-bit
		n = 8
	case 2: // length-delimited
		var err error
		if n, err = s.readVarintLength(); err != nil {
			return err
		}
	case 5: // 32-bit
		n = 4
	default:
		return errBadWireType
	}
	k, err := io.CopyN(io.Discard, s.br, int64(min(n, math.MaxInt64)))
	s.pos += k
	if err != nil {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// walksAsRaw reports whether head parses as the top-level fields of an
// ExportTraceServiceRequest: field 1 (resource_spans, length-delimited) at
// least once, beside any others protobuf can skip.
func walksAsRaw(head []byte, whole bool) bool {
	pos, spans := 0, 0
	for pos < len(head) {
		tag, w := binary.Uvarint(head[pos:])
		if w <= 0 {
			return !whole && w == 0 && spans > 0
		}
		pos += w
		var n uint64
		switch tag & 7 {
		case 0:
			_, w = binary.Uvarint(head[pos:])
			if w <= 0 {
				return !whole && w == 0 && spans > 0
			}
			n = uint64(w)
		case 1:
			n = 8
		case 2:
			n, w = binary.Uvarint(head[pos:])
			if w <= 0 {
				return !whole && w == 0 && spans > 0
			}
			pos += w
		case 5:
			n = 4
		default:
			return false
		}
		if tag>>3 == 0 || n > MaxRecordBytes {
			return false
		}
		if tag == 0x0a {
			spans++
		}
		pos += int(n)
	}
	return spans > 0 && (pos == len(head) || !whole)
}

// walksAsVarint reports whether head parses as varint-delimited messages,
// each starting like an ExportTraceServiceRequest or a zstd frame.
func walksAsVarint(head []byte, whole bool) bool {
	pos, frames := 0, 0
	for pos < len(head) {
		n, w := binary.Uvarint(head[pos:])
		if w <= 0 || n == 0 || n > MaxRecordBytes {
			return !whole && w == 0 && frames > 0
		}
		start := pos + w
		if start < len(head) && head[start] != 0x0a && !bytes.HasPrefix(head[start:], zstdMagic) {
			return false
		}
		pos = start + int(n)
		frames++
	}
	return frames > 0 && (pos == len(head) || !whole)
}

// next returns the next record, or io.EOF at the end of the stream. Framing
// problems come back as records with a problem; stream errors that make the
// rest unreadable come back as a final problem record, then io.EOF.
func (s *stream) next() (record, error) {
	switch s.format {
	case FormatJSONLines, FormatJSONDoc:
		return s.nextJSON()
	case FormatProtoFramed:
		return s.nextFramed(s.readBELength)
	case FormatProtoVarint:
		return s.nextFramed(s.readVarintLength)
	case FormatProtoRaw:
		return s.nextRaw()
	}
	return record{}, io.EOF
}

// streamProblem turns a read error into the record that ends the stream.
func (s *stream) streamProblem(at int64, err error) (record, error) {
	s.format = FormatEmpty // nothing more can be read
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return record{offset: at, problem: &problem{"truncated", "the stream ends inside a record"}}, nil
	}
	if errors.Is(err, errExpansion) {
		return record{offset: at, problem: &problem{"expansion_limit", fmt.Sprintf("%s stream %v; the rest of the file is not read", s.compression, err)}}, nil
	}
	if s.compression != "none" {
		return record{offset: at, problem: &problem{"corrupt_compression", fmt.Sprintf("%s stream: %v", s.compression, err)}}, nil
	}
	return record{offset: at, problem: &problem{"read_error", err.Error()}}, nil
}

func (s *stream) readFull(n int) ([]byte, error) {
	buf := make([]byte, n)
	k, err := io.ReadFull(s.br, buf)
	s.pos += int64(k)
	return buf, err
}

func (s *stream) readBELength() (uint64, error) {
	b, err := s.readFull(4)
	if err != nil {
		return 0, err
	}
	return uint64(binary.BigEndian.Uint32(b)), nil
}

func (s *stream) readVarintLength() (uint64, error) {
	start := s.pos
	n, err := binary.ReadUvarint(byteCounter{s})
	if errors.Is(err, io.EOF) && s.pos > start {
		return 0, io.ErrUnexpectedEOF
	}
	return n, err
}

type byteCounter struct{ s *stream }

func (b byteCounter) ReadByte() (byte, error) {
	c, err := b.s.br.ReadByte()
	if err == nil {
		b.s.pos++
	}
	return c, err
}

// nextFramed reads one length-prefixed message, unwrapping a zstd frame.
func (s *stream) nextFramed(readLength func() (uint64, error)) (record, error) {
	at := s.pos
	n, err := readLength()
	if errors.Is(err, io.EOF) {
		return record{}, io.EOF
	}
	if err != nil {
		return s.streamProblem(at, err)
	}
	if n > MaxRecordBytes {
		s.format = FormatEmpty
		return record{offset: at, problem: &problem{"bad_length", fmt.Sprintf("length prefix %d exceeds %d bytes; the rest of the file cannot be framed", n, MaxRecordBytes)}}, nil
	}
	if int64(n) > s.maxRecord {
		k, err := io.CopyN(io.Discard, s.br, int64(n))
		s.pos += k
		if err != nil {
			return s.streamProblem(at, err)
		}
		return record{offset: at, problem: &problem{"record_too_large", fmt.Sprintf("a message of %d bytes, over the %d-byte limit (see --max-record-mib)", n, s.maxRecord)}}, nil
	}
	data, err := s.readFull(int(n))
	if err != nil {
		return s.streamProblem(at, err)
	}
	if bytes.HasPrefix(data, zstdMagic) {
		plain, err := s.zdec.DecodeAll(data, nil)
		if err != nil {
			return record{offset: at, problem: &problem{"corrupt_compression", "zstd message: " + err.Error()}}, nil
		}
		data = plain
	}
	return record{offset: at, data: data, json: looksJSON(data)}, nil
}

func looksJSON(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// nextRaw cuts one resource_spans field out of a single undelimited message
// and wraps it as a message of its own, so a large body streams.
func (s *stream) nextRaw() (record, error) {
	at := s.pos
	tag, err := s.readVarintLength()
	if errors.Is(err, io.EOF) {
		return record{}, io.EOF
	}
	if err != nil {
		return s.streamProblem(at, io.ErrUnexpectedEOF)
	}
	if tag != 0x0a {
		// A field an ExportTraceServiceRequest does not know (a newer
		// schema's, a vendor's): skipped, as protobuf requires.
		if err := s.skipField(tag); err != nil {
			if errors.Is(err, errBadWireType) {
				s.format = FormatEmpty
				return record{offset: at, problem: &problem{"bad_protobuf", fmt.Sprintf("field tag 0x%x has %v; the rest of the message cannot be read", tag, err)}}, nil
			}
			return s.streamProblem(at, io.ErrUnexpectedEOF)
		}
		return s.nextRaw()
	}
	n, err := s.readVarintLength()
	if err != nil {
		return s.streamProblem(at, io.ErrUnexpectedEOF)
	}
	if n <= MaxRecordBytes && int64(n) > s.maxRecord {
		k, err := io.CopyN(io.Discard, s.br, int64(n))
		s.pos += k
		if err != nil {
			return s.streamProblem(at, err)
		}
		return record{offset: at, problem: &problem{"record_too_large", fmt.Sprintf("a resource_spans field of %d bytes, over the %d-byte limit (see --max-record-mib)", n, s.maxRecord)}}, nil
	}
	if n > MaxRecordBytes {
		s.format = FormatEmpty
		return record{offset: at, problem: &problem{"bad_protobuf", fmt.Sprintf("a resource_spans field of %d bytes, over the %d-byte limit; the rest of the message cannot be read", n, MaxRecordBytes)}}, nil
	}
	prefix := binary.AppendUvarint([]byte{0x0a}, n)
	data := make([]byte, len(prefix)+int(n))
	copy(data, prefix)
	k, err := io.ReadFull(s.br, data[len(prefix):])
	s.pos += int64(k)
	if err != nil {
		return s.streamProblem(at, err)
	}
	return record{offset: at, data: data}, nil
}
