package rebuild_test

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/rebuild"
)

// corpusTolerance is how close a rebuild of a real-client corpus must come
// to the truth (issue 29's acceptance).
type corpusTolerance struct {
	requestsPct float64 // logical requests, percent off; 0: exact
	rate        float64 // retry, retry success and final failure rates
	latencyPct  float64 // latency percentiles of all and of retried requests
	exact       bool    // attempts, retried and failed requests exactly
}

// TestRealClientCorpora rebuilds the corpora of real retrying clients in
// testdata/corpora with no configuration and compares the workload figures
// with the truth computed from each corpus's client record:
//   - go-retryablehttp split across traces (split-a: 8 workers, 4 paths,
//     Retry-After waits on 429 and 503 that no span records, timeouts, 409s
//     never retried; split-b: 2 workers, 3 attempts at most): logical
//     requests within 2%, rates within 0.01, p50/p95/p99 of all and of
//     retried requests within 5% where the sample allows them, and every
//     plausible range holding the truth;
//   - openai-node storm-b and its three re-runs (an app loop with a
//     fallback try around SDK retries, SDK spans lost when the call threw):
//     counts exact, rates within 0.002, latency within 2%.
func TestRealClientCorpora(t *testing.T) {
	split := corpusTolerance{requestsPct: 2, rate: 0.01, latencyPct: 5}
	storm := corpusTolerance{rate: 0.002, latencyPct: 2, exact: true}
	for name, tol := range map[string]corpusTolerance{
		"retryablehttp-split-a": split, "retryablehttp-split-b": split,
		"openai-node-storm-b": storm, "openai-node-storm-b-sdk1": storm,
		"openai-node-storm-b-sdk0": storm, "openai-node-storm-b-app1": storm,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("..", "testdata", "corpora", name)
			want, wantLat := corpusTruth(t, filepath.Join(dir, "client-truth.jsonl.zst"))
			st := testkit.Open(t)
			ctx := context.Background()
			if _, err := ingest.Run(ctx, st, []string{filepath.Join(dir, "traces.jsonl.zst")}, ingest.Options{}); err != nil {
				t.Fatal(err)
			}
			if err := rebuild.Rebuild(ctx, st); err != nil {
				t.Fatal(err)
			}
			got := rebuiltFigures(t, st)
			checkCorpus(t, tol, want, got.counts, got.ranges)
			for _, retried := range []bool{false, true} {
				checkLatency(t, tol.latencyPct, retried, wantLat(retried), requestLatencies(t, st, retried))
			}
		})
	}
}

// corpusTruth reads a client record: the counts, and the sorted latencies
// of all (false) or of retried (true) requests.
func corpusTruth(t *testing.T, path string) (model.Counts, func(retried bool) []float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var c model.Counts
	var all, retried []float64
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		var r struct {
			Attempts int     `json:"physical_attempts"`
			Outcome  string  `json:"outcome"`
			Latency  float64 `json:"latency_ms"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		c.Add(r.Attempts, r.Outcome == "success")
		all = append(all, r.Latency)
		if r.Attempts > 1 {
			retried = append(retried, r.Latency)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	slices.Sort(retried)
	return c, func(r bool) []float64 {
		if r {
			return retried
		}
		return all
	}
}

// requestLatencies are the rebuilt requests' latencies, sorted: all, or
// those of retried requests.
func requestLatencies(t *testing.T, st *store.Store, retried bool) []float64 {
	t.Helper()
	rows, err := st.QueryText(context.Background(),
		`SELECT latency_ms FROM requests WHERE attempts > 1 OR NOT $1 ORDER BY latency_ms`, retried)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []float64
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkCorpus(t *testing.T, tol corpusTolerance, want, got model.Counts, rg model.WorkloadRanges) {
	t.Helper()
	wf, gf := splitFigures{counts: want}, splitFigures{counts: got}
	wr, ws, wfail := wf.rates()
	gr, gs, gfail := gf.rates()
	t.Logf("logical requests %d (truth %d) range %v; attempts %d (%d); retried %d (%d); failed %d (%d); retry rate %.4f (%.4f); retry success %.4f (%.4f); final failure %.4f (%.4f)",
		got.Requests, want.Requests, rg.LogicalRequests, got.Attempts, want.Attempts, got.Retried, want.Retried, got.Failed, want.Failed, gr, wr, gs, ws, gfail, wfail)
	if got.Attempts != want.Attempts {
		t.Errorf("%d attempts, truth %d", got.Attempts, want.Attempts)
	}
	if d := 100 * math.Abs(float64(got.Requests-want.Requests)) / float64(want.Requests); d > tol.requestsPct {
		t.Errorf("logical requests %d, truth %d (%.2f%% off)", got.Requests, want.Requests, d)
	}
	if tol.exact && (got.Retried != want.Retried || got.Failed != want.Failed || got.RetriedOK != want.RetriedOK) {
		t.Errorf("retried %d, retried ok %d, failed %d; truth %d, %d, %d", got.Retried, got.RetriedOK, got.Failed, want.Retried, want.RetriedOK, want.Failed)
	}
	for name, d := range map[string]float64{"retry rate": gr - wr, "retry success rate": gs - ws, "final failure rate": gfail - wfail} {
		if math.Abs(d) > tol.rate+1e-12 {
			t.Errorf("%s off by %.4f", name, d)
		}
	}
	for name, c := range map[string]struct {
		r model.Range
		v float64
	}{
		"logical_requests": {rg.LogicalRequests, float64(want.Requests)}, "retry_rate": {rg.RetryRate, wr},
		"retry_success_rate": {rg.RetrySuccessRate, ws}, "final_failure_rate": {rg.FinalFailureRate, wfail},
		"amplification": {rg.Amplification, float64(want.Attempts) / float64(want.Requests)},
	} {
		if !within(c.r, c.v) {
			t.Errorf("%s range %v does not hold the truth %.4f", name, c.r, c.v)
		}
	}
}

// checkLatency compares p50, p95 and p99 (nearest rank), where the rebuilt
// sample is large enough for the report to print them.
func checkLatency(t *testing.T, pct float64, retried bool, want, got []float64) {
	t.Helper()
	which := "all"
	if retried {
		which = "retried"
	}
	for _, p := range []int{50, 95, 99} {
		g := model.Percentile(got, p)
		if g == nil {
			continue
		}
		k, _ := model.PercentileRank(len(want), p)
		w := want[k-1]
		t.Logf("%s p%d %.1f ms (truth %.1f)", which, p, *g, w)
		d := 100 * math.Abs(*g-w) / w
		if d > pct {
			t.Errorf("%s p%d %.1f ms, truth %.1f ms (%.1f%% off)", which, p, *g, w, d)
		}
	}
}
