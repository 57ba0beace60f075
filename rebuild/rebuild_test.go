package rebuild_test

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

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/internal/testkit/workload"
	"github.com/retryscope/retryscope/rebuild"
)

// rebuilt is one row of the requests table, as the tests compare it.
type rebuilt struct {
	linkage                           string
	attempts                          int
	layers                            []float64
	outcome                           string
	latency, tFailed, tFinal, gap     float64
	backoff, overhead, ttft, genMs    *float64
	residual                          float64
	triggers                          []string
	duplicated, outputTokens, inputTk int64
	hidden                            float64
	hiddenTokens                      int64
	route, finalRoute                 string
	model, finalModel                 string
}

// generated ingests a generated workload into a fresh database and rebuilds it.
func generated(t *testing.T, cfg sim.Config) (*store.Store, sim.Truth) {
	t.Helper()
	return workload.Rebuilt(t, cfg)
}

func loadRequests(t *testing.T, st *store.Store) map[string]*rebuilt {
	t.Helper()
	rows, err := st.QueryText(context.Background(), `
		SELECT request_id, linkage, attempts, layers, outcome, latency_ms, t_failed_ms, t_final_ms, gap_ms,
		       backoff_ms, overhead_ms, ttft_ms, generation_ms, residual_ms, triggers, duplicated_output_tokens,
		       output_tokens, input_tokens, hidden_work_ms, hidden_output_tokens, coalesce(route, ''), coalesce(final_route, ''),
		       coalesce(model, ''), coalesce(final_model, '')
		FROM requests ORDER BY request_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]*rebuilt{}
	for rows.Next() {
		var id string
		var r rebuilt
		var layers, triggers any
		if err := rows.Scan(&id, &r.linkage, &r.attempts, &layers, &r.outcome, &r.latency, &r.tFailed, &r.tFinal, &r.gap,
			&r.backoff, &r.overhead, &r.ttft, &r.genMs, &r.residual, &triggers, &r.duplicated, &r.outputTokens, &r.inputTk,
			&r.hidden, &r.hiddenTokens, &r.route, &r.finalRoute, &r.model, &r.finalModel); err != nil {
			t.Fatal(err)
		}
		for _, v := range layers.([]any) {
			r.layers = append(r.layers, v.(float64))
		}
		for _, v := range triggers.([]any) {
			r.triggers = append(r.triggers, v.(string))
		}
		if out[id] != nil {
			t.Fatalf("request %s appears twice", id)
		}
		out[id] = &r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func shapeConfig(shapes []sim.Shape, requests int, seed int64) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed = seed
	cfg.Requests = requests
	cfg.Shapes = shapes
	// More faults than the default, so retries, nesting and every trigger
	// show up in a few hundred requests.
	cfg.Faults = sim.DefaultFaults().Scale(2.5)
	return cfg
}

const msTolerance = 0.1

// compareTruth checks every truth request against the rebuilt one and
// reports at most a few mismatches per kind, so a failure stays readable.
func compareTruth(t *testing.T, truth sim.Truth, got map[string]*rebuilt) {
	t.Helper()
	if len(got) != len(truth.Requests) {
		t.Errorf("rebuilt %d logical requests, truth has %d", len(got), len(truth.Requests))
	}
	errs := map[string]int{}
	report := func(kind, format string, args ...any) {
		errs[kind]++
		if errs[kind] <= 3 {
			t.Errorf(kind+": "+format, args...)
		}
	}
	for _, w := range truth.Requests {
		g := got[w.Key]
		where := fmt.Sprintf("%s (%s/%s, %d attempts)", w.Key, w.Shape, w.Variant, w.Attempts)
		if g == nil {
			report("missing", "%s: not rebuilt", where)
			continue
		}
		if g.attempts != w.Attempts {
			report("attempts", "%s: %d attempts, want %d (linkage %s)", where, g.attempts, w.Attempts, g.linkage)
			continue
		}
		if !slices.Equal(g.layers, w.Layers) {
			report("layers", "%s: layers %v, want %v", where, g.layers, w.Layers)
		}
		if g.outcome != w.Outcome {
			report("outcome", "%s: outcome %s, want %s", where, g.outcome, w.Outcome)
		}
		if !slices.Equal(g.triggers, w.Triggers) {
			report("triggers", "%s: triggers %v, want %v", where, g.triggers, w.Triggers)
		}
		near := func(kind string, got, want float64) {
			if math.Abs(got-want) > msTolerance {
				report(kind, "%s: %s %.4f, want %.4f", where, kind, got, want)
			}
		}
		near("latency_ms", g.latency, w.LatencyMs)
		near("t_failed_ms", g.tFailed, w.TFailedMs)
		near("t_final_ms", g.tFinal, w.TFinalMs)
		near("gap_ms", g.gap, w.BackoffMs+w.OverheadMs)
		if math.Abs(g.residual) >= 1 {
			report("residual", "%s: residual %.4f ms", where, g.residual)
		}
		if w.GapSplit != (g.backoff != nil) {
			report("gap_split", "%s: backoff known %v, truth gap_split %v", where, g.backoff != nil, w.GapSplit)
		} else if g.backoff != nil {
			near("backoff_ms", *g.backoff, w.BackoffMs)
			near("overhead_ms", *g.overhead, w.OverheadMs)
		}
		switch {
		case (g.ttft == nil) != (w.TTFTMs == nil):
			report("ttft_ms", "%s: ttft %v, want %v", where, fmtPtr(g.ttft), fmtPtr(w.TTFTMs))
		case g.ttft != nil:
			near("ttft_ms", *g.ttft, *w.TTFTMs)
			for _, a := range w.AttemptList {
				if a.Trigger == "" && g.genMs != nil {
					near("generation_ms", *g.genMs, float64(a.EndNs-w.StartNs)/1e6-*w.TTFTMs)
				}
			}
		}
		if g.duplicated != int64(w.DuplicatedOutputTokens) || g.outputTokens != int64(w.OutputTokens) || g.inputTk != int64(w.InputTokens) {
			report("tokens", "%s: tokens in/out/dup %d/%d/%d, want %d/%d/%d", where, g.inputTk, g.outputTokens, g.duplicated,
				w.InputTokens, w.OutputTokens, w.DuplicatedOutputTokens)
		}
		near("hidden_work_ms", g.hidden, w.HiddenWorkMs)
		if g.hiddenTokens != int64(w.HiddenOutputTokens) {
			report("hidden_output_tokens", "%s: hidden output tokens %d, want %d", where, g.hiddenTokens, w.HiddenOutputTokens)
		}
		if g.route != w.Route || g.finalRoute != w.FinalRoute {
			report("route", "%s: route %s -> %s, want %s -> %s", where, g.route, g.finalRoute, w.Route, w.FinalRoute)
		}
		// A model is only known when some span names it: an orphaned attempt
		// that never reached the server does not.
		if w.Model != "" && g.model+g.finalModel != "" && (g.model != w.Model || g.finalModel != w.FinalModel) {
			report("model", "%s: model %s -> %s, want %s -> %s", where, g.model, g.finalModel, w.Model, w.FinalModel)
		}
	}
	if len(errs) > 0 {
		var kinds []string
		for k, n := range errs {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		slices.Sort(kinds)
		t.Logf("mismatches: %s", strings.Join(kinds, ", "))
	}
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprintf("%.4f", *p)
}

// TestShapes rebuilds each trace shape of the generator on its own and
// compares every logical request with the simulation's truth.
func TestShapes(t *testing.T) {
	for _, shape := range sim.AllShapes() {
		t.Run(string(shape), func(t *testing.T) {
			t.Parallel()
			st, truth := generated(t, shapeConfig([]sim.Shape{shape}, 300, 7))
			compareTruth(t, truth, loadRequests(t, st))
		})
	}
}

// TestNested makes every wrapped request an application loop around SDK
// calls, so both layers' multipliers are checked on many requests.
func TestNested(t *testing.T) {
	cfg := shapeConfig([]sim.Shape{sim.ShapeWrapped}, 300, 11)
	cfg.Nested = true
	st, truth := generated(t, cfg)
	compareTruth(t, truth, loadRequests(t, st))
}

// TestMixed rebuilds all shapes in one dump, with client services spread
// over ten names, so shapes must not be confused with each other.
func TestMixed(t *testing.T) {
	cfg := shapeConfig(nil, 1000, 3)
	cfg.Services = 10
	st, truth := generated(t, cfg)
	compareTruth(t, truth, loadRequests(t, st))
}

// TestPolicies varies the retry policy: no retries at all, fixed and
// decorrelated backoff, many naive clients (4xx retried, Retry-After
// ignored) and a retry budget.
func TestPolicies(t *testing.T) {
	cases := map[string]func(*sim.Config){
		"none":         func(c *sim.Config) { c.Policy.Kind = sim.PolicyNone },
		"fixed":        func(c *sim.Config) { c.Policy.Kind = sim.PolicyFixed },
		"decorrelated": func(c *sim.Config) { c.Policy.Kind = sim.PolicyDecorrelated; c.Policy.MaxAttempts = 5 },
		"naive":        func(c *sim.Config) { c.Policy.NaiveShare = 0.6; c.Faults.ClientError = 0.05 },
		"budget":       func(c *sim.Config) { c.Policy.Budget = 0.1; c.Faults = sim.DefaultFaults().Scale(5) },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := shapeConfig(nil, 700, 5)
			change(&cfg)
			st, truth := generated(t, cfg)
			compareTruth(t, truth, loadRequests(t, st))
		})
	}
}

// TestLinkage checks that each shape is built by the rule meant for it.
func TestLinkage(t *testing.T) {
	st, truth := generated(t, shapeConfig(nil, 1000, 9))
	got := loadRequests(t, st)
	want := map[string][]string{
		"explicit/attrs-http": {"explicit"}, "explicit/attrs-llm": {"explicit"}, "explicit/evaluator": {"explicit"},
		"explicit/stainless": {"header"}, "explicit/aws": {"header"}, "explicit/envoy": {"header"},
		"resend/java": {"resend", "parent"}, "resend/envoy": {"resend", "parent"}, "grpc/a72": {"grpc"},
		"wrapped/openai": {"wrapped"}, "wrapped/anthropic": {"wrapped"}, "wrapped/nested": {"wrapped"},
		"wrapped/nested-eval": {"wrapped"}, "split/plain": {"split_inferred", "single"},
		"split/aws-id": {"split_inferred", "header"}, "orphan/dropped-llm": {"orphan", "wrapped"},
		"hedge/hedged": {"parent"},
	}
	for _, w := range truth.Requests {
		g := got[w.Key]
		if g == nil {
			continue // TestShapes reports it
		}
		kind := string(w.Shape) + "/" + w.Variant
		if !slices.Contains(want[kind], g.linkage) {
			t.Errorf("%s (%s, %d attempts): linkage %s, want one of %v", w.Key, kind, w.Attempts, g.linkage, want[kind])
		}
	}
}

// TestBundledSample rebuilds testdata/sample, the README's quick start, and
// compares it with the truth file beside it.
func TestBundledSample(t *testing.T) {
	dir := filepath.Join("..", "testdata", "sample")
	raw, err := os.ReadFile(filepath.Join(dir, "traces.jsonl.truth.json"))
	if err != nil {
		t.Fatalf("no bundled sample: %v", err)
	}
	var truth sim.Truth
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	st := testkit.Open(t)
	ctx := context.Background()
	if _, err := ingest.Run(ctx, st, []string{filepath.Join(dir, "traces.jsonl")}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := rebuild.Rebuild(ctx, st); err != nil {
		t.Fatal(err)
	}
	compareTruth(t, truth, loadRequests(t, st))
}
