// Package ingest reads OpenTelemetry trace exports — OTLP/JSON and
// OTLP/protobuf in every framing the Collector and OTLP/HTTP produce, plain
// or compressed — and stores their spans, a file per transaction, or
// several small files to one (see small.go). It is the only package that
// knows OTLP.
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/retryscope/retryscope/internal/crashpoint"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
)

// Options tune a run.
type Options struct {
	Limits Limits
	// Workers decode records in parallel; 0 means one per CPU.
	Workers int
	// Log receives a line per file and one per rejected record.
	Log io.Writer
	// Quiet leaves the line per file read or skipped out of Log, so that
	// it says only what was rejected.
	Quiet bool
	// Progress, if set, is told how far into the current file the run is.
	Progress func(path string, read, size int64, spans int64)
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Exclude lists files never to read (the database and its WAL).
	Exclude []string
	// FIFOWait is how long a FIFO found in a directory waits for a
	// process to write to it (DefaultFIFOWait when zero); a FIFO named on
	// the command line waits as long as it takes, as cat would.
	FIFOWait time.Duration
}

// DefaultFIFOWait is Options.FIFOWait's default: a FIFO left in a dump
// directory with nobody writing to it must not hang the nightly run.
const DefaultFIFOWait = 10 * time.Second

// FileResult is what happened to one input.
type FileResult struct {
	Path        string
	Skipped     string // why the file was not read again, or ""
	Format      Format
	Compression string
	Records     int64
	Spans       int64 // spans decoded and accepted
	SpansNew    int64 // of those, spans not stored before
	Rejected    map[string]int64
	Elapsed     time.Duration
}

// Summary totals a run.
type Summary struct {
	Files    []FileResult
	Rejected map[string]int64
	Elapsed  time.Duration
	// Truth lists the truth files of retryscope gen a directory walk left
	// out.
	Truth []string
}

// Totals are a run's counts added up over its files.
type Totals struct {
	Ingested int   // files read and stored
	Skipped  int   // files skipped (already ingested, our own output, …)
	Spans    int64 // spans read
	SpansNew int64 // spans stored that the database did not hold
	Rejected int64 // records refused, for every reason
}

// Totals adds up the per-file counts.
func (s Summary) Totals() Totals {
	var t Totals
	for _, f := range s.Files {
		if f.Skipped != "" {
			t.Skipped++
		} else if f.Format != "" {
			t.Ingested++
		}
		t.Spans += f.Spans
		t.SpansNew += f.SpansNew
	}
	for _, n := range s.Rejected {
		t.Rejected += n
	}
	return t
}

