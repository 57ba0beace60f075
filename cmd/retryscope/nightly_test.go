package main

// Tests of `retryscope run`, the nightly job (issue 6, acceptance 1, 2, 4
// and 5). They drive the command line as cron would, then read what it
// left behind: the database tables, the Parquet files and the report.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/baseline"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// nightlyTables are the derived tables a run maintains, dumped whole: every
// column, every row, sorted.
var nightlyTables = []string{"requests", "attempts", "baselines"}

// nightlyRunSpecific lists, per table, columns that record the run rather
// than the data (such as a rebuilt_at timestamp) and are left out of the
// comparison. The derived tables have none today: run-specific figures live
// in rebuild_state, baseline_state and ingest_files, which are not compared
// (beyond the ledger's content columns in TestConcurrentRuns).
var nightlyRunSpecific = map[string][]string{}

// nightlyParquetTables are the Parquet tables export writes.
var nightlyParquetTables = []string{"requests", "attempts", "baselines", "daily"}

// nightlyMidnight is the midnight the two-night workload straddles.
var nightlyMidnight = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// nightlyRun runs the command in-process and fails the test unless it
// exits 0; it returns stderr.
func nightlyRun(t testing.TB, args ...string) string {
	t.Helper()
	_, stderr := nightlyExec(t, args)
	return stderr
}

// nightlyExec runs the command in-process, fails the test unless it exits
// 0, and returns stdout and stderr.
func nightlyExec(t testing.TB, args []string) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != exitOK {
		t.Fatalf("retryscope %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// nightlyStdout runs the command in-process, fails the test unless it
// exits 0, and returns stdout.
func nightlyStdout(t testing.TB, args ...string) string {
	t.Helper()
	stdout, _ := nightlyExec(t, args)
	return stdout
}

// withoutWhy drops the report window's explanation, which says how the
// window was chosen rather than what is in it.
func withoutWhy(t testing.TB, report string) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(report), &doc); err != nil {
		t.Fatalf("report is not JSON: %v", err)
	}
	if w, ok := doc["window"].(map[string]any); ok {
		delete(w, "why")
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// nightlyGenerate renders a workload's export batches.
func nightlyGenerate(t testing.TB, cfg sim.Config) []ptrace.Traces {
	t.Helper()
	res, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res.Traces
}

// nightlyWrite writes batches as a length-framed OTLP protobuf dump, the
// Collector file exporter's format: proto.
func nightlyWrite(t testing.TB, path string, batches []ptrace.Traces) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.WriteProtoFramed(f, batches); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// nightlySplit cuts every span by its end time: those that ended before cut
// go to before, the rest to after, keeping each span's resource and scope.
// It also counts the traces and the traces with spans on both sides.
func nightlySplit(batches []ptrace.Traces, cut time.Time) (before, after []ptrace.Traces, traces, straddling int) {
	cutNs := uint64(cut.UnixNano())
	side := map[pcommonTraceID]uint8{} // bit 1: a span before the cut, bit 2: a span after
	for _, td := range batches {
		b, a := ptrace.NewTraces(), ptrace.NewTraces()
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			var rsB, rsA *ptrace.ResourceSpans
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				var ssB, ssA *ptrace.ScopeSpans
				for k := 0; k < ss.Spans().Len(); k++ {
					sp := ss.Spans().At(k)
					dst, rsDst, ssDst, bit := b, &rsB, &ssB, uint8(1)
					if uint64(sp.EndTimestamp()) >= cutNs {
						dst, rsDst, ssDst, bit = a, &rsA, &ssA, 2
					}
					side[pcommonTraceID(sp.TraceID())] |= bit
					if *rsDst == nil {
						r := dst.ResourceSpans().AppendEmpty()
						rs.Resource().CopyTo(r.Resource())
						r.SetSchemaUrl(rs.SchemaUrl())
						*rsDst = &r
					}
					if *ssDst == nil {
						s := (*rsDst).ScopeSpans().AppendEmpty()
						ss.Scope().CopyTo(s.Scope())
						s.SetSchemaUrl(ss.SchemaUrl())
						*ssDst = &s
					}
					sp.CopyTo((*ssDst).Spans().AppendEmpty())
				}
			}
		}
		if b.SpanCount() > 0 {
			before = append(before, b)
		}
		if a.SpanCount() > 0 {
			after = append(after, a)
		}
	}
	for _, s := range side {
		traces++
		if s == 3 {
			straddling++
		}
	}
	return before, after, traces, straddling
}

