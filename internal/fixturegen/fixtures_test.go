package main

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/testkit"
)

type spanRec struct {
	traceID, spanID, parent string
	name                    string
	kind                    ptrace.SpanKind
	start, end              uint64
	line                    int
	attempt                 bool // looks like a physical attempt
	host                    string
	events                  []uint64
}

var knownTriggers = map[string]bool{
	"timeout": true, "connection": true, "rate_limited": true, "server_error": true,
	"client_error": true, "cancelled": true, "rejected_output": true, "abandoned": true, "unknown": true,
}

func loadSpans(t *testing.T, path string) (map[string]*spanRec, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spans := map[string]*spanRec{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var um ptrace.JSONUnmarshaler
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			t.Fatalf("%s:%d: empty line", path, line)
		}
		td, err := um.UnmarshalTraces(b)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					s := ss.At(k)
					r := &spanRec{
						traceID: s.TraceID().String(), spanID: s.SpanID().String(),
						name: s.Name(), kind: s.Kind(),
						start: uint64(s.StartTimestamp()), end: uint64(s.EndTimestamp()),
						line: line,
					}
					if !s.ParentSpanID().IsEmpty() {
						r.parent = s.ParentSpanID().String()
					}
					_, newHTTP := s.Attributes().Get("http.request.method")
					_, oldHTTP := s.Attributes().Get("http.method")
					r.attempt = (s.Kind() == ptrace.SpanKindClient && (newHTTP || oldHTTP)) ||
						strings.HasPrefix(s.Name(), "Attempt.")
					if v, ok := s.Attributes().Get("server.address"); ok {
						r.host = v.Str()
					}
					for e := 0; e < s.Events().Len(); e++ {
						r.events = append(r.events, uint64(s.Events().At(e).Timestamp()))
					}
					if r.end < r.start {
						t.Errorf("%s:%d: span %s ends before it starts", path, line, r.spanID)
					}
					key := r.traceID + ":" + r.spanID
					if _, dup := spans[key]; dup {
						t.Errorf("%s:%d: span %s exported twice", path, line, key)
					}
					spans[key] = r
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return spans, line
}

// attemptKey is the trace:span key of an attempt listed in
// attempt_span_ids: a span id of the anchor's trace, or, for attempts that
// are each a trace of their own, the whole key.
func attemptKey(traceID, id string) string {
	if strings.Contains(id, ":") {
		return id
	}
	return traceID + ":" + id
}

// TestFixtures checks the hand-built fixtures in testdata/fixtures: every
// traces.jsonl line decodes with pdata's own JSON unmarshaler, and each
// expected.json agrees with the spans it names (anchor and attempt spans
// exist, latency recomputes from their timestamps, counts add up). It does
// not run retryscope; it keeps the fixtures honest so tests that do can
// trust them.
func TestFixtures(t *testing.T) {
	fixtures := testkit.Fixtures(t)
	if len(fixtures) < 4 {
		t.Fatalf("found %d fixtures, want at least 4", len(fixtures))
	}
	for _, f := range fixtures {
		t.Run(f.Name, func(t *testing.T) { checkFixture(t, f) })
	}
}

