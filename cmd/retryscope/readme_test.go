package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestREADMEQuickStart runs the README's quick start and checks that the
// report it shows is what the command prints, so the manual cannot rot.
func TestREADMEQuickStart(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- quickstart-output"
	i := bytes.Index(readme, []byte(marker))
	if i < 0 {
		t.Fatal("README has no quick-start output block")
	}
	rest := readme[i:]
	start := bytes.Index(rest, []byte("```text\n"))
	end := bytes.Index(rest[start+8:], []byte("```\n"))
	if start < 0 || end < 0 {
		t.Fatal("quick-start output block is not fenced")
	}
	want := string(rest[start+8 : start+8+end])

	sample, err := filepath.Abs("../../testdata/sample/traces.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "run", sample)
	if code != exitOK {
		t.Fatalf("quick start: exit %d\n%s", code, stderr)
	}
	switch {
	case *update:
		at := i + start + 8
		updated := append(append(append([]byte(nil), readme[:at]...), stdout...), readme[at+end:]...)
		if err := os.WriteFile(filepath.Join(wd, "../../README.md"), updated, 0o644); err != nil {
			t.Fatal(err)
		}
	case stdout != want:
		os.WriteFile(filepath.Join(wd, "readme_quickstart.got"), []byte(stdout), 0o644)
		t.Errorf("the README's quick-start output differs from what the command prints; see cmd/retryscope/readme_quickstart.got (-update rewrites the README's block)")
	}
}
