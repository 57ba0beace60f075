package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// committed is where the fixtures are checked in, from this package.
var committed = filepath.Join("..", "..", "testdata", "fixtures")

// TestCommittedFixtures regenerates every fixture and compares it byte for
// byte with the committed files, so they cannot drift from this program.
func TestCommittedFixtures(t *testing.T) {
	out := t.TempDir()
	if err := build(out); err != nil {
		t.Fatal(err)
	}
	made := fixtureFiles(t, out)
	have := fixtureFiles(t, committed)
	if len(made) == 0 {
		t.Fatal("fixturegen wrote no fixtures")
	}
	if !slices.Equal(made, have) {
		t.Errorf("fixturegen writes %v, testdata/fixtures holds %v", made, have)
	}
	for _, name := range made {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(committed, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what fixturegen writes (%s); run: go run ./internal/fixturegen", name, firstDifference(got, want))
		}
	}
}

// fixtureFiles lists dir/*/*, relative to dir and sorted.
func fixtureFiles(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, rel)
	}
	slices.Sort(names)
	return names
}

// firstDifference says where two files first differ, with a little context.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d: wrote ...%s..., committed ...%s...", i, got[from:min(len(got), i+80)], want[from:min(len(want), i+80)])
}
