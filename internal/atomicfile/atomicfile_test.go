package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestFill: a filled file is published under its name with nothing left
// beside it; a write that fails keeps the old file and leaves no .tmp.
func TestFill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	fill := func(write func(io.Writer) error) error {
		f, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		return f.Fill("", write)
	}
	if err := fill(func(w io.Writer) error { _, err := io.WriteString(w, "old"); return err }); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("broken")
	if err := fill(func(w io.Writer) error { io.WriteString(w, "half"); return broken }); !errors.Is(err, broken) {
		t.Fatalf("a failed write returned %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "old" {
		t.Errorf("after a failed write the file holds %q (%v), want the old one", b, err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("a failed write left %s.tmp: %v", path, err)
	}
}

// TestPublish: a file another writer closed is renamed over the name; a
// missing one fails and publishes nothing.
func TestPublish(t *testing.T) {
	dir := t.TempDir()
	tmp, path := filepath.Join(dir, ".data.tmp"), filepath.Join(dir, "data")
	if err := os.WriteFile(tmp, []byte("rows"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Publish(tmp, path, ""); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "rows" {
		t.Errorf("published %q (%v), want rows", b, err)
	}
	if err := Publish(tmp, path, ""); err == nil {
		t.Error("publishing a file that is gone succeeded")
	}
}
