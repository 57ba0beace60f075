package export_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/retryscope/retryscope/export"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
	"github.com/retryscope/retryscope/segment"
)

// TestExportHygieneColumns: the requests' retry-hygiene columns in
// Parquet add up to the report's measures of the same names, which
// segment_rows.sql defines apart, and to the truth's Retry-Afters ignored.
func TestExportHygieneColumns(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed = 800, 12
	cfg.Policy.NaiveShare = 0.3
	cfg.Faults = sim.DefaultFaults().Scale(2)
	st, truth := workload.Rebuilt(t, cfg)
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := export.Export(ctx, st, dir, export.Options{}); err != nil {
		t.Fatal(err)
	}
	var ce, ignored int64
	var early float64
	err := st.QueryRowText(ctx, `SELECT sum(client_error_retries), sum(retry_after_ignored), sum(retry_after_early_ms)
		FROM read_parquet($1, hive_partitioning = true)`, filepath.Join(dir, "requests", "*", "*.parquet")).Scan(&ce, &ignored, &early)
	if err != nil {
		t.Fatal(err)
	}
	res, err := segment.Compute(ctx, st, segment.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Workload
	if ce != m.ClientErrorRetries || ignored != m.RetryAfterIgnored || math.Abs(early-m.RetryAfterEarlyMs) > 1e-6 {
		t.Errorf("Parquet %d, %d, %.6f ms; report %d, %d, %.6f ms", ce, ignored, early, m.ClientErrorRetries, m.RetryAfterIgnored, m.RetryAfterEarlyMs)
	}
	var want int64
	for _, r := range truth.Requests {
		want += int64(r.RetryAfterIgnored)
	}
	if ce == 0 || ignored != want {
		t.Errorf("%d retries after a client error, %d before Retry-After; truth %d before Retry-After", ce, ignored, want)
	}
}