type pcommonTraceID [16]byte

// nightlyDumpTables dumps the derived tables of a database file, sorted,
// every column.
func nightlyDumpTables(t testing.TB, db string) map[string]string {
	t.Helper()
	st := nightlyOpen(t, db)
	defer st.Close()
	out := map[string]string{}
	for _, table := range nightlyTables {
		cols := "*"
		if ex := nightlyRunSpecific[table]; len(ex) > 0 {
			cols = "* EXCLUDE (" + strings.Join(ex, ", ") + ")"
		}
		out[table] = testkit.Dump(t, st, "SELECT "+cols+" FROM "+table+" ORDER BY ALL")
		if out[table] == "" && table != "baselines" {
			t.Fatalf("%s: table %s is empty", db, table)
		}
	}
	return out
}

// nightlyReadParquet reads each exported table back through DuckDB with one
// Hive-partitioned glob, as a notebook would, every column sorted.
func nightlyReadParquet(t testing.TB, dir string) map[string]string {
	t.Helper()
	st := testkit.Open(t)
	if _, err := st.ExecText(context.Background(), `SET TimeZone = 'UTC'`); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, table := range nightlyParquetTables {
		glob := filepath.Join(dir, table, "*", "*.parquet")
		out[table] = testkit.Dump(t, st, `SELECT * FROM read_parquet($1, hive_partitioning = true) ORDER BY ALL`, glob)
		if out[table] == "" {
			t.Fatalf("%s: no rows", glob)
		}
	}
	return out
}

// nightlyOpen opens a database file the test reads.
func nightlyOpen(t testing.TB, path string) *store.Store {
	t.Helper()
	return openDB(t, path)
}

// nightlyCompare reports the first differing line of two dumps.
func nightlyCompare(t testing.TB, what string, a, b string) {
	t.Helper()
	if a != b {
		t.Errorf("%s differ (first: two nights, second: one run): %s", what, testkit.FirstDiff(a, b))
	}
}

// nightlyStraddleConfig is a workload of 4000 logical requests (about 16k
// spans, every shape, 10 services) arriving at 200/s across midnight, from
// 23:59:50 to about 00:00:10. A trace lasts about a second, so cutting the
// dump at midnight by span end time leaves about 5% of the traces with
// spans in both nights' dumps (measured: 213 of 4067 traces, 5.2%). A
// slower rate spreads the same requests over more minutes and leaves
// fewer than 1% straddling.
func nightlyStraddleConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Requests, cfg.Rate, cfg.Services = 6, 4000, 200, 10
	cfg.Start = nightlyMidnight.Add(-10 * time.Second)
	return cfg
}

// nightlySmallConfig is the straddling workload at 1,500 requests, half on
// each side of midnight: for the tests that run the nightly job many times
// (crash points, full disks, retention), where more requests only cost time.
func nightlySmallConfig() sim.Config {
	cfg := nightlyStraddleConfig()
	cfg.Requests = 1500
	cfg.Start = nightlyMidnight.Add(-time.Duration(float64(cfg.Requests) / 2 / cfg.Rate * float64(time.Second)))
	return cfg
}

