package rebuild

import (
	"cmp"
	"context"
	"slices"

	"github.com/retryscope/retryscope/internal/store"
)

// cutCycles breaks every loop of parent links in a trace (A's parent B,
// B's parent C, C's parent A), which would leave its spans under no root
// and so in no request. In each loop the span that starts first (then the
// smallest span id) loses its parent and becomes a root. It returns the
// spans it cut, with the parent each named.
func cutCycles(trace []*span) []cutLink {
	byID := make(map[string]*span, len(trace))
	for _, s := range trace {
		byID[s.spanID] = s
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[*span]int, len(trace))
	var cuts []cutLink
	for _, s := range trace {
		var path []*span
		for cur := s; cur != nil && state[cur] == unseen; cur = byID[cur.parentID] {
			state[cur] = onPath
			path = append(path, cur)
			next := byID[cur.parentID]
			if cur.parentID == "" || next == nil || state[next] != onPath {
				continue
			}
			loop := path[slices.Index(path, next):]
			first := slices.MinFunc(loop, func(a, b *span) int {
				return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.spanID, b.spanID))
			})
			cuts = append(cuts, cutLink{first.traceID, first.spanID, first.parentID})
			first.parentID, first.parentExported = "", false
			break
		}
		for _, p := range path {
			state[p] = done
		}
	}
	return cuts
}

// cutLink is a parent link cutCycles removed.
type cutLink struct{ traceID, spanID, parentID string }

// recordCuts adds the cut links to parent_cycles.
func recordCuts(ctx context.Context, st *store.Store, cuts []cutLink) error {
	for _, c := range cuts {
		if _, err := st.Exec(ctx, "rebuild_cycle", c.traceID, c.spanID, c.parentID); err != nil {
			return err
		}
	}
	return nil
}
