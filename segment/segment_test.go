package segment

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/queries"
)

// degradedWorkload builds 3 models × 3 routes of 6,000 requests each. Every
// pair retries 10% of its requests once, after a 300 ms failure; the pair
// (m-b, r-2) is degraded: 40% retry, half of them twice, after a 3 s
// timeout each. Two small cohorts sit beside them: (m-a, r-x) with 20 and
// (m-a, r-y) with 15 requests, which pool into (m-a, (other)), and
// (m-d, r-1) with 10, which pools into ((other), (other)).
func degradedWorkload() (reqs []fakeRequest, truthAttempts int64, truthRetried int) {
	rng := rand.New(rand.NewPCG(7, 7))
	add := func(model, route string, n int) {
		degraded := model == "m-b" && route == "r-2"
		for i := range n {
			base := 200 * math.Exp(0.3*rng.NormFloat64())
			r := fakeRequest{
				id: fmt.Sprintf("%s-%s-%05d", model, route, i), service: "chat", operation: "chat " + model,
				model: model, route: route, finalRoute: route, startNS: int64(1e18) + int64(i)*1e6,
				latency: base, attempts: 1, ok: true, ttft: math.NaN(), first: base, second: math.NaN(),
			}
			u := rng.Float64()
			switch {
			case degraded && u < 0.2:
				r.attempts, r.trigger, r.first, r.second = 3, "timeout", 3000, 3000
				r.latency = 6000 + base + 100
			case degraded && u < 0.4:
				r.attempts, r.trigger, r.first, r.second = 2, "timeout", 3000, base
				r.latency = 3000 + base + 100
			case !degraded && u < 0.1:
				r.attempts, r.trigger, r.first, r.second = 2, "server_error", 300, base
				r.latency = 300 + base + 50
			}
			if r.attempts > 1 {
				truthRetried++
				r.dup = 40
			}
			truthAttempts += int64(r.attempts)
			reqs = append(reqs, r)
		}
	}
	for _, m := range []string{"m-a", "m-b", "m-c"} {
		for _, rt := range []string{"r-1", "r-2", "r-3"} {
			add(m, rt, 6000)
		}
	}
	add("m-a", "r-x", 20)
	add("m-a", "r-y", 15)
	add("m-d", "r-1", 10)
	return reqs, truthAttempts, truthRetried
}

