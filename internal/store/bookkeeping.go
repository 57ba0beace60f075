package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/retryscope/retryscope/model"
)

// The bookkeeping tables (queries/migrations/003_derived.sql) say what the
// derived state reflects and what the next run has left to do:
// baseline_state, baseline_pending, parquet_pending, run_window and
// rebuild_pending. The store is the one Go code that names them; the
// pipeline, the baselines and the rebuild ask it in domain terms.

// BaselinesComputed reports whether baselines have been computed, which
// baseline_state records with its one row.
func (s *Store) BaselinesComputed(ctx context.Context) (bool, error) {
	var computed bool
	err := s.QueryRow(ctx, "store_baselines_computed").Scan(&computed)
	return computed, err
}

// BaselinesFresh reports whether the baselines reflect the latest rebuild
// of requests.
func (s *Store) BaselinesFresh(ctx context.Context) (bool, error) {
	var fresh bool
	err := s.QueryRow(ctx, "baseline_state_check").Scan(&fresh)
	return fresh, err
}

// MarkBaselinesFresh records that the baselines now reflect the latest
// rebuild of requests.
func (s *Store) MarkBaselinesFresh(ctx context.Context) error {
	_, err := s.Exec(ctx, "baseline_state_mark")
	return err
}

// BaselinePending lists the ranges of request starts (Unix ns, inclusive)
// whose baselines retention left to recompute.
func (s *Store) BaselinePending(ctx context.Context) ([][2]int64, error) {
	rows, err := s.Query(ctx, "store_baseline_pending")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]int64
	for rows.Next() {
		var r [2]int64
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ClearBaselinePending forgets the ranges BaselinePending lists, once
// their baselines are recomputed.
func (s *Store) ClearBaselinePending(ctx context.Context) error {
	_, err := s.Exec(ctx, "store_baseline_pending_clear")
	return err
}

// AllDays stands for every day among the Parquet days to write again.
const AllDays = "*"

// MarkParquetPending adds day (YYYY-MM-DD, or AllDays) to the Parquet
// days the next export writes again.
func (s *Store) MarkParquetPending(ctx context.Context, day string) error {
	_, err := s.Exec(ctx, "store_parquet_pending_add", day)
	return err
}

// ParquetPending lists the Parquet days the next export writes again, in
// order (AllDays first when listed).
func (s *Store) ParquetPending(ctx context.Context) ([]string, error) {
	days, err := s.Strings(ctx, "store_parquet_pending")
	if days == nil {
		days = []string{} // none, not nil (every day)
	}
	return days, err
}

// ClearParquetPending forgets the days ParquetPending lists, once an
// export has written them all.
func (s *Store) ClearParquetPending(ctx context.Context) error {
	_, err := s.Exec(ctx, "store_parquet_pending_clear")
	return err
}

// LastRunWindow is the window the last nightly run's report covered; the
// zero window (every request) when no run recorded one.
func (s *Store) LastRunWindow(ctx context.Context) (model.Window, error) {
	var w model.Window
	err := s.QueryRow(ctx, "store_run_window_last").Scan(&w.Since, &w.Until)
	if errors.Is(err, sql.ErrNoRows) {
		return w, nil
	}
	return w, err
}

// RecordRunWindow remembers w as the window the nightly run's report
// covers, for LastRunWindow.
func (s *Store) RecordRunWindow(ctx context.Context, w model.Window) error {
	return s.ExecScript(ctx, "run_window", w.Since, w.Until)
}

// RebuildPending reports whether an earlier prune left traces to build
// again.
func (s *Store) RebuildPending(ctx context.Context) (bool, error) {
	var pending bool
	err := s.QueryRow(ctx, "store_rebuild_pending").Scan(&pending)
	return pending, err
}
