package sim

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// dumpSpan is a span as read back from the generated pdata.
type dumpSpan struct {
	key, parentKey string
	service, scope string
	span           ptrace.Span
}

// dump indexes generated traces by "trace:span" key.
type dump struct {
	spans    map[string]*dumpSpan
	children map[string][]*dumpSpan
}

func index(t *testing.T, batches []ptrace.Traces) *dump {
	t.Helper()
	d := &dump{spans: map[string]*dumpSpan{}, children: map[string][]*dumpSpan{}}
	for _, td := range batches {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			service, _ := rs.Resource().Attributes().Get("service.name")
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					sp := ss.Spans().At(k)
					tid, sid := sp.TraceID(), sp.SpanID()
					if tid.IsEmpty() || sid.IsEmpty() {
						t.Fatalf("span %q has a zero id", sp.Name())
					}
					key := fmt.Sprintf("%x:%x", tid[:], sid[:])
					if _, dup := d.spans[key]; dup {
						t.Fatalf("span %s emitted twice", key)
					}
					ds := &dumpSpan{key: key, service: service.Str(), scope: ss.Scope().Name(), span: sp}
					if p := sp.ParentSpanID(); !p.IsEmpty() {
						ds.parentKey = fmt.Sprintf("%x:%x", tid[:], p[:])
					}
					d.spans[key] = ds
				}
			}
		}
	}
	for _, s := range d.spans {
		if s.parentKey != "" {
			d.children[s.parentKey] = append(d.children[s.parentKey], s)
		}
	}
	return d
}

func (d *dump) get(t *testing.T, key string) *dumpSpan {
	t.Helper()
	s, ok := d.spans[key]
	if !ok {
		t.Fatalf("span %s is not in the output", key)
	}
	return s
}

// isAttemptLike: CLIENT spans, and gRFC A72 Attempt spans (INTERNAL).
func isAttemptLike(s *dumpSpan) bool {
	return s.span.Kind() == ptrace.SpanKindClient || strings.HasPrefix(s.span.Name(), "Attempt.")
}

// lowestAttempts finds, under root, the attempt-like spans that have no
// attempt-like descendants: the physical attempts by this package's
// conventions.
func (d *dump) lowestAttempts(root string) []*dumpSpan {
	var out []*dumpSpan
	var walk func(key string) bool
	walk = func(key string) bool {
		found := false
		for _, c := range d.children[key] {
			below := walk(c.key)
			if isAttemptLike(c) {
				found = true
				if !below {
					out = append(out, c)
				}
			}
			found = found || below
		}
		return found
	}
	walk(root)
	return out
}

func strAttr(s *dumpSpan, key string) string {
	v, ok := s.span.Attributes().Get(key)
	if !ok {
		return ""
	}
	if v.Type() == pcommon.ValueTypeSlice {
		return v.Slice().At(0).AsString()
	}
	return v.AsString()
}

