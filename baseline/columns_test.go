package baseline

import (
	"testing"

	"github.com/retryscope/retryscope/internal/testkit"
)

// The matched baseline's column list names exactly the columns of
// baselines.
func TestAppendedColumnsMatchTheTable(t *testing.T) {
	testkit.CheckColumns(t, testkit.Open(t), "", "baselines", matchedColumns)
}