// Run ingests every file the paths name. Problems with the input are
// counted and logged and never stop the run; only a database failure
// returns an error.
func Run(ctx context.Context, st *store.Store, paths []string, opt Options) (Summary, error) {
	start := time.Now()
	opt.Limits = opt.Limits.withDefaults()
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	sum := Summary{Rejected: map[string]int64{}}
	if opt.FIFOWait <= 0 {
		opt.FIFOWait = DefaultFIFOWait
	}
	inputs, walked, missing, truth := expand(paths, opt.Exclude)
	sum.Truth = truth
	for _, p := range truth {
		fmt.Fprintf(opt.Log, "%s: left out: a truth file of retryscope gen, not traces\n", shown(p))
	}
	for _, m := range missing {
		res := FileResult{Path: m.path, Rejected: map[string]int64{m.rej.Reason: 1}}
		fmt.Fprintf(opt.Log, "%s: %s\n", shown(m.path), m.rej.Detail)
		if err := st.RecordRejections(ctx, m.path, []model.Rejection{m.rej}); err != nil {
			return sum, err
		}
		sum.add(res)
	}
	var small smallGroup
	for _, in := range inputs {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		if isSmall(in) {
			f, err := readSmall(ctx, in, walked[in], opt)
			if err == nil {
				small.add(f)
				if small.full() {
					err = small.store(ctx, st, opt, &sum)
				}
				if err != nil {
					return sum, err
				}
				continue
			}
			if !errors.Is(err, errNotSmall) {
				return sum, fmt.Errorf("ingest %s: %w", in, err)
			}
		}
		if err := small.store(ctx, st, opt, &sum); err != nil {
			return sum, err
		}
		res, err := ingestFile(ctx, st, in, walked[in], opt)
		sum.add(res)
		if err != nil {
			return sum, fmt.Errorf("ingest %s: %w", in, err)
		}
	}
	if err := small.store(ctx, st, opt, &sum); err != nil {
		return sum, err
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// Line says what the run did, for a log, given the spans now in the
// database; a second line totals the rejections, if any.
func (s Summary) Line(stored int64) string {
	t := s.Totals()
	var b strings.Builder
	fmt.Fprintf(&b, "ingest: %d files read, %d skipped as already ingested; %d spans (%d new), %d in the database",
		t.Ingested, t.Skipped, t.Spans, t.SpansNew, stored)
	if secs := s.Elapsed.Seconds(); secs > 0 && t.Spans > 0 {
		fmt.Fprintf(&b, "; %.1fs, %.0f spans/s", secs, float64(t.Spans)/secs)
	} else {
		fmt.Fprintf(&b, "; %s", s.Elapsed.Round(time.Millisecond))
	}
	if n := len(s.Truth); n > 0 {
		fmt.Fprintf(&b, "; %d truth %s of retryscope gen left out", n, map[bool]string{true: "file", false: "files"}[n == 1])
	}
	if t.Rejected > 0 {
		var parts []string
		for _, r := range SortedReasons(s.Rejected) {
			parts = append(parts, fmt.Sprintf("%s %d", r, s.Rejected[r]))
		}
		fmt.Fprintf(&b, "\ningest: %d rejected (%s); see the ingest_errors table", t.Rejected, strings.Join(parts, ", "))
	}
	return b.String()
}

func (s *Summary) add(r FileResult) {
	s.Files = append(s.Files, r)
	for k, v := range r.Rejected {
		s.Rejected[k] += v
	}
}

// ingestFile reads one input in one transaction.
func ingestFile(ctx context.Context, st *store.Store, path string, walked bool, opt Options) (FileResult, error) {
	res := FileResult{Path: path, Rejected: map[string]int64{}}
	start := time.Now()
	wait := time.Duration(0)
	if walked {
		wait = opt.FIFOWait
	}
	src, err := openInput(ctx, path, opt.Stdin, wait)
	var special *specialFileError
	switch {
	case errors.As(err, &special):
		return res, rejectWhole(ctx, st, &res, opt, model.Rejection{Reason: "not_a_file", Detail: err.Error()})
	case errors.Is(err, errNoWriter):
		return res, rejectWhole(ctx, st, &res, opt, model.Rejection{Reason: "empty_file", Detail: err.Error()})
	case err != nil:
		return res, rejectWhole(ctx, st, &res, opt, model.Rejection{Reason: "unreadable", Detail: err.Error()})
	}
	defer src.close()
	if src.size == 0 {
		return res, rejectWhole(ctx, st, &res, opt, model.Rejection{Reason: "empty_file", Detail: "the file is empty"})
	}
	if src.file != nil {
		// Content seen before has the same size: only then is the file
		// hashed before it is decoded.
		if same, err := st.SizeSeen(ctx, src.size); err != nil {
			return res, err
		} else if !same {
			src.hashWhileReading(src.file)
		} else if err := src.hashFirst(); err != nil {
			return res, rejectWhole(ctx, st, &res, opt, model.Rejection{Reason: "unreadable", Detail: err.Error()})
		}
	}
	if src.sha != "" {
		if prev, ok, err := st.SeenFile(ctx, src.sha); err != nil {
			return res, err
		} else if ok {
			res.Skipped = "already ingested as " + prev
			res.logSkipped(opt)
			return res, nil
		}
	}
	tx, err := st.BeginFile(ctx, path)
	if err != nil {
		return res, err
	}
	rejections, err := readInto(ctx, tx, src, &res, opt)
	if err != nil {
		tx.Rollback()
		return res, err
	}
	sha := src.sha
	if sha == "" {
		if sha, err = src.finishHash(); err != nil {
			tx.Rollback()
			return res, rejectWhole(ctx, st, &res, opt, model.Rejection{Reason: "unreadable", Detail: err.Error()})
		}
		if err := tx.Wait(); err != nil {
			tx.Rollback()
			return res, err
		}
		if prev, ok, err := st.SeenFile(ctx, sha); err != nil {
			tx.Rollback()
			return res, err
		} else if ok {
			tx.Rollback()
			res = FileResult{Path: path, Skipped: "already ingested as " + prev}
			res.logSkipped(opt)
			return res, nil
		}
	}
	return res, commitFile(tx, &res, ledgerRow(&res, sha, src.read.Load(), rejections, start), rejections, start, opt)
}

// ledgerRow is the ledger row of a file read since start.
func ledgerRow(res *FileResult, sha string, size int64, rejections []model.Rejection, start time.Time) store.FileInfo {
	return store.FileInfo{Path: res.Path, SHA256: sha, SizeBytes: size, Format: string(res.Format),
		Compression: res.Compression, Records: res.Records, SpansRead: res.Spans,
		Rejected: int64(len(rejections)), Seconds: time.Since(start).Seconds()}
}

// commitFile commits a file's transaction, with its ledger row and
// rejections, and logs the file's line.
func commitFile(tx *store.FileTx, res *FileResult, info store.FileInfo, rejections []model.Rejection, start time.Time, opt Options) error {
	if err := crashpoint.Hit("ingest.staged"); err != nil {
		tx.Rollback()
		return err
	}
	var err error
	res.SpansNew, err = tx.Commit(info, rejections)
	if err == nil {
		err = crashpoint.Hit("ingest.committed")
	}
	if err != nil {
		return err
	}
	if tx.Conflicts > 0 {
		res.Rejected["duplicate_conflict"] += tx.Conflicts
		fmt.Fprintf(opt.Log, "%s: duplicate_conflict: %d spans repeat a span seen before with other content; the first copy is kept (see ingest_errors)\n",
			shown(res.Path), tx.Conflicts)
	}
	res.Elapsed = time.Since(start)
	if !opt.Quiet {
		fmt.Fprintf(opt.Log, "%s\n", res.line())
	}
	return nil
}

func (r FileResult) logSkipped(opt Options) {
	if !opt.Quiet {
		fmt.Fprintf(opt.Log, "%s: skipped, %s\n", shown(r.Path), r.Skipped)
	}
}

// rejectWhole records a problem with a file as a whole.
func rejectWhole(ctx context.Context, st *store.Store, res *FileResult, opt Options, r model.Rejection) error {
	res.Rejected[r.Reason]++
	fmt.Fprintf(opt.Log, "%s: %s (%s)\n", shown(res.Path), r.Detail, r.Reason)
	return st.RecordRejections(ctx, res.Path, []model.Rejection{r})
}

func (r FileResult) line() string {
	rate := ""
	if secs := r.Elapsed.Seconds(); secs > 0 && r.Spans > 0 {
		rate = fmt.Sprintf(", %s spans/s", humanCount(float64(r.Spans)/secs))
	}
	rej := int64(0)
	for _, n := range r.Rejected {
		rej += n
	}
	return fmt.Sprintf("%s: %s, %s: %d spans (%d new), %d rejected, %.2fs%s",
		shown(r.Path), r.Format, r.Compression, r.Spans, r.SpansNew, rej, r.Elapsed.Seconds(), rate)
}

func humanCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// input is an opened file or stdin. Its hash is known before reading when
// content of its size was ingested before (so that a file seen before
// costs one read, no decoding); otherwise, and always for stdin, it is
// computed while reading.
type input struct {
	r      io.Reader
	file   *os.File // nil for stdin
	size   int64    // -1 when unknown
	sha    string
	hasher hash.Hash
	read   *atomic.Int64
	close  func()
}

type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// openInput opens path ("-" for stdin). A FIFO or a pipe (a process
// substitution's /dev/fd/N) is read as a stream, as stdin is, its size
// unknown; one that waits more than wait (0: for ever) for a writer is
// errNoWriter. Other special files are a specialFileError, never opened.
func openInput(ctx context.Context, path string, stdin io.Reader, wait time.Duration) (*input, error) {
	in := &input{read: &atomic.Int64{}, close: func() {}}
	if path == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		in.size = -1
		in.hashWhileReading(stdin)
		return in, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if t := fi.Mode().Type(); t&fs.ModeNamedPipe != 0 {
		f, err := openFIFO(ctx, path, wait)
		if err != nil {
			return nil, err
		}
		in.size = -1
		in.hashWhileReading(f)
		in.close = func() { f.Close() }
		return in, nil
	} else if !t.IsRegular() {
		return nil, &specialFileError{path: path, mode: t}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, err
	}
	in.file, in.size = f, fi.Size()
	in.close = func() { f.Close() }
	return in, nil
}

// specialFileError is a path that names neither a file nor a FIFO.
type specialFileError struct {
	path string
	mode fs.FileMode
}

func (e *specialFileError) Error() string {
	what := "a special file"
	switch {
	case e.mode&fs.ModeCharDevice != 0:
		what = "a character device"
	case e.mode&fs.ModeDevice != 0:
		what = "a block device"
	case e.mode&fs.ModeSocket != 0:
		what = "a socket"
	case e.mode&fs.ModeDir != 0:
		what = "a directory"
	}
	return "this is " + what + ", not a file of traces: give a trace file, a FIFO, or - for stdin (e.g. zcat dump.gz | retryscope ingest -)"
}

// errNoWriter is a FIFO that nobody wrote to in time.
var errNoWriter = errors.New("nothing wrote to this FIFO")

// openFIFO opens a FIFO for reading, which waits for a writer. After
// wait (0: only when ctx ends) it opens the write end itself, so the open
// returns, and reports errNoWriter.
func openFIFO(ctx context.Context, path string, wait time.Duration) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	var timeout <-chan time.Time
	if wait > 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case o := <-done:
		return o.f, o.err
	case <-timeout:
	case <-ctx.Done():
	}
	if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
	o := <-done
	if o.err != nil {
		return nil, o.err
	}
	if err := ctx.Err(); err != nil {
		o.f.Close()
		return nil, err
	}
	o.f.Close()
	return nil, fmt.Errorf("%w in %s", errNoWriter, wait)
}

