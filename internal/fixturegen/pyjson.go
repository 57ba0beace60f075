package main

import (
	"fmt"
	"strconv"
	"strings"
)

// expected.json is written as Python's json.dump(indent=2) wrote it when the
// fixtures were first built, so regenerating them changes no byte: keys in
// the order they were set, floats in Python's shortest repr (1000.0, not
// 1000), only control characters and non-ASCII escaped.

// field is one key of an object.
type field struct {
	key   string
	value any
}

// object is a JSON object whose keys keep the order they were set in.
type object []field

// set replaces key's value where the key already is, or appends it.
func (o object) set(key string, value any) object {
	for i := range o {
		if o[i].key == key {
			o[i].value = value
			return o
		}
	}
	return append(o, field{key, value})
}

func (o object) get(key string) any {
	for _, f := range o {
		if f.key == key {
			return f.value
		}
	}
	return nil
}

func encodeIndented(v any) []byte {
	var b strings.Builder
	encodeValue(&b, v, 0)
	b.WriteByte('\n')
	return []byte(b.String())
}

func encodeValue(b *strings.Builder, v any, depth int) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case float64:
		b.WriteString(pyFloat(v))
	case string:
		encodeString(b, v)
	case []string:
		items := make([]any, len(v))
		for i, s := range v {
			items[i] = s
		}
		encodeValue(b, items, depth)
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, item := range v {
			if i > 0 {
				b.WriteString(",")
			}
			newline(b, depth+1)
			encodeValue(b, item, depth+1)
		}
		newline(b, depth)
		b.WriteString("]")
	case object:
		if len(v) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{")
		for i, f := range v {
			if i > 0 {
				b.WriteString(",")
			}
			newline(b, depth+1)
			encodeString(b, f.key)
			b.WriteString(": ")
			encodeValue(b, f.value, depth+1)
		}
		newline(b, depth)
		b.WriteString("}")
	default:
		panic(fmt.Sprintf("expected.json: value %#v", v))
	}
}

func newline(b *strings.Builder, depth int) {
	b.WriteByte('\n')
	b.WriteString(strings.Repeat("  ", depth))
}

func encodeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20 || (r >= 0x7f && r < 0x10000):
				fmt.Fprintf(b, `\u%04x`, r)
			case r >= 0x10000:
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// pyFloat is Python's repr of a float: the shortest digits that read back,
// positional between 1e-4 and 1e16 and always with a fraction part there,
// else in exponent form with at least two exponent digits.
func pyFloat(f float64) string {
	e := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±XX
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	if decpt := exp + 1; decpt > -4 && decpt <= 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	return fmt.Sprintf("%se%s%02d", mant, sign, exp)
}
