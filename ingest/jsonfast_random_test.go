package ingest

import (
	"math/rand"
	"strings"
	"testing"
)

// The random OTLP JSON documents below mix what exporters write with what
// they seldom do (fields in any order, odd white space, awkward strings,
// numbers in every form pdata reads and some it refuses, ids empty, zero
// or upper case, duplicate keys, service.name escaped or twice).

func rpick(r *rand.Rand, xs ...string) string { return xs[r.Intn(len(xs))] }

var rStrPool = []string{`""`, `"a"`, `"service.name"`, `"a\"b"`, `"\u00e9"`, `"\u0000"`, "\"\xff\"", "\"a\xc3\"", `"<&>"`, `"\u2028"`, `"x y"`, `"\/"`, `"\u007f"`, "\"\x7f\"", `"é"`, `"\ufffd"`, `"\\"`, `"\b\f\n\r\t"`, `"A"`, `"\u0041"`, "\"\xed\xa0\x80\""}
var rNumPool = []string{`0`, `-0`, `1`, `-1`, `1.5`, `-0.0`, `1e5`, `1E-5`, `0.1`, `123456.1234567`, `1e21`, `1e-7`, `9007199254740993`, `18446744073709551615`, `9223372036854775807`, `-9223372036854775808`, `4294967295`, `2147483647`, `-2147483648`, `1e308`, `5e-324`, `0.30000000000000004`, `100`, `1700000000000000000`, `99999999999999999999`, `12345678901234567890`, `1.0`, `2.5e+3`}

func rStr(r *rand.Rand) string { return rStrPool[r.Intn(len(rStrPool))] }
func rNumOrStr(r *rand.Rand) string {
	n := rNumPool[r.Intn(len(rNumPool))]
	if r.Intn(3) == 0 {
		return `"` + n + `"`
	}
	if r.Intn(8) == 0 {
		return rpick(r, `"NaN"`, `"Infinity"`, `"-Infinity"`, `"inf"`, `"+5"`, `" 5"`, `"0x10"`, `"1_0"`, `"007"`)
	}
	return n
}
func rWS(r *rand.Rand) string { return rpick(r, "", "", "", " ", "\n", "\t", "\r", " \r\n ") }

