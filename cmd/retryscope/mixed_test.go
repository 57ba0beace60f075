package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// mixedPartRequests sizes each shape's part so that every part holds about
// 28.7k spans and the seven together about 200k (spans per logical request,
// measured with --services 10: explicit 3.7, resend 3.3, grpc 3.7, wrapped
// 5.1, split 2.2, orphan 5.5, hedge 3.1).
var mixedPartRequests = map[sim.Shape]int{
	sim.ShapeExplicit: 7800,
	sim.ShapeResend:   8750,
	sim.ShapeGRPC:     7700,
	sim.ShapeWrapped:  5600,
	sim.ShapeSplit:    13000,
	sim.ShapeOrphan:   5200,
	sim.ShapeHedge:    9400,
}

// mixedScale divides the parts' sizes: by 8 (25k spans in all) unless
// the long checks are asked for (testkit.Long).
func mixedScale() int {
	if testkit.Long() {
		return 1
	}
	return 8
}

// mixedReport is the part of `report --format json` this test reads. It is
// declared here, not taken from report.go, so the test reads the printed
// JSON as a user would.
type mixedReport struct {
	Schema   string `json:"schema"`
	Workload struct {
		LogicalRequests        int64   `json:"logical_requests"`
		Attempts               int64   `json:"attempts"`
		Amplification          float64 `json:"amplification"`
		RetryRate              float64 `json:"retry_rate"`
		RetrySuccessRate       float64 `json:"retry_success_rate"`
		FinalFailureRate       float64 `json:"final_failure_rate"`
		DuplicatedOutputTokens int64   `json:"duplicated_output_tokens"`
		RetriedRequests        int64   `json:"retried_requests"`
		FailedRequests         int64   `json:"failed_requests"`
		LatencyMs              struct {
			All struct {
				N    int64    `json:"n"`
				Mean *float64 `json:"mean"`
			} `json:"all"`
		} `json:"latency_ms"`
	} `json:"workload"`
	Ingest struct {
		Spans    int64 `json:"spans"`
		Rejected int64 `json:"rejected"`
	} `json:"ingest"`
}

// mixedCounts are the additive figures of a report, plus the retried
// requests that succeeded (recovered from retry_success_rate).
type mixedCounts struct {
	requests, attempts, retried, failed, retriedOK, dupTokens int64
}

func (c *mixedCounts) add(o mixedCounts) {
	*c = mixedCounts{c.requests + o.requests, c.attempts + o.attempts, c.retried + o.retried,
		c.failed + o.failed, c.retriedOK + o.retriedOK, c.dupTokens + o.dupTokens}
}

// rates recomputes the report's rates from counts, as docs/report.md,
// "report" defines them.
func (c mixedCounts) rates() (amplification, retryRate, retrySuccessRate, finalFailureRate float64) {
	n := float64(c.requests)
	if c.requests > 0 {
		amplification, retryRate, finalFailureRate = float64(c.attempts)/n, float64(c.retried)/n, float64(c.failed)/n
	}
	if c.retried > 0 {
		retrySuccessRate = float64(c.retriedOK) / float64(c.retried)
	}
	return
}

// mixedRequest is one rebuilt logical request as the requests and attempts
// tables hold it.
type mixedRequest struct {
	linkage  string
	attempts string // the attempt spans, trace_id:span_id, sorted
}

// mixedIngestAndReport ingests the files into a new database and returns
// its JSON report.
func mixedIngestAndReport(t *testing.T, db string, files ...string) mixedReport {
	t.Helper()
	mustRunCLI(t, append([]string{"ingest", "--db", db, "--quiet"}, files...)...)
	out, _ := mustRunCLI(t, "report", "--format", "json", "--db", db)
	var rep mixedReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report --db %s: %v\n%s", db, err, out)
	}
	if rep.Schema != "retryscope.report/v1" || rep.Ingest.Rejected != 0 {
		t.Fatalf("report --db %s: schema %q, %d spans rejected", db, rep.Schema, rep.Ingest.Rejected)
	}
	return rep
}

