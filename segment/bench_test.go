package segment

import (
	"context"
	"strconv"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
)

// benchRequests is about what a 1M-span dump rebuilds to: each logical
// request is an anchor span, one or more attempt spans and their server
// spans.
const benchRequests = 250_000

// benchStore fills a database with benchRequests requests, their attempts
// and 1M spans, drawn in SQL from hashes of the row number so the data is
// the same on every run: 15% retried (a third of those twice), 2% failed,
// six triggers, four regions.
func benchStore(b *testing.B) *store.Store {
	b.Helper()
	st := newStore(b)
	ctx := context.Background()
	exec := func(q string) {
		if _, err := st.ExecText(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TEMP TABLE bench AS SELECT i, 'req-' || i AS id,
			(hash(i) % 1000) / 1000.0 AS u, (hash(i * 7 + 1) % 1000) / 1000.0 AS v
		 FROM range(` + strconv.Itoa(benchRequests) + `) t(i)`)
	insertSelect(b, st, "requests", map[string]string{
		"request_id": "id", "trace_id": "'trace-' || id", "span_id": "'span-' || id", "linkage": "'single'",
		"service": "'svc-' || (i % 5)", "operation": "'chat'", "route": "'route-' || (i % 3)",
		"final_route": "'route-' || (i % 3)", "model": "'model-' || (i % 4)", "final_model": "'model-' || (i % 4)",
		"stream": "i % 4 = 0", "start_ns": "1767225600000000000 + i * 1000000",
		"end_ns":        "1767225600000000000 + i * 1000000 + 500000000",
		"latency_ms":    "100 + 900 * v + CASE WHEN u < 0.15 THEN 2000 * u * 10 ELSE 0 END",
		"attempts":      "CASE WHEN u < 0.05 THEN 3 WHEN u < 0.15 THEN 2 ELSE 1 END",
		"outcome":       "CASE WHEN u < 0.02 THEN 'error' ELSE 'ok' END",
		"final_trigger": "CASE WHEN u < 0.02 THEN 'timeout' END",
		"triggers": "CASE WHEN u < 0.15 THEN [['timeout', 'rate_limited', 'server_error', 'connection', " +
			"'unknown', 'cancelled'][1 + i % 6]] ELSE [] END",
		"ttft_ms":      "CASE WHEN i % 4 = 0 THEN 50 + 100 * v END",
		"input_tokens": "hash(i) % 20000", "output_tokens": "hash(i * 3) % 2000",
	}, "bench")
	insertSelect(b, st, "attempts", map[string]string{
		"request_id": "r.request_id", "trace_id": "r.trace_id", "span_id": "'att-' || o || '-' || r.request_id",
		"ordinal": "o", "service": "r.service", "name": "'POST'", "route": "r.route", "model": "r.model",
		"operation": "r.operation", "start_ns": "r.start_ns", "end_ns": "r.end_ns",
		"elapsed_ms": "r.latency_ms / r.attempts", "outcome": "'ok'", "is_final": "o = r.attempts",
	}, "requests r, range(1, 4) t(o) WHERE o <= r.attempts")
	exec(`INSERT INTO resources VALUES (1, MAP {'service.name': 'svc'})`)
	exec(`INSERT INTO spans (trace_id, span_id, name, start_ns, end_ns, duration_ns, attributes, resource_id, file_id)
		 SELECT 'trace-' || id, CASE WHEN k = 0 THEN 'span-' || id ELSE 'child-' || k || '-' || id END, 'chat',
			0, 1, 1, map_from_entries([{'k': 'cloud.region', 'v': 'region-' || (i % 4)}, {'k': 'http.request.method', 'v': 'POST'},
				{'k': 'user.id', 'v': 'user-' || i}]),
			1, 1
		 FROM bench, range(4) t(k)`)
	exec(`DROP TABLE bench`)
	return st
}

func benchCompute(b *testing.B, spec Spec) {
	st := benchStore(b)
	var res Result
	for b.Loop() {
		var err error
		res, err = Compute(context.Background(), st, spec)
		if err != nil {
			b.Fatal(err)
		}
	}
	if res.Workload.LogicalRequests != benchRequests {
		b.Fatalf("%d requests, want %d", res.Workload.LogicalRequests, benchRequests)
	}
	b.ReportMetric(float64(len(res.Segments)), "segments")
}

// BenchmarkComputeByTrigger is report --by trigger on a 1M-span database.
func BenchmarkComputeByTrigger(b *testing.B) {
	benchCompute(b, Spec{By: []Dim{{Kind: KindTrigger}}})
}

// BenchmarkComputeByRegionModel joins the anchor spans for an attribute.
func BenchmarkComputeByRegionModel(b *testing.B) {
	benchCompute(b, Spec{By: []Dim{{Kind: KindAttr, Name: "cloud.region"}, {Kind: KindModel}}})
}

// BenchmarkComputeByUser is report --by attr:user.id --min-cohort 1 with a
// user per request: 250,000 cohorts, of which the largest 999 are shown and
// the rest pooled into (other). Its B/op is what the cohorts cost in Go.
func BenchmarkComputeByUser(b *testing.B) {
	b.ReportAllocs()
	benchCompute(b, Spec{By: []Dim{{Kind: KindAttr, Name: "user.id"}}, MinCohort: 1})
}

// BenchmarkComputeByTriggerCI adds bootstrap intervals (1,000 resamples).
func BenchmarkComputeByTriggerCI(b *testing.B) {
	benchCompute(b, Spec{By: []Dim{{Kind: KindTrigger}}, CI: true})
}

// BenchmarkComputeManyWorkloadAndTrigger is what a default report
// computes: the workload by the findings' dimensions and the segments by
// trigger, from one read of the requests.
func BenchmarkComputeManyWorkloadAndTrigger(b *testing.B) {
	st := benchStore(b)
	specs := []Spec{
		{By: []Dim{{Kind: KindService}, {Kind: KindOperation}, {Kind: KindRoute}}, MinCohort: 1, Samples: true},
		{By: []Dim{{Kind: KindTrigger}}},
	}
	for b.Loop() {
		if _, err := ComputeMany(context.Background(), st, specs); err != nil {
			b.Fatal(err)
		}
	}
}
