// Package store is retryscope's DuckDB adapter: it opens the database file,
// owns its schema (every table is made by the migrations in
// queries/migrations, run on open), and writes ingested files one
// transaction at a time.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/queries"
)

// Options tune the embedded database.
type Options struct {
	// MemoryLimit is DuckDB's memory_limit, e.g. "512MB"; "" keeps DuckDB's
	// default (80% of RAM).
	MemoryLimit string
	// Threads caps DuckDB's worker threads; 0 keeps its default.
	Threads int
	// ReadOnly opens the file for reading only, for a user who may not
	// write it: nothing is migrated or cleaned up, and a write fails.
	ReadOnly bool
}

// ErrLocked is returned when another process holds the database file.
var ErrLocked = errors.New("database is in use by another process")

// Store is an open retryscope database. It holds a single connection: the
// staging table and the appenders live on it.
type Store struct {
	db   *sql.DB
	conn *sql.Conn
	Path string
	// ReadOnly is true when the file was opened for reading only.
	ReadOnly bool
	inTx     bool
	// memoryLimit is the memory limit as last set, exactly: DuckDB shows
	// it rounded (512MB as 488.2 MiB), and setting that back lowers it.
	// "" while DuckDB's own default holds.
	memoryLimit string
	// staged is what the staged-spans function yields, while a load
	// reads it (see load.go).
	staged           *staged
	stagedRegistered bool
	// stageMade: the staging table exists on this connection.
	stageMade bool
	// nextFileID is the file_id of the next file, 0 until known.
	nextFileID int64
	// smallRepeats is smallRepeatsStored's statement, once prepared.
	smallRepeats *sql.Stmt
}