func mixedCountsOf(t *testing.T, name string, rep mixedReport) mixedCounts {
	t.Helper()
	w := rep.Workload
	ok := w.RetrySuccessRate * float64(w.RetriedRequests)
	if math.Abs(ok-math.Round(ok)) > 1e-6 {
		t.Fatalf("%s: retry_success_rate %v of %d retried requests is not a whole number of requests", name, w.RetrySuccessRate, w.RetriedRequests)
	}
	return mixedCounts{requests: w.LogicalRequests, attempts: w.Attempts, retried: w.RetriedRequests, failed: w.FailedRequests,
		retriedOK: int64(math.Round(ok)), dupTokens: w.DuplicatedOutputTokens}
}

// mixedRequests reads the rebuilt requests of a database, by request id.
func mixedRequests(t *testing.T, db string) map[string]mixedRequest {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.QueryText(ctx, `
		SELECT r.request_id, r.linkage,
		       coalesce((SELECT string_agg(a.trace_id || ':' || a.span_id, ',' ORDER BY a.trace_id, a.span_id)
		                 FROM attempts a WHERE a.request_id = r.request_id), '')
		FROM requests r`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]mixedRequest{}
	for rows.Next() {
		var id string
		var r mixedRequest
		if err := rows.Scan(&id, &r.linkage, &r.attempts); err != nil {
			t.Fatal(err)
		}
		if _, dup := out[id]; dup {
			t.Errorf("%s: request id %s twice in requests", db, id)
		}
		out[id] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func mixedWrite(t *testing.T, path string, batches []ptrace.Traces, proto bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	write := sim.WriteJSONLines
	if proto {
		write = sim.WriteProtoFramed
	}
	if err := write(f, batches); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMixedDumpIsSumOfParts is acceptance item 2 of issue 3: a mixed dump
// (all shapes, 10 services, ~200k spans) gives the same figures as the sum
// of its parts. Each shape is generated as a part of its own (own seed, the
// same 10 services and the same simulated hour, so the parts overlap in
// time and share service names); the mixed file holds every part's batches
// interleaved. Counts must add up exactly, rates must be the rates of the
// summed counts, the mean latency the request-weighted mean of the parts',
// the mixed report must equal the truth of all parts together, and the
// mixed database must hold exactly the parts' logical requests, each with
// the same attempts.
func TestMixedDumpIsSumOfParts(t *testing.T) {
	if testing.Short() {
		t.Skip("generates, ingests and reports about 25k spans (200k with RETRYSCOPE_LONG=1)")
	}
	t.Parallel()
	began := time.Now()
	dir := t.TempDir()

	type part struct {
		shape      sim.Shape
		file, db   string
		batches    []ptrace.Traces
		spans      int
		report     mixedReport
		truthFile  string
		truthCount int
	}
	var parts []*part
	totalSpans := 0
	for i, shape := range sim.AllShapes() {
		cfg := sim.DefaultConfig()
		cfg.Seed = int64(301 + i) // distinct seeds: distinct trace and span ids
		cfg.Shapes = []sim.Shape{shape}
		cfg.Services = 10
		cfg.Requests = mixedPartRequests[shape] / mixedScale()
		res, err := sim.Generate(cfg)
		if err != nil {
			t.Fatalf("%s: %v", shape, err)
		}
		p := &part{shape: shape, batches: res.Traces, db: filepath.Join(dir, string(shape)+".duckdb"),
			truthFile: filepath.Join(dir, string(shape)+".truth.json"), truthCount: len(res.Truth.Requests)}
		for _, td := range res.Traces {
			p.spans += td.SpanCount()
		}
		totalSpans += p.spans
		// Alternate the framings: JSON lines for even parts, Collector
		// proto framing for odd ones.
		proto := i%2 == 1
		p.file = filepath.Join(dir, string(shape)+map[bool]string{false: ".jsonl", true: ".pb"}[proto])
		mixedWrite(t, p.file, res.Traces, proto)
		f, err := os.Create(p.truthFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.WriteTruth(f, res.Truth); err != nil {
			t.Fatal(err)
		}
		f.Close()
		parts = append(parts, p)
	}
	t.Logf("%d spans in %d parts: %s", totalSpans, len(parts), func() string {
		var s []string
		for _, p := range parts {
			s = append(s, fmt.Sprintf("%s %d", p.shape, p.spans))
		}
		return strings.Join(s, ", ")
	}())
	if least := 190_000 / mixedScale(); totalSpans < least {
		t.Fatalf("parts hold %d spans, want at least %d", totalSpans, least)
	}

	// The mixed dump: round-robin over the parts' batches, so that every
	// part's spans are spread across the whole file.
	var mixed []ptrace.Traces
	for j := 0; ; j++ {
		added := false
		for _, p := range parts {
			if j < len(p.batches) {
				mixed = append(mixed, p.batches[j])
				added = true
			}
		}
		if !added {
			break
		}
	}
	mixedFile := filepath.Join(dir, "mixed.pb")
	mixedWrite(t, mixedFile, mixed, true)
	for _, p := range parts {
		p.batches = nil
	}
	t.Logf("generated and written in %v", time.Since(began).Round(time.Millisecond))

	phase := time.Now()
	var sum mixedCounts
	var latencySum float64
	var latencyN int64
	for _, p := range parts {
		p.report = mixedIngestAndReport(t, p.db, p.file)
		if p.report.Ingest.Spans != int64(p.spans) {
			t.Errorf("%s: %d spans stored, %d generated", p.shape, p.report.Ingest.Spans, p.spans)
		}
		c := mixedCountsOf(t, string(p.shape), p.report)
		sum.add(c)
		all := p.report.Workload.LatencyMs.All
		if all.Mean == nil || all.N != c.requests {
			t.Fatalf("%s: latency_ms.all n %d (mean null: %v), want n %d and a mean", p.shape, all.N, all.Mean == nil, c.requests)
		}
		latencySum += float64(all.N) * *all.Mean
		latencyN += all.N
	}
	t.Logf("parts ingested and reported in %v", time.Since(phase).Round(time.Millisecond))
	phase = time.Now()
	mixedDB := filepath.Join(dir, "mixed.duckdb")
	rep := mixedIngestAndReport(t, mixedDB, mixedFile)
	t.Logf("mixed dump ingested and reported in %v", time.Since(phase).Round(time.Millisecond))
	if rep.Ingest.Spans != int64(totalSpans) {
		t.Errorf("mixed: %d spans stored, %d generated", rep.Ingest.Spans, totalSpans)
	}

	// Counts: exactly the sums over the parts.
	got := mixedCountsOf(t, "mixed", rep)
	for _, f := range []struct {
		name      string
		got, want int64
	}{
		{"logical_requests", got.requests, sum.requests},
		{"attempts", got.attempts, sum.attempts},
		{"retried_requests", got.retried, sum.retried},
		{"failed_requests", got.failed, sum.failed},
		{"retried requests that succeeded", got.retriedOK, sum.retriedOK},
		{"duplicated_output_tokens", got.dupTokens, sum.dupTokens},
	} {
		if f.got != f.want {
			t.Errorf("mixed %s = %d, sum over parts %d", f.name, f.got, f.want)
		}
	}

	// Rates: those of the summed counts.
	w := rep.Workload
	amp, rr, rsr, ffr := sum.rates()
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"amplification", w.Amplification, amp},
		{"retry_rate", w.RetryRate, rr},
		{"retry_success_rate", w.RetrySuccessRate, rsr},
		{"final_failure_rate", w.FinalFailureRate, ffr},
	} {
		if math.Abs(f.got-f.want) > 1e-12 {
			t.Errorf("mixed %s = %.15g, from the summed counts %.15g", f.name, f.got, f.want)
		}
	}

	// Mean latency: the request-weighted mean of the parts' means.
	if all := w.LatencyMs.All; all.Mean == nil || all.N != latencyN {
		t.Errorf("mixed latency_ms.all: n %d (mean null: %v), want n %d", all.N, all.Mean == nil, latencyN)
	} else if want := latencySum / float64(latencyN); math.Abs(*all.Mean-want) > 1e-6 {
		t.Errorf("mixed latency_ms.all.mean = %.9f ms, weighted mean of the parts' %.9f ms", *all.Mean, want)
	}

	// The truth of all parts together, from the truth files.
	var truth []sim.Request
	for _, p := range parts {
		b, err := os.ReadFile(p.truthFile)
		if err != nil {
			t.Fatal(err)
		}
		var tr sim.Truth
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatalf("%s: %v", p.truthFile, err)
		}
		if len(tr.Requests) != p.truthCount {
			t.Fatalf("%s: %d requests read back, %d generated", p.truthFile, len(tr.Requests), p.truthCount)
		}
		truth = append(truth, tr.Requests...)
	}
	var want mixedCounts
	truthKeys := map[string]bool{}
	for _, r := range truth {
		if truthKeys[r.Key] {
			t.Fatalf("truth key %s in two parts: the parts must not share ids", r.Key)
		}
		truthKeys[r.Key] = true
		want.requests++
		want.attempts += int64(r.Attempts)
		want.dupTokens += int64(r.DuplicatedOutputTokens)
		if r.Outcome != "ok" {
			want.failed++
		}
		if r.Attempts > 1 {
			want.retried++
			if r.Outcome == "ok" {
				want.retriedOK++
			}
		}
	}
	if got != want {
		t.Errorf("mixed report counts %+v, truth of all parts %+v", got, want)
	}
	tamp, trr, trsr, tffr := want.rates()
	if math.Abs(w.Amplification-tamp) > 1e-12 || math.Abs(w.RetryRate-trr) > 1e-12 ||
		math.Abs(w.RetrySuccessRate-trsr) > 1e-12 || math.Abs(w.FinalFailureRate-tffr) > 1e-12 {
		t.Errorf("mixed rates %v %v %v %v, truth %v %v %v %v", w.Amplification, w.RetryRate, w.RetrySuccessRate,
			w.FinalFailureRate, tamp, trr, trsr, tffr)
	}

	// Per request: the mixed database holds exactly the parts' requests,
	// each with the same attempts and linkage rule.
	union := map[string]mixedRequest{}
	shapeOf := map[string]sim.Shape{}
	for _, p := range parts {
		for id, r := range mixedRequests(t, p.db) {
			if _, dup := union[id]; dup {
				t.Errorf("request id %s in parts %s and %s", id, shapeOf[id], p.shape)
			}
			union[id], shapeOf[id] = r, p.shape
		}
	}
	inMixed := mixedRequests(t, mixedDB)
	var missing, extra, differ []string
	for id, r := range union {
		m, ok := inMixed[id]
		switch {
		case !ok:
			missing = append(missing, fmt.Sprintf("%s (%s, %s)", id, shapeOf[id], r.linkage))
		case m != r:
			differ = append(differ, fmt.Sprintf("%s (%s): part %s [%s], mixed %s [%s]", id, shapeOf[id], r.linkage, r.attempts, m.linkage, m.attempts))
		}
	}
	for id, m := range inMixed {
		if _, ok := union[id]; !ok {
			extra = append(extra, fmt.Sprintf("%s (%s)", id, m.linkage))
		}
	}
	for _, f := range []struct {
		what string
		ids  []string
	}{{"in the parts but not in the mixed database", missing}, {"in the mixed database but in no part", extra},
		{"grouped differently in the mixed database", differ}} {
		if len(f.ids) == 0 {
			continue
		}
		slices.Sort(f.ids)
		t.Errorf("%d of %d requests %s, e.g.\n  %s", len(f.ids), len(union), f.what, strings.Join(f.ids[:min(10, len(f.ids))], "\n  "))
	}
	notTruth := 0
	byLinkage := map[string]int{}
	for id, m := range inMixed {
		byLinkage[m.linkage]++
		if !truthKeys[id] {
			notTruth++
		}
	}
	var linkages []string
	for l, n := range byLinkage {
		linkages = append(linkages, fmt.Sprintf("%s %d", l, n))
	}
	slices.Sort(linkages)
	t.Logf("mixed: %d request ids (parts: %d) by linkage: %s; %d are not truth keys",
		len(inMixed), len(union), strings.Join(linkages, ", "), notTruth)
	t.Logf("%d spans, %d logical requests, %d attempts; took %v",
		totalSpans, got.requests, got.attempts, time.Since(began).Round(time.Millisecond))
}
