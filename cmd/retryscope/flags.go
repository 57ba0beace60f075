package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/internal/flagval"
	"github.com/retryscope/retryscope/internal/store"
)

const defaultDB = "retryscope.duckdb"

// newFlags makes a subcommand's flag set whose --help prints the given
// usage text and examples.
func newFlags(name, synopsis, examples string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {
		out := fs.Output()
		cols := helpWidth(out)
		fmt.Fprintf(out, "%s\n\n", wrapUsage(synopsis, cols))
		fmt.Fprintln(out, "Flags:")
		fmt.Fprint(out, fs.FlagUsagesWrapped(cols))
		if examples != "" {
			fmt.Fprintf(out, "\nExamples:\n%s", strings.TrimLeft(examples, "\n"))
		}
	}
	return fs
}

// parseFlags parses args. After --help, which it prints on stdout, it
// returns pflag.ErrHelp (exit 0); a bad flag is a usageError.
func parseFlags(fs *pflag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return err
	}
	if err != nil {
		return &usageError{cmd: fs.Name(), err: err}
	}
	return nil
}

// defaultMemoryLimit is DuckDB's memory limit outside ingest unless
// --memory-limit says otherwise. DuckDB's own default, 80% of RAM, let the
// rebuild and the baselines of 10M spans take 11 GB; with 1GB they spill
// what does not fit and take about as long (README, Performance).
const defaultMemoryLimit = "1GB"

// dbFlags are the flags every database command shares.
type dbFlags struct {
	path        string
	memoryLimit string
	threads     int
	wait        bool
}

// register adds the flags; creates says whether the command creates a
// missing database (run, ingest) or needs one that exists.
func (d *dbFlags) register(fs *pflag.FlagSet, creates bool) {
	help := "DuckDB database file, created if missing"
	if !creates {
		help = "DuckDB database file, as written by run or ingest (it must exist)"
	}
	fs.StringVar(&d.path, "db", defaultDB, help)
	fs.StringVar(&d.memoryLimit, "memory-limit", "", "DuckDB memory limit (e.g. 512MB, 4GB); beyond it DuckDB spills to disk (default: "+ingestMemoryLimit+" while ingesting, "+defaultMemoryLimit+" for the rest)")
	fs.Var(flagval.NewInt(&d.threads, 0, 1, store.MaxThreads).OrZero("the default"), "threads", "DuckDB worker threads (default: one while ingesting, one per CPU for the rest)")
	fs.BoolVar(&d.wait, "wait", false, "if another run holds the database, wait for it instead of failing")
}

// check refuses a database name, memory limit or thread count DuckDB
// would not take, as a usage error of cmd, before anything is opened.
func (d *dbFlags) check(cmd string) error {
	if err := store.CheckOptions(d.path, store.Options{MemoryLimit: d.memoryLimit, Threads: d.threads}); err != nil {
		return &usageError{cmd, err}
	}
	return nil
}

// open opens the database; with --wait it waits while another process
// holds the file, saying so once on log.
func (d *dbFlags) open(ctx context.Context, log io.Writer) (*store.Store, error) {
	return d.openMode(ctx, log, false)
}

// storeOptions are the store options the flags give.
func (d *dbFlags) storeOptions() store.Options {
	return store.Options{MemoryLimit: cmp.Or(d.memoryLimit, defaultMemoryLimit), Threads: d.threads}
}

// openMode is open, read-only if readOnly.
func (d *dbFlags) openMode(ctx context.Context, log io.Writer, readOnly bool) (*store.Store, error) {
	opt := d.storeOptions()
	opt.ReadOnly = readOnly
	return store.OpenWaiting(ctx, d.path, opt, d.wait, log)
}
