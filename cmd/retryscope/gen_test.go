package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenHelp(t *testing.T) {
	code, out, errOut := runCLI(t, "gen", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("--help: code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"Usage: retryscope gen", "Examples:", "--seed", "--faults", "(default 1000)"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestGenUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--requests", "10"},
		{"-o", "x", "--client-policy", "sometimes"},
		{"-o", "x", "--shapes", "explicit,nope"},
		{"-o", "x", "--faults", "429=2"},
		{"-o", "x", "--format", "xml"},
		{"-o", "x", "extra"},
		{"-o", "x", "--no-such-flag"},
		{"-o", "-", "--truth", "-"},
	} {
		code, out, errOut := runCLI(t, append([]string{"gen"}, args...)...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "retryscope: ") || !strings.HasSuffix(errOut, "Try: retryscope gen --help\n") {
			t.Errorf("gen %q: code %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

func TestGenWritesTracesAndTruth(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.jsonl")
	code, _, errOut := runCLI(t, "gen", "--seed", "7", "--requests", "120", "-o", out)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	traces, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(traces)), "\n") {
		var doc struct {
			ResourceSpans []json.RawMessage `json:"resourceSpans"`
		}
		if err := json.Unmarshal([]byte(line), &doc); err != nil || len(doc.ResourceSpans) == 0 {
			t.Fatalf("line %d is not an ExportTraceServiceRequest: %v", i+1, err)
		}
	}
	var truth struct {
		Seed     int64
		Requests []json.RawMessage
	}
	raw, err := os.ReadFile(out + ".truth.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &truth); err != nil || truth.Seed != 7 || len(truth.Requests) != 120 {
		t.Fatalf("truth: seed %d, %d requests, %v", truth.Seed, len(truth.Requests), err)
	}

	code, stdout, _ := runCLI(t, "gen", "--seed", "7", "--requests", "120", "-o", "-")
	if code != 0 || stdout != string(traces) {
		t.Error("-o - did not write the same traces to stdout")
	}
}

func TestGenProto(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.bin")
	if code, _, errOut := runCLI(t, "gen", "--requests", "60", "--format", "proto", "-o", out, "--truth", filepath.Join(dir, "truth.json")); code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	frames := 0
	for len(b) > 0 {
		n := int(binary.BigEndian.Uint32(b))
		if n == 0 || 4+n > len(b) {
			t.Fatalf("bad frame length %d with %d bytes left", n, len(b))
		}
		b = b[4+n:]
		frames++
	}
	if frames == 0 {
		t.Fatal("no frames")
	}
	if _, err := os.Stat(filepath.Join(dir, "truth.json")); err != nil {
		t.Fatal(err)
	}
}