func rScalar(r *rand.Rand) string {
	switch r.Intn(4) {
	case 0:
		return `{"stringValue":` + rStr(r) + `}`
	case 1:
		return `{"intValue":` + rNumOrStr(r) + `}`
	case 2:
		return `{"doubleValue":` + rNumOrStr(r) + `}`
	}
	return `{"boolValue":` + rpick(r, "true", "false") + `}`
}
func rValue(r *rand.Rand) string {
	if r.Intn(4) == 0 {
		var vs []string
		for i := r.Intn(4); i > 0; i-- {
			vs = append(vs, rScalar(r))
		}
		if r.Intn(5) == 0 {
			return `{"arrayValue":{}}`
		}
		return `{"arrayValue":{"values":[` + strings.Join(vs, ",") + `]}}`
	}
	return rScalar(r)
}
func rAttrs(r *rand.Rand, svc bool) string {
	var kvs []string
	for i := r.Intn(5); i > 0; i-- {
		k := rpick(r, `"a"`, `"b"`, `"service.name"`, `"service\u002ename"`, "\"a\xff\"", "\"a\xfe\"", `""`)
		if r.Intn(2) == 0 {
			kvs = append(kvs, `{"value":`+rWS(r)+rValue(r)+`,"key":`+k+`}`)
		} else {
			kvs = append(kvs, `{"key":`+k+`,`+rWS(r)+`"value":`+rValue(r)+`}`)
		}
	}
	return `[` + strings.Join(kvs, ","+rWS(r)) + `]`
}
func rID(r *rand.Rand, n int) string {
	switch r.Intn(6) {
	case 0:
		return `""`
	case 1:
		return `"` + strings.Repeat("0", 2*n) + `"`
	case 2:
		return `"` + strings.Repeat("Ab", n) + `"`
	case 3:
		return `"` + strings.Repeat("ee", n) + `"`
	}
	return `"` + strings.Repeat("5b", n) + `"`
}
func rShuffle(r *rand.Rand, xs []string) []string {
	r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	return xs
}
func rSpan(r *rand.Rand) string {
	f := []string{}
	add := func(p float64, s string) {
		if r.Float64() < p {
			f = append(f, s)
		}
	}
	add(0.95, `"traceId":`+rID(r, 16))
	add(0.95, `"spanId":`+rID(r, 8))
	add(0.3, `"parentSpanId":`+rID(r, 8))
	add(0.5, `"name":`+rStr(r))
	add(0.3, `"traceState":`+rStr(r))
	add(0.5, `"kind":`+rpick(r, "0", "1", "2", "5", "6", "-1", `"SPAN_KIND_SERVER"`, `"SPAN_KIND_CLIENT"`, "2147483647"))
	t := rpick(r, "1700000000000000000", `"1700000000000000000"`, "1700000000", "0", "7258118400000000000")
	add(0.9, `"startTimeUnixNano":`+t)
	add(0.9, `"endTimeUnixNano":`+rpick(r, "1700000000500000000", `"1700000000500000000"`, t, "1699999999000000000", "1800000000000000000"))
	add(0.5, `"attributes":`+rAttrs(r, false))
	add(0.3, `"status":{"code":`+rpick(r, "0", "1", "2", "3", `"STATUS_CODE_ERROR"`)+`,"message":`+rStr(r)+`}`)
	add(0.2, `"events":[{"name":`+rStr(r)+`,"timeUnixNano":`+rpick(r, "1", `"17"`, "0")+`,"attributes":`+rAttrs(r, false)+`},{}]`)
	add(0.2, `"links":[{"traceId":`+rID(r, 16)+`,"spanId":`+rID(r, 8)+`,"traceState":`+rStr(r)+`,"attributes":`+rAttrs(r, false)+`,"flags":`+rNumOrStr(r)+`},{}]`)
	add(0.2, `"flags":`+rNumOrStr(r))
	add(0.2, `"droppedAttributesCount":`+rNumOrStr(r))
	return `{` + strings.Join(rShuffle(r, f), ","+rWS(r)) + `}`
}
func rDoc(r *rand.Rand) string {
	var rss []string
	for i := r.Intn(3); i >= 0; i-- {
		var p []string
		if r.Intn(4) != 0 {
			res := `{"attributes":` + rAttrs(r, true)
			if r.Intn(4) == 0 {
				res += `,"droppedAttributesCount":` + rNumOrStr(r)
			}
			p = append(p, `"resource":`+res+`}`)
		}
		var sss []string
		for j := r.Intn(3); j >= 0; j-- {
			var q []string
			if r.Intn(3) != 0 {
				q = append(q, `"scope":{"name":`+rStr(r)+`,"version":`+rStr(r)+`,"attributes":`+rAttrs(r, false)+`}`)
			}
			var sp []string
			for k := r.Intn(3); k >= 0; k-- {
				sp = append(sp, rSpan(r))
			}
			q = append(q, `"spans":[`+strings.Join(sp, ",")+`]`)
			if r.Intn(4) == 0 {
				q = append(q, `"schemaUrl":`+rStr(r))
			}
			sss = append(sss, `{`+strings.Join(q, ",")+`}`)
		}
		p = append(p, `"scopeSpans":[`+strings.Join(sss, ",")+`]`)
		rss = append(rss, `{`+strings.Join(p, ",")+`}`)
	}
	return rWS(r) + `{"resourceSpans":[` + strings.Join(rss, ",") + `]}` + rWS(r)
}

// TestFastJSONRandom: on random documents, whatever the fast path takes
// pdata takes too, and both store the same.
func TestFastJSONRandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	fast, bad := 0, 0
	for n := 0; n < 20000 && bad < 8; n++ {
		data := []byte(rDoc(r))
		got, ok := decodeJSONFast(data, 7, DefaultLimits)
		if !ok {
			continue
		}
		fast++
		want := decodePdata(record{offset: 7, data: data, json: true}, DefaultLimits)
		if want.batch == nil {
			bad++
			t.Errorf("the fast path took what pdata refuses: %q: %+v", data, want.rejections)
			continue
		}
		if g, w := render(got), render(want); g != w {
			bad++
			t.Errorf("%q: the fast path stores\n%s\npdata and flatten\n%s", data, g, w)
		}
	}
	t.Logf("%d of 20000 documents decoded fast", fast)
	// About one document in 45 is free of anything left to pdata.
	if fast < 200 {
		t.Errorf("the fast path took %d of 20000 documents, want 200 or more", fast)
	}
}
