package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/retryscope/retryscope/baseline"
	"github.com/retryscope/retryscope/internal/rebuild"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/queries"
)

// ensureDerived brings the derived tables (requests, attempts, baselines)
// up to date with the spans, rebuilding only what is stale, and says on
// log what it did.
func ensureDerived(ctx context.Context, st *store.Store, opt rebuild.Options, log io.Writer) error {
	t0 := time.Now()
	rebuilt, err := rebuild.Ensure(ctx, st, opt)
	if err != nil {
		return fmt.Errorf("rebuild requests: %w", err)
	}
	if rebuilt {
		fmt.Fprintf(log, "rebuilt logical requests from spans in %s\n", time.Since(t0).Round(time.Millisecond))
	}
	fresh := false
	if hasTable(ctx, st, "baseline_state") && hasTable(ctx, st, "baselines") {
		if err := st.Conn.QueryRowContext(ctx, queries.Get("baseline_state_check")).Scan(&fresh); err != nil {
			return err
		}
	}
	if fresh {
		return nil
	}
	t0 = time.Now()
	if err := baseline.Compute(ctx, st, baseline.Options{}); err != nil {
		return fmt.Errorf("baselines: %w", err)
	}
	if _, err := st.Conn.ExecContext(ctx, queries.Get("baseline_state_mark")); err != nil {
		return err
	}
	fmt.Fprintf(log, "computed baselines in %s\n", time.Since(t0).Round(time.Millisecond))
	return nil
}

func hasTable(ctx context.Context, st *store.Store, name string) bool {
	var n int
	st.Conn.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE table_name = $1 AND NOT temporary`, name).Scan(&n)
	return n > 0
}
