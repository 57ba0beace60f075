package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/ingest"
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
		fmt.Fprintf(out, "Usage: retryscope %s\n\n", synopsis)
		fmt.Fprintln(out, "Flags:")
		fmt.Fprint(out, fs.FlagUsages())
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

// dbFlags are the flags every database command shares.
type dbFlags struct {
	path        string
	memoryLimit string
	threads     int
	wait        bool
}

func (d *dbFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&d.path, "db", defaultDB, "DuckDB database file, created if missing")
	fs.StringVar(&d.memoryLimit, "memory-limit", "", "DuckDB memory limit (e.g. 512MB, 4GB); beyond it DuckDB spills to disk (default: "+ingestMemoryLimit+" while ingesting, DuckDB's own, 80% of RAM, for the rest)")
	fs.IntVar(&d.threads, "threads", 0, "DuckDB worker threads (default: one per CPU)")
	fs.BoolVar(&d.wait, "wait", false, "if another run holds the database, wait for it instead of failing")
}

// open opens the database; with --wait it polls while another process
// holds the file, saying so once on log.
func (d *dbFlags) open(ctx context.Context, log io.Writer) (*store.Store, error) {
	said := false
	for {
		st, err := store.Open(ctx, d.path, store.Options{MemoryLimit: d.memoryLimit, Threads: d.threads})
		if err == nil || !d.wait || !errors.Is(err, store.ErrLocked) {
			return st, err
		}
		if !said {
			fmt.Fprintf(log, "retryscope: %s is held by another process; waiting (--wait)\n", d.path)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// limitFlags bound what one input may cost; ingest and run share them.
type limitFlags struct {
	maxDuration  time.Duration
	maxRecordMiB int64
	maxDocMiB    int64
	maxExpansion int64
}

func (l *limitFlags) register(fs *pflag.FlagSet) {
	fs.DurationVar(&l.maxDuration, "max-span-duration", ingest.DefaultLimits.MaxDuration, "longest believable span; longer ones are quarantined")
	fs.Int64Var(&l.maxRecordMiB, "max-record-mib", ingest.DefaultLimits.MaxRecordBytes>>20,
		fmt.Sprintf("largest record (a JSON line, a framed or raw protobuf message), in MiB, at most %d; larger ones are rejected (record_too_large)", ingest.MaxRecordBytes>>20))
	fs.Int64Var(&l.maxDocMiB, "max-document-mib", ingest.DefaultLimits.MaxDocumentBytes>>20,
		"largest multi-line (pretty-printed) JSON document, in MiB without whitespace; larger ones are rejected (document_too_large)")
	fs.Int64Var(&l.maxExpansion, "max-expansion", ingest.DefaultLimits.MaxExpansion,
		fmt.Sprintf("most bytes a gzip or zstd file may expand to per compressed byte, beyond its first %d MiB; the rest of a file that expands more is rejected (expansion_limit)", ingest.DefaultLimits.ExpansionFloor>>20))
}

// check refuses limits that would switch a bound off.
func (l *limitFlags) check() error {
	switch {
	case l.maxDuration <= 0:
		return fmt.Errorf("--max-span-duration %s: want a positive duration", l.maxDuration)
	case l.maxRecordMiB <= 0 || l.maxRecordMiB > ingest.MaxRecordBytes>>20:
		return fmt.Errorf("--max-record-mib %d: want 1 to %d", l.maxRecordMiB, ingest.MaxRecordBytes>>20)
	case l.maxDocMiB <= 0:
		return fmt.Errorf("--max-document-mib %d: want a positive number of MiB", l.maxDocMiB)
	case l.maxDocMiB > ingest.MaxRecordBytes>>20:
		return fmt.Errorf("--max-document-mib %d: at most %d (the record limit)", l.maxDocMiB, ingest.MaxRecordBytes>>20)
	case l.maxExpansion <= 0:
		return fmt.Errorf("--max-expansion %d: want a positive ratio", l.maxExpansion)
	}
	return nil
}

func (l *limitFlags) limits() ingest.Limits {
	return ingest.Limits{MaxDuration: l.maxDuration, MaxRecordBytes: l.maxRecordMiB << 20, MaxDocumentBytes: l.maxDocMiB << 20,
		MaxExpansion: l.maxExpansion}
}