func (in *input) hashWhileReading(r io.Reader) {
	in.hasher = sha256.New()
	in.r = countReader{io.TeeReader(r, in.hasher), in.read}
}

// hashFirst reads the whole file for its hash before it is decoded.
func (in *input) hashFirst() error {
	h := sha256.New()
	if _, err := io.Copy(h, in.file); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if _, err := in.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	in.sha = hex.EncodeToString(h.Sum(nil))
	in.r = countReader{in.file, in.read}
	return nil
}

// finishHash reads what decoding left unread, so that the hash computed
// while reading covers the whole input, and returns it.
func (in *input) finishHash() (string, error) {
	if _, err := io.Copy(io.Discard, in.r); err != nil {
		return "", fmt.Errorf("read: %w", err)
	}
	return hex.EncodeToString(in.hasher.Sum(nil)), nil
}

// spanSink takes a file's spans in file order: its transaction
// (store.FileTx), or a small file's batches (wholeFile).
type spanSink interface {
	Add(*store.SpanBatch) error
}

// readInto decodes the input on parallel workers, in order, and appends the
// spans to tx. It returns the rejections.
// openTraces opens src's stream of records, or says why the whole input is
// rejected (with the stream, to be closed, when one was opened).
func openTraces(src *input, lim Limits) (*stream, *model.Rejection) {
	s, err := openStream(src.r, src.read.Load, src.size, lim)
	if err != nil {
		return nil, &model.Rejection{Reason: "corrupt_compression", Detail: err.Error()}
	}
	switch s.format {
	case FormatUnknown:
		return s, &model.Rejection{Reason: "not_otlp", Detail: "not an OTLP trace export (neither OTLP/JSON nor OTLP/protobuf)"}
	case FormatEmpty:
		return s, &model.Rejection{Reason: "empty_file", Detail: "nothing inside the " + s.compression + " stream"}
	}
	return s, nil
}