// TestDegradedPairOnTop: sliced by model and route, the degraded pair
// leads both the retried-p99 and the amplification orders, the segments
// add up to the workload, and small cohorts are pooled, not dropped.
func TestDegradedPairOnTop(t *testing.T) {
	st := newStore(t)
	reqs, truthAttempts, truthRetried := degradedWorkload()
	insertRequests(t, st, reqs)
	dims, err := ParseDims("model,route", DimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sort := range []Sort{SortRetriedP99, SortAmplification} {
		res := compute(t, st, Spec{By: dims, Sort: sort})
		top := res.Segments[0]
		if top.By["model"] != "m-b" || top.By["route"] != "r-2" {
			t.Errorf("sort %s: top segment is %v, want m-b / r-2", sort, top.By)
		}
		if p := top.LatencyMs.Retried.P99; p == nil || *p < 6000 {
			t.Errorf("sort %s: degraded retried p99 = %s, want >= 6000 ms", sort, f64(p))
		}
		w := res.Workload
		if w.LogicalRequests != len(reqs) || w.Attempts != truthAttempts || w.Retried != truthRetried {
			t.Errorf("workload = %d requests, %d attempts, %d retried; want %d, %d, %d",
				w.LogicalRequests, w.Attempts, w.Retried, len(reqs), truthAttempts, truthRetried)
		}
		var sumReq, sumRetried, sumLat, sumFirst int
		var sumAtt, sumDup int64
		for _, s := range res.Segments {
			sumReq += s.LogicalRequests
			sumAtt += s.Attempts
			sumRetried += s.Retried
			sumDup += s.DuplicatedOutputTokens
			sumLat += s.LatencyMs.Retried.N
			sumFirst += s.FirstAttemptMs.All.N
		}
		if sumReq != w.LogicalRequests || sumAtt != w.Attempts || sumRetried != w.Retried ||
			sumDup != w.DuplicatedOutputTokens || sumLat != w.LatencyMs.Retried.N || sumFirst != w.FirstAttemptMs.All.N {
			t.Errorf("segments add up to %d/%d/%d/%d/%d/%d, workload is %d/%d/%d/%d/%d/%d", sumReq, sumAtt, sumRetried, sumDup, sumLat, sumFirst,
				w.LogicalRequests, w.Attempts, w.Retried, w.DuplicatedOutputTokens, w.LatencyMs.Retried.N, w.FirstAttemptMs.All.N)
		}
		if wantAmp := float64(truthAttempts) / float64(len(reqs)); math.Abs(w.Amplification-wantAmp) > 1e-12 {
			t.Errorf("workload amplification %v, want %v", w.Amplification, wantAmp)
		}
		if len(res.Segments) != 11 {
			t.Errorf("%d segments, want 9 cohorts and 2 pools", len(res.Segments))
		}
		pooledA := segmentBy(t, res, "m-a", Other)
		if !pooledA.RolledUp || pooledA.Cohorts != 2 || pooledA.LogicalRequests != 35 {
			t.Errorf("(m-a, other) = rolled_up %v, %d cohorts, %d requests; want true, 2, 35",
				pooledA.RolledUp, pooledA.Cohorts, pooledA.LogicalRequests)
		}
		pooled := segmentBy(t, res, Other, Other)
		if !pooled.RolledUp || pooled.LogicalRequests != 10 {
			t.Errorf("(other, other) = rolled_up %v, %d requests; want true, 10", pooled.RolledUp, pooled.LogicalRequests)
		}
		if last := res.Segments[len(res.Segments)-1]; !last.RolledUp {
			t.Errorf("sort %s: rolled-up segments do not come last", sort)
		}
	}
}

// TestPercentileSampleRule: p99 needs 500 observations (5 at or above it):
// a segment of 499 has none, one of 500 has the nearest-rank value.
func TestPercentileSampleRule(t *testing.T) {
	st := newStore(t)
	var reqs []fakeRequest
	for _, n := range []int{499, 500} {
		for i := 1; i <= n; i++ {
			reqs = append(reqs, fakeRequest{id: fmt.Sprintf("%d-%03d", n, i), model: fmt.Sprintf("n%d", n),
				latency: float64(i), attempts: 1, ok: true, ttft: math.NaN(), first: float64(i), second: math.NaN()})
		}
	}
	insertRequests(t, st, reqs)
	res := compute(t, st, Spec{By: []Dim{{Kind: KindModel}}})
	small, large := segmentBy(t, res, "n499"), segmentBy(t, res, "n500")
	if small.LatencyMs.All.P99 != nil {
		t.Errorf("499 requests: p99 = %s, want null", f64(small.LatencyMs.All.P99))
	}
	if p := small.LatencyMs.All.P95; p == nil || *p != 475 {
		t.Errorf("499 requests: p95 = %s, want 475 (rank ceil(0.95·499))", f64(p))
	}
	if p := large.LatencyMs.All.P99; p == nil || *p != 495 {
		t.Errorf("500 requests: p99 = %s, want 495 (rank ceil(0.99·500))", f64(p))
	}
	var js struct {
		Segments []struct {
			By        map[string]string `json:"by"`
			LatencyMs struct {
				All map[string]any `json:"all"`
			} `json:"latency_ms"`
		} `json:"segments"`
	}
	b, _ := json.Marshal(res)
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	for _, s := range js.Segments {
		v, present := s.LatencyMs.All["p99"]
		if !present || (s.By["model"] == "n499") != (v == nil) {
			t.Errorf("JSON p99 of %s = %v (present %v)", s.By["model"], v, present)
		}
	}

	strict := compute(t, st, Spec{By: []Dim{{Kind: KindModel}}, MinTail: 10})
	if p := segmentBy(t, strict, "n500").LatencyMs.All.P99; p != nil {
		t.Errorf("MinTail 10: 500 requests give p99 %v, want null (needs 1000)", *p)
	}
}

// TestBootstrapCoverage: on lognormal samples, whose quantiles are known in
// closed form, the 95% intervals for p95 and p99 contain the true value in
// at least 90 of 100 seeded repetitions, at the smallest n that reports a
// p99 (500) and at a larger one.
func TestBootstrapCoverage(t *testing.T) {
	const mu, sigma, reps = 5.0, 0.8, 100
	truth := map[int]float64{
		95: math.Exp(mu + sigma*1.6448536269514722), // z(0.95)
		99: math.Exp(mu + sigma*2.3263478740408408), // z(0.99)
	}
	for _, n := range []int{500, 2000} {
		covered := map[int]int{}
		data := rand.New(rand.NewPCG(42, uint64(n)))
		for rep := range reps {
			values := make([]float64, n)
			for i := range values {
				values[i] = math.Exp(mu + sigma*data.NormFloat64())
			}
			s := stats{rule: model.Rule{MinTail: 5}, ci: true, seed: uint64(rep + 1), resamples: 1000}
			d := s.dist(values, "coverage")
			for pct, iv := range map[int]*model.Interval{95: d.CI95.P95, 99: d.CI95.P99} {
				if iv == nil {
					t.Fatalf("n=%d rep %d: no p%d interval", n, rep, pct)
				}
				if est := *d.Pct(pct); iv.Lo > est || iv.Hi < est {
					t.Errorf("n=%d rep %d: p%d interval [%v, %v] excludes the estimate %v", n, rep, pct, iv.Lo, iv.Hi, est)
				}
				if iv.Lo <= truth[pct] && truth[pct] <= iv.Hi {
					covered[pct]++
				}
			}
		}
		for _, pct := range []int{95, 99} {
			t.Logf("n=%d p%d: %d of %d intervals contain the true %.1f ms", n, pct, covered[pct], reps, truth[pct])
			if covered[pct] < 90 {
				t.Errorf("n=%d p%d: %d of %d intervals contain the truth, want >= 90", n, pct, covered[pct], reps)
			}
		}
	}
}

// TestCIReproducible: Compute with CI gives the same intervals for the
// same seed, whatever other segments exist, and others for another seed.
func TestCIReproducible(t *testing.T) {
	st := newStore(t)
	reqs, _, _ := degradedWorkload()
	insertRequests(t, st, reqs)
	dims := []Dim{{Kind: KindModel}, {Kind: KindRoute}}
	one := compute(t, st, Spec{By: dims, CI: true, Seed: 3, Resamples: 200})
	two := compute(t, st, Spec{By: dims, CI: true, Seed: 3, Resamples: 200, Sort: SortKey})
	other := compute(t, st, Spec{By: dims, CI: true, Seed: 4, Resamples: 200})
	a, b, c := segmentBy(t, one, "m-b", "r-2"), segmentBy(t, two, "m-b", "r-2"), segmentBy(t, other, "m-b", "r-2")
	if a.LatencyMs.Retried.CI95 == nil || a.LatencyMs.Retried.CI95.P99 == nil {
		t.Fatal("no CI on the degraded pair's retried p99")
	}
	ja, _ := json.Marshal(a.LatencyMs)
	jb, _ := json.Marshal(b.LatencyMs)
	jc, _ := json.Marshal(c.LatencyMs)
	if string(ja) != string(jb) {
		t.Errorf("same seed, different intervals:\n%s\n%s", ja, jb)
	}
	if string(ja) == string(jc) {
		t.Errorf("seeds 3 and 4 gave identical intervals")
	}
}

// TestHostileAttributeName: an attribute name made of quotes, a semicolon
// and SQL keywords is only a name: it slices by the right values and the
// tables are intact afterwards.
func TestHostileAttributeName(t *testing.T) {
	const name = `x'; DROP TABLE requests; --`
	const resName = `"); DELETE FROM spans; SELECT ('`
	st := newStore(t)
	var reqs []fakeRequest
	colors := []string{"blue", "green", ""}
	for i := range 90 {
		reqs = append(reqs, fakeRequest{id: fmt.Sprintf("r%02d", i), latency: 100, attempts: 1, ok: true,
			ttft: math.NaN(), first: 100, second: math.NaN()})
	}
	insertRequests(t, st, reqs)
	for i, r := range reqs {
		c := colors[i%3]
		key := name
		if c == "" {
			key = "" // no attribute at all: (unset)
		}
		insertAnchorSpan(t, st, r.id, key, c, resName, "prod-"+c)
	}
	dims, err := ParseDims("attr:"+name, DimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := compute(t, st, Spec{By: dims})
	for _, want := range []string{"blue", "green", Unset} {
		if s := segmentBy(t, res, want); s.LogicalRequests != 30 {
			t.Errorf("%s = %q: %d requests, want 30", name, want, s.LogicalRequests)
		}
	}
	where, err := ParseFilter("attr:"+name+"=green", DimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res = compute(t, st, Spec{By: []Dim{{Kind: KindResource, Name: resName}}, Where: []Filter{where}})
	if len(res.Segments) != 1 || res.Segments[0].By["resource:"+resName] != "prod-green" || res.Workload.LogicalRequests != 30 {
		t.Errorf("resource dimension with filter: %+v", res.Segments)
	}
	var q query
	text := q.build(&Spec{By: dims, Where: []Filter{where}, BaselineKind: name}, 0, 1, true, idRange{})
	for _, part := range []string{"DROP", "DELETE", "x'", `")`} {
		if strings.Contains(text, part) {
			t.Errorf("query text contains %q from a user-given name:\n%s", part, text)
		}
	}
	if n := testkit.Count(t, st, "SELECT count(*) FROM requests"); n != 90 {
		t.Errorf("requests has %d rows after the query, want 90", n)
	}
	if n := testkit.Count(t, st, "SELECT count(*) FROM spans"); n != 90 {
		t.Errorf("spans has %d rows after the query, want 90", n)
	}
}

// TestWhereAndWindow: filters on named dimensions and since/until keep
// exactly the requests they name.
func TestWhereAndWindow(t *testing.T) {
	st := newStore(t)
	base := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	var reqs []fakeRequest
	for i := range 240 { // one request a minute for four hours
		r := fakeRequest{id: fmt.Sprintf("w%03d", i), model: []string{"m-a", "m-b"}[i%2],
			startNS: base.Add(time.Duration(i) * time.Minute).UnixNano(), latency: 100, attempts: 1 + i%3,
			ok: i%5 != 0, ttft: math.NaN(), first: 50, second: math.NaN(),
			inTokens: int64(i * 100), stream: i%4 == 0}
		if r.attempts > 1 {
			r.trigger, r.second = "timeout", 40
		}
		reqs = append(reqs, r)
	}
	insertRequests(t, st, reqs)
	opt := DimOptions{}
	mustFilter := func(s string) Filter {
		f, err := ParseFilter(s, opt)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	cases := []struct {
		name string
		spec Spec
		want int
	}{
		{"model", Spec{Where: []Filter{mustFilter("model=m-a")}}, 120},
		{"not model", Spec{Where: []Filter{mustFilter("model!=m-a")}}, 120},
		{"either", Spec{Where: []Filter{mustFilter("model=m-a|m-b")}}, 240},
		{"outcome", Spec{Where: []Filter{mustFilter("outcome=error")}}, 48},
		// No failed attempt: one attempt (i%3 == 0) and ok (i%5 != 0).
		{"trigger", Spec{Where: []Filter{mustFilter("trigger=none")}}, 64},
		{"stream and model", Spec{Where: []Filter{mustFilter("stream=true"), mustFilter("model=m-a")}}, 60},
		// input tokens i*100: below 1024 for i <= 10, 1k-4k for 11 <= i <= 40.
		{"token bucket", Spec{Where: []Filter{mustFilter("input_tokens=1k-4k")}}, 30},
		{"since", Spec{Since: base.Add(time.Hour)}, 180},
		{"until", Spec{Until: base.Add(90 * time.Minute)}, 90},
		{"window and model", Spec{Since: base.Add(time.Hour), Until: base.Add(2 * time.Hour),
			Where: []Filter{mustFilter("model=m-b")}}, 30},
	}
	for _, c := range cases {
		res := compute(t, st, c.spec)
		if res.Workload.LogicalRequests != c.want {
			t.Errorf("%s: %d requests, want %d", c.name, res.Workload.LogicalRequests, c.want)
		}
	}
	res := compute(t, st, Spec{By: []Dim{{Kind: KindTime, Width: time.Hour}}, Sort: SortKey})
	if len(res.Segments) != 4 || res.Segments[0].Values[0] != "2026-01-02T00:00:00Z" || res.Segments[3].LogicalRequests != 60 {
		t.Errorf("hourly buckets: %d segments, first %v", len(res.Segments), res.Segments[0].Values)
	}
	res = compute(t, st, Spec{By: []Dim{{Kind: KindInputTokens}}, Sort: SortKey, MinCohort: 1})
	got := map[string]int{}
	for _, s := range res.Segments {
		got[s.Values[0]] = s.LogicalRequests
	}
	// i*100 for i < 240: 0-256 i<=2, 256-1k 3..10, 1k-4k 11..40, 4k-16k 41..163, 16k+ 164..239.
	want := map[string]int{"0-256": 3, "256-1k": 8, "1k-4k": 30, "4k-16k": 123, "16k+": 76}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("token buckets %v, want %v", got, want)
	}
}

// TestBaselineAddedLatency: with a baselines table, retried requests get
// latency − L0 labelled with kind and provenance; without it the measure
// is left out with a note.
func TestBaselineAddedLatency(t *testing.T) {
	st := newStore(t)
	var reqs []fakeRequest
	for i := range 100 {
		r := fakeRequest{id: fmt.Sprintf("b%03d", i), model: "m", latency: 1000 + float64(i), attempts: 1, ok: true,
			ttft: math.NaN(), first: 100, second: math.NaN()}
		if i < 40 {
			r.attempts, r.trigger, r.second = 2, "timeout", 100
		}
		reqs = append(reqs, r)
	}
	insertRequests(t, st, reqs)
	res := compute(t, st, Spec{BaselineKind: "no_retry"})
	if res.Workload.AddedLatency != nil || len(res.Notes) != 1 {
		t.Fatalf("no baselines table: added %+v, notes %q", res.Workload.AddedLatency, res.Notes)
	}
	ctx := context.Background()
	// The baseline package's table: 30 retried requests with a measured
	// L0 600 ms below their latency, 5 with a row but no L0, 5 with no row.
	for _, q := range []string{queries.Get("baseline_state_mark"),
		`INSERT INTO baselines (request_id, kind, latency_ms, l0_ms, provenance, method, reason)
		 SELECT request_id, 'no_retry', latency_ms,
		        CASE WHEN request_id < 'b030' THEN latency_ms - 600 END, 'measured', 'test',
		        CASE WHEN request_id >= 'b030' THEN 'no first attempt end' END
		 FROM requests WHERE attempts > 1 AND request_id < 'b035'
		 UNION ALL SELECT request_id, 'healthy', latency_ms, 500, 'modeled', 'test', NULL FROM requests`,
	} {
		if _, err := st.ExecText(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	res = compute(t, st, Spec{BaselineKind: "no_retry", By: []Dim{{Kind: KindModel}}})
	a := res.Workload.AddedLatency
	if a == nil || a.Ms.N != 30 || a.Missing != 10 || *a.Ms.Mean != 600 || fmt.Sprint(a.Provenance) != "[measured]" {
		t.Fatalf("added latency vs no_retry = %+v", a)
	}
	if want := 0.4 * 600; math.Abs(*a.PerRequestMs-want) > 1e-9 {
		t.Errorf("per-request added %v, want %v", *a.PerRequestMs, want)
	}
	healthy := compute(t, st, Spec{BaselineKind: "healthy"}).Workload.AddedLatency
	// Retried requests are b000..b039 with latency 1000+i: mean 1019.5.
	if healthy == nil || healthy.Ms.N != 40 || healthy.Missing != 0 || *healthy.Ms.Mean != 519.5 ||
		fmt.Sprint(healthy.Provenance) != "[modeled]" {
		t.Errorf("added latency vs healthy = %+v", healthy)
	}
}

// TestParse covers the text forms --by and --where take.
func TestParse(t *testing.T) {
	dims, err := ParseDims("model, endpoint,time:15m,input_tokens:0-256,256-1k", DimOptions{})
	if err == nil {
		t.Errorf("a comma inside token edges should not parse as --by, got %+v", dims)
	}
	dims, err = ParseDims("model,endpoint,time:15m,input_tokens:0/512/2k,resource:service.namespace", DimOptions{Bucket: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if dims[1].Kind != KindOperation || dims[2].Width != 15*time.Minute || fmt.Sprint(dims[3].Edges) != "[512 2048]" ||
		dims[4].Key() != "resource:service.namespace" {
		t.Errorf("parsed %+v", dims)
	}
	if d, _ := ParseDim("time", DimOptions{Bucket: 2 * time.Hour}); d.Width != 2*time.Hour {
		t.Errorf("time without width: %v, want the option's 2h", d.Width)
	}
	if d, _ := ParseDim("time:1d", DimOptions{}); d.Width != 24*time.Hour {
		t.Errorf("time:1d = %v", d.Width)
	}
	edges, err := ParseTokenEdges("0-256,256-1k,1k-4k,4k-16k,16k+")
	if err != nil || fmt.Sprint(edges) != fmt.Sprint(DefaultTokenEdges) {
		t.Errorf("bucket form: %v %v", edges, err)
	}
	if got := strings.Join(TokenLabels(DefaultTokenEdges), ","); got != "0-256,256-1k,1k-4k,4k-16k,16k+" {
		t.Errorf("labels %s", got)
	}
	for _, bad := range []string{"colour", "attr:", "model:x", "time:soon", "input_tokens:4k/1k"} {
		if _, err := ParseDim(bad, DimOptions{}); err == nil {
			t.Errorf("ParseDim(%q) should fail", bad)
		}
	}
	f, err := ParseFilter("attr:a=b!=c|d", DimOptions{})
	if err != nil || f.Dim.Name != "a=b" || !f.Exclude || fmt.Sprint(f.Values) != "[c d]" {
		t.Errorf("filter %+v %v; want attribute a=b, excluding c and d", f, err)
	}
	if r := (model.Rule{MinTail: 5}); r.MinN(99) != 500 || r.MinN(95) != 100 || r.MinN(50) != 10 {
		t.Errorf("MinN = %d %d %d", r.MinN(99), r.MinN(95), r.MinN(50))
	}
}

// TestDimensionSources: region, environment and cache read the anchor
// span's attributes or its resource's, per their documented fallbacks;
// retry_route, stream and outcome read the requests table.
func TestDimensionSources(t *testing.T) {
	st := newStore(t)
	var reqs []fakeRequest
	for i := range 90 {
		r := fakeRequest{id: fmt.Sprintf("d%02d", i), route: "r-1", finalRoute: "r-1", latency: 100, attempts: 1,
			ok: i%2 == 0, ttft: math.NaN(), first: 100, second: math.NaN(), stream: i < 10}
		if i >= 60 {
			r.attempts, r.finalRoute, r.trigger, r.second = 2, "r-2", "timeout", 50
		}
		reqs = append(reqs, r)
	}
	insertRequests(t, st, reqs)
	for i, r := range reqs {
		switch {
		case i < 30:
			insertAnchorSpan(t, st, r.id, "cloud.region", "us-east", "deployment.environment.name", "prod")
		case i < 60:
			insertAnchorSpan(t, st, r.id, "gen_ai.usage.cache_read_input_tokens", "12", "cloud.region", "eu-west")
		default:
			insertAnchorSpan(t, st, r.id, "gen_ai.usage.cache_read.input_tokens", "0", "deployment.environment", "staging")
		}
	}
	cases := map[Kind]map[string]int{
		KindRegion:      {"us-east": 30, "eu-west": 30, Unset: 30},
		KindEnvironment: {"prod": 30, "staging": 30, Unset: 30},
		KindCache:       {Unset: 30, "hit": 30, "miss": 30},
		KindRetryRoute:  {NotRetried: 60, "r-2": 30},
		KindStream:      {"true": 10, "false": 80},
		KindOutcome:     {"ok": 45, "error": 45},
		KindTrigger:     {"none": 30, "unknown": 30, "timeout": 30},
		KindService:     {Unset: 90},
	}
	for kind, want := range cases {
		res := compute(t, st, Spec{By: []Dim{{Kind: kind}}, MinCohort: 1})
		got := map[string]int{}
		for _, s := range res.Segments {
			got[s.Values[0]] = s.LogicalRequests
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", kind, got, want)
		}
	}
}
