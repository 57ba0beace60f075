package sim

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

var updateSample = flag.Bool("update-sample", false, "rewrite testdata/sample/ at the repository root")

// sampleDir holds the bundled sample: 300 logical requests, all shapes, seed 1.
var sampleDir = filepath.Join("..", "..", "testdata", "sample")

func sampleConfig() Config {
	cfg := DefaultConfig()
	cfg.Requests = 300
	return cfg
}

// TestSample keeps the bundled sample in step with the generator. Rewrite it
// with: go test ./internal/sim -run TestSample -update-sample
func TestSample(t *testing.T) {
	traces, truth := render(t, generate(t, sampleConfig()))
	files := map[string][]byte{"traces.jsonl": traces, "traces.jsonl.truth.json": truth}
	if *updateSample {
		if err := os.MkdirAll(sampleDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(sampleDir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, name := range []string{"traces.jsonl", "traces.jsonl.truth.json"} {
		path := filepath.Join(sampleDir, name)
		want, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s is missing; create it with -update-sample", path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(files[name], want) {
			os.WriteFile(path+".got", files[name], 0o644)
			t.Errorf("%s is out of date (wrote %s.got); rerun with -update-sample", path, path)
		}
	}
}
