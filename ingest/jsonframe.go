package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// jsonState cuts OTLP/JSON into records. One object per line is the common
// case (the Collector's file exporter); a document that spans lines (pretty
// printed) is gathered whole, without the whitespace between its tokens, up
// to the document limit. The first record decides which it is, so in a
// JSON-lines file a broken line costs only that line.
type jsonState struct {
	lines    bool // a record has closed on the line it opened: JSON lines
	buf      []byte
	bufAt    int64
	tooLarge bool // the document outgrew the limit: read to its end, keep nothing
	sc       jsonScanner
}

// jsonScanner counts braces outside strings.
type jsonScanner struct {
	depth   int
	inStr   bool
	escaped bool
}

func (j *jsonState) reset() {
	j.buf = j.buf[:0]
	j.tooLarge = false
	j.sc = jsonScanner{}
}

// scan feeds b through the brace counter and returns the index just past
// the byte that closes the top-level object, or -1. With out set, the bytes
// up to there are appended to *out, less whitespace outside strings.
func (sc *jsonScanner) scan(b []byte, out *[]byte) int {
	// Without out, the bytes inside a string up to its closing quote or a
	// backslash are skipped with IndexByte. nextQuote caches where the
	// next quote is, so that a string of many escapes is still read once.
	nextQuote := -1
	for i := 0; i < len(b); i++ {
		if out == nil && sc.inStr && !sc.escaped {
			if nextQuote < i {
				nextQuote = len(b)
				if q := bytes.IndexByte(b[i:], '"'); q >= 0 {
					nextQuote = i + q
				}
			}
			end := nextQuote
			if e := bytes.IndexByte(b[i:end], '\\'); e >= 0 {
				end = i + e
			}
			if i = end; i == len(b) {
				return -1
			}
		}
		c := b[i]
		if out != nil && (sc.inStr || (c != ' ' && c != '\t' && c != '\r' && c != '\n')) {
			*out = append(*out, c)
		}
		switch {
		case sc.escaped:
			sc.escaped = false
		case sc.inStr:
			if c == '\\' {
				sc.escaped = true
			} else if c == '"' {
				sc.inStr = false
			}
		case c == '"':
			sc.inStr = true
		case c == '{' || c == '[':
			sc.depth++
		case c == '}' || c == ']':
			sc.depth--
			if sc.depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

var errTooLong = errors.New("line longer than the record limit (see --max-record-mib)")

// readLine returns the next line without its line ending, however long, and
// whether the stream ended after it (a last line with no newline).
func (s *stream) readLine() (line []byte, eof bool, err error) {
	for {
		chunk, err := s.br.ReadSlice('\n')
		s.pos += int64(len(chunk))
		if int64(len(line)+len(chunk)) > s.maxRecord {
			return nil, false, errTooLong
		}
		line = append(line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return line, true, nil
		case err != nil:
			return nil, false, err
		}
		return bytes.TrimRight(line, "\r\n"), false, nil
	}
}

func (s *stream) nextJSON() (record, error) {
	j := &s.json
	for {
		at := s.pos
		line, eof, err := s.readLine()
		if err != nil {
			if len(j.buf) > 0 || j.tooLarge {
				at = j.bufAt
			}
			j.reset()
			if errors.Is(err, errTooLong) {
				s.skipLine()
				return record{offset: at, problem: &problem{"record_too_large", err.Error()}}, nil
			}
			return s.streamProblem(at, err)
		}
		inDoc := len(j.buf) > 0 || j.tooLarge
		if eof && len(line) == 0 {
			if inDoc {
				recAt := j.bufAt
				j.reset()
				return record{offset: recAt, problem: &problem{"truncated", "the file ends inside a JSON record"}}, nil
			}
			return record{}, io.EOF
		}
		if !inDoc {
			trimmed := bytes.TrimSpace(line)
			if len(trimmed) == 0 {
				continue
			}
			if trimmed[0] != '{' {
				return record{offset: at, problem: &problem{"bad_json", fmt.Sprintf("line is not a JSON object (starts %q)", clip(trimmed, 24))}}, nil
			}
			j.bufAt = at
		}
		before := j.sc
		end := j.sc.scan(line, nil)
		if end < 0 {
			if j.lines || eof {
				reason, detail := "bad_json", "JSON object not closed on its line"
				if eof {
					reason, detail = "truncated", "the file ends inside a JSON record"
				}
				recAt := j.bufAt
				j.reset()
				return record{offset: recAt, problem: &problem{reason, detail}}, nil
			}
			s.gather(line, before)
			continue
		}
		recAt := j.bufAt
		rest := bytes.TrimSpace(line[end:])
		var data []byte
		switch {
		case !inDoc:
			j.lines = true
			data = line[:end] // readLine returns a fresh slice
		case j.tooLarge:
		default:
			s.detected = FormatJSONDoc
			s.gather(line[:end], before)
			data, j.buf = j.buf, nil
		}
		tooLarge := j.tooLarge
		j.reset()
		if tooLarge {
			s.detected = FormatJSONDoc
			return record{offset: recAt, problem: &problem{"document_too_large", fmt.Sprintf(
				"a multi-line JSON document over %d bytes without whitespace; see --max-document-size", s.maxDoc)}}, nil
		}
		if len(rest) > 0 {
			return record{offset: recAt, problem: &problem{"bad_json", fmt.Sprintf("text after the JSON object: %q", clip(rest, 24))}}, nil
		}
		return record{offset: recAt, data: data, json: true}, nil
	}
}

// gather adds a line of a multi-line document to the buffer, scanning it
// again from the state before it with whitespace dropped. A document that
// outgrows the limit is kept scanning (to find its end) but not kept.
func (s *stream) gather(line []byte, before jsonScanner) {
	j := &s.json
	if j.tooLarge {
		return
	}
	after := j.sc
	j.sc = before
	j.sc.scan(line, &j.buf)
	j.sc = after
	if int64(len(j.buf)) > s.maxDoc {
		j.tooLarge = true
		j.buf = nil
	}
}

// skipLine discards the rest of an over-long line.
func (s *stream) skipLine() {
	for {
		chunk, err := s.br.ReadSlice('\n')
		s.pos += int64(len(chunk))
		if !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
