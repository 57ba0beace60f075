package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quickStartLines is the most a default report of the bundled sample may
// print: a screen.
const quickStartLines = 70

// TestREADMEQuickStart runs the README's quick start, then its findings
// and whatif commands (the storm of "What if" among them, with its
// re-run), and checks that the output blocks the README shows are what the
// commands print, so the manual cannot rot. -update rewrites the blocks.
func TestREADMEQuickStart(t *testing.T) {
	sample, err := filepath.Abs("../../testdata/sample/traces.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// docOf is the file that shows each block: the README the quick
	// start, docs/ the rest.
	docOf := map[string]string{"quickstart-output": "README.md", "findings-output": "docs/report.md"}
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	storm := []string{"gen", "--seed", "1", "--requests", "3000", "--shapes", "wrapped", "--nested", "--rate", "8", "--crn",
		"--naive-share", "0.3", "--faults", "429=0.04,5xx=0.04,reset=0.015,timeout=0.02,4xx=0.03,reject=0.3"}
	for _, b := range []struct {
		marker string // "" for a step whose output the README does not show
		args   []string
		stderr bool // the block is what the command says on stderr
	}{
		{"quickstart-output", []string{"run", sample}, false},
		{"findings-output", []string{"report", "--findings"}, false},
		{"whatif-output", []string{"whatif", "--max-attempts", "app=1"}, false},
		{"", append(storm, "-o", "storm.jsonl"), false},
		{"", []string{"ingest", "-q", "--db", "storm.duckdb", "storm.jsonl"}, false},
		{"whatif-storm-output", []string{"whatif", "--db", "storm.duckdb", "--max-attempts", "app=1"}, false},
		{"whatif-storm-feedback-output", []string{"whatif", "--db", "storm.duckdb", "--max-attempts", "app=1", "--feedback"}, false},
		{"whatif-storm-rerun-output", append(storm, "--app-tries", "1", "-o", "rerun.jsonl"), true},
	} {
		code, stdout, stderr := runCLI(t, b.args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", b.args, code, stderr)
		}
		if b.stderr {
			stdout = stderr
		}
		if n := strings.Count(stdout, "\n"); b.marker == "quickstart-output" && n > quickStartLines {
			t.Errorf("the quick start prints %d lines, want at most %d: the default report must fit a screen", n, quickStartLines)
		}
		if b.marker != "" {
			doc, ok := docOf[b.marker]
			if !ok {
				doc = "docs/whatif.md"
			}
			checkREADMEBlock(t, filepath.Join(root, doc), b.marker, stdout, filepath.Join(wd, "readme_"+b.marker+".got"))
		}
	}
}

// checkREADMEBlock compares got with the fenced text block after the
// README's "<!-- marker" comment, or rewrites the block under -update.
func checkREADMEBlock(t *testing.T, readmePath, marker, got, gotPath string) {
	t.Helper()
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(readme, []byte("<!-- "+marker))
	if i < 0 {
		t.Fatalf("README has no %s block", marker)
	}
	rest := readme[i:]
	start := bytes.Index(rest, []byte("```text\n"))
	end := bytes.Index(rest[start+8:], []byte("```\n"))
	if start < 0 || end < 0 {
		t.Fatalf("the README's %s block is not fenced", marker)
	}
	at := i + start + 8
	switch want := string(readme[at : at+end]); {
	case *update:
		updated := append(append(append([]byte(nil), readme[:at]...), got...), readme[at+end:]...)
		if err := os.WriteFile(readmePath, updated, 0o644); err != nil {
			t.Fatal(err)
		}
	case got != want:
		os.WriteFile(gotPath, []byte(got), 0o644)
		t.Errorf("the README's %s block differs from what the command prints; see %s (-update rewrites the block)", marker, gotPath)
	default:
		os.Remove(gotPath)
	}
}