func generate(t *testing.T, cfg Config) *Result {
	t.Helper()
	res, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func smallConfig(requests int) Config {
	cfg := DefaultConfig()
	cfg.Requests = requests
	return cfg
}

func render(t *testing.T, res *Result) (traces, truth []byte) {
	t.Helper()
	var tb, jb bytes.Buffer
	if err := WriteJSONLines(&tb, res.Traces); err != nil {
		t.Fatal(err)
	}
	if err := WriteTruth(&jb, res.Truth); err != nil {
		t.Fatal(err)
	}
	return tb.Bytes(), jb.Bytes()
}

func TestSameSeedSameBytes(t *testing.T) {
	a1, t1 := render(t, generate(t, smallConfig(600)))
	a2, t2 := render(t, generate(t, smallConfig(600)))
	if !bytes.Equal(a1, a2) || !bytes.Equal(t1, t2) {
		t.Fatal("two runs with the same seed differ")
	}
	other := smallConfig(600)
	other.Seed = 2
	b1, u1 := render(t, generate(t, other))
	if bytes.Equal(a1, b1) || bytes.Equal(t1, u1) {
		t.Fatal("seeds 1 and 2 produced the same output")
	}
}

// TestTruthMatchesSpans checks every truth request against the spans: the
// anchor and attempt spans exist, attempts are the lowest attempt-like
// spans under a logical anchor, and per-shape conventions hold.
func TestTruthMatchesSpans(t *testing.T) {
	cfg := smallConfig(1500)
	res := generate(t, cfg)
	d := index(t, res.Traces)
	seen := map[Shape]int{}
	for _, r := range res.Truth.Requests {
		seen[r.Shape]++
		anchor := d.get(t, r.Key)
		if r.Operation != anchor.span.Name() || r.Service != anchor.service {
			t.Errorf("%s: operation/service %q/%q, anchor has %q/%q", r.Key, r.Operation, r.Service, anchor.span.Name(), anchor.service)
		}
		if uint64(r.StartNs) != uint64(anchor.span.StartTimestamp()) {
			t.Errorf("%s: start_ns %d is not the anchor's start", r.Key, r.StartNs)
		}
		if len(r.AttemptList) != r.Attempts {
			t.Fatalf("%s: %d attempts but %d listed", r.Key, r.Attempts, len(r.AttemptList))
		}
		listed := map[string]bool{}
		for _, a := range r.AttemptList {
			s := d.get(t, a.Span)
			if uint64(a.StartNs) != uint64(s.span.StartTimestamp()) || uint64(a.EndNs) != uint64(s.span.EndTimestamp()) {
				t.Errorf("%s: attempt %s times differ from its span", r.Key, a.Span)
			}
			if !isAttemptLike(s) || s.service != r.Service {
				t.Errorf("%s: attempt span %s is %v %q in %s", r.Key, a.Span, s.span.Kind(), s.span.Name(), s.service)
			}
			listed[a.Span] = true
		}
		if len(listed) != r.Attempts {
			t.Errorf("%s: attempt spans repeat", r.Key)
		}
		if r.Key == r.AttemptList[0].Span {
			continue // split, and orphans whose LLM span was dropped
		}
		found := d.lowestAttempts(r.Key)
		if len(found) != r.Attempts {
			t.Errorf("%s (%s/%s): truth says %d attempts, spans show %d", r.Key, r.Shape, r.Variant, r.Attempts, len(found))
		}
		for _, s := range found {
			if !listed[s.key] {
				t.Errorf("%s: span %s under the anchor is not a listed attempt", r.Key, s.key)
			}
		}
	}
	for _, s := range AllShapes() {
		if seen[s] < 50 {
			t.Errorf("shape %s: only %d requests", s, seen[s])
		}
	}
}

func intAttr(s *dumpSpan, key string) (int64, bool) {
	v, ok := s.span.Attributes().Get(key)
	if !ok || v.Type() != pcommon.ValueTypeInt {
		return 0, false
	}
	return v.Int(), true
}

// TestShapeConventions checks the attribute contract of each shape.
func TestShapeConventions(t *testing.T) {
	res := generate(t, smallConfig(2000))
	d := index(t, res.Traces)
	counts := map[string]int{}
	for _, r := range res.Truth.Requests {
		anchor := d.get(t, r.Key)
		attempts := make([]*dumpSpan, len(r.AttemptList))
		for i, a := range r.AttemptList {
			attempts[i] = d.get(t, a.Span)
		}
		for i, s := range attempts {
			try := r.AttemptList[i].Try
			n := try[len(try)-1]
			check := func(what string, got, want any) {
				t.Helper()
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s %s/%s attempt %d: %s = %v, want %v", r.Key, r.Shape, r.Variant, i+1, what, got, want)
				}
			}
			switch r.Variant {
			case variantAttrsHTTP, variantAttrsLLM, variantEvaluator:
				got, _ := intAttr(s, "retryscope.attempt")
				check("retryscope.attempt", got, n)
				check("retryscope.request.id", strAttr(s, "retryscope.request.id"), strAttr(attempts[0], "retryscope.request.id"))
			case variantStainless, variantOpenAI, variantAnthropic, variantNested, variantNestedEval, variantDropped:
				check("x-stainless-retry-count", strAttr(s, "http.request.header.x-stainless-retry-count"), n-1)
			case variantAWS, variantAWSID:
				check("amz-sdk-request", strAttr(s, "http.request.header.amz-sdk-request"), fmt.Sprintf("attempt=%d; max=3", n))
				check("amz-sdk-invocation-id", strAttr(s, "http.request.header.amz-sdk-invocation-id"), strAttr(attempts[0], "http.request.header.amz-sdk-invocation-id"))
			case variantGRPC:
				got, _ := intAttr(s, "previous-rpc-attempts")
				check("previous-rpc-attempts", got, i)
				check("kind", s.span.Kind(), ptrace.SpanKindInternal)
				check("anchor name", strings.HasPrefix(anchor.span.Name(), "Sent."), true)
			}
			if r.Shape == ShapeExplicit && r.Variant == variantEnvoy {
				check("x-envoy-attempt-count", strAttr(s, "http.request.header.x-envoy-attempt-count"), n)
			}
			if r.Shape == ShapeResend {
				key := map[string]string{variantJava: "http.request.resend_count", variantEnvoy: "retry.count"}[r.Variant]
				got, ok := intAttr(s, key)
				check(key+" present", ok, i > 0)
				check(key, got, i)
				check("parent", s.parentKey, r.Key)
			}
			if r.Shape == ShapeSplit {
				check("parent", s.parentKey, "")
				check("own trace", s.key[:32] != attempts[0].key[:32] || i == 0, true)
			}
			if r.Shape == ShapeOrphan && r.Outcome == "error" {
				_, parentExported := d.spans[s.parentKey]
				check("parent exported", parentExported, false)
				counts["orphaned"]++
			}
			if ra := r.AttemptList[i].RetryAfterS; ra > 0 {
				check("retry-after", strAttr(s, "http.response.header.retry-after"), ra)
				counts["retry-after"]++
			}
		}
		if r.Shape == ShapeOrphan && r.Outcome == "error" {
			root := ""
			for _, s := range d.spans {
				if s.key[:32] == r.Key[:32] && s.parentKey == "" {
					root = s.span.Name()
				}
			}
			if root != "POST /v1/answer" {
				t.Errorf("%s: orphan trace has root %q", r.Key, root)
			}
		}
		if r.Shape == ShapeHedge && r.Attempts == 2 {
			if r.AttemptList[1].StartNs >= r.AttemptList[0].EndNs {
				t.Errorf("%s: hedged attempts do not overlap", r.Key)
			}
			counts["hedged"]++
		}
		if r.Route != r.FinalRoute {
			counts["fallback"]++
		}
	}
	for _, what := range []string{"orphaned", "retry-after", "hedged", "fallback"} {
		if counts[what] == 0 {
			t.Errorf("no request shows %s", what)
		}
	}
}

