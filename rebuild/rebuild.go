// Package rebuild turns stored spans into logical requests and their
// physical attempts (docs/recognition.md, "How retries are recognised") and
// decomposes each request's latency (docs/recognition.md, "Latency
// decomposition"), materialising the tables attempts and requests.
//
// SQL extracts what every span says (queries/rebuild_spans.sql: status,
// codes, counters, events, usage, the SERVER spans under it) and defines the
// tables (queries/migrations/003_derived.sql). Go does the grouping, which is graph
// work over parent links, missing parents and chains across traces, and the
// interval arithmetic of the decomposition.
package rebuild

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/retryscope/retryscope/internal/crashpoint"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/queries"
)

// Options tune the rebuild.
type Options struct {
	// Keys adds attribute and event names to those the rebuild reads by
	// default; the user's come first.
	Keys Keys
	// SplitWindow is the longest gap after a failed attempt within which an
	// attempt in another trace of the same client and operation is taken as
	// its retry (attempts split across traces). Default DefaultSplitWindow.
	SplitWindow time.Duration
	// Progress, when set, is told how many of the spans to group have been
	// grouped.
	Progress func(done, total int64)
}

// Keys names what the rebuild cannot guess: the attributes and events a
// given instrumentation uses. Each list is tried in order; the first name a
// span has wins.
type Keys struct {
	// RequestID: an id every attempt of one logical request carries.
	RequestID []string `json:"request_id_keys,omitempty"`
	// Attempt: the attempt number, 1 for the first.
	Attempt []string `json:"attempt_keys,omitempty"`
	// FirstToken: names of span events at the first token of a stream.
	FirstToken []string `json:"first_token_events,omitempty"`
	// Route: where an attempt went (a host, a provider).
	Route []string `json:"route_keys,omitempty"`
	// Model: the model an attempt asked for.
	Model []string `json:"model_keys,omitempty"`
}

// DefaultKeys covers retryscope's own attributes, the OTel semantic
// conventions (gen_ai.*, server.address), OpenLLMetry and OpenInference.
func DefaultKeys() Keys {
	return Keys{
		RequestID:  []string{"retryscope.request.id"},
		Attempt:    []string{"retryscope.attempt"},
		FirstToken: []string{"gen_ai.first_token", "First Token Stream Event", "llm.content.completion.chunk"},
		Route:      []string{"server.address", "net.peer.name"},
		Model:      []string{"gen_ai.request.model", "gen_ai.response.model", "llm.request.model", "llm.model_name"},
	}
}