// TestTwoNightsEqualOneRun is acceptance 1 of issue 6: two nightly runs
// over two days of dumps, where about 5% of the traces straddle midnight,
// leave exactly what one run over both days leaves: the same requests,
// attempts and baselines tables (every column), the same JSON report, byte
// for byte, and the same rows read back from the Parquet export.
func TestTwoNightsEqualOneRun(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 16k spans and runs the nightly job three times")
	}
	t.Parallel()
	night1, night2, traces, straddling := nightlySplit(nightlyGenerate(t, nightlyStraddleConfig()), nightlyMidnight)
	share := float64(straddling) / float64(traces)
	t.Logf("%d traces, %d (%.1f%%) straddle midnight", traces, straddling, 100*share)
	if share < 0.03 || share > 0.10 {
		t.Fatalf("%.1f%% of traces straddle midnight, want 3%% to 10%%", 100*share)
	}
	dir := t.TempDir()
	d1 := filepath.Join(dir, "dumps", "2026-11-28")
	d2 := filepath.Join(dir, "dumps", "2026-11-29")
	nightlyWrite(t, filepath.Join(d1, "traces.pb"), night1)
	nightlyWrite(t, filepath.Join(d2, "traces.pb"), night2)

	// A: the nightly job on each night in turn.
	dbA, pqA, repA := filepath.Join(dir, "a.duckdb"), filepath.Join(dir, "parquet-a"), filepath.Join(dir, "report-a.json")
	nightlyRun(t, "run", "--db", dbA, "--parquet", pqA, "--report", repA, "--baseline", "all", d1)
	nightlyRun(t, "run", "--db", dbA, "--parquet", pqA, "--report", repA, "--baseline", "all", d2)
	// B: one run over both nights.
	dbB, pqB, repB := filepath.Join(dir, "b.duckdb"), filepath.Join(dir, "parquet-b"), filepath.Join(dir, "report-b.json")
	nightlyRun(t, "run", "--db", dbB, "--parquet", pqB, "--report", repB, "--baseline", "all", d1, d2)

	st := nightlyOpen(t, dbB)
	split := testkit.Count(t, st, `SELECT count(*) FROM requests r WHERE r.end_ns >= $1
		AND EXISTS (SELECT 1 FROM attempts a WHERE a.request_id = r.request_id AND a.end_ns < $1)`, nightlyMidnight.UnixNano())
	st.Close()
	t.Logf("%d logical requests have attempts in both nights' dumps", split)
	if split == 0 {
		t.Fatal("no logical request is split across the two dumps")
	}

	tablesA, tablesB := nightlyDumpTables(t, dbA), nightlyDumpTables(t, dbB)
	for _, table := range nightlyTables {
		nightlyCompare(t, "table "+table, tablesA[table], tablesB[table])
	}
	if tablesA["baselines"] == "" {
		t.Error("no baselines were computed")
	}
	// The nightly report covers what its run changed: the second night's
	// is over night 2's requests and the straddling ones it completed, and
	// must give the figures the one-run database gives for that window.
	// Over the whole database, the two give the same report byte for byte.
	a, err := os.ReadFile(repA)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		Window struct{ Since, Until *string }
	}
	if err := json.Unmarshal(a, &head); err != nil || head.Window.Since == nil || head.Window.Until == nil {
		t.Fatalf("the second night's report has no window (%v): %.300s", err, a)
	}
	since, _ := time.Parse(time.RFC3339Nano, *head.Window.Since)
	if !since.Before(nightlyMidnight) || since.Before(nightlyStraddleConfig().Start) {
		t.Errorf("the second night's report starts at %s, want the first straddling request, before midnight", since)
	}
	b := nightlyStdout(t, "report", "--db", dbB, "--baseline", "all", "--format", "json",
		"--since", *head.Window.Since, "--until", *head.Window.Until)
	nightlyCompare(t, "JSON reports of the second night's window", withoutWhy(t, string(a)), withoutWhy(t, b))
	whole := func(db string) string {
		return nightlyStdout(t, "report", "--db", db, "--baseline", "all", "--format", "json")
	}
	nightlyCompare(t, "JSON reports of the whole database", whole(dbA), whole(dbB))
	pa, pb := nightlyReadParquet(t, pqA), nightlyReadParquet(t, pqB)
	for _, table := range nightlyParquetTables {
		nightlyCompare(t, "Parquet "+table, pa[table], pb[table])
	}
}

