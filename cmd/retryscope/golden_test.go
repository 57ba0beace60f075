package main

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/scenarios/*/want.*, the README's quick-start output) from what the commands print")

// goldenFormats maps each report format to its golden file.
var goldenFormats = []struct{ format, file string }{
	{"table", "want.txt"}, {"markdown", "want.md"}, {"csv", "want.csv"}, {"json", "want.json"}, {"html", "want.html"},
}

// TestScenarios runs every directory of testdata/scenarios: the commands
// in its cmd file, in a fresh directory, the last of them a report that
// is then printed in every format and compared with want.<format>. A new
// scenario is a new directory; go test -run TestScenarios -update writes
// its golden files, and a mismatch leaves the output beside them as .got.
func TestScenarios(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join(root, "testdata", "scenarios", "*", "cmd"))
	if err != nil || len(dirs) < 5 {
		t.Fatalf("want at least 5 scenarios in testdata/scenarios, found %d (%v)", len(dirs), err)
	}
	for _, cmdFile := range dirs {
		dir := filepath.Dir(cmdFile)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			outputs := runScenario(t, root, dir)
			for _, f := range goldenFormats {
				checkGolden(t, filepath.Join(dir, f.file), outputs[f.format])
			}
		})
	}
}

// runScenario runs a scenario's commands in a temporary directory and
// returns its report in every format.
func runScenario(t *testing.T, root, dir string) map[string][]byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds [][]string
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.NewReplacer("$ROOT", root, "$SCENARIO", dir).Replace(line)
		cmds = append(cmds, strings.Fields(line))
	}
	if len(cmds) == 0 || cmds[len(cmds)-1][0] != "report" {
		t.Fatalf("%s/cmd must end with a report command", dir)
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds[:len(cmds)-1] {
		if code, _, stderr := runCLI(t, c...); code != exitOK && code != exitRejected {
			t.Fatalf("%s: exit %d\n%s", strings.Join(c, " "), code, stderr)
		}
	}
	out := map[string][]byte{}
	for _, f := range goldenFormats {
		args := append(append([]string(nil), cmds[len(cmds)-1]...), "--format", f.format)
		stdout, _ := mustRunCLI(t, args...)
		out[f.format] = []byte(stdout)
		if f.format == "html" {
			out[f.format] = normalizeHTML(out[f.format])
		}
	}
	return out
}

var dataURI = regexp.MustCompile(`data:image/svg\+xml;base64,[A-Za-z0-9+/=]+`)

// normalizeHTML replaces each inline chart by a digest of it, so the
// golden page stays readable and still changes when a chart does.
func normalizeHTML(b []byte) []byte {
	return dataURI.ReplaceAllFunc(b, func(uri []byte) []byte {
		return fmt.Appendf(nil, "data:image/svg+xml;sha256,%x", sha256.Sum256(uri))
	})
}

// checkGolden compares got with the file, or writes the file under
// -update; on a mismatch it writes got beside the file as .got.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(path + ".got")
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/retryscope -run TestScenarios -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("%s differs from the output, written to %s.got (-update accepts it)", path, filepath.Base(path))
		return
	}
	os.Remove(path + ".got")
}
