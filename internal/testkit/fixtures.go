package testkit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Expected is a fixture's expected.json: the truth for its traces.jsonl
// (testdata/fixtures/README.md says what each field means).
type Expected struct {
	Notes string `json:"notes"`
	// Ambiguous, when set, says the grouping cannot be told exactly from
	// the spans (attempts split across traces under concurrency): a rebuild
	// is judged by the workload figures within these tolerances and by its
	// plausible ranges holding the truth.
	Ambiguous *Tolerances       `json:"ambiguous"`
	Requests  []ExpectedRequest `json:"requests"`
}

// Tolerances are those of an ambiguous fixture.
type Tolerances struct {
	LogicalRequestsPct float64 `json:"logical_requests_pct"`
	RetryRate          float64 `json:"retry_rate"`
	FinalFailureRate   float64 `json:"final_failure_rate"`
}

// ExpectedRequest is one logical request of a fixture.
type ExpectedRequest struct {
	Key            string    `json:"key"`
	AltKeys        []string  `json:"alt_keys"`
	Attempts       int       `json:"attempts"`
	AttemptSpanIDs []string  `json:"attempt_span_ids"`
	Layers         []float64 `json:"layers"`
	Outcome        string    `json:"outcome"`
	LatencyMS      float64   `json:"latency_ms"`
	LatencyBasis   string    `json:"latency_basis"`
	Triggers       []string  `json:"triggers"`
	Route          *string   `json:"route"`
	FinalRoute     *string   `json:"final_route"`
	TTFTMS         *float64  `json:"ttft_ms"`
	MissingParents []string  `json:"missing_parents"`
	// Exhausted, where a fixture records it, is what ended a failed
	// request's loop: attempt_cap, retry_budget, not_retryable ...
	Exhausted string `json:"exhausted"`
}

// Fixture is one directory of testdata/fixtures.
type Fixture struct {
	Name     string // the directory's name
	Traces   string // path of its traces.jsonl
	Expected string // path of its expected.json
}

// Fixtures lists the fixtures of real instrumentations in
// testdata/fixtures at the repository root, found from the test's working
// directory so that no test depends on how deep its package sits. A test
// that finds none, or a directory without both files, fails.
func Fixtures(t testing.TB) []Fixture {
	t.Helper()
	root := repositoryRoot(t)
	dirs, err := filepath.Glob(filepath.Join(root, "testdata", "fixtures", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []Fixture
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		f := Fixture{Name: filepath.Base(dir), Traces: filepath.Join(dir, "traces.jsonl"), Expected: filepath.Join(dir, "expected.json")}
		for _, p := range []string{f.Traces, f.Expected} {
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("fixture %s: %v", f.Name, err)
			}
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		t.Fatalf("no fixtures in %s", filepath.Join(root, "testdata", "fixtures"))
	}
	return out
}

// ReadExpected decodes a fixture's expected.json; one without notes or
// requests fails the test.
func ReadExpected(t testing.TB, f Fixture) Expected {
	t.Helper()
	raw, err := os.ReadFile(f.Expected)
	if err != nil {
		t.Fatal(err)
	}
	var exp Expected
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&exp); err != nil {
		t.Fatalf("%s: %v", f.Expected, err)
	}
	if exp.Notes == "" || len(exp.Requests) == 0 {
		t.Fatalf("%s needs notes and requests", f.Expected)
	}
	return exp
}

// repositoryRoot is the nearest directory above the working directory that
// holds go.mod.
func repositoryRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
