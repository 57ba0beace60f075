package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// Exit codes, as SPEC §10 fixes them.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitRejected = 3
)

const defaultDB = "retryscope.duckdb"

// env is what a subcommand may touch: no globals, so tests call run.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) int
}

func commands() []command {
	return []command{
		{"run", "the nightly job: ingest what is new, rebuild, export Parquet, write the report", runRun},
		{"ingest", "load OTLP trace exports into the database", runIngest},
		{"report", "print what retries cost: amplification, rates, latency tails", runReport},
		{"export", "write the derived tables as Parquet for notebooks", runExport},
		{"gen", "write synthetic traces with a known truth", func(_ context.Context, e env, args []string) int {
			return runGen(args, e.stdout, e.stderr)
		}},
	}
}

// run is the whole program; main only wires the process to it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	return usageError(stderr, "", fmt.Errorf("unknown command %q", args[0]))
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
	fmt.Fprintln(w, "Run 'retryscope <command> --help' for a command's flags and examples.")
	fmt.Fprintln(w, "Exit codes: 0 clean, 1 failed, 2 usage error, 3 finished but some input was rejected.")
}

// usageError prints a usage mistake with a pointer to the help.
func usageError(w io.Writer, cmd string, err error) int {
	fmt.Fprintf(w, "retryscope: %v\n", err)
	if cmd == "" {
		fmt.Fprintln(w, "Try: retryscope --help")
	} else {
		fmt.Fprintf(w, "Try: retryscope %s --help\n", cmd)
	}
	return exitUsage
}

// failure prints an error that stopped the command.
func failure(w io.Writer, err error) int {
	fmt.Fprintf(w, "retryscope: %v\n", err)
	return exitFailed
}

// newFlags makes a subcommand's flag set whose --help prints the given
// usage text and examples.
func newFlags(name, synopsis, examples string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: retryscope %s\n\n", synopsis)
		fmt.Fprintln(out, "Flags:")
		fmt.Fprint(out, fs.FlagUsages())
		if examples != "" {
			fmt.Fprintf(out, "\nExamples:\n%s", strings.TrimLeft(examples, "\n"))
		}
	}
	return fs
}

// parseFlags parses args; it returns (code, true) when the command should
// stop: after --help (0) or on a usage error (2).
func parseFlags(fs *pflag.FlagSet, args []string, stdout, stderr io.Writer) (int, bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return exitOK, true
	}
	if err != nil {
		return usageError(stderr, fs.Name(), err), true
	}
	return 0, false
}
