package pipeline

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/retryscope/retryscope/export"
	"github.com/retryscope/retryscope/internal/crashpoint"
	"github.com/retryscope/retryscope/internal/progress"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
)

// RunWindow is the window the nightly report covers: the requests this
// run's new data added or changed, so a night's report costs what the
// night does, however long the history; every request when this run
// rebuilt everything; and, when the run changed nothing, the window of the
// last run that did, so its report comes out the same. The store remembers
// it (store.RecordRunWindow).
func RunWindow(ctx context.Context, st *store.Store, change Change) (model.Window, error) {
	var w model.Window
	switch {
	case change.all:
	case !change.requests.All():
		w = change.requests
	default:
		w, err := st.LastRunWindow(ctx)
		if err != nil {
			return w, fmt.Errorf("read the last run's window: %w", err)
		}
		return w, nil
	}
	if err := st.RecordRunWindow(ctx, w); err != nil {
		return w, fmt.Errorf("remember the run's window: %w", err)
	}
	return w, nil
}

// ExportPending writes the Parquet days the store lists as pending (every
// day for store.AllDays, or when dir holds no export yet), then clears
// them. The days
// are recorded before the first file is written and cleared only after the
// last, so an export stopped by a kill or a full disk is done again, whole,
// by the next run. prices price the spend columns, as the report's.
func ExportPending(ctx context.Context, st *store.Store, dir string, prices model.Prices, logf func(string, ...any), log io.Writer) error {
	if !hasParquet(dir) {
		if err := st.MarkParquetPending(ctx, store.AllDays); err != nil {
			return err
		}
	}
	days, err := st.ParquetPending(ctx)
	if err != nil {
		return err
	}
	if len(days) == 0 {
		logf("parquet: unchanged")
		return nil
	}
	if slices.Contains(days, store.AllDays) {
		days = nil
	}
	if err := crashpoint.Hit("export.pending"); err != nil {
		return err
	}
	t0 := time.Now()
	rep := progress.NewReporter(log)
	res, err := export.Export(ctx, st, dir, export.Options{Days: days, Progress: ExportProgress(rep), Prices: prices})
	rep.Done()
	if err != nil {
		return err
	}
	if err := crashpoint.Hit("export.done"); err != nil {
		return err
	}
	if err := st.ClearParquetPending(ctx); err != nil {
		return err
	}
	logf("parquet: %d files, %d rows, %d old days removed under %s in %s", res.Files, res.Rows, res.Removed, dir,
		time.Since(t0).Round(time.Millisecond))
	return nil
}

// hasParquet reports whether an export was written under dir before.
func hasParquet(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "requests", "date=*", "data.parquet"))
	return len(m) > 0
}

// ExportProgress tells rep of an export's day files: a bar on a
// terminal, a plain line now and then elsewhere.
func ExportProgress(rep *progress.Reporter) func(table string, done, total int) {
	return func(table string, done, total int) {
		rep.Update(progress.Bar("export", int64(done), int64(total), fmt.Sprintf("%d of %d day files (%s)", done, total, table)))
	}
}
