package ingest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/klauspost/compress/zstd"

	"github.com/retryscope/retryscope/model"
)

// Sharding a day of dumps (docs/sharding.md). A logical request is rebuilt
// from the spans of its trace, except where every attempt is a trace of
// its own (a root CLIENT span, docs/requests.md "Attempts split across
// traces"): those are joined by time among the attempts of one client, and
// the joiner learns that client's retry policy from all of them. So a
// trace goes to the shard its id hashes to, and a trace whose root is a
// CLIENT span to the shard its client service hashes to, with every other
// such trace of that service. Each shard is then an ordinary run, and the
// union of the shards' request and attempt rows is the whole day's.

// MaxShards is the most shards Shard splits into.
const MaxShards = 1024

// ShardOptions tune Shard.
type ShardOptions struct {
	// N is how many shards, from 2 to MaxShards.
	N int
	// Dir receives shard-K-of-N/traces.jsonl.zst (ShardFile) for K from 1
	// to N (a shard with no spans, its directory alone).
	Dir    string
	Limits Limits
	// Log receives a line per file and one per record left out.
	Log io.Writer
	// Workers decode and split records in parallel; 0 means one per CPU.
	Workers int
}

// ShardSummary is what Shard did.
type ShardSummary struct {
	Files int
	// Spans counts the spans written to each shard, in shard order.
	Spans []int64
	// Rejected counts the records (or files) left out, by reason.
	Rejected map[string]int64
	// ClientRooted counts the traces rooted in a CLIENT span, which go
	// with their client service, and ClientServices those services.
	ClientRooted, ClientServices int
}

// ShardFile is the name of a shard's file in its directory: OTLP/JSON
// lines, zstd-compressed.
const ShardFile = "traces.jsonl.zst"

// ShardDir is shard k's (from 1) directory of n under dir.
func ShardDir(dir string, k, n int) string {
	return filepath.Join(dir, fmt.Sprintf("shard-%d-of-%d", k, n))
}