func readInto(ctx context.Context, tx spanSink, src *input, res *FileResult, opt Options) ([]model.Rejection, error) {
	s, rej := openTraces(src, opt.Limits)
	if s != nil {
		defer s.close()
		res.Format, res.Compression = s.format, s.compression
	}
	if rej != nil {
		res.Rejected[rej.Reason]++
		logRejection(opt.Log, res.Path, *rej)
		return []model.Rejection{*rej}, nil
	}

	var rejections []model.Rejection
	err := inOrder(ctx, s, opt.Workers, func(rec record) decoded { return decodeRecord(rec, opt.Limits) }, func(d decoded) error {
		res.Records++
		if d.batch != nil {
			if err := tx.Add(d.batch); err != nil {
				return err
			}
			res.Spans += int64(d.batch.Len())
		}
		for _, r := range d.rejections {
			res.Rejected[r.Reason]++
			logRejection(opt.Log, res.Path, r)
		}
		rejections = append(rejections, d.rejections...)
		if opt.Progress != nil {
			opt.Progress(res.Path, src.read.Load(), src.size, res.Spans)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Format = s.finalFormat()
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	return rejections, nil
}

func logRejection(w io.Writer, path string, r model.Rejection) {
	id := ""
	if r.SpanID != "" {
		id = fmt.Sprintf(" (span %s/%s)", r.TraceID, r.SpanID)
	}
	fmt.Fprintf(w, "%s:%d: %s: %s%s\n", shown(path), r.Offset, r.Reason, r.Detail, id)
}

// shown is a path as a log line prints it: as is, unless it holds a line
// break, another control character or bytes that are not UTF-8, which
// would forge or garble log lines; then Go-quoted.
func shown(path string) string {
	if !utf8.ValidString(path) || strings.IndexFunc(path, unicode.IsControl) >= 0 {
		return strconv.Quote(path)
	}
	return path
}

// SortedReasons lists rejection reasons by count, then name.
func SortedReasons(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}