// TestDecomposition: the parts add up to the latency, none is negative, and
// where backoff events are emitted they account for backoff_ms exactly.
func TestDecomposition(t *testing.T) {
	res := generate(t, smallConfig(2000))
	d := index(t, res.Traces)
	split := 0
	for _, r := range res.Truth.Requests {
		sum := r.TFailedMs + r.BackoffMs + r.OverheadMs + r.TFinalMs
		if math.Abs(sum-r.LatencyMs) > 1e-3 {
			t.Errorf("%s: parts sum to %.6f ms, latency %.6f ms", r.Key, sum, r.LatencyMs)
		}
		for _, v := range []float64{r.TFailedMs, r.BackoffMs, r.OverheadMs, r.TFinalMs, r.HiddenWorkMs} {
			if v < 0 {
				t.Errorf("%s: negative part in %+v", r.Key, r)
			}
		}
		if math.Abs(r.LatencyMs-float64(r.EndNs-r.StartNs)/1e6) > 1e-6 {
			t.Errorf("%s: latency does not match start/end", r.Key)
		}
		if r.Attempts == 1 && (r.TFailedMs != 0 || r.BackoffMs != 0) {
			t.Errorf("%s: one attempt but failed/backoff time", r.Key)
		}
		if r.TTFTMs != nil && (*r.TTFTMs <= 0 || *r.TTFTMs > r.LatencyMs) {
			t.Errorf("%s: ttft %.3f outside (0, latency]", r.Key, *r.TTFTMs)
		}
		if !r.GapSplit || r.Attempts == 1 {
			continue
		}
		split++
		if ra := retryAfterMs(r); ra > 0 && backoffEventsMs(d, r) == 0 {
			// Split by the Retry-After headers alone: the waits are theirs.
			if math.Abs(ra-r.BackoffMs) > 1e-3 {
				t.Errorf("%s: Retry-After waits sum to %.6f ms, truth %.6f ms", r.Key, ra, r.BackoffMs)
			}
			continue
		}
		if got := backoffEventsMs(d, r); math.Abs(got-r.BackoffMs) > 1e-3 {
			t.Errorf("%s: retry.backoff events sum to %.6f ms, truth %.6f ms", r.Key, got, r.BackoffMs)
		}
	}
	if split == 0 {
		t.Error("no retried request has backoff events")
	}
}

// retryAfterMs sums the Retry-After of every attempt but the last, or is
// 0 unless each of them carried one.
func retryAfterMs(r Request) float64 {
	var sum float64
	for _, a := range r.AttemptList[:len(r.AttemptList)-1] {
		if a.RetryAfterS == 0 {
			return 0
		}
		sum += float64(a.RetryAfterS) * 1000
	}
	return sum
}