// Shard reads the trace exports of paths twice: first to find the traces
// rooted in a CLIENT span and their service, then to write each span to
// its shard as OTLP/JSON lines (zstd-compressed), one line per shard per
// record read.
// Resources and scopes are copied into every shard that gets one of their
// spans. A record that cannot be read is left out, counted and logged;
// the rest of its file and the other files still go in.
func Shard(ctx context.Context, paths []string, opt ShardOptions) (ShardSummary, error) {
	sum := ShardSummary{Spans: make([]int64, opt.N), Rejected: map[string]int64{}}
	if opt.N < 2 || opt.N > MaxShards {
		return sum, fmt.Errorf("shards %d: want a number from 2 to %d", opt.N, MaxShards)
	}
	opt.Limits = opt.Limits.withDefaults()
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	files, _, missing, truth := expand(paths, nil)
	// A shard written by an earlier run under an input directory is not
	// an input: it would be read while it is written again.
	if outAbs, err := filepath.Abs(opt.Dir); err == nil {
		files = slices.DeleteFunc(files, func(f string) bool {
			abs, err := filepath.Abs(f)
			if err != nil {
				return false
			}
			if rel, err := filepath.Rel(outAbs, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				fmt.Fprintf(opt.Log, "%s: left out: under the shards' directory %s\n", shown(f), opt.Dir)
				return true
			}
			return false
		})
	}
	for _, p := range truth {
		fmt.Fprintf(opt.Log, "%s: left out: a truth file of retryscope gen, not traces\n", shown(p))
	}
	for _, m := range missing {
		fmt.Fprintf(opt.Log, "%s: %s\n", shown(m.path), m.rej.Detail)
		sum.Rejected[m.rej.Reason]++
	}
	for _, path := range files {
		// Both passes read every input: a stream read once is gone.
		if path == "-" {
			return sum, fmt.Errorf("shard reads its inputs twice, and standard input only once: name the files")
		}
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
			return sum, fmt.Errorf("%s: shard reads its inputs twice, and a pipe or special file only once: copy it to a file first", path)
		}
	}
	// The traces rooted in a CLIENT span, and the shard of their service.
	clientRooted, services := map[pcommon.TraceID]int{}, map[string]bool{}
	type root struct {
		trace   pcommon.TraceID
		service string
	}
	for _, path := range files {
		err := eachRecord(ctx, path, opt.Limits, opt.Log, nil, opt.Workers, func(td ptrace.Traces) ([]root, error) {
			var roots []root
			eachSpan(td, func(service string, sp ptrace.Span) {
				if sp.ParentSpanID().IsEmpty() && sp.Kind() == ptrace.SpanKindClient {
					roots = append(roots, root{sp.TraceID(), service})
				}
			})
			return roots, nil
		}, func(roots []root) error {
			for _, r := range roots {
				clientRooted[r.trace] = int(fnv32a([]byte("service\x00"+r.service)) % uint32(opt.N))
				services[r.service] = true
			}
			return nil
		})
		if err != nil {
			return sum, err
		}
	}
	sum.ClientRooted, sum.ClientServices = len(clientRooted), len(services)
	shardOf := func(sp ptrace.Span) int {
		id := sp.TraceID()
		if k, ok := clientRooted[id]; ok {
			return k
		}
		return int(fnv32a(id[:]) % uint32(opt.N))
	}
	out := make([]*bufio.Writer, opt.N)
	closers := make([]*os.File, opt.N)
	defer func() {
		for _, f := range closers {
			if f != nil {
				f.Close()
			}
		}
	}()
	// A shard that gets no span gets no file, only its directory: an empty
	// file is a rejected input to ingest, and a run over the empty
	// directory writes an empty dataset, which the union report takes as a
	// shard of no requests. A file left there by an earlier split goes.
	for k := range opt.N {
		dir := ShardDir(opt.Dir, k+1, opt.N)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return sum, err
		}
		for _, name := range []string{ShardFile, "traces.jsonl"} { // and what an earlier version wrote
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return sum, err
			}
		}
	}
	writer := func(k int) (*bufio.Writer, error) {
		if out[k] == nil {
			f, err := os.Create(filepath.Join(ShardDir(opt.Dir, k+1, opt.N), ShardFile))
			if err != nil {
				return nil, err
			}
			closers[k], out[k] = f, bufio.NewWriterSize(f, 1<<20)
		}
		return out[k], nil
	}
	// Each record's line for a shard is compressed on its own, by the
	// worker that split the record, into a zstd frame; a file of frames
	// one after the other is one zstd stream, which ingest reads.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(opt.Workers))
	if err != nil {
		return sum, err
	}
	defer enc.Close()
	// A record's lines, one per shard that gets a span of it (nil for the
	// others), and their spans.
	type lines struct {
		line  [][]byte
		spans []int
	}
	for _, path := range files {
		read := int64(0)
		err := eachRecord(ctx, path, opt.Limits, opt.Log, sum.Rejected, opt.Workers, func(td ptrace.Traces) (lines, error) {
			parts := split(td, opt.N, shardOf)
			l := lines{line: make([][]byte, opt.N), spans: make([]int, opt.N)}
			for k, part := range parts {
				if l.spans[k] = part.SpanCount(); l.spans[k] == 0 {
					continue
				}
				line, err := (&ptrace.JSONMarshaler{}).MarshalTraces(part)
				if err != nil {
					return l, err
				}
				l.line[k] = enc.EncodeAll(append(line, '\n'), nil)
			}
			return l, nil
		}, func(l lines) error {
			for k, line := range l.line {
				if line == nil {
					continue
				}
				w, err := writer(k)
				if err != nil {
					return err
				}
				if _, err := w.Write(line); err != nil {
					return fmt.Errorf("shard %d: %w", k+1, err)
				}
				sum.Spans[k] += int64(l.spans[k])
				read += int64(l.spans[k])
			}
			return nil
		})
		if err != nil {
			return sum, err
		}
		sum.Files++
		fmt.Fprintf(opt.Log, "%s: %d spans sharded\n", shown(path), read)
	}
	for k := range opt.N {
		if out[k] == nil {
			continue
		}
		if err := out[k].Flush(); err != nil {
			return sum, fmt.Errorf("shard %d: %w", k+1, err)
		}
		if err := closers[k].Sync(); err != nil {
			return sum, fmt.Errorf("shard %d: %w", k+1, err)
		}
		if err := closers[k].Close(); err != nil {
			return sum, fmt.Errorf("shard %d: %w", k+1, err)
		}
		closers[k] = nil
	}
	return sum, nil
}