// Open opens (creating if needed) the database at path and brings its
// schema up to date. The path is a file name, taken literally: nothing in
// it reaches DuckDB's settings. The settings in opt are checked, then set.
func Open(ctx context.Context, path string, opt Options) (*Store, error) {
	if err := CheckOptions(path, opt); err != nil {
		return nil, err
	}
	type setting struct {
		query string
		value any
	}
	var settings []setting
	if opt.MemoryLimit != "" {
		settings = append(settings, setting{"store_set_memory_limit", opt.MemoryLimit})
	}
	if opt.Threads > 0 {
		settings = append(settings, setting{"store_set_threads", int64(opt.Threads)})
	}
	dsn := path // checkPath made sure it holds no '?'
	if opt.ReadOnly {
		dsn += "?access_mode=read_only"
	}
	connector, err := duckdb.NewConnector(dsn, func(ex driver.ExecerContext) error {
		for _, q := range settings {
			args := []driver.NamedValue{{Ordinal: 1, Value: q.value}}
			if _, err := ex.ExecContext(context.WithoutCancel(ctx), queries.Get(q.query), args); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, describeOpenError(path, err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, describeOpenError(path, err)
	}
	s := &Store{db: db, conn: conn, Path: path, ReadOnly: opt.ReadOnly, memoryLimit: opt.MemoryLimit}
	if err := s.ExecScript(ctx, "store_configure"); err != nil {
		s.Close()
		return nil, fmt.Errorf("configure %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("schema of %s: %w", path, err)
	}
	if opt.ReadOnly {
		return s, nil
	}
	if _, err := s.Exec(ctx, "drop_unfinished"); err != nil {
		s.Close()
		return nil, fmt.Errorf("clean up an interrupted ingest in %s: %w", path, err)
	}
	return s, nil
}

// MaxThreads is the most DuckDB threads Options takes.
const MaxThreads = 1024

// The memory limits Options takes: DuckDB cannot run a query in less
// than a few MiB, and no machine has a petabyte.
const (
	minMemoryLimit = 8_000_000
	maxMemoryLimit = 1 << 50
)

// CheckOptions is what Open checks before it touches the file: the path
// (see checkPath), the memory limit and the threads.
func CheckOptions(path string, opt Options) error {
	if err := checkPath(path); err != nil {
		return err
	}
	if opt.MemoryLimit != "" {
		n, ok := parseSize(opt.MemoryLimit)
		if !ok || n < minMemoryLimit || n > maxMemoryLimit {
			return fmt.Errorf("memory limit %q: want a size from 8MB to 1PB such as 512MB or 4GB (units B, KB, MB, GB, TB or KiB, MiB, GiB, TiB)", opt.MemoryLimit)
		}
	}
	if opt.Threads < 0 || opt.Threads > MaxThreads {
		return fmt.Errorf("threads %d: want a number from 1 to %d, or 0 for the default", opt.Threads, MaxThreads)
	}
	return nil
}

// parseSize reads a size as DuckDB's memory_limit takes it ("512MB",
// "1.5 GiB") in bytes.
func parseSize(s string) (float64, bool) {
	m := memoryLimitPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	unit := map[string]float64{"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[m[2]]
	return v * unit, true
}

// checkPath refuses the names DuckDB's driver would not take as a file
// name: an empty one or ":memory:" (an in-memory database, whose data would
// be silently discarded), one with "?" (the driver reads what follows as
// settings), and one the driver cannot parse.
func checkPath(path string) error {
	switch {
	case path == "" || path == ":memory:" || strings.HasPrefix(path, ":memory:?"):
		return fmt.Errorf("database %q: want a file name (an in-memory database would discard what is stored)", path)
	case strings.Contains(path, "?"):
		return fmt.Errorf("database %q: a name with '?' cannot be opened (DuckDB's driver reads what follows as settings); rename it", path)
	}
	if _, err := url.Parse(path); err != nil {
		return fmt.Errorf("database %q: DuckDB's driver cannot open this name (%v); rename it", path, err)
	}
	return nil
}

// describeOpenError says why DuckDB could not open the file at path:
// another process holds it (ErrLocked), or the user may not open it
// (fs.ErrPermission).
func describeOpenError(path string, err error) error {
	// Both come as DuckDB IO errors, like any other failure to open or
	// read the file: only the message tells them apart.
	if de, ok := duckdbError(err, duckdb.ErrorTypeIO); ok {
		switch {
		case strings.Contains(de.Msg, "Could not set lock") || strings.Contains(de.Msg, "Conflicting lock"):
			return fmt.Errorf("%s: %w (another retryscope run may be going; wait for it or pass --wait)", path, ErrLocked)
		case strings.Contains(de.Msg, "Permission denied"):
			return fmt.Errorf("open database %s: %w (%v)", path, fs.ErrPermission, err)
		}
	}
	return fmt.Errorf("open database %s: %w", path, err)
}

// duckdbError returns the DuckDB error err holds, if it holds one of one
// of these types.
func duckdbError(err error, types ...duckdb.ErrorType) (*duckdb.Error, bool) {
	var de *duckdb.Error
	if !errors.As(err, &de) {
		return nil, false
	}
	for _, t := range types {
		if de.Type == t {
			return de, true
		}
	}
	return nil, false
}

// IsReadOnlyError reports whether err is DuckDB refusing a write to a
// file opened read-only.
func IsReadOnlyError(err error) bool {
	// DuckDB says so with an invalid-input error, the type of many other
	// refusals: the message tells this one apart.
	de, ok := duckdbError(err, duckdb.ErrorTypeInvalidInput)
	return ok && strings.Contains(de.Msg, "read-only mode")
}

// Close releases the connection and the database file.
func (s *Store) Close() error {
	if s.smallRepeats != nil {
		s.smallRepeats.Close()
	}
	s.conn.Close()
	return s.db.Close()
}

// SeenFile reports the path under which content with this hash was
// ingested before, if it was.
func (s *Store) SeenFile(ctx context.Context, sha256 string) (string, bool, error) {
	var path string
	err := s.QueryRow(ctx, "store_seen_file", sha256).Scan(&path)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return path, err == nil, err
}

// SizeSeen reports whether content of this many bytes was ingested
// before: if not, no file of that size can have been.
func (s *Store) SizeSeen(ctx context.Context, size int64) (bool, error) {
	var seen bool
	err := s.QueryRow(ctx, "store_size_seen", size).Scan(&seen)
	return seen, err
}

// FileInfo is the ledger row of one ingested file.
type FileInfo struct {
	Path        string
	SHA256      string
	SizeBytes   int64
	Format      string
	Compression string
	Records     int64
	SpansRead   int64
	Rejected    int64
	Seconds     float64
}

// chunkSpans is how many staged spans are merged at a time, by one
// statement: the staging table and the batches waiting to be merged stay
// small however large the file. In a file's one transaction the chunk's
// size does not shape the row groups. The chunk being merged and the one
// being staged are most of Go's live heap while ingesting: at 100,000
// spans each (SDK-load spans) that heap sat at or above ingest's 128 MiB
// soft limit, and Go collected back to back (about 600 collections per
// 1M spans, the scavenger handing pages back that were touched again);
// at 50,000 it stays near 60-90 MB, and a 1M-span ingest took 0.55-0.65
// of the CPU time, a 10M one 0.55 and 29 MiB less at its peak
// (docs/performance.md).
const chunkSpans = 50_000

// FileTx is one file's ingest, in one transaction: its spans are merged
// chunk by chunk, and the ledger row and the rejections written last, all
// committed together, so a file goes in whole or not at all. One
// transaction lets DuckDB write the spans' row groups to the file
// compressed as they fill (its optimistic writes), and at the commit take
// them over as they are; a transaction per chunk made it append each chunk
// to the table uncompressed and compress it again at every checkpoint.
// Spans without a ledger row, which an interrupted ingest of an earlier
// version could leave, are removed on open (drop_unfinished).
//
// A chunk is merged by a goroutine of its own while Add stages the next,
// so that decoding goes on while DuckDB stores; until Wait, Commit or
// Rollback, that goroutine alone uses the store's connection.
type FileTx struct {
	s      *Store
	ctx    context.Context
	path   string
	FileID int64
	seq    int64
	// next is the chunk being staged; seen holds a hash of every
	// (trace_id, span_id) of the file so far, so that a chunk knows
	// whether its spans may repeat one (see merge).
	next chunk
	seen spanKeys
	// chunks go to the merging goroutine, started by the first; merged
	// says it ended, and failed holds its error.
	chunks   chan chunk
	merged   chan struct{}
	failed   atomic.Pointer[error]
	spansNew int64
	// Conflicts counts the spans dropped because their (trace_id,
	// span_id) came before with other content (see merge_conflicts).
	Conflicts int64
	done      bool
}

// chunk is staged spans merged together.
type chunk struct {
	batches            []*SpanBatch
	spans              int
	minStart, maxStart int64 // the spans' range of start_ns
	// repeated is set when a span's key hash was seen before in the file,
	// so that the span may repeat one.
	repeated bool
}

// ResendWindow is how far apart in start time two copies of a span may be
// and still be found to be the same span: a re-sent span keeps its start
// time, or nearly (a clock corrected, a rounding). Copies further apart are
// both stored.
const ResendWindow = time.Hour

// BeginFile starts the ingest of one file; path is recorded with the
// conflicts it brings.
func (s *Store) BeginFile(ctx context.Context, path string) (*FileTx, error) {
	id, err := s.prepareLoad(ctx)
	if err != nil {
		return nil, err
	}
	tx := &FileTx{s: s, ctx: ctx, path: path, seen: newSpanKeys(), FileID: id}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	return tx, nil
}

// prepareLoad readies the connection for loading files and returns the
// file_id of the next one.
func (s *Store) prepareLoad(ctx context.Context) (int64, error) {
	if !s.stagedRegistered {
		if err := s.registerStaged(ctx); err != nil {
			return 0, fmt.Errorf("register the staged spans: %w", err)
		}
		s.stagedRegistered = true
	}
	// The staging table outlives each file's transaction (it is made
	// outside it, and each merge empties it), and only this process
	// writes files while it holds the database: both are found once, not
	// once a file, which a directory of small files pays for.
	if !s.stageMade {
		if _, err := s.Exec(ctx, "stage"); err != nil {
			return 0, fmt.Errorf("create staging table: %w", err)
		}
		s.stageMade = true
	}
	if s.nextFileID != 0 {
		return s.nextFileID, nil
	}
	var id int64
	err := s.QueryRow(ctx, "store_next_file_id").Scan(&id)
	return id, err
}

// StageColumns are the columns of stage_spans (queries/stage.sql), which
// the staged spans are read as, in order.
var StageColumns = []string{"seq", "trace_id", "span_id", "parent_span_id", "trace_state",
	"name", "kind", "start_ns", "end_ns", "status_code", "status_message",
	"service_name", "scope_name", "scope_version",
	"attributes", "resource_id", "events", "links", "offset", "file_id"}

// Add stages a batch of spans, the next in file order. The batch must not
// change afterwards. An error from merging an earlier chunk is returned by
// the Add after it, or by Commit.
func (t *FileTx) Add(b *SpanBatch) error {
	if err := t.failed.Load(); err != nil {
		return *err
	}
	if len(b.Spans) == 0 {
		return nil
	}
	b.seq = t.seq + 1
	b.fileID = t.FileID
	t.seq += int64(len(b.Spans))
	c := &t.next
	for i := range b.Spans {
		sp := &b.Spans[i]
		if !t.seen.add(b.bytes(sp.TraceID), b.bytes(sp.SpanID)) {
			c.repeated = true
		}
		if c.spans == 0 || sp.StartNS < c.minStart {
			c.minStart = sp.StartNS
		}
		if c.spans == 0 || sp.StartNS > c.maxStart {
			c.maxStart = sp.StartNS
		}
		c.spans++
	}
	c.batches = append(c.batches, b)
	if c.spans < chunkSpans {
		return nil
	}
	if t.chunks == nil {
		t.chunks, t.merged = make(chan chunk), make(chan struct{})
		go t.mergeChunks()
	}
	t.chunks <- t.next
	t.next = chunk{}
	return nil
}

// mergeChunks merges each chunk, in the file's transaction. After an error
// it takes the chunks still sent without merging them.
func (t *FileTx) mergeChunks() {
	defer close(t.merged)
	for c := range t.chunks {
		if t.failed.Load() != nil {
			continue
		}
		if err := t.merge(c); err != nil {
			t.failed.Store(&err)
		}
	}
}

// Wait returns once every chunk staged so far is merged, with the first
// error merging one. The store's connection is free for other statements
// until the next Add; they run in the file's transaction.
func (t *FileTx) Wait() error { return t.waitMerged() }

// waitMerged ends the merging goroutine and returns its error.
func (t *FileTx) waitMerged() error {
	if t.chunks == nil {
		return nil
	}
	close(t.chunks)
	<-t.merged
	t.chunks = nil
	if err := t.failed.Load(); err != nil {
		return *err
	}
	return nil
}

// merge moves a chunk into spans. When none of its spans can repeat a span
// stored before or staged with them, that is a plain insert (load_spans):
// the file has not shown their keys before, and no earlier file stored a
// span with one of their keys in their time window (merge_needed, then
// merge_repeats). Otherwise they go through stage_spans, merge_conflicts
// and merge_stage, which keep the first copy of each span and record the
// conflicts, and merge_resources, which stores the resources the spans
// kept refer to. Either way a resource already stored is not stored again.
func (t *FileTx) merge(c chunk) error {
	if c.spans == 0 {
		return nil
	}
	if !c.repeated {
		repeats, err := t.repeatsStored(c)
		if err != nil {
			return fmt.Errorf("look for stored spans the staged ones may repeat: %w", err)
		}
		if !repeats {
			n, err := t.s.loadSpans(t.ctx, c.batches)
			if err != nil {
				return err
			}
			t.spansNew += n
			return nil
		}
	}
	if _, err := t.s.load(t.ctx, c.batches, queries.Get("store_stage_spans")); err != nil {
		return fmt.Errorf("stage spans: %w", err)
	}
	n, err := t.s.Exec(t.ctx, "merge_conflicts", t.FileID, c.minStart, c.maxStart, int64(ResendWindow), t.path)
	if err != nil {
		return fmt.Errorf("record conflicting spans: %w", err)
	}
	t.Conflicts += n
	n, err = t.s.Exec(t.ctx, "merge_stage", t.FileID, c.minStart, c.maxStart, int64(ResendWindow))
	if err != nil {
		return fmt.Errorf("merge staged spans: %w", err)
	}
	t.spansNew += n
	if _, err := t.s.load(t.ctx, c.batches, queries.Get("merge_resources"), t.FileID, c.minStart, c.maxStart); err != nil {
		return fmt.Errorf("store the staged spans' resources: %w", err)
	}
	_, err = t.s.Exec(t.ctx, "store_stage_clear")
	return err
}

// loadSpans inserts batches' spans, none of which repeats a stored span or
// another of them, and the resources they refer to that are not stored
// yet; it returns the number of spans.
func (s *Store) loadSpans(ctx context.Context, batches []*SpanBatch) (int64, error) {
	if _, err := s.load(ctx, batches, queries.Get("load_resources")); err != nil {
		return 0, fmt.Errorf("store the staged spans' resources: %w", err)
	}
	n, err := s.load(ctx, batches, queries.Get("load_spans"))
	if err != nil {
		return 0, fmt.Errorf("load staged spans: %w", err)
	}
	return n, nil
}

// repeatsStored reports whether a span of the chunk has the key of a span
// an earlier file stored within the re-send window of the chunk's time
// range. Most often no earlier file has a span in that window at all,
// which is cheaper to find out first.
func (t *FileTx) repeatsStored(c chunk) (bool, error) {
	args := []any{t.FileID, c.minStart, c.maxStart, int64(ResendWindow)}
	var found bool
	if c.spans <= smallChunk {
		return t.smallRepeatsStored(c, args)
	}
	if err := t.s.QueryRow(t.ctx, "merge_needed", args...).Scan(&found); err != nil || !found {
		return found, err
	}
	err := t.s.withStaged(c.batches, func() error {
		return t.s.QueryRow(t.ctx, "merge_repeats", args...).Scan(&found)
	})
	return found, err
}

// smallChunk is the most spans a chunk may have for smallRepeatsStored:
// a file of a few spans, as a Collector with rotation writes them.
const smallChunk = 16

// smallRepeatsStored is repeatsStored for a chunk of a few spans: their
// keys are looked up directly, by a statement prepared once, instead of
// through the staged-spans function and two statements planned anew for
// each file.
func (t *FileTx) smallRepeatsStored(c chunk, args []any) (bool, error) {
	if t.s.smallRepeats == nil {
		stmt, err := t.s.conn.PrepareContext(t.ctx, queries.Get("store_small_repeats"))
		if err != nil {
			return false, err
		}
		t.s.smallRepeats = stmt
	}
	keys := make([]string, 0, c.spans)
	for _, b := range c.batches {
		for i := range b.Spans {
			keys = append(keys, string(b.bytes(b.Spans[i].TraceID))+string(b.bytes(b.Spans[i].SpanID)))
		}
	}
	var found bool
	err := t.s.smallRepeats.QueryRowContext(t.ctx, append(args, keys)...).Scan(&found)
	return found, err
}

// Commit merges what is staged, writes the ledger row and the rejections,
// and commits the file's transaction. It returns the number of spans that
// were new.
func (t *FileTx) Commit(info FileInfo, rejections []model.Rejection) (int64, error) {
	err := t.waitMerged()
	if err == nil {
		err = t.finish(info, rejections)
	}
	if err == nil {
		err = t.s.commit(t.ctx)
	}
	if err != nil {
		t.Rollback()
		return 0, err
	}
	t.done = true
	t.seen.free()
	t.s.nextFileID = t.FileID + 1
	return t.spansNew, nil
}

// finish merges the last chunk and writes the ledger row and the
// rejections.
func (t *FileTx) finish(info FileInfo, rejections []model.Rejection) error {
	if err := t.merge(t.next); err != nil {
		return err
	}
	t.next = chunk{}
	_, err := t.s.Exec(t.ctx, "store_ledger_row", t.FileID, info.Path, info.SHA256, info.SizeBytes, info.Format, info.Compression,
		info.Records, info.SpansRead, t.spansNew, info.Rejected+t.Conflicts, info.Seconds)
	if err != nil {
		return fmt.Errorf("write ledger: %w", err)
	}
	return t.s.insertRejections(t.ctx, t.FileID, info.Path, rejections)
}

// Rollback abandons the file: its transaction is rolled back. Safe to
// call twice.
func (t *FileTx) Rollback() {
	if t.done {
		return
	}
	t.done = true
	t.s.nextFileID = 0 // asked again: the rollback may not have been the last word
	t.waitMerged()
	t.seen.free()
	t.s.rollback(t.ctx)
}

// RecordRejections stores rejections for input that never got a file
// transaction (an unreadable file, a path that matched nothing).
func (s *Store) RecordRejections(ctx context.Context, path string, rejections []model.Rejection) error {
	return s.insertRejections(ctx, 0, path, rejections)
}

func (s *Store) insertRejections(ctx context.Context, fileID int64, path string, rejections []model.Rejection) error {
	if len(rejections) == 0 {
		return nil
	}
	app, err := s.NewAppender("", "ingest_errors", RejectionColumns)
	if err != nil {
		return fmt.Errorf("record rejections: %w", err)
	}
	now := time.Now().UTC()
	var id any = fileID
	if fileID == 0 {
		id = nil
	}
	for _, r := range rejections {
		if err := app.AppendRow(id, path, r.Offset, r.Reason, r.Detail, nullable(r.TraceID), nullable(r.SpanID), now); err != nil {
			app.Close()
			return fmt.Errorf("record rejection: %w", err)
		}
	}
	return app.Close()
}

// RejectionColumns are the columns of ingest_errors that a rejection
// gives, in insertRejections' order.
var RejectionColumns = []string{"file_id", "path", "offset", "reason", "detail", "trace_id", "span_id", "recorded_at"}

// NewAppender opens an appender on table (catalog "" for the database,
// "temp" for this connection's temporary tables) whose rows give the
// values of columns, in that order: the order of a table's DDL does not
// matter, and a test compares each list with its table (see
// storetest.CheckColumns).
func (s *Store) NewAppender(catalog, table string, columns []string) (*duckdb.Appender, error) {
	var app *duckdb.Appender
	err := s.conn.Raw(func(dc any) error {
		var err error
		app, err = duckdb.NewAppenderWithColumns(dc.(driver.Conn), catalog, "main", table, columns)
		return err
	})
	return app, err
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// CountSpans returns the number of spans stored, from DuckDB's table
// metadata: it costs the same however large the table.
func (s *Store) CountSpans(ctx context.Context) (int64, error) {
	var n int64
	err := s.QueryRow(ctx, "store_count_spans").Scan(&n)
	return n, err
}

// SetMemoryLimit changes DuckDB's memory limit, e.g. "256MB", and returns
// the one it replaces, to be set back later.
func (s *Store) SetMemoryLimit(ctx context.Context, limit string) (string, error) {
	prev := s.memoryLimit
	if prev == "" {
		if err := s.QueryRow(ctx, "store_setting", "memory_limit").Scan(&prev); err != nil {
			return "", err
		}
	}
	// RESET is not used: it restores the setting's text but, in DuckDB
	// 1.5, not the buffer manager's limit.
	if !memoryLimitPattern.MatchString(limit) {
		return prev, fmt.Errorf("memory limit %q: want a size such as 512MB or 4GB", limit)
	}
	_, err := s.Exec(ctx, "store_set_memory_limit", limit)
	if err == nil {
		s.memoryLimit = limit
	}
	return prev, err
}

// DropCache has DuckDB give back the memory of the blocks it keeps in case
// they are read again (table data a query read or wrote), for a step that
// needs the memory in Go instead. It lowers the memory limit for a
// moment, which makes DuckDB evict every block no query holds, and sets
// it back. When some blocks cannot go, DuckDB refuses the lower limit
// after evicting the others, which is no error here; but inside a
// transaction that refusal would abort it, so there DropCache does
// nothing.
func (s *Store) DropCache(ctx context.Context) error {
	if s.inTx {
		return nil
	}
	prev, err := s.SetMemoryLimit(ctx, "1MB")
	if prev == "" || ctx.Err() != nil {
		return errors.Join(err, ctx.Err())
	}
	_, err = s.SetMemoryLimit(ctx, prev)
	return err
}

// LoadAlone runs load, a read of the window's requests (requests of them)
// whose result Go then holds and works on alone. For a window of more than
// CacheReturnRequests requests, DuckDB's cache is given back before it
// (what the steps before read) and after it (what load read): Go's largest
// holds then stand beside what DuckDB needs, not beside its cache. For a
// smaller window DuckDB keeps it: giving it back also hands back every page
// DuckDB's allocator had freed, which its next queries fault in again, and
// that costs more time than the little memory it saves is worth (see
// docs/performance.md, "Memory").
func (s *Store) LoadAlone(ctx context.Context, requests int64, load func() error) error {
	if requests <= CacheReturnRequests {
		return load()
	}
	if err := s.DropCache(ctx); err != nil {
		return err
	}
	if err := load(); err != nil {
		return err
	}
	return s.DropCache(ctx)
}

// CacheReturnRequests is the most requests a window may hold for
// LoadAlone to leave DuckDB's cache alone: 2^19, the window the report
// reads in slices beyond. A day of 1M spans holds about 300,000 requests,
// where giving the cache back took 0.8-1.1 s of a 6 s report for 50-80 MiB
// of peak; at 10M spans (2.9M requests) it keeps the report's peak 230-420 MiB
// lower.
const CacheReturnRequests = 1 << 19

// SetThreads changes DuckDB's number of threads and returns the number it
// replaces, to be set back later.
func (s *Store) SetThreads(ctx context.Context, n int) (int, error) {
	var prev int
	if err := s.QueryRow(ctx, "store_setting", "threads").Scan(&prev); err != nil {
		return 0, err
	}
	if n < 1 {
		return prev, fmt.Errorf("threads %d: want a positive number", n)
	}
	_, err := s.Exec(ctx, "store_set_threads", int64(n))
	return prev, err
}

var memoryLimitPattern = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?) ?([KMGT]i?B|B)$`)

// OpenWaiting is Open; with wait, while another process holds the file it
// polls until the file is free (or ctx ends), saying so once on log.
func OpenWaiting(ctx context.Context, path string, opt Options, wait bool, log io.Writer) (*Store, error) {
	said := false
	for {
		st, err := Open(ctx, path, opt)
		if err == nil || !wait || !errors.Is(err, ErrLocked) {
			return st, err
		}
		if !said {
			fmt.Fprintf(log, "retryscope: %s is held by another process; waiting (--wait)\n", path)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
