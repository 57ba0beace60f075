package store_test

import (
	"context"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// The staged spans', the rejections' and the ledger's column lists name exactly the
// columns of their tables.
func TestAppendedColumnsMatchTheTables(t *testing.T) {
	st := testkit.Open(t)
	if _, err := st.Exec(context.Background(), "stage"); err != nil {
		t.Fatal(err)
	}
	testkit.CheckColumns(t, st, "temp", "stage_spans", store.StageColumns)
	testkit.CheckColumns(t, st, "", "ingest_errors", store.RejectionColumns)
	testkit.CheckColumns(t, st, "", "ingest_files", store.LedgerColumns)
}
