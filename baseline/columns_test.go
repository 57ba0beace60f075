package baseline

import (
	"testing"

	"github.com/retryscope/retryscope/internal/storetest"
)

// The matched baseline's column list names exactly the columns of
// baselines.
func TestAppendedColumnsMatchTheTable(t *testing.T) {
	storetest.CheckColumns(t, storetest.Open(t), "", "baselines", matchedColumns)
}
