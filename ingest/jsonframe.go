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
// printed) is read whole. The first record decides which it is, so in a
// JSON-lines file a broken line costs only that line.
type jsonState struct {
	lines   bool // a record has closed on the line it opened: JSON lines
	buf     []byte
	bufAt   int64
	depth   int
	inStr   bool
	escaped bool
}

func (j *jsonState) reset() {
	j.buf = j.buf[:0]
	j.depth, j.inStr, j.escaped = 0, false, false
}

// scan feeds b through the brace counter and returns the index just past
// the byte that closes the top-level object, or -1.
func (j *jsonState) scan(b []byte) int {
	for i, c := range b {
		switch {
		case j.escaped:
			j.escaped = false
		case j.inStr:
			if c == '\\' {
				j.escaped = true
			} else if c == '"' {
				j.inStr = false
			}
		case c == '"':
			j.inStr = true
		case c == '{' || c == '[':
			j.depth++
		case c == '}' || c == ']':
			j.depth--
			if j.depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

var errTooLong = fmt.Errorf("line longer than %d bytes", MaxRecordBytes)

// readLine returns the next line without its line ending, however long, and
// whether the stream ended after it (a last line with no newline).
func (s *stream) readLine() (line []byte, eof bool, err error) {
	for {
		chunk, err := s.br.ReadSlice('\n')
		s.pos += int64(len(chunk))
		if len(line)+len(chunk) > MaxRecordBytes {
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
			if len(j.buf) > 0 {
				at = j.bufAt
			}
			j.reset()
			if errors.Is(err, errTooLong) {
				s.skipLine()
				return record{offset: at, problem: &problem{"record_too_large", err.Error()}}, nil
			}
			return s.streamProblem(at, err)
		}
		if eof && len(line) == 0 {
			if len(j.buf) > 0 {
				recAt := j.bufAt
				j.reset()
				return record{offset: recAt, problem: &problem{"truncated", "the file ends inside a JSON record"}}, nil
			}
			return record{}, io.EOF
		}
		trimmed := bytes.TrimSpace(line)
		if len(j.buf) == 0 {
			if len(trimmed) == 0 {
				continue
			}
			if trimmed[0] != '{' {
				return record{offset: at, problem: &problem{"bad_json", fmt.Sprintf("line is not a JSON object (starts %q)", clip(trimmed, 24))}}, nil
			}
			j.bufAt = at
		}
		end := j.scan(line)
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
			j.buf = append(j.buf, line...)
			j.buf = append(j.buf, '\n')
			continue
		}
		if len(j.buf) == 0 {
			j.lines = true
		} else {
			s.detected = FormatJSONDoc
		}
		j.buf = append(j.buf, line[:end]...)
		data := bytes.Clone(j.buf)
		recAt := j.bufAt
		rest := bytes.TrimSpace(line[end:])
		j.reset()
		if len(rest) > 0 {
			return record{offset: recAt, problem: &problem{"bad_json", fmt.Sprintf("text after the JSON object: %q", clip(rest, 24))}}, nil
		}
		return record{offset: recAt, data: data, json: true}, nil
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