func checkFixture(t *testing.T, f testkit.Fixture) {
	spans, lines := loadSpans(t, f.Traces)
	exp := testkit.ReadExpected(t, f)
	if lines < 2 {
		t.Errorf("only %d export lines; a batch exporter splits traces", lines)
	}

	// Realism: some trace spans 2+ lines; some child is exported on an
	// earlier line than its parent (or in the same line, before it).
	traceLines := map[string]map[int]bool{}
	for _, s := range spans {
		if traceLines[s.traceID] == nil {
			traceLines[s.traceID] = map[int]bool{}
		}
		traceLines[s.traceID][s.line] = true
	}
	split := false
	for _, ls := range traceLines {
		if len(ls) > 1 {
			split = true
		}
	}
	if !split {
		t.Errorf("no trace is split across export lines")
	}

	seenAttempt := map[string]bool{}
	sumAttempts := 0
	for _, r := range exp.Requests {
		anchor, ok := spans[r.Key]
		if !ok {
			t.Errorf("%s: anchor span not in traces.jsonl", r.Key)
			continue
		}
		traceID := anchor.traceID
		if r.Attempts != len(r.AttemptSpanIDs) {
			t.Errorf("%s: attempts=%d but %d attempt_span_ids", r.Key, r.Attempts, len(r.AttemptSpanIDs))
		}
		sumAttempts += r.Attempts
		var atts []*spanRec
		for _, id := range r.AttemptSpanIDs {
			id = attemptKey(traceID, id)
			a, ok := spans[id]
			if !ok {
				t.Errorf("%s: attempt span %s not exported", r.Key, id)
				continue
			}
			if !a.attempt {
				t.Errorf("%s: attempt span %s (%s) does not look like a physical attempt", r.Key, id, a.name)
			}
			if seenAttempt[id] {
				t.Errorf("%s: attempt span %s claimed twice", r.Key, id)
			}
			seenAttempt[id] = true
			atts = append(atts, a)
		}
		for i := 1; i < len(atts); i++ {
			if atts[i].start < atts[i-1].start {
				t.Errorf("%s: attempt_span_ids not in start order", r.Key)
			}
		}
		// layers multiply out to the physical attempts
		prod := 1.0
		for _, l := range r.Layers {
			prod *= l
		}
		if math.Abs(prod-float64(r.Attempts)) > 1e-9 {
			t.Errorf("%s: layers %v multiply to %v, attempts %d", r.Key, r.Layers, prod, r.Attempts)
		}
		// one trigger per failed attempt: all fail on error, all but the
		// one whose answer was used on ok
		wantTrig := r.Attempts
		switch r.Outcome {
		case "ok":
			wantTrig--
		case "error":
		default:
			t.Errorf("%s: outcome %q", r.Key, r.Outcome)
		}
		if len(r.Triggers) != wantTrig {
			t.Errorf("%s: %d triggers, want %d", r.Key, len(r.Triggers), wantTrig)
		}
		for _, tr := range r.Triggers {
			if !knownTriggers[tr] {
				t.Errorf("%s: unknown trigger %q", r.Key, tr)
			}
		}
		// latency recomputes from the timestamps
		var lat float64
		switch r.LatencyBasis {
		case "anchor span duration":
			lat = float64(anchor.end-anchor.start) / 1e6
		case "first attempt start to last attempt end":
			if len(atts) == 0 {
				continue
			}
			lo, hi := atts[0].start, atts[0].end
			for _, a := range atts {
				lo = min(lo, a.start)
				hi = max(hi, a.end)
			}
			lat = float64(hi-lo) / 1e6
			if r.Key != attemptKey(traceID, r.AttemptSpanIDs[0]) {
				t.Errorf("%s: no logical span, so the key must be the first attempt", r.Key)
			}
		default:
			t.Errorf("%s: latency_basis %q", r.Key, r.LatencyBasis)
		}
		if math.Abs(lat-r.LatencyMS) > 0.001 {
			t.Errorf("%s: latency_ms %.3f, timestamps say %.6f", r.Key, r.LatencyMS, lat)
		}
		// attempts lie inside the anchor when it is a logical span
		if r.LatencyBasis == "anchor span duration" {
			for _, a := range atts {
				if a.start < anchor.start || a.end > anchor.end {
					t.Errorf("%s: attempt %s outside its anchor", r.Key, a.spanID)
				}
			}
		}
		// route is the first attempt's server.address where spans carry one
		if r.Route != nil && len(atts) > 0 && atts[0].host != "" && atts[0].host != *r.Route {
			t.Errorf("%s: route %q, first attempt server.address %q", r.Key, *r.Route, atts[0].host)
		}
		for _, k := range r.AltKeys {
			if _, ok := spans[k]; !ok {
				t.Errorf("%s: alt key %s not exported", r.Key, k)
			}
		}
		for _, id := range r.MissingParents {
			if _, ok := spans[traceID+":"+id]; ok {
				t.Errorf("%s: missing parent %s is exported", r.Key, id)
			}
			refs := 0
			for _, a := range atts {
				if a.parent == id {
					refs++
				}
			}
			if refs == 0 {
				t.Errorf("%s: missing parent %s is no attempt's parent", r.Key, id)
			}
		}
		if r.TTFTMS != nil {
			first := uint64(math.MaxUint64)
			for _, e := range anchor.events {
				first = min(first, e)
			}
			got := float64(first-anchor.start) / 1e6
			if math.Abs(got-*r.TTFTMS) > 0.001 {
				t.Errorf("%s: ttft_ms %.3f, first event says %.6f", r.Key, *r.TTFTMS, got)
			}
		}
	}
	// every attempt-like span in the file belongs to exactly one request
	n := 0
	for k, s := range spans {
		if s.attempt {
			n++
			if !seenAttempt[k] {
				t.Errorf("attempt-like span %s (%s) is in no expected request", k, s.name)
			}
		}
	}
	if n != sumAttempts {
		t.Errorf("%d attempt-like spans, expected.json counts %d attempts", n, sumAttempts)
	}
}
