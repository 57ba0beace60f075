package rebuild

import (
	"context"
	"fmt"
	"time"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
)

// Prune deletes the traces whose spans all started before cutoffNS (Unix
// ns) and returns how many spans went. When requests have been rebuilt,
// it also removes the requests built from those traces and leaves what
// the next update needs to stay incremental (SPEC's retention must not
// cost a full rebuild): the surviving traces of those requests to build
// again, and the span of their starts for the baselines. All of it is one
// transaction.
func Prune(ctx context.Context, st *store.Store, cutoffNS int64) (int64, error) {
	if _, err := st.Conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return 0, err
	}
	n, err := prune(ctx, st, cutoffNS)
	if err != nil {
		st.Conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return 0, err
	}
	_, err = st.Conn.ExecContext(ctx, "COMMIT")
	return n, err
}

func prune(ctx context.Context, st *store.Store, cutoffNS int64) (int64, error) {
	if err := st.ExecScript(ctx, "prune", cutoffNS); err != nil {
		return 0, err
	}
	defer st.Conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS prune_traces")
	var traces int64
	if err := st.Conn.QueryRowContext(ctx, `SELECT count(*) FROM prune_traces`).Scan(&traces); err != nil || traces == 0 {
		return 0, err
	}
	if err := st.ExecScript(ctx, "prune_derived"); err != nil {
		return 0, err
	}
	res, err := st.Conn.ExecContext(ctx, `DELETE FROM spans WHERE trace_id IN (SELECT trace_id FROM prune_traces)`)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// pending reports whether an earlier prune left traces to build again.
func pending(ctx context.Context, st *store.Store) (bool, error) {
	var n int
	err := st.Conn.QueryRowContext(ctx, `SELECT count(*) FROM rebuild_pending`).Scan(&n)
	return n > 0, err
}

// KeepCutoff is the start (Unix ns) before which --keep KEEP drops data,
// counted back from --now NOW (RFC 3339; "" for clock); 0 without KEEP.
func KeepCutoff(keep, now string, clock time.Time) (int64, error) {
	if keep == "" {
		return 0, nil
	}
	age, ok := model.ParseSpan(keep)
	if !ok {
		return 0, fmt.Errorf("--keep %q: want a span like 30d, 36h or 90m", keep)
	}
	var err error
	if now != "" {
		if clock, err = time.Parse(time.RFC3339, now); err != nil {
			return 0, fmt.Errorf("--now: %v", err)
		}
	}
	return clock.Add(-age).UnixNano(), nil
}
