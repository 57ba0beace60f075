// Package pipeline keeps the derived state up to date: it brings the
// requests, attempts and baselines in line with the spans (rebuilding and
// recomputing only what is stale), and keeps the bookkeeping the nightly
// run needs to be idempotent and incremental: the window its report covers
// and the Parquet days left to write. It logs only to the writers it is
// given.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/retryscope/retryscope/baseline"
	"github.com/retryscope/retryscope/internal/crashpoint"
	"github.com/retryscope/retryscope/internal/progress"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/rebuild"
)

// Change says which derived rows an Update may have changed: none, all, or
// those of requests starting in the closed ranges of spans. requests is
// the range of starts of the requests the rebuild itself added, replaced or
// removed (zero when it rebuilt all or changed none).
type Change struct {
	all      bool
	spans    [][2]int64
	requests model.Window
}

// days lists the UTC days (YYYY-MM-DD) a partial change may have touched.
func (c Change) days() []string {
	var days []string
	for _, s := range c.spans {
		for d := time.Unix(0, s[0]).UTC().Truncate(24 * time.Hour); !d.After(time.Unix(0, s[1]).UTC()); d = d.Add(24 * time.Hour) {
			if day := d.Format(time.DateOnly); !slices.Contains(days, day) {
				days = append(days, day)
			}
		}
	}
	return days
}

// Ensure brings the derived tables (requests, attempts, baselines)
// up to date with the spans, rebuilding only what is stale, and says on
// log what it did.
func Ensure(ctx context.Context, st *store.Store, opt rebuild.Options, log io.Writer) error {
	_, err := Update(ctx, st, opt, log, nil)
	return err
}

// Update is Ensure, also saying what changed. All of it is one
// transaction, with the Parquet days it leaves to write again and
// whatever inTx (if set) records of the change: a kill or a full disk
// leaves the derived tables as they were, or wholly updated and with the
// change remembered, never half of either.
func Update(ctx context.Context, st *store.Store, opt rebuild.Options, log io.Writer, inTx func(Change) error) (Change, error) {
	var change Change
	err := st.Tx(ctx, func() error {
		var err error
		if change, err = deriveSteps(ctx, st, opt, log); err != nil {
			return err
		}
		if err := markParquetPending(ctx, st, change); err != nil {
			return err
		}
		if inTx != nil {
			if err := inTx(change); err != nil {
				return err
			}
		}
		return crashpoint.Hit("derive.recorded")
	})
	if err == nil {
		err = crashpoint.Hit("derive.committed")
	}
	return change, err
}

