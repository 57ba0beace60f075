package rebuild

import (
	"strings"
	"testing"
)

// paramsDiffer compares the parameters both spans record, one by one, also
// when a value (OpenInference's invocation JSON) holds ';' and '='. The
// entries are joined as rebuild_spans.sql joins them, with chr(31).
func TestParamsDiffer(t *testing.T) {
	p := func(kv ...string) string { return strings.Join(kv, "\x1f") }
	inv := func(stop string) string {
		return `invocation={"max_tokens":256,"stop":["` + stop + `"],"logit_bias":{"a=b":1}}`
	}
	cases := []struct {
		a, b string
		want bool
	}{
		{p("temperature=0.2"), p("max_tokens=1024", "temperature=0.2"), false}, // a fallback adds max_tokens
		{p("temperature=0.2"), p("temperature=0.7"), true},
		{p("temperature=0.2", inv("a;b=c")), p("temperature=0.2", inv("a;b=c")), false},
		{p("temperature=0.2", inv("a;b=c")), p("temperature=0.2", inv("a;b=d")), true},
		{"", p("temperature=0.7"), false}, // nothing recorded is no evidence
		// A stop sequence that reads like another parameter is part of its value.
		{p("temperature=0.2", inv(";temperature=0.9")), p("temperature=0.2"), false},
	}
	for _, c := range cases {
		if got := paramsDiffer(c.a, c.b); got != c.want {
			t.Errorf("paramsDiffer(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
