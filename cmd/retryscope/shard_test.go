package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/ingest"
)

// TestShardedRunEqualsOneRun: a day of dumps (every shape, split traces of
// concurrent go-retryablehttp workers and of sequential clients, app loops
// and agents) split into 4 shards, each an ordinary run, and a report over
// the union of the shards' Parquet datasets: every figure equals the one
// run's over the whole day (counts, rates, percentiles, segments,
// findings, marginal yield, capacity, ranges), except what the shards
// compute on their own (baselines and the latency added against them) and
// the ingest summary, which the datasets do not carry.
func TestShardedRunEqualsOneRun(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dump := filepath.Join(root, "dump")
	if err := os.Mkdir(dump, 0o755); err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, "gen", "--seed", "3", "--requests", "2500", "--shapes", "explicit,resend,grpc,wrapped,split,orphan,hedge,apploop,agent", "--experiment", "0.2", "-o", filepath.Join(dump, "a.jsonl"))
	mustRunCLI(t, "gen", "--seed", "4", "--requests", "1200", "--shapes", "split", "--split-workers", "8", "--format", "proto", "-o", filepath.Join(dump, "b.pb"))

	mustRunCLI(t, "run", "--db", filepath.Join(root, "day.duckdb"), "--parquet", filepath.Join(root, "pq-day"), "--report", filepath.Join(root, "day.txt"), "--full", dump)
	one, _ := mustRunCLI(t, "report", "--db", filepath.Join(root, "day.duckdb"), "--format", "json")
	for _, table := range []string{"join_alternatives", "baseline_arms"} {
		if m, _ := filepath.Glob(filepath.Join(root, "pq-day", table, "*", "*.parquet")); len(m) == 0 {
			t.Errorf("the day wrote no %s: what a report reads of it is not put to the test", table)
		}
	}

	shards := filepath.Join(root, "shards")
	_, log := mustRunCLI(t, "shard", "--shards", "4", "-o", shards, dump)
	if !strings.Contains(log, "shard: 2 files") {
		t.Errorf("shard log: %s", log)
	}
	args := []string{"report", "--format", "json"}
	for k := 1; k <= 4; k++ {
		dir := filepath.Join(shards, fmt.Sprintf("shard-%d-of-4", k))
		pq := filepath.Join(root, fmt.Sprintf("pq-%d", k))
		mustRunCLI(t, "run", "--db", filepath.Join(root, fmt.Sprintf("shard%d.duckdb", k)), "--parquet", pq,
			"--report", filepath.Join(root, fmt.Sprintf("shard%d.txt", k)), "--full", dir)
		args = append(args, "--dataset", pq)
	}
	union, _ := mustRunCLI(t, args...)

	a, b := comparable(t, one), comparable(t, union)
	if a["workload"].(map[string]any)["logical_requests"] != b["workload"].(map[string]any)["logical_requests"] {
		t.Errorf("logical requests: one run %v, shards %v", a["workload"].(map[string]any)["logical_requests"], b["workload"].(map[string]any)["logical_requests"])
	}
	for _, key := range sortedKeys(a) {
		if !reflect.DeepEqual(a[key], b[key]) {
			t.Errorf("%s differs: %s", key, firstDifference(key, a[key], b[key]))
		}
	}
	if len(a) != len(b) {
		t.Errorf("sections: one run %v, shards %v", sortedKeys(a), sortedKeys(b))
	}

	// What needs the spans is refused, and a dataset named twice counts once.
	pq1 := filepath.Join(root, "pq-1")
	for _, extra := range [][]string{{"--by", "attr:user.id"}, {"--whatif", filepath.Join(root, "p.txt")}, {"--split-window", "5s"}, {"--db", filepath.Join(root, "day.duckdb")}} {
		if code, _, stderr := runCLI(t, append([]string{"report", "--dataset", pq1}, extra...)...); code != exitUsage {
			t.Errorf("report --dataset %v: exit %d, want %d\n%s", extra, code, exitUsage, stderr)
		}
	}
	once, _ := mustRunCLI(t, "report", "--format", "json", "--dataset", pq1)
	twice, _ := mustRunCLI(t, "report", "--format", "json", "--dataset", pq1, "--dataset", pq1)
	if x, y := comparable(t, once)["workload"], comparable(t, twice)["workload"]; !reflect.DeepEqual(x, y) {
		t.Errorf("a dataset named twice: %s", firstDifference("workload", x, y))
	}
}

