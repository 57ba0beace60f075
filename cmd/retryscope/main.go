// Command retryscope tells teams what their retries really cost: it reads
// OpenTelemetry trace exports into an embedded DuckDB database, rebuilds each
// logical request from its attempts, and reports the retry tax.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/internal/store"
)

func main() {
	// The handler lives as long as the process, so it is never stopped.
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The report holds a row per request in the window; collecting when
	// the heap grows by half instead of doubling keeps the peak of a 10M-span
	// report about a fifth lower (README, Performance). GOGC still rules.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	os.Exit(profiled(func() int { return run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr) }))
}

// profiled runs f under a CPU profile written to $RETRYSCOPE_CPUPROFILE, if
// set: the calls into DuckDB show as the Go frames that made them
// (docs/development.md).
func profiled(f func() int) int {
	path := os.Getenv("RETRYSCOPE_CPUPROFILE")
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "retryscope: RETRYSCOPE_CPUPROFILE: %v\n", err)
		return exitFailed
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		fmt.Fprintf(os.Stderr, "retryscope: RETRYSCOPE_CPUPROFILE: %v\n", err)
		return exitFailed
	}
	defer pprof.StopCPUProfile()
	return f()
}

// Exit codes, as README.md, "Exit codes" documents them.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitRejected = 3
)

// env is what a subcommand may touch: no globals, so tests call run.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) error
}

func commands() []command {
	return []command{
		{"run", "the nightly job: ingest, rebuild, export Parquet, write the report", runRun},
		{"ingest", "load OTLP trace exports into the database", runIngest},
		{"report", "print what retries cost: amplification, rates, latency tails", runReport},
		{"export", "write the derived tables as Parquet for notebooks", runExport},
		{"whatif", "replay the recorded requests under another retry policy (modeled)", runWhatif},
		{"shard", "split a day of trace exports into shards that run apart", runShard},
		{"gen", "write synthetic traces with a known truth", runGen},
	}
}

// run is the whole program; main only wires the process to it. It is the
// one place that prints an error and chooses the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 { // the usage answers, but a script that forgot the command fails
		usage(stdout)
		return exitUsage
	}
	err := dispatch(ctx, env{stdin: stdin, stdout: stdout, stderr: stderr}, args)
	var usageErr *usageError
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return exitOK
	case errors.Is(err, errRejected):
		return exitRejected
	case errors.As(err, &usageErr):
		fmt.Fprintf(stderr, "retryscope: %v\n", err)
		if usageErr.cmd == "" {
			fmt.Fprintln(stderr, "Try: retryscope --help")
		} else {
			fmt.Fprintf(stderr, "Try: retryscope %s --help\n", usageErr.cmd)
		}
		return exitUsage
	}
	fmt.Fprintf(stderr, "retryscope: %v\n", err)
	if hint := memoryHint(err); hint != "" {
		fmt.Fprintln(stderr, hint)
	}
	return exitFailed
}

// memoryHint is what a failure for want of memory adds to DuckDB's own
// advice, which names its SET statement where retryscope's knob is
// --memory-limit. It names the limit DuckDB had, as its message states it,
// and suggests at least twice that. A full disk also reads as out of
// memory when DuckDB cannot spill (store.ExplainFull): that failure has
// said so already.
func memoryHint(err error) string {
	if !store.OutOfMemory(err) || store.DiskFull(err) {
		return ""
	}
	had := defaultMemoryLimit + ", " + ingestMemoryLimit + " while ingesting, unless given"
	suggest := 4
	if limit, bytes, ok := store.MemoryLimitHit(err); ok {
		had = "it had " + limit + "; the default is " + defaultMemoryLimit + ", " + ingestMemoryLimit + " while ingesting"
		suggest = max(suggest, int(math.Ceil(2*bytes/(1<<30))))
	}
	return fmt.Sprintf("DuckDB needed more memory than --memory-limit lets it have (%s): run again with a larger one, e.g. --memory-limit %dGB", had, suggest)
}

// dispatch runs the command args name.
func dispatch(ctx context.Context, e env, args []string) error {
	switch {
	case args[0] == "--version" || args[0] == "version":
		fmt.Fprintln(e.stdout, "retryscope", version())
		return nil
	case args[0] == "help" && len(args) > 1:
		// retryscope help report is retryscope report --help.
		return dispatch(ctx, e, []string{args[1], "--help"})
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
		usage(e.stdout)
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	return usageErrorf("", "unknown command %q", args[0])
}

// version is the module version the binary was built from (a tag with
// go install ...@latest, "(devel)" in a checkout), with the commit and
// whether the tree had changes when the build knows them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev != "" {
		v += fmt.Sprintf(" (commit %.12s%s)", rev, modified)
	}
	return v + " " + info.GoVersion
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "retryscope: what your retries really cost, from OpenTelemetry traces.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: retryscope <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	cols := helpWidth(w)
	fmt.Fprintln(w, wrapText("Run 'retryscope help <command>' or 'retryscope <command> --help' for its flags and examples, 'retryscope --version' for the version.", cols))
	fmt.Fprintln(w, wrapText("Exit codes: 0 clean, 1 failed, 2 usage error, 3 finished but some input was rejected.", cols))
}

// usageError is a mistake on the command line: exit 2, with a pointer to
// the help of cmd ("" for retryscope's own).
type usageError struct {
	cmd string
	err error
}

func (u *usageError) Error() string { return u.err.Error() }
func (u *usageError) Unwrap() error { return u.err }

func usageErrorf(cmd, format string, a ...any) error {
	return &usageError{cmd: cmd, err: fmt.Errorf(format, a...)}
}

// errRejected says a command finished but rejected some input (exit 3).
// The command's summary has already said what and where, so run prints
// nothing more.
var errRejected = errors.New("some input was rejected")