// eachRecord decodes every record of path and calls work with each that
// decodes, on up to workers goroutines at once, then use with what work
// made of it, one record at a time in the file's order. A record (or the
// file) that does not decode is, when rejected is not nil, counted there
// and logged in its place, as ingest counts and logs it. The records go
// through inOrder, as ingest's do.
func eachRecord[R any](ctx context.Context, path string, lim Limits, log io.Writer, rejected map[string]int64, workers int,
	work func(ptrace.Traces) (R, error), use func(R) error) error {
	reject := func(r model.Rejection) {
		if rejected != nil {
			rejected[r.Reason]++
			logRejection(log, path, r)
		}
	}
	src, err := openInput(ctx, path, nil, DefaultFIFOWait)
	if err != nil {
		reject(model.Rejection{Reason: "unreadable", Detail: err.Error()})
		return nil
	}
	defer src.close()
	if src.file != nil {
		src.r = countReader{src.file, src.read}
	}
	s, rej := openTraces(src, lim)
	if s != nil {
		defer s.close()
	}
	if rej != nil {
		reject(*rej)
		return nil
	}

	// A record that does not decode is counted and logged in its place,
	// on this goroutine.
	type done struct {
		r   R
		err error
		rej *model.Rejection
	}
	err = inOrder(ctx, s, workers, func(rec record) done {
		td, rej := unmarshalRecord(rec)
		if rej != nil {
			return done{rej: rej}
		}
		r, err := work(td)
		return done{r: r, err: err}
	}, func(d done) error {
		switch {
		case d.rej != nil:
			reject(*d.rej)
		case d.err != nil:
			return d.err
		default:
			return use(d.r)
		}
		return ctx.Err()
	})
	if err == nil {
		// The caller's context ended it, perhaps before any record.
		err = ctx.Err()
	}
	return err
}

// eachSpan calls fn with every span of td and its resource's service.name.
func eachSpan(td ptrace.Traces, fn func(service string, sp ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		service := serviceName(rs)
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				fn(service, spans.At(k))
			}
		}
	}
}

// serviceName is the service.name of rs's resource, "" without one.
func serviceName(rs ptrace.ResourceSpans) string {
	if v, ok := rs.Resource().Attributes().Get("service.name"); ok {
		return v.AsString()
	}
	return ""
}

// fnv32a is the 32-bit FNV-1a hash of b.
func fnv32a(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// split copies td's spans into n parts by shardOf, each span under a copy
// of its resource and scope.
func split(td ptrace.Traces, n int, shardOf func(ptrace.Span) int) []ptrace.Traces {
	parts := make([]ptrace.Traces, n)
	for k := range parts {
		parts[k] = ptrace.NewTraces()
	}
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		outRS := make([]ptrace.ResourceSpans, n)
		have := make([]bool, n)
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j)
			outSS := make([]ptrace.ScopeSpans, n)
			haveSS := make([]bool, n)
			spans := ss.Spans()
			for k := range spans.Len() {
				sp := spans.At(k)
				s := shardOf(sp)
				if !have[s] {
					outRS[s] = parts[s].ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(outRS[s].Resource())
					outRS[s].SetSchemaUrl(rs.SchemaUrl())
					have[s] = true
				}
				if !haveSS[s] {
					outSS[s] = outRS[s].ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(outSS[s].Scope())
					outSS[s].SetSchemaUrl(ss.SchemaUrl())
					haveSS[s] = true
				}
				sp.CopyTo(outSS[s].Spans().AppendEmpty())
			}
		}
	}
	return parts
}
