package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/testkit"
)

// flagKind is how a flag's value is read, which says what its bad values
// look like.
type flagKind int

const (
	kindDuration flagKind = iota
	kindInt
	kindFloat
)

// badValues are the values no number or duration flag may take, whatever
// its range: negative, overflowing, not a number, infinite, absurdly
// large. Zero joins them for the flags where zero means nothing.
func badValues(k flagKind, zeroMeans bool) []string {
	var v []string
	switch k {
	case kindDuration:
		v = []string{"-1s", "-30d", "1000000d", "9999999999h", "NaN", "Inf", "1e400s", "1000d"}
	case kindInt:
		v = []string{"-1", "-5", "99999999999999999999", "NaN", "Inf", "1e400", "1000000000000", "1.5"}
	case kindFloat:
		v = []string{"-1", "-0.5", "1e400", "NaN", "Inf", "-Inf", "1e12"}
	}
	if !zeroMeans {
		v = append(v, "0")
	}
	return v
}

// TestEveryNumberFlagRefusesBadValues runs every command with every bad
// value of every duration and number flag it has, and wants each to be a
// usage error, exit 2 with a Try: line, before anything is touched: the
// working directory stays empty (no database, no report, no Parquet, no
// traces).
func TestEveryNumberFlagRefusesBadValues(t *testing.T) {
	sample, err := filepath.Abs("../../testdata/sample/traces.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	type flagCase struct {
		name      string
		kind      flagKind
		zeroMeans bool     // 0 is a documented value (none, the default)
		extra     []string // more bad values of this flag alone
	}
	db := []flagCase{{"threads", kindInt, true, []string{"1025"}}}
	rebuildFlags := []flagCase{{"split-window", kindDuration, false, []string{"25h"}}}
	reportFlags := []flagCase{
		{"min-cohort", kindInt, false, nil},
		{"bucket", kindDuration, false, []string{"500us"}},
		{"p99-budget", kindDuration, false, nil},
		{"amplification-budget", kindFloat, false, []string{"0.5", "101"}},
		{"workers", kindInt, true, []string{"abc", "10000001"}},
	}
	ingestLimits := []flagCase{
		{"max-span-duration", kindDuration, false, []string{"400d"}},
		{"max-record-mib", kindInt, false, []string{"257"}},
		{"max-document-mib", kindInt, false, []string{"257"}},
		{"max-expansion", kindInt, false, nil},
	}
	cat := func(parts ...[]flagCase) (all []flagCase) {
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	commands := []struct {
		cmd   string
		args  func(dir string) []string
		flags []flagCase
	}{
		{"ingest", func(dir string) []string { return []string{"--db", filepath.Join(dir, "x.duckdb"), sample} },
			cat(db, ingestLimits, []flagCase{{"decoders", kindInt, true, []string{"1025"}}, {"workers", kindInt, true, []string{"1025"}}})},
		{"run", func(dir string) []string {
			return []string{"--db", filepath.Join(dir, "x.duckdb"), "--parquet", filepath.Join(dir, "pq"), "--report", filepath.Join(dir, "r.json"), sample}
		}, cat(db, ingestLimits, reportFlags, rebuildFlags, []flagCase{{"keep", kindDuration, false, []string{"0", "-1s", "-30d", "1000000d", "9999999999h", "NaN", "Inf", "30s", "36501d"}}})},
		{"report", func(dir string) []string {
			return []string{"--db", filepath.Join(dir, "x.duckdb"), "-o", filepath.Join(dir, "r.json")}
		},
			cat(db, reportFlags, rebuildFlags)},
		{"export", func(dir string) []string {
			return []string{"--db", filepath.Join(dir, "x.duckdb"), "--parquet", filepath.Join(dir, "pq")}
		},
			cat(db, rebuildFlags)},
		{"whatif", func(dir string) []string { return []string{"--db", filepath.Join(dir, "x.duckdb")} },
			cat(db, rebuildFlags, []flagCase{
				{"deadline", kindDuration, false, nil},
				{"max-attempts", kindInt, false, []string{"101", "sdk=0", "app=-1"}},
				{"per-task-budget", kindInt, false, nil},
				{"retry-budget", kindFloat, true, []string{"1001", "0.1,0s,5", "0.1,1000000d,5", "0.1,10s,NaN", "0.1,10s,-1"}},
				{"workers", kindInt, true, []string{"abc", "10000001"}},
				{"retry-concurrency", kindInt, false, []string{"1000001"}},
				{"token-cap", kindInt, false, []string{"1000000001"}},
				{"concurrency", kindInt, false, []string{"1000001"}},
				{"hedge-delay", kindDuration, true, nil},
				{"retry-quota", kindFloat, false, []string{"100,0,10,1", "100,5", "100,5,10,-1", "100,5,Inf,1"}},
				{"backoff", kindDuration, true, []string{"fixed,-1s,8s", "fixed,1s,1000000d", "full-jitter,NaN,8s", "fixed,2s,1s"}},
			})},
		{"shard", func(dir string) []string { return []string{"-o", filepath.Join(dir, "shards"), sample} }, []flagCase{
			{"shards", kindInt, false, []string{"1", "1025"}},
		}},
		{"gen", func(dir string) []string { return []string{"-o", filepath.Join(dir, "t.jsonl")} }, []flagCase{
			{"requests", kindInt, false, []string{"10000001"}},
			{"rate", kindFloat, false, []string{"0.0001"}},
			{"services", kindInt, true, []string{"100"}},
			{"client-max-attempts", kindInt, false, []string{"101"}},
			{"app-tries", kindInt, false, []string{"101"}},
			{"base", kindDuration, false, []string{"25h"}},
			{"cap", kindDuration, false, []string{"25h", "100ms"}}, // under the 200ms base
			{"naive-share", kindFloat, true, []string{"1.5"}},
			{"client-retry-budget", kindFloat, true, []string{"1001"}},
			{"client-retry-quota", kindInt, true, []string{"1000001"}},
			{"client-retry-concurrency", kindInt, true, []string{"1000001"}},
			{"client-token-cap", kindInt, true, []string{"1000000001"}},
			{"client-concurrency", kindInt, true, []string{"1000001"}},
			{"hedge-delay", kindDuration, false, nil},
			{"stream-share", kindFloat, true, []string{"2"}},
			{"experiment", kindFloat, true, []string{"2"}},
			{"big-inputs", kindFloat, true, []string{"2"}},
			{"split-workers", kindInt, true, []string{"1001"}},
			{"flight-bucket", kindDuration, true, []string{"1ns", "999us"}},
			{"client-deadline", kindDuration, true, nil},
			{"abandon-streams", kindFloat, true, []string{"2"}},
			{"batch-spans", kindInt, false, []string{"1000001"}},
			{"faults", kindFloat, true, []string{"429=NaN", "5xx=Inf", "reset=-0.1", "timeout=1e400", "4xx=2"}},
		}},
	}
	for _, c := range commands {
		for _, f := range c.flags {
			values := f.extra
			// Lists of settings, and --keep whose range is a century: their
			// extra values are the bad ones.
			if f.name != "faults" && f.name != "backoff" && f.name != "keep" {
				values = append(values, badValues(f.kind, f.zeroMeans)...)
			}
			for _, v := range values {
				dir := t.TempDir()
				args := append([]string{c.cmd, "--" + f.name, v}, c.args(dir)...)
				code, stdout, stderr := runCLI(t, args...)
				if code != exitUsage || stdout != "" || !strings.HasSuffix(stderr, "Try: retryscope "+c.cmd+" --help\n") {
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and a Try: line", strings.Join(args[:3], " "), code, stdout, stderr)
				}
				if left, _ := os.ReadDir(dir); len(left) > 0 {
					t.Errorf("%s: left %s behind", strings.Join(args[:3], " "), left[0].Name())
				}
			}
		}
	}
}

// TestBadStringValuesAreUsageErrors covers the flags whose bad values are
// not numbers: a size, a database name, times out of range.
func TestBadStringValuesAreUsageErrors(t *testing.T) {
	sample, err := filepath.Abs("../../testdata/sample/traces.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range [][]string{
		{"ingest", "--memory-limit", "1gb", sample},
		{"ingest", "--memory-limit", "0MB", sample},
		{"ingest", "--memory-limit", "-1GB", sample},
		{"ingest", "--memory-limit", "1000000TB", sample},
		{"report", "--memory-limit", "NaNGB"},
		{"ingest", "--db", "a?b.duckdb", sample},
		{"report", "--db", "a?b.duckdb"},
		{"report", "--since", "9999-01-01"},
		{"report", "--until", "1600-01-01"},
		{"run", "--keep", "30d", "--now", "9999-01-01T00:00:00Z", sample},
		{"run", "--now", "2026-11-30T00:00:00Z", sample},
		{"gen", "--start", "9999-01-01T00:00:00Z"},
		{"gen", "--start", "1900-01-01T00:00:00Z"},
		{"gen", "--requests", "10000000", "--rate", "0.1"},
		{"gen", "--flight-bucket", "1ms", "--requests", "100000"},
	} {
		dir := t.TempDir()
		args := append([]string{}, tc...)
		switch tc[0] {
		case "gen":
			args = append(args, "-o", filepath.Join(dir, "t.jsonl"))
		default:
			if !strings.HasPrefix(tc[2], "a?b") {
				args = append(args, "--db", filepath.Join(dir, "x.duckdb"))
			}
		}
		wd, _ := os.Getwd()
		code, stdout, stderr := runCLI(t, args...)
		if code != exitUsage || stdout != "" || !strings.HasSuffix(stderr, "Try: retryscope "+tc[0]+" --help\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and a Try: line", tc, code, stdout, stderr)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("%q: left %s behind", tc, left[0].Name())
		}
		if _, err := os.Stat(filepath.Join(wd, "a?b.duckdb")); err == nil {
			t.Errorf("%q: created a?b.duckdb", tc)
		}
	}
}

// TestKeepOverflowDeletesNothing is issue 34's first night: --keep
// 1000000d overflowed to a cutoff after every span and emptied the
// database with exit 0. It is a usage error now, and every span stays.
func TestKeepOverflowDeletesNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.duckdb")
	mustRunCLI(t, "ingest", "--db", db, "../../testdata/sample/traces.jsonl")
	for _, keep := range []string{"1000000d", "106752d", "9999999999h"} {
		code, _, stderr := runCLI(t, "run", "--db", db, "--keep", keep, "--now", "2026-11-30T00:00:00Z", "../../testdata/sample/traces.jsonl")
		if code != exitUsage || !strings.Contains(stderr, "--keep") {
			t.Errorf("--keep %s: exit %d, stderr %q; want a usage error", keep, code, stderr)
		}
	}
	st := openDB(t, db)
	defer st.Close()
	if n := testkit.Count(t, st, `SELECT count(*) FROM spans`); n != 1203 {
		t.Errorf("%d spans left of the sample's 1203", n)
	}
}