// TestRetentionStaysIncremental: with --keep, the night that drops old
// data still updates only what changed (no full rebuild), and leaves what
// one run over the same dumps with the same retention leaves. Retention
// cuts at midnight through the straddling workload, so it drops whole
// traces before midnight and keeps the straddling ones, some of them part
// of a request whose other traces it dropped: those requests are built
// again from what remains.
func TestRetentionStaysIncremental(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 10k spans and runs the nightly job four times")
	}
	t.Parallel()
	night1, night2, _, _ := nightlySplit(nightlyGenerate(t, nightlySmallConfig()), nightlyMidnight)
	cfg := nightlyStraddleConfig()
	cfg.Seed, cfg.Requests, cfg.Start = 7, 1000, nightlyMidnight.Add(25*time.Hour)
	night3 := nightlyGenerate(t, cfg)
	dir := t.TempDir()
	var dumps []string
	for i, night := range [][]ptrace.Traces{night1, night2, night3} {
		d := filepath.Join(dir, "dumps", fmt.Sprint(i+1))
		nightlyWrite(t, filepath.Join(d, "traces.pb"), night)
		dumps = append(dumps, d)
	}
	// Keep a day, counted back from the third night: the cut is midnight.
	keep := []string{"--keep", "24h", "--now", nightlyMidnight.Add(24 * time.Hour).Format(time.RFC3339)}

	dbA, pqA := filepath.Join(dir, "a.duckdb"), filepath.Join(dir, "parquet-a")
	nightlyRun(t, "run", "--db", dbA, "--parquet", pqA, "--baseline", "all", dumps[0])
	nightlyRun(t, "run", "--db", dbA, "--parquet", pqA, "--baseline", "all", dumps[1])
	log := nightlyRun(t, append([]string{"run", "--db", dbA, "--parquet", pqA, "--baseline", "all"}, append(keep, dumps[2])...)...)
	if strings.Contains(log, "from all spans") || !strings.Contains(log, "updated the logical requests") ||
		!strings.Contains(log, "recomputed the baselines near") || strings.Contains(log, "dropped 0 spans") {
		t.Errorf("the night that dropped data should update, not rebuild:\n%s", log)
	}
	st := nightlyOpen(t, dbA)
	left := testkit.Count(t, st, `SELECT count(*) FROM requests WHERE start_ns < $1`, nightlyMidnight.UnixNano())
	st.Close()
	t.Logf("%d requests that started before the cut are kept, built from the traces that straddle it", left)

	dbB, pqB := filepath.Join(dir, "b.duckdb"), filepath.Join(dir, "parquet-b")
	nightlyRun(t, append([]string{"run", "--db", dbB, "--parquet", pqB, "--baseline", "all"}, append(keep, dumps...)...)...)

	tablesA, tablesB := nightlyDumpTables(t, dbA), nightlyDumpTables(t, dbB)
	for _, table := range nightlyTables {
		nightlyCompare(t, "table "+table, tablesA[table], tablesB[table])
	}
	pa, pb := nightlyReadParquet(t, pqA), nightlyReadParquet(t, pqB)
	for _, table := range nightlyParquetTables {
		nightlyCompare(t, "Parquet "+table, pa[table], pb[table])
	}
	whole := func(db string) string {
		return nightlyStdout(t, "report", "--db", db, "--baseline", "all", "--format", "json")
	}
	nightlyCompare(t, "JSON reports of the whole database", whole(dbA), whole(dbB))
}

// nightlyFile is what the no-op test remembers of a file.
type nightlyFile struct {
	data  string
	mtime time.Time
}

