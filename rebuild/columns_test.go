package rebuild

import (
	"testing"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// The writer's column lists name exactly the columns of the tables it
// appends to.
func TestAppendedColumnsMatchTheTables(t *testing.T) {
	st := testkit.Open(t)
	testkit.CheckColumns(t, st, "", "requests", names(requestColumns))
	testkit.CheckColumns(t, st, "", "attempts", names(attemptColumns))
	testkit.CheckColumns(t, st, "", "join_alternatives", names(alternativeColumns))
}

func names[T any](cols []store.Column[T]) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name()
	}
	return out
}
