package rebuild

import (
	"testing"

	"github.com/retryscope/retryscope/internal/testkit"
)

// The writer's column lists name exactly the columns of the tables it
// appends to.
func TestAppendedColumnsMatchTheTables(t *testing.T) {
	st := testkit.Open(t)
	testkit.CheckColumns(t, st, "", "requests", requestColumns)
	testkit.CheckColumns(t, st, "", "attempts", attemptColumns)
	testkit.CheckColumns(t, st, "", "join_alternatives", alternativeColumns)
}