// nightlySnapshot reads every file under dir with its modification time.
func nightlySnapshot(t testing.TB, dir string) map[string]nightlyFile {
	t.Helper()
	out := map[string]nightlyFile{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = nightlyFile{string(data), info.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRunWithNoNewFilesIsANoop is acceptance 2 of issue 6: once a night is
// in, running again with the same inputs (twice) ingests nothing, rebuilds
// nothing, leaves every Parquet file untouched (same bytes, same mtime, no
// file added or removed) and writes the same report, byte for byte.
func TestRunWithNoNewFilesIsANoop(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 12k spans and runs the nightly job three times")
	}
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Requests, cfg.Services = 61, 3000, 10
	cfg.Start = nightlyMidnight.Add(time.Hour)
	dir := t.TempDir()
	dump := filepath.Join(dir, "dumps")
	batches := nightlyGenerate(t, cfg)
	half := len(batches) / 2
	nightlyWrite(t, filepath.Join(dump, "part-1.pb"), batches[:half])
	nightlyWrite(t, filepath.Join(dump, "part-2.pb"), batches[half:])
	db, pq := filepath.Join(dir, "n.duckdb"), filepath.Join(dir, "parquet")
	rep := filepath.Join(dir, "report.json")
	args := []string{"run", "--db", db, "--parquet", pq, "--report", rep, dump}

	first := nightlyRun(t, args...)
	if !strings.Contains(first, "2 files read") {
		t.Fatalf("first run did not read both files:\n%s", first)
	}
	parquet := nightlySnapshot(t, pq)
	report, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(parquet) == 0 || len(report) == 0 {
		t.Fatalf("first run wrote %d Parquet files and a report of %d bytes", len(parquet), len(report))
	}
	for i := 2; i <= 3; i++ {
		time.Sleep(20 * time.Millisecond) // so a rewritten file would show a new mtime
		stderr := nightlyRun(t, args...)
		if i == 2 {
			t.Logf("run 2:\n%s", stderr)
		}
		for _, want := range []string{"0 files read, 2 skipped as already ingested", "0 spans (0 new)", "parquet: unchanged"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("run %d: stderr lacks %q:\n%s", i, want, stderr)
			}
		}
		for _, work := range []string{"rebuilt logical requests", "updated the logical requests", "computed baselines",
			"recomputed the baselines", "parquet: 1", "parquet: 2", "parquet: 3"} {
			if strings.Contains(stderr, work) {
				t.Errorf("run %d with no new files did work (%q):\n%s", i, work, stderr)
			}
		}
		again := nightlySnapshot(t, pq)
		for name, f := range parquet {
			g, ok := again[name]
			switch {
			case !ok:
				t.Errorf("run %d removed %s", i, name)
			case g.data != f.data:
				t.Errorf("run %d rewrote %s with different bytes", i, name)
			case !g.mtime.Equal(f.mtime):
				t.Errorf("run %d touched %s (mtime %s, was %s)", i, name, g.mtime.Format(time.RFC3339Nano), f.mtime.Format(time.RFC3339Nano))
			}
		}
		for name := range again {
			if _, ok := parquet[name]; !ok {
				t.Errorf("run %d added %s", i, name)
			}
		}
		got, err := os.ReadFile(rep)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, report) {
			t.Errorf("run %d wrote a different report", i)
			nightlyCompare(t, "reports", string(report), string(got))
		}
	}
}

// nightlyProc is a `retryscope run` started as a real process.
type nightlyProc struct {
	cmd     *exec.Cmd
	stderr  bytes.Buffer
	started time.Time
	ended   time.Time
	took    time.Duration
	code    int
}

func nightlyStart(t testing.TB, args ...string) *nightlyProc {
	t.Helper()
	p := &nightlyProc{cmd: cli(args...)}
	p.cmd.Stderr = &p.stderr
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *nightlyProc) wait(t testing.TB) {
	t.Helper()
	err := p.cmd.Wait()
	p.ended = time.Now()
	p.took = p.ended.Sub(p.started)
	p.code = p.cmd.ProcessState.ExitCode()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatal(err)
	}
}

// nightlyAwaitFile polls until path exists: DuckDB creates the database
// file as it takes the file's lock, so the first process holds it then.
func nightlyAwaitFile(t testing.TB, path string, p *nightlyProc) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within 10s\n%s", path, p.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// nightlyLedger dumps the ingest ledger without its run-specific columns
// (file_id, ingested_at, seconds).
const nightlyLedger = `SELECT path, sha256, size_bytes, format, compression, records, spans_read, spans_new, rejected
	FROM ingest_files ORDER BY path`