// markParquetPending adds the days a change touched (every day:
// store.AllDays) to the Parquet days to write again, which a run's export
// clears only once it has written them all.
func markParquetPending(ctx context.Context, st *store.Store, change Change) error {
	days := change.days()
	if change.all {
		days = []string{store.AllDays}
	}
	for _, d := range days {
		if err := st.MarkParquetPending(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// deriveSteps does Update's work.
func deriveSteps(ctx context.Context, st *store.Store, opt rebuild.Options, log io.Writer) (Change, error) {
	var change Change
	freshBefore, err := st.BaselinesFresh(ctx)
	if err != nil {
		return change, err
	}
	t0 := time.Now()
	rep := progress.NewReporter(log)
	opt.Progress = func(done, total int64) {
		rep.Update(progress.Bar("rebuild", done, total, fmt.Sprintf("%d of %d spans grouped", done, total)))
	}
	rep.Update("rebuild: reading what every span says")
	stats, rebuilt, err := rebuild.EnsureStats(ctx, st, opt)
	rep.Done()
	if err != nil {
		return change, fmt.Errorf("rebuild requests: %w", err)
	}
	if rebuilt && stats.Partial && (stats.Since != 0 || stats.Until != 0) {
		change.requests = model.Window{Since: stats.Since, Until: stats.Until + 1}
	}
	if rebuilt {
		// The rebuild's spans are garbage now. Go would keep their pages
		// (at 10M spans 0.6 GB), and the report's rows would later reuse
		// them, resident while DuckDB's baselines and requests query
		// run: they go back to the system instead.
		debug.FreeOSMemory()
		how := "rebuilt logical requests from all spans"
		if stats.Partial {
			how = fmt.Sprintf("updated the logical requests of %d new or touched traces", stats.Traces)
		}
		fmt.Fprintf(log, "%s in %s\n", how, time.Since(t0).Round(time.Millisecond))
		if stats.Skewed > 0 {
			fmt.Fprintf(log, "clock skew: %d attempts have a callee span starting outside them, by up to %s; their queue and serving times are left null\n",
				stats.Skewed, time.Duration(stats.MaxSkewMs*1e6).Round(time.Millisecond))
		}
		if stats.FirstTokenOutside > 0 {
			fmt.Fprintf(log, "set aside %d first-token events outside their attempt's span (a bad timestamp or another clock); those attempts' TTFT is left null\n", stats.FirstTokenOutside)
		}
		if stats.Cycles > 0 {
			fmt.Fprintf(log, "cut %d loops of parent links, each at the span that starts first (see the parent_cycles table)\n", stats.Cycles)
		}
	}
	fresh, err := st.BaselinesFresh(ctx)
	if err != nil {
		return change, err
	}
	pending, err := st.BaselinePending(ctx)
	if err != nil || fresh && len(pending) == 0 {
		return change, err
	}
	change.all = true
	var ranges [][2]int64
	if freshBefore && (stats.Partial || !rebuilt) {
		// The baselines matched the previous rebuild, so only the requests
		// near what this update, or retention, changed need theirs
		// recomputed.
		change.all = false
		if stats.Since != 0 || stats.Until != 0 {
			ranges = append(ranges, [2]int64{stats.Since, stats.Until})
		}
		ranges = append(ranges, pending...)
	}
	t0 = time.Now()
	rep = progress.NewReporter(log)
	defer rep.Done()
	stepDone := func(step string, i, n int) {
		rep.Update(progress.Bar("baselines", int64(i-1), int64(n), step))
	}
	if change.all {
		if err := baseline.Compute(ctx, st, baseline.Options{Progress: stepDone}); err != nil {
			return change, fmt.Errorf("baselines: %w", err)
		}
		if err := crashpoint.Hit("baselines.computed"); err != nil {
			return change, err
		}
	}
	for _, r := range ranges {
		bopt := baseline.Options{Since: r[0], Until: r[1], Progress: stepDone}
		reach, err := bopt.Reach()
		if err != nil {
			return change, err
		}
		if err := baseline.Compute(ctx, st, bopt); err != nil {
			return change, fmt.Errorf("baselines: %w", err)
		}
		if err := crashpoint.Hit("baselines.computed"); err != nil {
			return change, err
		}
		change.spans = append(change.spans, [2]int64{r[0] - int64(reach), r[1] + int64(reach)})
	}
	if len(pending) > 0 {
		if err := st.ClearBaselinePending(ctx); err != nil {
			return change, err
		}
	}
	if err := st.MarkBaselinesFresh(ctx); err != nil {
		return change, err
	}
	rep.Done()
	what := "computed baselines"
	if !change.all {
		what = "recomputed the baselines near the changed requests"
	}
	fmt.Fprintf(log, "%s in %s\n", what, time.Since(t0).Round(time.Millisecond))
	return change, nil
}

// OpenDerived opens the existing database at path with open and brings
// its derived tables up to date, for the commands that read them (report,
// export, whatif). A file the user may not write is opened read-only:
// reported as it is when up to date, refused with what to do when not.
func OpenDerived(ctx context.Context, path string, open func(ctx context.Context, log io.Writer, readOnly bool) (*store.Store, error),
	opt rebuild.Options, log io.Writer) (*store.Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("database %s: %w (ingest traces first: retryscope ingest --db %s PATH...)", path, err, path)
	}
	st, err := open(ctx, log, false)
	if errors.Is(err, fs.ErrPermission) {
		st, err = open(ctx, log, true)
	}
	if err != nil {
		return nil, err
	}
	if err := Ensure(ctx, st, opt, log); err != nil {
		st.Close()
		if st.ReadOnly && store.IsReadOnlyError(err) {
			return nil, fmt.Errorf("database %s is read-only to you, and the spans ingested last need its requests and baselines rebuilt: "+
				"run the same command once as a user who may write the file (or on a writable copy of it)", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}
