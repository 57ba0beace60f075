package rebuild_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/retryscope/retryscope/internal/gen"
	"github.com/retryscope/retryscope/internal/store"
)

// outcomeDetails reads outcome_detail by request.
func outcomeDetails(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	rows, err := st.Conn.QueryContext(context.Background(), `SELECT request_id, coalesce(outcome_detail, '') FROM requests`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, d string
		if err := rows.Scan(&id, &d); err != nil {
			t.Fatal(err)
		}
		out[id] = d
	}
	return out
}

// TestOutcomePathologies rebuilds a deadline that exhausts requests and
// streams their clients stop reading: every request must still equal the
// truth, and outcome_detail must say deadline (cancelled) for exactly the
// requests the truth says the deadline exhausted (the client cancelled).
func TestOutcomePathologies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		detail string
		config func(*gen.Config)
	}{
		{"deadline", "deadline", func(c *gen.Config) {
			c.Shapes, c.Deadline = []gen.Shape{gen.ShapeExplicit}, 1500*time.Millisecond
		}},
		{"abandoned_streams", "cancelled", func(c *gen.Config) {
			c.Shapes, c.StreamShare, c.AbandonStreams = []gen.Shape{gen.ShapeExplicit, gen.ShapeAppLoop}, 1, 0.5
		}},
	} {
		for seed := int64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprint(tc.name, "/seed", seed), func(t *testing.T) {
				t.Parallel()
				cfg := shapeConfig(nil, 500, seed)
				tc.config(&cfg)
				st, truth := generated(t, cfg)
				got := loadRequests(t, st)
				compareTruth(t, truth, got)
				details := outcomeDetails(t, st)
				want := 0
				for _, r := range truth.Requests {
					isTruth := r.Exhausted == tc.detail
					if isTruth {
						want++
					}
					if (details[r.Key] == tc.detail) != isTruth {
						t.Errorf("%s: outcome_detail %q, truth exhausted %q", r.Key, details[r.Key], r.Exhausted)
					}
				}
				t.Logf("%d of %d requests %s", want, len(truth.Requests), tc.detail)
				if want < 10 {
					t.Fatalf("weak workload: %d requests %s", want, tc.detail)
				}
			})
		}
	}
}