// nightlyDBState is what two databases must agree on after the concurrent
// runs: the derived tables, the spans and the ledger.
func nightlyDBState(t testing.TB, db string) map[string]string {
	t.Helper()
	out := nightlyDumpTables(t, db)
	st := nightlyOpen(t, db)
	defer st.Close()
	out["spans"] = testkit.DumpSpans(t, st)
	out["ingest_files"] = testkit.Dump(t, st, nightlyLedger)
	out["ingest_files count"] = testkit.Dump(t, st, `SELECT count(*) FROM ingest_files`)
	return out
}

// TestConcurrentRuns is acceptance 4 of issue 6, with real processes: two
// `run`s on one database started together over a dump of about 105k
// spans (several seconds of work). Without --wait one proceeds and the
// other fails fast with exit 1, saying the database is in use; with --wait
// both succeed, one after the other. Either way the database afterwards
// equals that of a single clean run.
func TestConcurrentRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 50k spans (105k with RETRYSCOPE_LONG=1) and runs the nightly job five times")
	}
	cfg := sim.DefaultConfig()
	// 50k spans keep the first run going for seconds after the second
	// starts; the long checks (testkit.Long) use 105k.
	cfg.Seed, cfg.Requests, cfg.Services = 62, 14_500, 10
	least := 50_000
	if testkit.Long() {
		cfg.Requests, least = 29_000, 100_000
	}
	cfg.Start = nightlyMidnight.Add(time.Hour)
	dir := t.TempDir()
	dump := filepath.Join(dir, "dumps")
	batches := nightlyGenerate(t, cfg)
	spans := 0
	for _, td := range batches {
		spans += td.SpanCount()
	}
	if spans < least {
		t.Fatalf("the dump holds %d spans, want %d or more so the first run is still going when the second starts", spans, least)
	}
	half := len(batches) / 2
	nightlyWrite(t, filepath.Join(dump, "part-1.pb"), batches[:half])
	nightlyWrite(t, filepath.Join(dump, "part-2.pb"), batches[half:])

	clean := filepath.Join(dir, "clean.duckdb")
	t0 := time.Now()
	nightlyRun(t, "run", "--db", clean, dump)
	single := time.Since(t0)
	t.Logf("a single clean run over %d spans takes %s", spans, single.Round(time.Millisecond))
	want := nightlyDBState(t, clean)
	same := func(name, db string) {
		t.Helper()
		got := nightlyDBState(t, db)
		for _, k := range []string{"requests", "attempts", "baselines", "spans", "ingest_files", "ingest_files count"} {
			if got[k] != want[k] {
				t.Errorf("%s: %s differs from a single clean run's", name, k)
				nightlyCompare(t, name+" "+k, got[k], want[k])
			}
		}
	}

	t.Run("fail fast", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "c.duckdb")
		first := nightlyStart(t, "run", "--db", db, dump)
		nightlyAwaitFile(t, db, first)
		second := nightlyStart(t, "run", "--db", db, dump)
		second.wait(t)
		first.wait(t)
		t.Logf("first: exit %d in %s; second: exit %d in %s", first.code, first.took.Round(time.Millisecond),
			second.code, second.took.Round(time.Millisecond))
		winner, loser := first, second
		if first.code != exitOK {
			winner, loser = second, first // the second won the race
		}
		if winner.code != exitOK {
			t.Fatalf("neither run succeeded:\nfirst (exit %d):\n%s\nsecond (exit %d):\n%s",
				first.code, first.stderr.String(), second.code, second.stderr.String())
		}
		if loser.code != exitFailed {
			t.Errorf("the run that lost the race exited %d, want 1\n%s", loser.code, loser.stderr.String())
		}
		if msg := loser.stderr.String(); !strings.Contains(msg, "in use") {
			t.Errorf("the run that lost the race does not say the database is in use:\n%s", msg)
		}
		if loser == second && second.took > 5*time.Second {
			t.Errorf("the second run took %s to fail; it should fail fast", second.took)
		}
		if loser == second && !second.ended.Before(first.ended) {
			t.Errorf("the second run did not fail before the first finished: the runs did not overlap")
		}
		same("fail fast", db)
	})

	t.Run("wait", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "w.duckdb")
		first := nightlyStart(t, "run", "--wait", "--db", db, dump)
		nightlyAwaitFile(t, db, first)
		second := nightlyStart(t, "run", "--wait", "--db", db, dump)
		second.wait(t)
		first.wait(t)
		t.Logf("first: exit %d in %s; second: exit %d in %s", first.code, first.took.Round(time.Millisecond),
			second.code, second.took.Round(time.Millisecond))
		for name, p := range map[string]*nightlyProc{"first": first, "second": second} {
			if p.code != exitOK {
				t.Errorf("%s run with --wait: exit %d\n%s", name, p.code, p.stderr.String())
			}
		}
		waited := strings.Contains(first.stderr.String(), "waiting (--wait)") || strings.Contains(second.stderr.String(), "waiting (--wait)")
		if !waited {
			t.Errorf("neither run waited: the runs did not overlap\nfirst:\n%s\nsecond:\n%s", first.stderr.String(), second.stderr.String())
		}
		if !strings.Contains(second.stderr.String(), "2 skipped as already ingested") &&
			!strings.Contains(first.stderr.String(), "2 skipped as already ingested") {
			t.Errorf("the run that waited did not find the files already ingested\nfirst:\n%s\nsecond:\n%s",
				first.stderr.String(), second.stderr.String())
		}
		same("wait", db)
	})
}

