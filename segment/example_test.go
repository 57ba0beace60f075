package segment_test

import (
	"context"
	"fmt"
	"time"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/segment"
)

// How report --by model,route --where trigger=timeout --since ... --ci
// maps onto the package.
func Example() {
	ctx := context.Background()
	st, err := store.Open(ctx, "retryscope.duckdb", store.Options{})
	if err != nil {
		return
	}
	defer st.Close()
	opt := segment.DimOptions{Bucket: time.Hour, TokenEdges: segment.DefaultTokenEdges}
	by, err := segment.ParseDims("model,route", opt)
	if err != nil {
		return
	}
	where, err := segment.ParseFilter("trigger=timeout", opt)
	if err != nil {
		return
	}
	res, err := segment.Compute(ctx, st, segment.Spec{
		By:           by,
		Where:        []segment.Filter{where},
		Since:        time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC),
		CI:           true,
		Seed:         1,
		BaselineKind: "no_retry",
	})
	if err != nil {
		return
	}
	for _, s := range res.Segments {
		fmt.Println(s.Label(), s.LogicalRequests, s.Amplification)
	}
}
