package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
)

// TestScratchNotCheckpointedOnClose: the scratch database of report
// --dataset (openScratch) is removed once the report is made, so closing
// it leaves what was written in its write-ahead log instead of
// checkpointing it into the file (at 10M spans 0.7 GB and seconds after
// the report). Any other database is checkpointed on closing: its log is
// gone.
func TestScratchNotCheckpointedOnClose(t *testing.T) {
	ctx := context.Background()
	for _, scratch := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "union.duckdb")
		open := store.Open
		if scratch {
			open = openScratch
		}
		st, err := open(ctx, path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.ExecText(ctx, "INSERT INTO run_window VALUES (1, 2)"); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path + ".wal")
		logged := err == nil && fi.Size() > 0
		if logged != scratch {
			t.Errorf("scratch %v: write-ahead log left after closing: %v (%v)", scratch, logged, err)
		}
	}
}