// TestParquetTypes is acceptance 5 of issue 6 for DuckDB: the exported
// Parquet, read back with one Hive-partitioned glob per table, carries the
// documented types (timestamps as TIMESTAMP WITH TIME ZONE, durations in ms
// as DOUBLE, ids as VARCHAR, counts as INTEGER) and a DATE partition
// column that is the UTC day of the request's start; the baselines carry
// their kind and provenance.
func TestParquetTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 8k spans and runs the nightly job")
	}
	night1, night2, _, _ := nightlySplit(nightlyGenerate(t, func() sim.Config {
		cfg := nightlyStraddleConfig()
		cfg.Requests = 2000
		return cfg
	}()), nightlyMidnight)
	dir := t.TempDir()
	dump := filepath.Join(dir, "dumps")
	nightlyWrite(t, filepath.Join(dump, "1.pb"), night1)
	nightlyWrite(t, filepath.Join(dump, "2.pb"), night2)
	pq := filepath.Join(dir, "parquet")
	nightlyRun(t, "run", "--db", filepath.Join(dir, "p.duckdb"), "--parquet", pq, dump)

	st := testkit.Open(t)
	ctx := context.Background()
	if _, err := st.ExecText(ctx, `SET TimeZone = 'UTC'`); err != nil {
		t.Fatal(err)
	}
	glob := func(table string) string { return filepath.Join(pq, table, "*", "*.parquet") }
	types := func(table string) map[string]string {
		t.Helper()
		rows, err := st.QueryText(ctx, `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet($1, hive_partitioning = true))`, glob(table))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var name, typ string
			if err := rows.Scan(&name, &typ); err != nil {
				t.Fatal(err)
			}
			out[name] = typ
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	const (
		tstz    = "TIMESTAMP WITH TIME ZONE"
		double  = "DOUBLE"
		varchar = "VARCHAR"
		integer = "INTEGER"
		bigint  = "BIGINT"
		date    = "DATE"
	)
	want := map[string]map[string]string{
		"requests": {
			"request_id": varchar, "trace_id": varchar, "span_id": varchar, "linkage": varchar, "service": varchar,
			"start_time": tstz, "end_time": tstz, "latency_ms": double, "t_failed_ms": double, "gap_ms": double,
			"t_final_ms": double, "residual_ms": double, "attempts": integer, "outcome": varchar, "date": date,
		},
		"attempts": {
			"request_id": varchar, "trace_id": varchar, "span_id": varchar, "ordinal": integer,
			"start_time": tstz, "end_time": tstz, "elapsed_ms": double, "outcome": varchar, "date": date,
		},
		"baselines": {
			"request_id": varchar, "kind": varchar, "provenance": varchar, "method": varchar,
			"latency_ms": double, "l0_ms": double, "added_ms": double, "date": date,
		},
		"daily": {"service": varchar, "operation": varchar, "amplification": double, "date": date,
			"logical_requests": bigint, "attempts": bigint, "duplicated_output_tokens": bigint},
	}
	for table, cols := range want {
		got := types(table)
		for col, typ := range cols {
			if got[col] != typ {
				t.Errorf("%s.%s: type %q, want %q", table, col, got[col], typ)
			}
		}
	}

	// The partition is the UTC day the request started; both days are there.
	for table, q := range map[string]string{
		"requests": `SELECT count(*) FROM read_parquet($1, hive_partitioning = true) r
			WHERE CAST(timezone('UTC', r.start_time) AS DATE) <> r.date`,
		"attempts": `SELECT count(*) FROM read_parquet($1, hive_partitioning = true) a
			JOIN read_parquet($2, hive_partitioning = true) r USING (request_id)
			WHERE CAST(timezone('UTC', r.start_time) AS DATE) <> a.date`,
		"baselines": `SELECT count(*) FROM read_parquet($1, hive_partitioning = true) b
			JOIN read_parquet($2, hive_partitioning = true) r USING (request_id)
			WHERE CAST(timezone('UTC', r.start_time) AS DATE) <> b.date`,
	} {
		args := []any{glob(table)}
		if table != "requests" {
			args = append(args, glob("requests"))
		}
		if bad := testkit.Count(t, st, q, args...); bad != 0 {
			t.Errorf("%s: %d rows whose date partition is not the UTC day of the request's start", table, bad)
		}
	}
	days := testkit.Dump(t, st, `SELECT DISTINCT strftime(date, '%Y-%m-%d') FROM read_parquet($1, hive_partitioning = true) ORDER BY 1`, glob("requests"))
	if days != "2026-11-28\n2026-11-29\n" {
		t.Errorf("request days in Parquet: %q, want 2026-11-28 and 2026-11-29", days)
	}
	n := testkit.Count(t, st, `SELECT count(*) FROM read_parquet($1, hive_partitioning = true) WHERE date = DATE '2026-11-29'`, glob("requests"))
	if n == 0 {
		t.Error("filtering on the date partition finds no requests on 2026-11-29")
	}

	// Baselines: every row has a known kind and provenance.
	kinds := testkit.Dump(t, st, `SELECT DISTINCT kind FROM read_parquet($1, hive_partitioning = true) ORDER BY 1`, glob("baselines"))
	if kinds == "" {
		t.Fatal("baselines Parquet has no rows")
	}
	known := map[string]bool{}
	for _, k := range baseline.Kinds() {
		known[k] = true
	}
	for _, k := range strings.Fields(kinds) {
		if !known[k] {
			t.Errorf("baselines Parquet: unknown kind %q (want one of %v)", k, baseline.Kinds())
		}
	}
	prov := testkit.Dump(t, st, `SELECT DISTINCT provenance FROM read_parquet($1, hive_partitioning = true) ORDER BY 1`, glob("baselines"))
	for _, p := range strings.Fields(prov) {
		if p != "measured" && p != "experiment" && p != "modeled" {
			t.Errorf("baselines Parquet: provenance %q, want measured, experiment or modeled", p)
		}
	}
	if nulls := testkit.Count(t, st, `SELECT count(*) FROM read_parquet($1, hive_partitioning = true) WHERE kind IS NULL OR provenance IS NULL`, glob("baselines")); nulls != 0 {
		t.Errorf("baselines Parquet: %d rows without kind or provenance", nulls)
	}
	t.Logf("baseline kinds: %s; provenance: %s", strings.Join(strings.Fields(kinds), ","), strings.Join(strings.Fields(prov), ","))
}