// backoffEventsMs sums retry.backoff_ms over the request's spans: the
// anchor's subtree and, for traces without a logical span, the attempts.
func backoffEventsMs(d *dump, r Request) float64 {
	keys := map[string]bool{}
	var walk func(string)
	walk = func(k string) {
		keys[k] = true
		for _, c := range d.children[k] {
			walk(c.key)
		}
	}
	walk(r.Key)
	for _, a := range r.AttemptList {
		keys[a.Span] = true
	}
	total := 0.0
	for k := range keys {
		evs := d.spans[k].span.Events()
		for i := 0; i < evs.Len(); i++ {
			if evs.At(i).Name() == "retry.backoff" {
				v, _ := evs.At(i).Attributes().Get("retry.backoff_ms")
				total += v.Double()
			}
		}
	}
	return total
}

func TestTriggersAndLayers(t *testing.T) {
	res := generate(t, smallConfig(2000))
	for _, r := range res.Truth.Requests {
		want := r.Attempts - 1
		if r.Outcome == "error" {
			want = r.Attempts
		}
		if len(r.Triggers) != want {
			t.Errorf("%s: %d triggers for %d attempts (%s)", r.Key, len(r.Triggers), r.Attempts, r.Outcome)
		}
		product := 1.0
		for _, m := range r.Layers {
			product *= m
		}
		if math.Abs(product-float64(r.Attempts)) > 1e-9 || r.LayerCounts[len(r.LayerCounts)-1] != r.Attempts {
			t.Errorf("%s: layers %v / counts %v do not give %d attempts", r.Key, r.Layers, r.LayerCounts, r.Attempts)
		}
		if r.InnerTries != nil {
			sum := 0
			for _, n := range r.InnerTries {
				sum += n
			}
			if sum != r.Attempts || len(r.InnerTries) != r.LayerCounts[0] {
				t.Errorf("%s: inner tries %v", r.Key, r.InnerTries)
			}
		}
		if r.Attempts > 3*3 {
			t.Errorf("%s: %d attempts exceeds app tries x SDK tries", r.Key, r.Attempts)
		}
	}
}

// TestRetryAfterHonoured: a sane client never retries a 429 sooner than its
// Retry-After said; naive ones may.
func TestRetryAfterHonoured(t *testing.T) {
	res := generate(t, smallConfig(3000))
	for _, r := range res.Truth.Requests {
		for i, a := range r.AttemptList[:len(r.AttemptList)-1] {
			if a.RetryAfterS == 0 || r.Naive || r.Shape == ShapeHedge {
				continue
			}
			if gap := r.AttemptList[i+1].StartNs - a.EndNs; gap < int64(a.RetryAfterS)*1e9 {
				t.Errorf("%s: retried %d ms after a 429 with Retry-After %d s", r.Key, gap/1e6, a.RetryAfterS)
			}
		}
	}
}

func TestPolicyNoneOneAttempt(t *testing.T) {
	cfg := smallConfig(1500)
	cfg.Policy.Kind = PolicyNone
	cfg.Faults = DefaultFaults().Scale(3)
	res := generate(t, cfg)
	for _, r := range res.Truth.Requests {
		if r.Attempts != 1 {
			t.Fatalf("%s (%s): %d attempts under policy none", r.Key, r.Shape, r.Attempts)
		}
	}
	if res.Truth.Workload.FinalFailureRate == 0 {
		t.Error("no failures at three times the default fault rates")
	}
}

// Hedging reacts to slowness, not faults, so the hedge shape is left out.
func TestNoFaultsOneAttempt(t *testing.T) {
	cfg := smallConfig(1500)
	cfg.Faults = FaultMix{}
	cfg.Shapes = []Shape{ShapeExplicit, ShapeResend, ShapeGRPC, ShapeWrapped, ShapeSplit, ShapeOrphan}
	res := generate(t, cfg)
	for _, r := range res.Truth.Requests {
		if r.Attempts != 1 || r.Outcome != "ok" {
			t.Fatalf("%s (%s): %d attempts, %s, with no faults", r.Key, r.Shape, r.Attempts, r.Outcome)
		}
	}
	if len(res.Truth.Incidents) != 0 {
		t.Error("incidents reported with no faults")
	}
}

func TestAmplificationGrowsWithFaults(t *testing.T) {
	prev := 0.0
	for _, k := range []float64{0, 0.5, 1, 2, 4} {
		cfg := smallConfig(1500)
		cfg.Faults = DefaultFaults().Scale(k)
		a := generate(t, cfg).Truth.Workload.Amplification
		if a <= prev && k > 0 {
			t.Errorf("faults x%g: amplification %.3f, not above %.3f", k, a, prev)
		}
		prev = a
	}
}

