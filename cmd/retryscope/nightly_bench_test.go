package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retryscope/retryscope/internal/sim"
)

// The nightly benchmark's workload: ten days of history, then an eleventh
// night. Each day is one dump of nightlyBenchRequests logical requests
// (10,000 by default, about 35k spans, every shape, 10 services) arriving
// at 1/s from 08:00 UTC, with its own seed. RETRYSCOPE_BENCH_NIGHT sets
// another night size, e.g. 60000 for about 210k spans.
const nightlyBenchDays = 10

var nightlyBenchRequests = benchNightRequests()

func benchNightRequests() int {
	if n, err := strconv.Atoi(os.Getenv("RETRYSCOPE_BENCH_NIGHT")); err == nil && n > 0 {
		return n
	}
	return 10_000
}

var nightlyBenchFirstDay = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// nightlyBenchRoot holds the dumps and the prepared history between
// benchmark runs. Remove it to start over.
var nightlyBenchRoot = filepath.Join(benchDir, "nightly")

// nightlyBenchDumps writes (once) the dumps of days 1..11, one directory a
// day, and returns the directories.
func nightlyBenchDumps(b *testing.B) []string {
	b.Helper()
	root := filepath.Join(nightlyBenchRoot, fmt.Sprintf("dumps-r%d", nightlyBenchRequests))
	var dirs []string
	for d := 0; d <= nightlyBenchDays; d++ {
		day := nightlyBenchFirstDay.AddDate(0, 0, d)
		dir := filepath.Join(root, day.Format("2006-01-02"))
		dirs = append(dirs, dir)
		if _, err := os.Stat(filepath.Join(dir, "traces.pb")); err == nil {
			continue
		}
		cfg := sim.DefaultConfig()
		cfg.Seed, cfg.Requests, cfg.Rate, cfg.Services = int64(1000+d), nightlyBenchRequests, 1, 10
		cfg.Start = day.Add(8 * time.Hour)
		res, err := sim.Generate(cfg)
		if err != nil {
			b.Fatal(err)
		}
		// Written beside the day's directory, so no half-written file is
		// ever in a dump.
		tmp := filepath.Join(root, day.Format("2006-01-02")+".pb.part")
		nightlyWrite(b, tmp, res.Traces)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "traces.pb")); err != nil {
			b.Fatal(err)
		}
	}
	return dirs
}

// nightlySourceHash fingerprints the code a prepared database depends on
// (every non-test .go and .sql file of the module), so a cached history is
// rebuilt when the rebuild, the baselines, the schema or the export change.
func nightlySourceHash(b *testing.B) string {
	b.Helper()
	h := sha256.New()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		name := d.Name()
		if !d.IsDir() && (strings.HasSuffix(name, ".sql") || strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		fmt.Fprintf(h, "%s %d\n", rel, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// nightlyBenchHistory prepares (once per version of the code) a database
// holding days 1..10 with its Parquet export, and returns the directory
// holding history.duckdb and parquet/. It is made the way production makes
// it, by one nightly run a day: the tables would be the same after one run
// over the ten dumps (TestTwoNightsEqualOneRun), but DuckDB's storage would
// not. One big run leaves part-filled row groups that the next checkpoint
// merges, a one-off cost of seconds that ten nightly runs have already paid.
func nightlyBenchHistory(b *testing.B, days []string) string {
	b.Helper()
	dir := filepath.Join(nightlyBenchRoot, fmt.Sprintf("history-r%d-d%d-%s", nightlyBenchRequests, len(days), nightlySourceHash(b)))
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return dir
	}
	// Older histories were made by other code; drop them.
	old, _ := filepath.Glob(filepath.Join(nightlyBenchRoot, "history-*"))
	for _, o := range old {
		os.RemoveAll(o)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	for _, day := range days {
		args := []string{"run", "--db", filepath.Join(dir, "history.duckdb"), "--parquet", filepath.Join(dir, "parquet"),
			"--report", filepath.Join(dir, "report.json"), day}
		if out, err := cli(args...).CombinedOutput(); err != nil {
			b.Fatalf("preparing the history, night %s: %v\n%s", filepath.Base(day), err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("prepared %d days of history in %s under %s", len(days), time.Since(t0).Round(time.Millisecond), dir)
	return dir
}

// nightlyCopyTree copies the files under src to dst.
func nightlyCopyTree(b *testing.B, src, dst string) {
	b.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		b.Fatal(err)
	}
}

// nightlyBenchRun times one `retryscope run` as a real process, the way
// cron starts it, and returns its duration and stderr.
func nightlyBenchRun(b *testing.B, work, night string) (time.Duration, string) {
	b.Helper()
	now := nightlyBenchFirstDay.AddDate(0, 0, nightlyBenchDays+1).Add(2*time.Hour + 15*time.Minute)
	cmd := cli("run", "--db", filepath.Join(work, "history.duckdb"), "--parquet", filepath.Join(work, "parquet"),
		"--report", filepath.Join(work, "report.json"), "--keep", "30d", "--now", now.Format(time.RFC3339), night)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(t0)
	if err != nil {
		b.Fatalf("run %s in %s: %v\n%s", night, work, err, out)
	}
	return took, string(out)
}

// BenchmarkNightAfterTenDays is acceptance 3 of issue 6: with ten days of
// history in the database, the nightly run over one more night should cost
// what that night costs alone (within 1.5x), not grow with the history. It
// times, in the same benchmark run, the full nightly job (ingest, rebuild,
// baselines, retention with nothing to drop, Parquet, JSON report) as a
// real process on the eleventh night's dump (about 35k spans) against a
// copy of the prepared history (database and its Parquet export), and the
// same job on that night alone into an empty database, and reports both in
// seconds and their ratio.
//
//	go test -run '^$' -bench NightAfterTenDays -benchtime 1x ./cmd/retryscope
//
// The dumps and the prepared history are cached under
// $TMPDIR/retryscope-bench/nightly; the history is prepared again whenever
// a non-test .go or .sql file of the module changes.
func BenchmarkNightAfterTenDays(b *testing.B) {
	if testing.Short() {
		b.Skip("prepares ten days of history (about 350k spans)")
	}
	dumps := nightlyBenchDumps(b)
	history := nightlyBenchHistory(b, dumps[:nightlyBenchDays])
	night := dumps[nightlyBenchDays]
	var withHistory, alone time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		work := b.TempDir()
		nightlyCopyTree(b, history, work)
		os.Remove(filepath.Join(work, "done"))
		b.StartTimer()
		took, out := nightlyBenchRun(b, work, night)
		withHistory += took
		if i == 0 {
			b.Logf("after ten days, %s: %s", took.Round(time.Millisecond), nightlyOneLine(out))
		}

		empty := b.TempDir()
		took, out = nightlyBenchRun(b, empty, night)
		alone += took
		if i == 0 {
			b.Logf("alone, %s: %s", took.Round(time.Millisecond), nightlyOneLine(out))
		}
	}
	b.StopTimer()
	h, a := withHistory.Seconds()/float64(b.N), alone.Seconds()/float64(b.N)
	b.ReportMetric(h, "history_s")
	b.ReportMetric(a, "alone_s")
	b.ReportMetric(h/a, "history/alone")
}

// nightlyOneLine joins a run's log lines, so the benchmark's log is not
// truncated.
func nightlyOneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", " | ")), " ")
}
