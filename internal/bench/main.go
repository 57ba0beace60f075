// Command bench measures what a nightly job pays for a fleet's day: ingest,
// the first derive and a whole nightly run, each against pdata's own
// decoding of the same dump on one core, measured in the same run (issue
// 11's targets). Every step runs as a process of its own, so its peak RSS
// is the whole process, DuckDB included.
//
//	go run ./internal/bench                        # 1M spans, protobuf and JSON lines
//	go run ./internal/bench --spans 1000000,10000000 --formats proto
//
// Steps: R pdata decoding the dump on one core (GOMAXPROCS=1), the
// reference; I `retryscope ingest` into a fresh database; S DuckDB storing
// I's spans alone, the floor under I on this machine (store.go); D the first
// derive on that database (requests and every baseline, as `report` logs
// them); N a whole `retryscope run` (ingest, derive, Parquet, report) into
// an empty database; P the pure-SQL route, DuckDB read_ndjson and unnest
// into a flat span table (JSON lines, the smallest size only).
//
// Dumps are written once by `retryscope gen` into --dir and reused; a dump
// of more than a million spans is written as parts of a million, each
// zstd-compressed with --zstd. The dumps carry real OpenTelemetry SDKs'
// attribute load (gen --sdk-attributes: 14 attributes per resource, 7.8 per
// span, 40 spans per resource); --thin writes the old dump (service.name
// alone on resources, 5.1 per span) as a second case.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "decode" {
		os.Exit(runDecode(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "store" {
		os.Exit(runStore(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "sqlload" {
		os.Exit(runSQLLoad(os.Args[2:], os.Stderr))
	}
	os.Exit(runBench(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// config is what one benchmark run measures.
type config struct {
	spans   []int
	formats []string
	steps   []string
	dir     string
	out     string
	seed    int64
	zstd    bool
	thin    bool
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	spans := fs.String("spans", "1000000", "dump sizes in spans, comma-separated")
	formats := fs.String("formats", "proto,json", "dump formats: proto (Collector 4-byte framing), json (OTLP/JSON lines)")
	steps := fs.String("steps", "R,I,S,D,Q,N,P", "steps to measure (R reference decode, I ingest, S storing alone, D derive, Q report once derived, N nightly run, P pure-SQL load)")
	dir := fs.String("dir", filepath.Join(os.TempDir(), "retryscope-bench"), "where dumps, databases and the binary go")
	out := fs.String("out", "", "also write the results to this file (default DIR/results.txt)")
	seed := fs.Int64("seed", 11, "seed of the generated dumps")
	zstd := fs.Bool("zstd", false, "zstd-compress each part of the dumps (DumpName.zst)")
	thin := fs.Bool("thin", false, "the thin dump (resources with service.name alone, 5.1 attributes per span) instead of real SDKs' attribute load")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	cfg := config{formats: split(*formats), steps: split(*steps), dir: *dir, out: *out, seed: *seed, zstd: *zstd, thin: *thin}
	for _, s := range split(*spans) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			fmt.Fprintf(stderr, "bench: --spans %q: want whole numbers of at least 1000\n", s)
			return 2
		}
		cfg.spans = append(cfg.spans, n)
	}
	if cfg.out == "" {
		cfg.out = filepath.Join(cfg.dir, "results.txt")
	}
	if err := bench(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// result is one step on one dump.
type result struct {
	dump    string
	spans   int64
	step    string
	seconds float64
	cpu     float64 // user and system seconds; for S, the storing alone
	rssMB   float64
	note    string
}

func bench(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	if err := os.MkdirAll(cfg.dir, 0o755); err != nil {
		return err
	}
	bin, self, err := buildBinaries(ctx, cfg.dir)
	if err != nil {
		return err
	}
	var results []result
	for _, format := range cfg.formats {
		for i, n := range cfg.spans {
			d, err := dump(ctx, bin, cfg, format, n, stderr)
			if err != nil {
				return err
			}
			for _, step := range cfg.steps {
				if step == "P" && (format != "json" || i > 0) {
					continue
				}
				fmt.Fprintf(stderr, "bench: %s %s ...\n", d.name, step)
				r, err := measure(ctx, step, bin, self, d, cfg.dir)
				if err != nil {
					return fmt.Errorf("%s %s: %w", d.name, step, err)
				}
				results = append(results, r)
			}
		}
	}
	f, err := os.Create(cfg.out)
	if err != nil {
		return err
	}
	defer f.Close()
	report(io.MultiWriter(stdout, f), results)
	fmt.Fprintf(stderr, "bench: results in %s\n", cfg.out)
	return f.Close()
}

// buildBinaries builds retryscope and this program into dir.
func buildBinaries(ctx context.Context, dir string) (bin, self string, err error) {
	bin, self = filepath.Join(dir, "retryscope"), filepath.Join(dir, "bench")
	for _, b := range [][2]string{{bin, "./cmd/retryscope"}, {self, "./internal/bench"}} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b[0], b[1])
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go build %s (run from the module's root): %v\n%s", b[1], err, out)
		}
	}
	return bin, self, nil
}

// dumpFiles is a generated dump: its parts and span count.
type dumpFiles struct {
	name   string
	format string
	parts  []string
	spans  int64
}

var genLine = regexp.MustCompile(`(\d+) spans ->`)

// spansPerRequest is about what `retryscope gen`'s default mix makes per
// logical request; the dump's real count is read from gen's output.
const spansPerRequest = 3.42

const partSpans = 1_000_000

// dump writes (once) a seeded dump of about n spans in parts of at most a
// million, each from its own seed and its own stretch of time.
func dump(ctx context.Context, bin string, cfg config, format string, n int, stderr io.Writer) (dumpFiles, error) {
	name := fmt.Sprintf("%s-%d", format, n)
	if cfg.thin {
		name += "-thin"
	}
	if cfg.zstd {
		name += "-zstd"
	}
	d := dumpFiles{name: name, format: format}
	dir := filepath.Join(cfg.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return d, err
	}
	parts := (n + partSpans - 1) / partSpans
	start := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for p := range parts {
		want := min(partSpans, n-p*partSpans)
		requests := int(float64(want)/spansPerRequest + 0.5)
		path := filepath.Join(dir, fmt.Sprintf("part-%03d.%s", p, map[string]string{"proto": "bin", "json": "jsonl"}[format]))
		final := path
		if cfg.zstd {
			final += ".zst"
		}
		count := final + ".spans"
		if b, err := os.ReadFile(count); err == nil {
			c, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			d.parts, d.spans = append(d.parts, final), d.spans+c
			continue
		}
		fmt.Fprintf(stderr, "bench: generating %s (%d requests)\n", final, requests)
		// 20 requests a second: a part is about four hours of traffic.
		partStart := start.Add(time.Duration(p) * time.Duration(float64(requests)/20*1.6*float64(time.Second)))
		args := []string{"gen", "--seed", strconv.FormatInt(cfg.seed+int64(p), 10),
			"--requests", strconv.Itoa(requests), "--format", format, "--start", partStart.Format(time.RFC3339),
			"-o", path, "--truth", path + ".truth.json"}
		if !cfg.thin {
			args = append(args, "--sdk-attributes")
		}
		cmd := exec.CommandContext(ctx, bin, args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return d, fmt.Errorf("gen: %v\n%s", err, out)
		}
		m := genLine.FindSubmatch(out)
		if m == nil {
			return d, fmt.Errorf("gen said no span count: %s", out)
		}
		c, _ := strconv.ParseInt(string(m[1]), 10, 64)
		if cfg.zstd {
			if err := compress(ctx, path, final); err != nil {
				return d, err
			}
		}
		if err := os.WriteFile(count, []byte(strconv.FormatInt(c, 10)), 0o644); err != nil {
			return d, err
		}
		d.parts, d.spans = append(d.parts, final), d.spans+c
	}
	return d, nil
}

// measure runs one step as a process and reads its time and peak RSS.
func measure(ctx context.Context, step, bin, self string, d dumpFiles, dir string) (result, error) {
	r := result{dump: d.name, spans: d.spans, step: step}
	db := filepath.Join(dir, "bench-"+d.name+".duckdb")
	var cmd *exec.Cmd
	switch step {
	case "R":
		cmd = exec.CommandContext(ctx, self, append([]string{"decode", "--format", d.format}, d.parts...)...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	case "I":
		removeDB(db)
		cmd = exec.CommandContext(ctx, bin, append([]string{"ingest", "-q", "--db", db}, d.parts...)...)
	case "S":
		if _, err := os.Stat(db); err != nil {
			return r, fmt.Errorf("S needs the database I made: run I first")
		}
		copied := filepath.Join(dir, "bench-store-"+d.name+".duckdb")
		removeDB(copied)
		defer removeDB(copied)
		cmd = exec.CommandContext(ctx, self, "store", db, copied)
	case "D", "Q": // the same report: D's derives the database I made, Q's reads it derived
		if _, err := os.Stat(db); err != nil {
			return r, fmt.Errorf("%s needs the database I made: run I first", step)
		}
		cmd = exec.CommandContext(ctx, bin, "report", "--db", db, "--format", "json", "-o", os.DevNull)
	case "N":
		nightly := filepath.Join(dir, "bench-night-"+d.name+".duckdb")
		removeDB(nightly)
		pq := filepath.Join(dir, "parquet-"+d.name)
		os.RemoveAll(pq)
		cmd = exec.CommandContext(ctx, bin, append([]string{"run", "--db", nightly, "--parquet", pq,
			"--report", filepath.Join(dir, "report-"+d.name+".json")}, d.parts...)...)
	case "P":
		flat := filepath.Join(dir, "bench-sql-"+d.name+".duckdb")
		removeDB(flat)
		cmd = exec.CommandContext(ctx, self, append([]string{"sqlload", flat}, d.parts...)...)
	default:
		return r, fmt.Errorf("unknown step %q (want R, I, S, D, Q, N or P)", step)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	r.seconds = time.Since(t0).Seconds()
	if err != nil {
		return r, fmt.Errorf("%v\n%s", err, stderr.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rssMB = float64(ru.Maxrss) / 1024
		r.cpu = rusageSeconds(ru)
	}
	if step == "S" {
		var scan, copied float64
		if _, err := fmt.Sscanf(stdout.String(), "scan %g copy %g", &scan, &copied); err != nil {
			return r, fmt.Errorf("store said %q: %v", stdout.String(), err)
		}
		r.cpu = max(copied-scan, 0)
		r.note = fmt.Sprintf("copy %.2f CPU s, less %.2f CPU s reading", copied, scan)
	}
	if step == "Q" && deriveLines.MatchString(stderr.String()) {
		return r, fmt.Errorf("Q needs the database D derived, and this one was derived by Q itself: run D first")
	}
	if step == "D" {
		derive, err := deriveSeconds(stderr.String())
		if err != nil {
			return r, err
		}
		r.note = fmt.Sprintf("process %.1f s (rebuild and baselines as logged)", r.seconds)
		r.seconds = derive
	}
	return r, nil
}

func removeDB(path string) {
	for _, p := range []string{path, path + ".wal", path + ".lock"} {
		os.Remove(p)
	}
}

var deriveLines = regexp.MustCompile(`(?m)^(rebuilt logical requests from all spans|computed baselines) in (\S+)$`)

// deriveSeconds adds up the rebuild and the baselines as report logs them,
// leaving out opening the database and writing the report.
func deriveSeconds(log string) (float64, error) {
	ms := deriveLines.FindAllStringSubmatch(log, -1)
	if len(ms) != 2 {
		return 0, fmt.Errorf("report did not log a full rebuild and the baselines:\n%s", log)
	}
	var total float64
	for _, m := range ms {
		d, err := time.ParseDuration(m[2])
		if err != nil {
			return 0, err
		}
		total += d.Seconds()
	}
	return total, nil
}

// report prints every result and the ratios of issue 11's targets.
func report(w io.Writer, results []result) {
	fmt.Fprintf(w, "retryscope bench, %s, %d CPUs\n\n", time.Now().UTC().Format(time.RFC3339), runtime.NumCPU())
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	cores := runtime.NumCPU()
	fmt.Fprintln(tw, "dump\tspans\tstep\tseconds\tCPU s\tspans/s\tpeak RSS MB\tratio\t")
	for _, r := range results {
		ratio := ""
		switch r.step {
		case "I", "D", "Q", "N":
			if ref := find(results, r.dump, "R"); ref != nil {
				ratio = fmt.Sprintf("%s/R %.2f", r.step, r.seconds/ref.seconds)
			}
		case "S":
			if ref := find(results, r.dump, "R"); ref != nil {
				ratio = fmt.Sprintf("least I/R %.2f, %.2f decoding as R", r.cpu/float64(cores)/ref.seconds,
					(r.cpu+ref.cpu)/float64(cores)/ref.seconds)
			}
		case "P":
			if ing := find(results, r.dump, "I"); ing != nil {
				ratio = fmt.Sprintf("P/I %.2f, RSS I/P %.2f", r.seconds/ing.seconds, ing.rssMB/r.rssMB)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.2f\t%.2f\t%.0f\t%.0f\t%s\t\n", r.dump, r.spans, r.step, r.seconds, r.cpu,
			float64(r.spans)/r.seconds, r.rssMB, ratio)
	}
	tw.Flush()
	for _, r := range results {
		if r.note != "" {
			fmt.Fprintf(w, "%s %s: %s\n", r.dump, r.step, r.note)
		}
	}
	fmt.Fprintln(w, "\nR: pdata decoding the dump on one core; I: ingest into a fresh database; D: the first derive;"+
		"\nQ: a report of the database D derived (the whole `report --format json` process);"+
		"\nN: a whole nightly run into an empty database; P: DuckDB read_ndjson + unnest into a flat span table;"+
		"\nS: DuckDB storing I's spans alone (copying them into a fresh database on one thread, the reading taken off):"+
		fmt.Sprintf("\nits CPU seconds over %d cores are the least time any ingest into DuckDB takes here, decoding free,", cores)+
		"\nand that over R the least I/R; then with decoding as costly as R's, its CPU s added."+
		"\nSeconds are wall time; CPU s are user and system time.")
}

func find(results []result, dump, step string) *result {
	i := slices.IndexFunc(results, func(r result) bool { return r.dump == dump && r.step == step })
	if i < 0 {
		return nil
	}
	return &results[i]
}
