package pipeline

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
// the next update needs to stay incremental (retention must not cost a
// full rebuild: docs/limits.md, "Other limits"): the surviving traces of
// those requests to build again, and the span of their starts for the
// baselines. The resources no span is left of go too. All of it is one
// transaction.
func Prune(ctx context.Context, st *store.Store, cutoffNS int64) (int64, error) {
	var n int64
	err := st.Tx(ctx, func() error {
		var err error
		n, err = prune(ctx, st, cutoffNS)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

func prune(ctx context.Context, st *store.Store, cutoffNS int64) (int64, error) {
	if err := st.ExecScript(ctx, "prune", cutoffNS); err != nil {
		return 0, err
	}
	defer st.Exec(context.WithoutCancel(ctx), "prune_drop")
	var traces int64
	if err := st.QueryRow(ctx, "prune_count").Scan(&traces); err != nil || traces == 0 {
		return 0, err
	}
	if err := st.ExecScript(ctx, "prune_derived"); err != nil {
		return 0, err
	}
	n, err := st.Exec(ctx, "prune_spans")
	if err != nil {
		return 0, err
	}
	// A resource is stored once for all its spans: it goes with the last.
	if _, err := st.Exec(ctx, "prune_resources"); err != nil {
		return 0, err
	}
	return n, nil
}

// KeepRange is what --keep accepts: less than an hour is a typo for
// days (30s for 30d) that would delete nearly everything, and more than a
// century keeps everything anyway.
var KeepRange = [2]time.Duration{time.Hour, 36500 * 24 * time.Hour}

// KeepCutoff is the start (Unix ns) before which --keep KEEP drops data,
// counted back from --now NOW (RFC 3339; "" for clock); 0 without KEEP.
// A cutoff before 1970 is 1: nothing stored is older.
func KeepCutoff(keep, now string, clock time.Time) (int64, error) {
	if keep == "" {
		if now != "" {
			return 0, fmt.Errorf("--now needs --keep (it is the time --keep counts back from)")
		}
		return 0, nil
	}
	age, err := model.ParseDuration(keep)
	if err != nil || age < KeepRange[0] || age > KeepRange[1] {
		return 0, fmt.Errorf("--keep %q: want a span from %s to %s, like 30d, 36h or 90m", keep,
			model.FormatDuration(KeepRange[0]), model.FormatDuration(KeepRange[1]))
	}
	if now != "" {
		if clock, err = time.Parse(time.RFC3339, now); err != nil {
			return 0, fmt.Errorf("--now: %v", err)
		}
	}
	// UnixNano is defined from 1678 to 2262 only.
	if !model.InNanoRange(clock) {
		return 0, fmt.Errorf("--now %s: want a time from 1970 to 2262", clock.Format(time.RFC3339))
	}
	return max(clock.Add(-age).UnixNano(), 1), nil
}