// TestLoadSlowsService: the server's service time grows with attempts in
// flight, so a higher arrival rate makes first attempts slower.
func TestLoadSlowsService(t *testing.T) {
	meanFinal := func(rate float64) float64 {
		cfg := smallConfig(1500)
		cfg.Faults, cfg.Rate, cfg.Shapes = FaultMix{}, rate, []Shape{ShapeWrapped}
		total := 0.0
		res := generate(t, cfg)
		for _, r := range res.Truth.Requests {
			total += r.TFinalMs
		}
		return total / float64(len(res.Truth.Requests))
	}
	if low, high := meanFinal(2), meanFinal(40); high < low*1.1 {
		t.Errorf("mean attempt time %.0f ms at 40/s is not clearly above %.0f ms at 2/s", high, low)
	}
}

func TestRetryBudgetLimitsRetries(t *testing.T) {
	cfg := smallConfig(1500)
	cfg.Faults = DefaultFaults().Scale(4)
	free := generate(t, cfg).Truth.Workload
	cfg.Policy.Budget = 0.05
	capped := generate(t, cfg).Truth.Workload
	if capped.Amplification >= free.Amplification {
		t.Errorf("budget did not lower amplification: %.3f vs %.3f", capped.Amplification, free.Amplification)
	}
}

func TestWorkloadMatchesRequests(t *testing.T) {
	res := generate(t, smallConfig(800))
	w := workloadOf(res.Truth.Requests)
	if w != res.Truth.Workload {
		t.Fatalf("workload %+v, recomputed %+v", res.Truth.Workload, w)
	}
	if w.Amplification < 1 || w.RetryRate <= 0 || w.RetrySuccessRate <= 0 || w.FinalFailureRate <= 0 || w.DuplicatedOutputTokens <= 0 {
		t.Errorf("implausible default workload %+v", w)
	}
}

func TestWritersRoundTrip(t *testing.T) {
	res := generate(t, smallConfig(400))
	want := 0
	for _, td := range res.Traces {
		want += td.SpanCount()
	}

	var jl bytes.Buffer
	if err := WriteJSONLines(&jl, res.Traces); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(jl.String(), "\n"), "\n")
	if len(lines) != len(res.Traces) {
		t.Fatalf("%d lines for %d batches", len(lines), len(res.Traces))
	}
	got := 0
	var ju ptrace.JSONUnmarshaler
	for _, line := range lines {
		td, err := ju.UnmarshalTraces([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		got += td.SpanCount()
	}
	if got != want {
		t.Errorf("JSON lines: %d spans back, want %d", got, want)
	}

	var pb bytes.Buffer
	if err := WriteProtoFramed(&pb, res.Traces); err != nil {
		t.Fatal(err)
	}
	got = 0
	var pu ptrace.ProtoUnmarshaler
	for b := pb.Bytes(); len(b) > 0; {
		n := binary.BigEndian.Uint32(b)
		td, err := pu.UnmarshalTraces(b[4 : 4+n])
		if err != nil {
			t.Fatal(err)
		}
		got += td.SpanCount()
		b = b[4+n:]
	}
	if got != want {
		t.Errorf("proto: %d spans back, want %d", got, want)
	}
}

func TestTruthJSONShape(t *testing.T) {
	_, truth := render(t, generate(t, smallConfig(50)))
	var doc map[string]any
	if err := json.Unmarshal(truth, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != TruthSchema {
		t.Errorf("schema %v", doc["schema"])
	}
	req := doc["requests"].([]any)[0].(map[string]any)
	for _, k := range []string{"key", "shape", "service", "operation", "model", "route", "attempts", "layers", "outcome", "start_ns",
		"end_ns", "latency_ms", "ttft_ms", "t_failed_ms", "backoff_ms", "overhead_ms", "t_final_ms", "gap_split", "triggers",
		"duplicated_output_tokens", "input_tokens", "output_tokens", "hidden_work_ms"} {
		if _, ok := req[k]; !ok {
			t.Errorf("request lacks %q", k)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	bad := []Config{
		{Requests: 0},
		{Requests: 1, Shapes: []Shape{"nope"}},
		{Requests: 1, Faults: FaultMix{RateLimited: 0.6, ServerError: 0.6}},
		{Requests: 1, Policy: Policy{Kind: "sometimes"}},
	}
	for _, cfg := range bad {
		if _, err := Generate(cfg); err == nil {
			t.Errorf("Generate(%+v) succeeded", cfg)
		}
	}
	if _, err := ParseFaults("429=0.1,bogus=1"); err == nil {
		t.Error("ParseFaults accepted an unknown key")
	}
	f, err := ParseFaults(DefaultFaults().String())
	if err != nil || f != DefaultFaults() {
		t.Errorf("ParseFaults(String()) = %+v, %v", f, err)
	}
}
