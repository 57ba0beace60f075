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
	"github.com/retryscope/retryscope/rebuild"
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

// NightlyOptions are the steps of the nightly job after its ingest.
type NightlyOptions struct {
	// Cutoff drops the traces whose spans all started before it (Unix
	// ns, see KeepCutoff); 0 keeps everything. Keep is the age it was
	// given as, for the log.
	Cutoff int64
	Keep   string
	// Rebuild are the options of the requests' rebuild.
	Rebuild rebuild.Options
	// RunWindow has the report cover the run's window (RunWindow),
	// remembered with the update; false when the user chose the window.
	RunWindow bool
	// ParquetDir, when set, gets the Parquet days left to write, their
	// spend priced by Prices.
	ParquetDir string
	Prices     model.Prices
	// Logf gets the job's lines, Log its progress and the update's lines.
	Logf func(string, ...any)
	Log  io.Writer
}

// Nightly is the nightly job after its ingest: retention, the update of
// the derived tables (with, if asked, the run's window remembered in its
// transaction, so a run stopped after it writes the same report when run
// again) and the Parquet export. It returns the window the report covers
// when opt.RunWindow is set.
func Nightly(ctx context.Context, st *store.Store, opt NightlyOptions) (model.Window, error) {
	var w model.Window
	if opt.Cutoff != 0 {
		pruned, err := Prune(ctx, st, opt.Cutoff)
		if err != nil {
			return w, fmt.Errorf("prune: %w", err)
		}
		opt.Logf("dropped %d spans older than %s", pruned, opt.Keep)
	}
	var window func(Change) error
	if opt.RunWindow {
		window = func(change Change) (err error) {
			w, err = RunWindow(ctx, st, change)
			return err
		}
	}
	if _, err := Update(ctx, st, opt.Rebuild, opt.Log, window); err != nil {
		return w, err
	}
	if opt.ParquetDir != "" {
		if err := ExportPending(ctx, st, opt.ParquetDir, opt.Prices, opt.Logf, opt.Log); err != nil {
			return w, err
		}
	}
	return w, nil
}
