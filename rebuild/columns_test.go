package rebuild

import (
	"testing"

	"github.com/retryscope/retryscope/internal/storetest"
)

// The writer's column lists name exactly the columns of the tables it
// appends to.
func TestAppendedColumnsMatchTheTables(t *testing.T) {
	st := storetest.Open(t)
	storetest.CheckColumns(t, st, "", "requests", requestColumns)
	storetest.CheckColumns(t, st, "", "attempts", attemptColumns)
	storetest.CheckColumns(t, st, "", "join_alternatives", alternativeColumns)
}
