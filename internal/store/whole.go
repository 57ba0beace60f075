package store

import (
	"context"
	"fmt"
	"time"

	"github.com/retryscope/retryscope/model"
)

// A directory of small files (a Collector with rotation writes one every
// few seconds) would cost a transaction a file: some eight statements and
// a commit, each a millisecond or two of DuckDB's, for a span or two. So a
// small file is decoded whole before anything of it is stored, and several
// such files go in together (StoreWhole): their spans by one statement,
// their ledger rows by one appender, one commit. A file still goes in whole
// or not at all, and so does the group: a crash loses every file of it,
// which the next run takes again.

// WholeFile is a file decoded whole, waiting to be stored with others by
// StoreWhole: its ledger row, its spans in file order and its rejections.
type WholeFile struct {
	Info       FileInfo
	Batches    []*SpanBatch
	Rejections []model.Rejection
}

// Spans is the number of spans the file holds.
func (f *WholeFile) Spans() int64 {
	n := 0
	for _, b := range f.Batches {
		n += len(b.Spans)
	}
	return int64(n)
}

// SeenFiles returns the path each of these hashes was ingested under
// before, for those that were.
func (s *Store) SeenFiles(ctx context.Context, sha256s []string) (map[string]string, error) {
	seen := map[string]string{}
	if len(sha256s) == 0 {
		return seen, nil
	}
	rows, err := s.Query(ctx, "store_seen_files", sha256s)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var sha, path string
		if err := rows.Scan(&sha, &path); err != nil {
			return nil, err
		}
		seen[sha] = path
	}
	return seen, rows.Err()
}

// MayRepeat reports, for each file, whether one of its spans may repeat a
// span stored before, one of an earlier file of files or one of its own.
// Such a file must be stored alone, through BeginFile, whose merge keeps
// the first copy of each span and records the conflicts; the others may
// go in together by StoreWhole, in files' order, in one or more runs
// between those.
func (s *Store) MayRepeat(ctx context.Context, files []WholeFile) ([]bool, error) {
	may := make([]bool, len(files))
	keys := newSpanKeys()
	defer keys.free()
	var traceIDs, spanIDs []string
	var owner []int
	var minStart, maxStart int64
	for i := range files {
		for _, b := range files[i].Batches {
			for j := range b.Spans {
				sp := &b.Spans[j]
				if !keys.add(b.bytes(sp.TraceID), b.bytes(sp.SpanID)) {
					may[i] = true
				}
				if len(owner) == 0 || sp.StartNS < minStart {
					minStart = sp.StartNS
				}
				if len(owner) == 0 || sp.StartNS > maxStart {
					maxStart = sp.StartNS
				}
				traceIDs = append(traceIDs, b.String(sp.TraceID))
				spanIDs = append(spanIDs, b.String(sp.SpanID))
				owner = append(owner, i)
			}
		}
	}
	if len(owner) == 0 {
		return may, nil
	}
	rows, err := s.Query(ctx, "store_may_repeat", minStart, maxStart, int64(ResendWindow), traceIDs, spanIDs)
	if err != nil {
		return nil, fmt.Errorf("look for stored spans the files may repeat: %w", err)
	}
	defer rows.Close()
	stored := map[[2]string]bool{}
	for rows.Next() {
		var k [2]string
		if err := rows.Scan(&k[0], &k[1]); err != nil {
			return nil, err
		}
		stored[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(stored) > 0 {
		for k, i := range owner {
			if stored[[2]string{traceIDs[k], spanIDs[k]}] {
				may[i] = true
			}
		}
	}
	return may, nil
}

// LedgerColumns are the columns of ingest_files, in StoreWhole's order.
var LedgerColumns = []string{"file_id", "path", "sha256", "size_bytes", "format", "compression",
	"records", "spans_read", "spans_new", "rejected", "ingested_at", "seconds"}

// StoreWhole stores files, none of which MayRepeat, in one transaction:
// their spans (every one new) by one statement, their ledger rows and
// rejections, then beforeCommit (if set) and the commit; if any of it
// fails, nothing of any file is stored. Each file's Info.Seconds is its
// own (reading and decoding it) when called; StoreWhole adds its share of
// the group's write, as the ledger then records it.
func (s *Store) StoreWhole(ctx context.Context, files []WholeFile, beforeCommit func() error) error {
	if len(files) == 0 {
		return nil
	}
	first, err := s.prepareLoad(ctx)
	if err != nil {
		return err
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := s.storeWhole(ctx, files, first, beforeCommit); err != nil {
		s.nextFileID = 0 // asked again: the rollback may not have been the last word
		s.rollback(ctx)
		return err
	}
	s.nextFileID = first + int64(len(files))
	return nil
}

func (s *Store) storeWhole(ctx context.Context, files []WholeFile, first int64, beforeCommit func() error) error {
	start := time.Now()
	var batches []*SpanBatch
	var spans int64
	for i := range files {
		for _, b := range files[i].Batches {
			b.fileID = first + int64(i)
			batches = append(batches, b)
		}
		spans += files[i].Spans()
	}
	if len(batches) > 0 {
		n, err := s.loadSpans(ctx, batches)
		if err != nil {
			return err
		}
		if n != spans {
			return fmt.Errorf("load staged spans: %d stored of %d", n, spans)
		}
	}
	share := time.Since(start).Seconds() / float64(len(files))
	app, err := s.NewAppender("", "ingest_files", LedgerColumns)
	if err != nil {
		return fmt.Errorf("write ledger: %w", err)
	}
	now := time.Now().UTC()
	for i := range files {
		f := &files[i]
		f.Info.Seconds += share
		err := app.AppendRow(first+int64(i), f.Info.Path, f.Info.SHA256, f.Info.SizeBytes, f.Info.Format,
			f.Info.Compression, f.Info.Records, f.Info.SpansRead, f.Spans(), f.Info.Rejected, now, f.Info.Seconds)
		if err != nil {
			app.Close()
			return fmt.Errorf("write ledger: %w", err)
		}
	}
	if err := app.Close(); err != nil {
		return fmt.Errorf("write ledger: %w", err)
	}
	for i := range files {
		if err := s.insertRejections(ctx, first+int64(i), files[i].Info.Path, files[i].Rejections); err != nil {
			return err
		}
	}
	if beforeCommit != nil {
		if err := beforeCommit(); err != nil {
			return err
		}
	}
	return s.commit(ctx)
}
