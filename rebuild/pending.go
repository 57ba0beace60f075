package rebuild

import (
	"context"

	"github.com/retryscope/retryscope/internal/store"
)

// pending reports whether an earlier prune (pipeline.Prune) left traces to
// build again.
func pending(ctx context.Context, st *store.Store) (bool, error) {
	return st.RebuildPending(ctx)
}