// withDefaults puts k's names before the defaults, without repeats.
func (k Keys) withDefaults() Keys {
	d := DefaultKeys()
	merge := func(user, def []string) []string {
		var out []string
		for _, name := range append(append([]string(nil), user...), def...) {
			if name != "" && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
		return out
	}
	return Keys{merge(k.RequestID, d.RequestID), merge(k.Attempt, d.Attempt), merge(k.FirstToken, d.FirstToken),
		merge(k.Route, d.Route), merge(k.Model, d.Model)}
}

// fingerprint identifies the effective keys, so a rebuild with other keys
// is not mistaken for a fresh one.
func (k Keys) fingerprint() string {
	b, _ := json.Marshal(k.withDefaults())
	return string(b)
}

// DefaultSplitWindow covers the backoff of common retry policies (capped
// exponential backoff up to 8 s, Retry-After of a few seconds) and stays
// well below the pause a batch client takes after giving up.
const DefaultSplitWindow = 20 * time.Second

// Stats counts what a rebuild read and produced.
type Stats struct {
	Spans    int // spans read: all but the callees' SERVER spans under attempts
	Requests int
	Attempts int
	// Partial is set by an incremental update, whose changed requests all
	// start in [Since, Until] (Unix ns; both zero when none changed).
	Partial      bool
	Since, Until int64
	Traces       int // traces an incremental update recomputed
	Cycles       int // parent loops cut (see parent_cycles)
	// Skewed attempts have a callee's SERVER span that starts before the
	// attempt sent or after it ended, by up to MaxSkewMs: their queue and
	// serving phases are left null (model.Attempt.ClockSkewMs).
	Skewed    int
	MaxSkewMs float64
	// FirstTokenOutside counts attempts whose first-token event lies
	// outside their span, set aside: their TTFT is null.
	FirstTokenOutside int
}

// Rebuild replaces the attempts and requests tables with what the spans
// table shows, using the default options.
func Rebuild(ctx context.Context, st *store.Store) error {
	_, err := Run(ctx, st, Options{})
	return err
}

// Run replaces the rows of the attempts and requests tables with what the spans table
// shows.
func Run(ctx context.Context, st *store.Store, opt Options) (Stats, error) {
	if opt.SplitWindow <= 0 {
		opt.SplitWindow = DefaultSplitWindow
	}
	if _, err := st.Exec(ctx, "rebuild_clear"); err != nil {
		return Stats{}, fmt.Errorf("clear rebuilt tables: %w", err)
	}
	// Every span is read, and every request is built anew.
	_, err := st.Exec(ctx, "rebuild_source_all")
	if err != nil {
		return Stats{}, err
	}
	if err := crashpoint.Hit("rebuild.cleared"); err != nil {
		return Stats{}, err
	}
	return build(ctx, st, opt)
}

// update recomputes only the traces that new files touched since the
// rebuild recorded in rebuild_state (file_id > sinceFile): those traces,
// the single-span traces near them in time that a retry split across
// traces may join, and every trace of a request built from any of them.
// The requests of those traces are replaced; the rest stay as they were.
func update(ctx context.Context, st *store.Store, opt Options, sinceFile int64) (Stats, error) {
	var stats Stats
	if err := st.ExecScript(ctx, "rebuild_scope", sinceFile, int64(opt.SplitWindow)); err != nil {
		return Stats{}, fmt.Errorf("scope the update: %w", err)
	}
	var lo, hi sql.NullInt64
	if err := st.QueryRow(ctx, "rebuild_touched_range").Scan(&lo, &hi); err != nil {
		return Stats{}, err
	}
	if _, err := st.Exec(ctx, "rebuild_forget_cycles"); err != nil {
		return Stats{}, err
	}
	if _, err := st.Exec(ctx, "rebuild_forget"); err != nil {
		return Stats{}, fmt.Errorf("drop the requests to rebuild: %w", err)
	}
	if err := crashpoint.Hit("rebuild.cleared"); err != nil {
		return Stats{}, err
	}
	// The requests of the scope's traces are the ones built anew (a
	// request's trace is its anchor's, or its first attempt's).
	_, err := st.Exec(ctx, "rebuild_source_scope")
	if err != nil {
		return Stats{}, err
	}
	if stats, err = build(ctx, st, opt); err != nil {
		return stats, err
	}
	if _, err := st.Exec(ctx, "rebuild_pending_clear"); err != nil {
		return stats, err
	}
	var nlo, nhi sql.NullInt64
	if err := st.QueryRow(ctx, "rebuild_scope_range").Scan(&nlo, &nhi); err != nil {
		return stats, err
	}
	stats.Since, stats.Until = spanOf(lo, hi, nlo, nhi)
	err = st.QueryRow(ctx, "rebuild_scope_traces").Scan(&stats.Traces)
	return stats, err
}

// spanOf is the smallest range holding both ranges (either may be empty).
func spanOf(lo1, hi1, lo2, hi2 sql.NullInt64) (int64, int64) {
	switch {
	case !lo1.Valid && !lo2.Valid:
		return 0, 0
	case !lo1.Valid:
		return lo2.Int64, hi2.Int64
	case !lo2.Valid:
		return lo1.Int64, hi1.Int64
	}
	return min(lo1.Int64, lo2.Int64), max(hi1.Int64, hi2.Int64)
}

// build groups the spans of rebuild_source into requests and attempts,
// appends them, and records what they were built from.
func build(ctx context.Context, st *store.Store, opt Options) (Stats, error) {
	var stats Stats
	w, err := newWriter(ctx, st)
	if err != nil {
		return stats, err
	}
	b := &builder{opt: opt, out: w, dump: dumpEnd{window: int64(opt.SplitWindow)}}
	if err := st.QueryRow(ctx, "rebuild_dump_end").Scan(&b.dump.endNS); err != nil {
		return stats, err
	}
	var cuts []cutLink
	defer st.Exec(context.WithoutCancel(ctx), "rebuild_drop_facts")
	err = readTraces(ctx, st, opt.Keys.withDefaults(), opt.Progress, func(trace []*span) error {
		stats.Spans += len(trace)
		cuts = append(cuts, cutCycles(trace)...)
		return b.trace(trace)
	})
	// The pool and the join over it are the rebuild's largest Go heap (over
	// a million spans at 10M): collected closely while they live, and
	// handed back to the system before DuckDB's outcome queries take their
	// memory, they no longer stack on it (docs/performance.md).
	gcPercent := debug.SetGCPercent(20)
	if gcPercent < 20 { // GOGC=off or a closer target of the user's own
		debug.SetGCPercent(gcPercent)
	}
	var pool []*span
	if err == nil {
		pool, err = readPool(ctx, st, b.pool)
		b.pool = nil
	}
	// The facts are read; their pages need not sit beside the join.
	if err == nil {
		_, err = st.Exec(ctx, "rebuild_drop_facts")
	}
	if err == nil {
		err = b.splitAcrossTraces(pool)
	}
	pool = nil
	if cerr := w.close(); err == nil {
		err = cerr
	}
	debug.SetGCPercent(gcPercent)
	debug.FreeOSMemory()
	if err == nil {
		err = recordCuts(ctx, st, cuts)
	}
	if err == nil {
		err = st.ExecScript(ctx, "rebuild_outcomes")
	}
	if err == nil {
		err = crashpoint.Hit("rebuild.built")
	}
	if err != nil {
		return stats, err
	}
	stats.Cycles = len(cuts)
	src, err := sourceCounts(ctx, st)
	if err != nil {
		return stats, err
	}
	var total Stats
	if err := st.QueryRow(ctx, "rebuild_totals").Scan(&total.Requests, &total.Attempts); err != nil {
		return stats, err
	}
	stats.Requests, stats.Attempts = w.requests, w.attempts
	stats.Skewed, stats.MaxSkewMs, stats.FirstTokenOutside = w.skewed, w.maxSkewMs, w.firstTokenOutside
	_, err = st.Exec(ctx, "rebuild_record",
		src.spans, src.files, src.maxFileID, opt.fingerprint(), total.Requests, total.Attempts)
	if err != nil {
		return stats, fmt.Errorf("record rebuild: %w", err)
	}
	return stats, nil
}

// Ensure brings the rebuilt tables up to date: nothing when they reflect
// every span and file; an update of the touched traces when files were only
// added since the last rebuild with the same options; a full rebuild
// otherwise (other options, or spans pruned). It reports whether it did
// anything.
func Ensure(ctx context.Context, st *store.Store, opt Options) (bool, error) {
	_, did, err := EnsureStats(ctx, st, opt)
	return did, err
}

// EnsureStats is Ensure, also saying what the rebuild did: Stats.Partial
// marks an incremental update and the range of starts it changed.
func EnsureStats(ctx context.Context, st *store.Store, opt Options) (Stats, bool, error) {
	if opt.SplitWindow <= 0 {
		opt.SplitWindow = DefaultSplitWindow
	}
	prev, ok, err := lastState(ctx, st, opt)
	if err != nil {
		return Stats{}, false, err
	}
	if !ok {
		stats, err := Run(ctx, st, opt)
		return stats, err == nil, err
	}
	now, err := sourceCounts(ctx, st)
	if err != nil {
		return Stats{}, false, err
	}
	more, err := st.RebuildPending(ctx)
	if err != nil {
		return Stats{}, false, err
	}
	if now == prev && !more {
		return Stats{}, false, nil
	}
	var kept int64
	if err := st.QueryRow(ctx, "rebuild_kept", prev.maxFileID).Scan(&kept); err != nil {
		return Stats{}, false, err
	}
	if kept != prev.spans || now.maxFileID < prev.maxFileID {
		stats, err := Run(ctx, st, opt)
		return stats, err == nil, err
	}
	stats, err := update(ctx, st, opt, prev.maxFileID)
	stats.Partial = err == nil
	return stats, err == nil, err
}

// sourceState is what the rebuilt tables are built from.
type sourceState struct {
	spans, files, maxFileID int64
}

// lastState returns what the last rebuild with these options was built
// from; ok is false when there is none.
func lastState(ctx context.Context, st *store.Store, opt Options) (sourceState, bool, error) {
	var s sourceState
	err := st.QueryRow(ctx, "rebuild_last_state", opt.fingerprint()).Scan(&s.spans, &s.files, &s.maxFileID)
	if errors.Is(err, sql.ErrNoRows) {
		return s, false, nil
	}
	return s, err == nil, err
}

func sourceCounts(ctx context.Context, st *store.Store) (sourceState, error) {
	var s sourceState
	err := st.QueryRow(ctx, "rebuild_state").Scan(&s.spans, &s.files, &s.maxFileID)
	if err != nil {
		err = fmt.Errorf("count spans: %w", err)
	}
	return s, err
}

// factsPerSlice bounds how many spans one slice of rebuild_facts holds,
// so sorting and reading a slice fits in a small memory limit.
const factsPerSlice = 100_000

// RulesVersion numbers the rules that derive requests and attempts from
// spans (rebuild_spans and the Go that groups, joins, classifies and
// measures). Raise it with any change that derives other rows from the
// same spans: it is part of the rebuild's fingerprint, so a database
// derived by older rules is derived again in full by the next run or
// report instead of being taken as fresh.
const RulesVersion = 32

// fingerprint identifies the rules and options a rebuild ran with.
func (o Options) fingerprint() string {
	return fmt.Sprintf("rules=%d %s window=%s", RulesVersion, o.Keys.fingerprint(), o.SplitWindow)
}

// spanFactsSQL is the text of queries/rebuild_spans.sql. A test changes
// it, to show that moving its columns changes nothing the rebuild reads
// (swap_test.go).
var spanFactsSQL = func() string { return queries.Get("rebuild_spans") }

// readTraces extracts the span facts (rebuild_spans), then reads them back
// slice by slice (rebuild_partition) and hands over one trace at a time,
// telling progress (when set) how many of the spans it has handed over.
// The facts stay, for readPool; the caller drops them.
//
// A goroutine reads the next slice while each groups and writes the traces
// of the one before: reading (DuckDB's query, then every value through the
// driver) and writing (the appenders) take about as long, and one after
// the other they left the second core idle. The traces still come in
// slice order. The driver materialises each query result, so reading rows
// needs no lock on the connection; a query and an appender's flush into
// the table each take DuckDB's lock on the connection, one at a time.
func readTraces(ctx context.Context, st *store.Store, keys Keys, progress func(done, total int64), each func([]*span) error) error {
	var sourceSpans int64
	if err := st.QueryRow(ctx, "rebuild_source_count").Scan(&sourceSpans); err != nil {
		return err
	}
	slices := max(1, (sourceSpans+factsPerSlice-1)/factsPerSlice)
	_, err := st.ExecText(ctx, spanFactsSQL(), keys.RequestID, keys.Attempt, keys.FirstToken, keys.Route, keys.Model, slices)
	if err != nil {
		return err
	}
	var n int64
	if err := st.QueryRow(ctx, "rebuild_facts_count").Scan(&n); err != nil {
		return err
	}
	readCtx, stop := context.WithCancel(ctx)
	defer stop()
	read := make(chan [][]*span)
	readErr := make(chan error, 1)
	go func() {
		defer close(read)
		t := texts{}
		for k := range slices {
			traces, err := readSlice(readCtx, st, k, t)
			if err == nil {
				select {
				case read <- traces:
				case <-readCtx.Done():
					err = readCtx.Err()
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
		readErr <- nil
	}()
	var done int64
	for traces := range read {
		for _, trace := range traces {
			done += int64(len(trace))
			if progress != nil {
				progress(done, n)
			}
			if err := each(trace); err != nil {
				stop()
				for range read {
				}
				<-readErr
				return err
			}
		}
	}
	return <-readErr
}

// readPool reads back the spans the rebuild set aside by their rows of
// the span facts (fact_row): the root CLIENT attempts, which are joined
// across traces once every trace is read. Held from their trace to the
// end, they took half a gigabyte at ten million spans while every slice
// after was read beside them, with DuckDB at its limit. They are read
// streamed and unsorted (splitAcrossTraces sorts them), so DuckDB holds
// no copy of them beside Go's; nothing else uses the store meanwhile.
func readPool(ctx context.Context, st *store.Store, rows []int64) ([]*span, error) {
	if _, err := st.Exec(ctx, "rebuild_pool_ids"); err != nil {
		return nil, err
	}
	l, err := store.NewLoader(st, "rebuild_pool_ids", []store.Column[int64]{store.IntColumn("id", func(id int64) int64 { return id })})
	if err != nil {
		return nil, err
	}
	for _, id := range rows {
		if err := l.Add(ctx, id); err != nil {
			return nil, err
		}
	}
	if err := l.Flush(ctx); err != nil {
		return nil, err
	}
	pool, t := make([]*span, 0, len(rows)), texts{}
	err = st.StreamChunks(ctx, store.QueryFile("rebuild_pool"), nil, factCols[:], func(c *store.Chunk) error {
		for i := range c.Len() {
			pool = append(pool, readSpan(c, i, t))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the attempts set aside: %w", err)
	}
	return pool, nil
}

// readSlice reads slice k of the span facts, trace by trace, the texts
// spans repeat through t.
func readSlice(ctx context.Context, st *store.Store, k int64, t texts) ([][]*span, error) {
	var traces [][]*span
	var trace []*span
	err := st.EachChunk(ctx, store.QueryFile("rebuild_partition"), []any{k}, factCols[:], func(c *store.Chunk) error {
		for i := range c.Len() {
			s := readSpan(c, i, t)
			if len(trace) > 0 && trace[0].traceID != s.traceID {
				traces = append(traces, trace)
				trace = nil
			}
			trace = append(trace, s)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read span facts: %w", err)
	}
	if len(trace) > 0 {
		traces = append(traces, trace)
	}
	return traces, nil
}
