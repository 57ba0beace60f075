package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit"
)

// TestShardKeepsTracesAndClientsWhole: every span goes to exactly one
// shard; a trace is never split across shards; the traces rooted in a
// CLIENT span (attempts split across traces) of one service all go to one
// shard; a record that cannot be read is counted and named, and the rest
// of its file and the other files still go in.
func TestShardKeepsTracesAndClientsWhole(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed, cfg.SplitWorkers = 1500, 5, 4
	res, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	half := len(res.Traces) / 2
	var lines bytes.Buffer
	sim.WriteJSONLines(&lines, res.Traces[:half])
	lines.WriteString("{\"resourceSpans\": [not json\n")
	lines.WriteString("{\"resourceMetrics\": []}\n")
	sim.WriteJSONLines(&lines, res.Traces[half:half+1])
	if err := os.WriteFile(filepath.Join(dir, "a.jsonl"), lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.WriteFile(t, filepath.Join(dir, "b.pb"), sim.WriteProtoFramed, res.Traces[half+1:])
	var want int
	for _, td := range res.Traces {
		want += td.SpanCount()
	}

	var log strings.Builder
	out := filepath.Join(t.TempDir(), "shards")
	sum, err := ingest.Shard(context.Background(), []string{dir}, ingest.ShardOptions{N: 3, Dir: out, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Files != 2 || sum.Rejected["bad_json"] != 1 || sum.Rejected["not_otlp"] != 1 || !strings.Contains(log.String(), "a.jsonl:") || !strings.Contains(log.String(), ": bad_json: ") {
		t.Errorf("files %d, rejected %v, log:\n%s", sum.Files, sum.Rejected, log.String())
	}
	shardOfTrace := map[string]int{}
	shardOfClient := map[string]int{}
	var got int
	for k := range 3 {
		data, err := readShard(filepath.Join(ingest.ShardDir(out, k+1, 3), ingest.ShardFile))
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
			if err != nil {
				t.Fatalf("shard %d: %v", k+1, err)
			}
			rss := td.ResourceSpans()
			for i := range rss.Len() {
				svc, _ := rss.At(i).Resource().Attributes().Get("service.name")
				sss := rss.At(i).ScopeSpans()
				for j := range sss.Len() {
					spans := sss.At(j).Spans()
					for s := range spans.Len() {
						sp := spans.At(s)
						n++
						id := sp.TraceID().String()
						if prev, ok := shardOfTrace[id]; ok && prev != k {
							t.Fatalf("trace %s in shards %d and %d", id, prev+1, k+1)
						}
						shardOfTrace[id] = k
						if sp.ParentSpanID().IsEmpty() && sp.Kind() == ptrace.SpanKindClient {
							if prev, ok := shardOfClient[svc.AsString()]; ok && prev != k {
								t.Fatalf("client %s's split traces in shards %d and %d", svc.AsString(), prev+1, k+1)
							}
							shardOfClient[svc.AsString()] = k
						}
					}
				}
			}
		}
		if n != int(sum.Spans[k]) {
			t.Errorf("shard %d holds %d spans, summary says %d", k+1, n, sum.Spans[k])
		}
		if n == 0 {
			t.Errorf("shard %d is empty", k+1)
		}
		got += n
	}
	// The unreadable line held no span of the workload: every one is there.
	if got != want {
		t.Errorf("%d spans sharded of %d", got, want)
	}
	if len(shardOfClient) == 0 {
		t.Error("no split traces: the client rule is not put to the test")
	}

	// Records are decoded and split in parallel but written in their
	// order: one worker or eight write the same bytes.
	for _, workers := range []int{1, 8} {
		w := filepath.Join(t.TempDir(), "shards")
		if _, err := ingest.Shard(context.Background(), []string{dir}, ingest.ShardOptions{N: 3, Dir: w, Workers: workers}); err != nil {
			t.Fatal(err)
		}
		for k := range 3 {
			a, _ := os.ReadFile(filepath.Join(ingest.ShardDir(out, k+1, 3), ingest.ShardFile))
			b, err := os.ReadFile(filepath.Join(ingest.ShardDir(w, k+1, 3), ingest.ShardFile))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%d workers: shard %d differs (%d bytes against %d, %v)", workers, k+1, len(b), len(a), err)
			}
		}
	}

	// Run again with the shards under the input directory: they are left
	// out, and the shards come out the same.
	inner := filepath.Join(dir, "shards")
	if _, err := ingest.Shard(context.Background(), []string{dir}, ingest.ShardOptions{N: 3, Dir: inner}); err != nil {
		t.Fatal(err)
	}
	again, err := ingest.Shard(context.Background(), []string{dir}, ingest.ShardOptions{N: 3, Dir: inner, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if again.Files != 2 || !slices.Equal(again.Spans, sum.Spans) || !strings.Contains(log.String(), "under the shards' directory") {
		t.Errorf("again: %d files, spans %v (first %v)", again.Files, again.Spans, sum.Spans)
	}

	t.Logf("spans per shard %v", sum.Spans)
}

// TestShardRefusesStreams: both passes read every input, so standard input
// and pipes, which can be read once, are refused before anything is
// written.
func TestShardRefusesStreams(t *testing.T) {
	out := filepath.Join(t.TempDir(), "shards")
	if _, err := ingest.Shard(context.Background(), []string{"-"}, ingest.ShardOptions{N: 2, Dir: out}); err == nil || !strings.Contains(err.Error(), "standard input") {
		t.Errorf("stdin: error %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("shards written: %v", err)
	}
}

// readShard is a shard's file decompressed: its frames, one a record, as
// one stream.
func readShard(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := zstd.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return io.ReadAll(d)
}

// TestShardCancelled: a split whose context ends is an error, not a
// summary of the spans it got to (the earlier shards' files are gone).
func TestShardCancelled(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed = 50, 6
	res, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testkit.WriteFile(t, filepath.Join(dir, "a.pb"), sim.WriteProtoFramed, res.Traces)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = ingest.Shard(ctx, []string{dir}, ingest.ShardOptions{N: 2, Dir: filepath.Join(t.TempDir(), "shards")})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled split: %v, want context.Canceled", err)
	}
}
