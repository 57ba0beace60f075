package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/report"
)

// reportDB generates a workload, ingests it into a new database file and
// returns the file and the truth.
func reportDB(t *testing.T, cfg sim.Config) (string, sim.Truth) {
	t.Helper()
	res, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	traces := filepath.Join(dir, "traces.jsonl")
	f, err := os.Create(traces)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.WriteJSONLines(f, res.Traces); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dbPath := filepath.Join(dir, "r.duckdb")
	st, err := store.Open(context.Background(), dbPath, store.Options{MemoryLimit: "1GB"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Run(context.Background(), st, []string{traces}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	return dbPath, res.Truth
}

// TestReportJSONMatchesTruth: report --format json on generated traces
// gives the truth's workload figures: counts and rates exactly, latency and
// TTFT summaries within 0.1 ms under the same percentile definition.
func TestReportJSONMatchesTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests = 1200
	cfg.Seed = 4
	cfg.Faults = sim.DefaultFaults().Scale(2)
	dbPath, truth := reportDB(t, cfg)
	code, out, errOut := runCLI(t, "report", "--db", dbPath, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Schema   string `json:"schema"`
		Workload struct {
			sim.Workload
			LatencyMs             struct{ All, Retried model.Summary } `json:"latency_ms"`
			TTFTMs                struct{ All, Retried model.Summary } `json:"ttft_ms"`
			RetriedRequests       int                                  `json:"retried_requests"`
			FailedRequests        int                                  `json:"failed_requests"`
			HiddenOutputTokens    int                                  `json:"hidden_output_tokens"`
			AmplificationByLayers []report.LayerRow                    `json:"amplification_by_layers"`
		} `json:"workload"`
		Baselines []any          `json:"baselines"`
		Segments  []any          `json:"segments"`
		Ingest    map[string]any `json:"ingest"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Schema != "retryscope.report/v1" || rep.Baselines == nil || rep.Segments == nil || rep.Ingest == nil {
		t.Errorf("schema %q, baselines %v, segments %v, ingest %v", rep.Schema, rep.Baselines, rep.Segments, rep.Ingest)
	}
	if got, want := rep.Workload.Workload, truth.Workload; got != want {
		t.Errorf("workload\n got %+v\nwant %+v", got, want)
	}
	var all, retried, ttftAll, ttftRetried []float64
	var nRetried, nFailed, hiddenTokens int
	layerTries := map[int][]int64{} // depth -> requests, tries per layer
	for _, r := range truth.Requests {
		if r.Attempts > 1 {
			nRetried++
		}
		if r.Outcome != "ok" {
			nFailed++
		}
		hiddenTokens += r.HiddenOutputTokens
		d := len(r.LayerCounts)
		if layerTries[d] == nil {
			layerTries[d] = make([]int64, d+1)
		}
		layerTries[d][0]++
		for i, c := range r.LayerCounts {
			layerTries[d][i+1] += int64(c)
		}
		all = append(all, r.LatencyMs)
		if r.Attempts > 1 {
			retried = append(retried, r.LatencyMs)
		}
		if r.TTFTMs != nil {
			ttftAll = append(ttftAll, *r.TTFTMs)
			if r.Attempts > 1 {
				ttftRetried = append(ttftRetried, *r.TTFTMs)
			}
		}
	}
	compareSummary(t, "latency_ms.all", rep.Workload.LatencyMs.All, model.Summarize(all))
	compareSummary(t, "latency_ms.retried", rep.Workload.LatencyMs.Retried, model.Summarize(retried))
	compareSummary(t, "ttft_ms.all", rep.Workload.TTFTMs.All, model.Summarize(ttftAll))
	compareSummary(t, "ttft_ms.retried", rep.Workload.TTFTMs.Retried, model.Summarize(ttftRetried))
	if rep.Workload.RetriedRequests != nRetried || rep.Workload.FailedRequests != nFailed || rep.Workload.HiddenOutputTokens != hiddenTokens {
		t.Errorf("retried/failed/hidden tokens %d/%d/%d, want %d/%d/%d", rep.Workload.RetriedRequests, rep.Workload.FailedRequests,
			rep.Workload.HiddenOutputTokens, nRetried, nFailed, hiddenTokens)
	}
	if len(rep.Workload.AmplificationByLayers) != len(layerTries) {
		t.Errorf("%d layer depths, want %d", len(rep.Workload.AmplificationByLayers), len(layerTries))
	}
	for _, l := range rep.Workload.AmplificationByLayers {
		want := layerTries[l.Depth]
		if want == nil || l.Requests != want[0] || l.Attempts != want[len(want)-1] || len(l.Multipliers) != l.Depth {
			t.Errorf("depth %d: %+v, want tries %v", l.Depth, l, want)
			continue
		}
		for i, m := range l.Multipliers {
			if w := float64(want[i+1]) / float64(want[i]); m != w {
				t.Errorf("depth %d layer %d: multiplier %v, want %v", l.Depth, i+1, m, w)
			}
		}
	}
	if rep.Workload.LatencyMs.All.P99 == nil {
		t.Error("p99 of 1200 requests should be shown")
	}
}

func compareSummary(t *testing.T, name string, got, want model.Summary) {
	t.Helper()
	if got.N != want.N {
		t.Errorf("%s: n %d, want %d", name, got.N, want.N)
	}
	for _, f := range []struct {
		field     string
		got, want *float64
	}{{"mean", got.Mean, want.Mean}, {"p50", got.P50, want.P50}, {"p95", got.P95, want.P95}, {"p99", got.P99, want.P99}} {
		switch {
		case (f.got == nil) != (f.want == nil):
			t.Errorf("%s.%s: got %v, want %v (null where the sample is too small)", name, f.field, f.got, f.want)
		case f.got != nil && math.Abs(*f.got-*f.want) > 0.1:
			t.Errorf("%s.%s: %.4f, want %.4f", name, f.field, *f.got, *f.want)
		}
	}
}

// TestReportTable prints the aligned table with the linkage section under
// --explain, and writes to -o FILE.
func TestReportTable(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests = 300
	dbPath, truth := reportDB(t, cfg)
	code, out, errOut := runCLI(t, "report", "--db", dbPath, "--explain", "--full")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"logical requests", "amplification", "end-to-end", "Requests by linkage rule", "wrapped", "grpc", "n<500"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "  logical requests") || !strings.Contains(out, " "+itoa(truth.Workload.LogicalRequests)+"\n") {
		t.Errorf("table does not show %d logical requests:\n%s", truth.Workload.LogicalRequests, out)
	}
	file := filepath.Join(t.TempDir(), "report.json")
	if code, _, errOut := runCLI(t, "report", "--db", dbPath, "--format", "json", "-o", file); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(file); err != nil || !bytes.Contains(b, []byte(`"logical_requests": 300`)) {
		t.Errorf("report file: %v\n%s", err, b)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestReportUsage: a bad format is a usage error; a missing database says
// how to make one.
func TestReportUsage(t *testing.T) {
	if code, _, errOut := runCLI(t, "report", "--format", "xml"); code != exitUsage || !strings.Contains(errOut, "Try: retryscope report --help") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "none.duckdb")
	if code, _, errOut := runCLI(t, "report", "--db", missing); code != exitFailed || !strings.Contains(errOut, "retryscope ingest") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if code, out, _ := runCLI(t, "report", "--help"); code != exitOK || !strings.Contains(out, "--explain") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

// TestReportEmptyDatabase: a database with no spans reports zeros and
// nulls, not an error.
func TestReportEmptyDatabase(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "empty.duckdb")
	st, err := store.Open(context.Background(), dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	code, out, errOut := runCLI(t, "report", "--db", dbPath, "--format", "json")
	if code != exitOK || !strings.Contains(out, `"logical_requests": 0`) || !strings.Contains(out, `"p50": null`) {
		t.Errorf("exit %d: %s\n%s", code, errOut, out)
	}
}

// TestReportConfig: a --config file adds keys; a misspelt key is a usage
// error that names the file.
func TestReportConfig(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests = 100
	dbPath, truth := reportDB(t, cfg)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"attempt_keys": ["app.try"], "first_token_events": ["stream.first_chunk"], "split_window": "30s"}`), 0o644)
	code, out, errOut := runCLI(t, "report", "--db", dbPath, "--format", "json", "--config", good)
	if code != exitOK || !strings.Contains(out, `"logical_requests": `+itoa(truth.Workload.LogicalRequests)) {
		t.Errorf("good config: exit %d: %s", code, errOut)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"attempt_key": ["app.try"]}`), 0o644)
	if code, _, errOut := runCLI(t, "report", "--db", dbPath, "--config", bad); code != exitUsage || !strings.Contains(errOut, "bad.json") {
		t.Errorf("bad config: exit %d: %s", code, errOut)
	}
}

// TestReportWindow: --since/--until narrow the whole report (workload,
// latency, segments and the window it states) to the requests starting in
// the window, and give the truth's figures for exactly those requests.
func TestReportWindow(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed = 1200, 9
	dbPath, truth := reportDB(t, cfg)
	starts := make([]int64, len(truth.Requests))
	for i, r := range truth.Requests {
		starts[i] = r.StartNs
	}
	slices.Sort(starts)
	since, until := starts[300], starts[900] // a third to three quarters in
	var n, attempts, retried int
	var latency []float64
	for _, r := range truth.Requests {
		if r.StartNs < since || r.StartNs >= until {
			continue
		}
		n, attempts = n+1, attempts+r.Attempts
		if r.Attempts > 1 {
			retried++
		}
		latency = append(latency, r.LatencyMs)
	}
	sinceText := time.Unix(0, since).UTC().Format(time.RFC3339Nano)
	untilText := time.Unix(0, until).UTC().Format(time.RFC3339Nano)
	code, out, errOut := runCLI(t, "report", "--db", dbPath, "--format", "json", "--since", sinceText, "--until", untilText)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Window   struct{ Since, Until *string }
		Workload struct {
			LogicalRequests int                                  `json:"logical_requests"`
			Attempts        int                                  `json:"attempts"`
			RetriedRequests int                                  `json:"retried_requests"`
			LatencyMs       struct{ All, Retried model.Summary } `json:"latency_ms"`
		}
		Segments []struct {
			LogicalRequests int `json:"logical_requests"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n != 600 {
		t.Fatalf("the window holds %d requests of the truth, want 600", n)
	}
	w := rep.Workload
	if w.LogicalRequests != n || w.Attempts != attempts || w.RetriedRequests != retried {
		t.Errorf("window: %d requests, %d attempts, %d retried; truth %d, %d, %d",
			w.LogicalRequests, w.Attempts, w.RetriedRequests, n, attempts, retried)
	}
	compareSummary(t, "latency_ms.all", w.LatencyMs.All, model.Summarize(latency))
	inSegments := 0
	for _, s := range rep.Segments {
		inSegments += s.LogicalRequests
	}
	if inSegments != n {
		t.Errorf("segments hold %d requests, want the window's %d", inSegments, n)
	}
	if rep.Window.Since == nil || *rep.Window.Since != sinceText || rep.Window.Until == nil || *rep.Window.Until != untilText {
		t.Errorf("report states window %v..%v, want %s..%s", rep.Window.Since, rep.Window.Until, sinceText, untilText)
	}

	// The table says which requests it covers; a report without a window
	// states none.
	_, table, _ := runCLI(t, "report", "--db", dbPath, "--since", sinceText, "--until", untilText)
	if !strings.Contains(table, "Requests started from "+sinceText+" until "+untilText) {
		t.Errorf("table does not state its window:\n%.400s", table)
	}
	_, all, _ := runCLI(t, "report", "--db", dbPath, "--format", "json")
	if !strings.Contains(all, `"since": null`) || !strings.Contains(all, `"logical_requests": `+itoa(len(truth.Requests))) {
		t.Errorf("the whole-database report should have an open window and every request:\n%.300s", all)
	}
	if code, _, errOut := runCLI(t, "report", "--db", dbPath, "--since", "yesterday"); code != exitUsage || !strings.Contains(errOut, "2026-11-29") {
		t.Errorf("--since yesterday: exit %d, want %d with an example of the format: %s", code, exitUsage, errOut)
	}
	if code, _, errOut := runCLI(t, "report", "--db", dbPath, "--since", untilText, "--until", sinceText); code != exitUsage || !strings.Contains(errOut, "not after") {
		t.Errorf("an inverted window: exit %d, want %d saying so: %s", code, exitUsage, errOut)
	}
}