// comparable is a JSON report without what the shards compute apart.
func comparable(t *testing.T, report string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(report), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "baselines")
	delete(m, "ingest")
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "added_latency")
			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(m)
	return m
}

func sortedKeys(m map[string]any) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// firstDifference names the first path at which a and b differ.
func firstDifference(path string, a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		for _, k := range sortedKeys(x) {
			if !reflect.DeepEqual(x[k], y[k]) {
				return firstDifference(path+"."+k, x[k], y[k])
			}
		}
		return fmt.Sprintf("%s: keys %v vs %v", path, sortedKeys(x), sortedKeys(y))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %d items vs %d", path, len(x), len(y))
		}
		for i := range x {
			if !reflect.DeepEqual(x[i], y[i]) {
				return firstDifference(fmt.Sprintf("%s[%d]", path, i), x[i], y[i])
			}
		}
	}
	return fmt.Sprintf("%s: %v vs %v", path, a, b)
}

// TestShardedRealClientsEqualOneRun: the real clients' corpora as a day of
// dumps, split into 4 shards, each run on its own, and reported over the
// union of their datasets, equal one run over the day. go-retryablehttp's
// attempts are each a trace of their own (rooted in a CLIENT span), so all
// of them go to the one shard of their client service; openai-node's
// traces spread over the shards. Split again with go-retryablehttp alone,
// into the same folder, three shards get no spans: they get no file (an
// empty one is a rejected input), their runs succeed and write datasets of
// no requests, and the union still equals one run.
func TestShardedRealClientsEqualOneRun(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	corpus := func(name string) string {
		return filepath.Join("..", "..", "testdata", "corpora", name, "traces.jsonl.zst")
	}
	shards := filepath.Join(root, "shards")
	for i, inputs := range [][]string{
		{corpus("retryablehttp-split-b"), corpus("openai-node-storm-b")},
		{corpus("retryablehttp-split-b")},
	} {
		day := filepath.Join(root, fmt.Sprint("day", i))
		runArgs := append([]string{"run", "--db", day + ".duckdb", "--parquet", day + "-pq", "--report", day + ".txt", "--full"}, inputs...)
		mustRunCLI(t, runArgs...)
		one, _ := mustRunCLI(t, "report", "--db", day+".duckdb", "--format", "json")

		_, log := mustRunCLI(t, append([]string{"shard", "--shards", "4", "-o", shards}, inputs...)...)
		args := []string{"report", "--format", "json"}
		empty := 0
		for k := 1; k <= 4; k++ {
			dir := filepath.Join(shards, fmt.Sprintf("shard-%d-of-4", k))
			if _, err := os.Stat(filepath.Join(dir, ingest.ShardFile)); err != nil {
				empty++
			}
			pq := filepath.Join(root, fmt.Sprintf("pq-%d-%d", i, k))
			mustRunCLI(t, "run", "--db", filepath.Join(root, fmt.Sprintf("shard%d-%d.duckdb", i, k)), "--parquet", pq,
				"--report", filepath.Join(root, fmt.Sprintf("shard%d-%d.txt", i, k)), "--full", dir)
			args = append(args, "--dataset", pq)
		}
		if i == 0 && empty != 0 {
			t.Errorf("both corpora: %d shards without a file, want none\n%s", empty, log)
		}
		if i == 1 {
			if empty != 3 {
				t.Errorf("go-retryablehttp alone: %d shards without a file, want 3 (its one client service in one shard)\n%s", empty, log)
			}
			if !strings.Contains(log, "got no spans") || !strings.Contains(log, "rooted in a CLIENT span and go with their client service: one service") {
				t.Errorf("the shard log does not say why shards are empty:\n%s", log)
			}
		}
		union, _ := mustRunCLI(t, args...)
		a, b := comparable(t, one), comparable(t, union)
		if n := a["workload"].(map[string]any)["logical_requests"]; n == nil || n.(float64) < 1000 {
			t.Fatalf("split %d: one run found %v requests", i, n)
		}
		for _, key := range sortedKeys(a) {
			if !reflect.DeepEqual(a[key], b[key]) {
				t.Errorf("split %d: %s differs: %s", i, key, firstDifference(key, a[key], b[key]))
			}
		}
		if len(a) != len(b) {
			t.Errorf("split %d: sections: one run %v, shards %v", i, sortedKeys(a), sortedKeys(b))
		}
	}
}
