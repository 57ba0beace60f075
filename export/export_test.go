package export_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/export"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

const day1 = int64(1764374400) * 1e9 // 2025-11-29T00:00:00Z

func seed(t *testing.T) *store.Store {
	t.Helper()
	st := testkit.Open(t)
	ctx := context.Background()
	if _, err := st.Exec(ctx, "rebuild_clear"); err != nil {
		t.Fatal(err)
	}
	// Three requests: two on the first day (one retried twice), one just
	// before midnight of the second day.
	reqs := []struct {
		id       string
		start    int64
		attempts int
	}{
		{"t1:a", day1 + 3_600e9, 1},
		{"t2:b", day1 + 7_200e9, 3},
		{"t3:c", day1 + 86_400e9 + 86_399e9, 2},
	}
	for _, r := range reqs {
		_, err := st.ExecText(ctx, `INSERT INTO requests (request_id, trace_id, span_id, linkage, inferred, service, operation,
			stream, start_ns, end_ns, latency_ms, attempts, layers, layer_counts, outcome, triggers, t_failed_ms, gap_ms, gap_split,
			t_final_ms, residual_ms, input_tokens, output_tokens, duplicated_output_tokens, hidden_work_ms)
			VALUES ($1, split_part($1, ':', 1), split_part($1, ':', 2), 'wrapped', false, 'svc', 'chat', false, $2, $2 + 1500000000, 1500.0,
			$3, [$3::DOUBLE], [$3], 'ok', [], 0, 0, true, 1500, 0, 10, 20, 0, 0)`, r.id, r.start, r.attempts)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= r.attempts; i++ {
			_, err := st.ExecText(ctx, `INSERT INTO attempts (request_id, trace_id, span_id, ordinal, start_ns, end_ns, elapsed_ms,
				outcome, is_final, overlap_ms, hidden_work_ms) VALUES ($1, 'x', $2, $3, $4, $4 + 1000, 0.001, 'ok', $5, 0, 0)`,
				r.id, r.id+string(rune('0'+i)), i, r.start+int64(i), i == r.attempts)
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return st
}

func TestExportPartitionsByDayAndReadsBack(t *testing.T) {
	st := seed(t)
	dir := t.TempDir()
	ctx := context.Background()
	res, err := export.Export(ctx, st, dir, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"requests/date=2025-11-29/data.parquet", "requests/date=2025-11-30/data.parquet",
		"attempts/date=2025-11-29/data.parquet", "daily/date=2025-11-30/data.parquet",
	} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("missing %s", p)
		}
	}
	if res.Rows != 3+6+2 {
		t.Errorf("rows written %d, want 11 (3 requests, 6 attempts, 2 daily)", res.Rows)
	}
	glob := filepath.Join(dir, "requests", "*", "*.parquet")
	got := testkit.Dump(t, st, `SELECT request_id, strftime(date, '%Y-%m-%d'), typeof(start_time), typeof(latency_ms), typeof(request_id),
		typeof(layers), strftime(start_time, '%Y-%m-%dT%H:%M:%S') FROM read_parquet($1, hive_partitioning = true) ORDER BY request_id`, glob)
	want := "t1:a\t2025-11-29\tTIMESTAMP WITH TIME ZONE\tDOUBLE\tVARCHAR\tDOUBLE[]\t2025-11-29T01:00:00\n" +
		"t2:b\t2025-11-29\tTIMESTAMP WITH TIME ZONE\tDOUBLE\tVARCHAR\tDOUBLE[]\t2025-11-29T02:00:00\n" +
		"t3:c\t2025-11-30\tTIMESTAMP WITH TIME ZONE\tDOUBLE\tVARCHAR\tDOUBLE[]\t2025-11-30T23:59:59\n"
	if got != want {
		t.Errorf("read back:\n%s\nwant:\n%s", got, want)
	}
	n := testkit.Count(t, st, `SELECT count(*) FROM read_parquet($1, hive_partitioning = true) WHERE strftime(date, '%Y-%m-%d') = '2025-11-29'`,
		filepath.Join(dir, "attempts", "*", "*.parquet"))
	if n != 4 {
		t.Errorf("attempts of day 1: %d, want 4", n)
	}
}

// Exporting again writes byte-identical files; a day whose rows are gone
// is removed; no temporary file is left for a reader's glob.
func TestExportIsRepeatableAndRemovesEmptyDays(t *testing.T) {
	st := seed(t)
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := export.Export(ctx, st, dir, export.Options{}); err != nil {
		t.Fatal(err)
	}
	first := snapshot(t, dir)
	if _, err := export.Export(ctx, st, dir, export.Options{}); err != nil {
		t.Fatal(err)
	}
	if second := snapshot(t, dir); second != first {
		t.Error("second export changed the files")
	}
	if strings.Contains(first, ".tmp") {
		t.Errorf("temporary files left: %s", first)
	}
	st.ExecText(ctx, `DELETE FROM attempts WHERE request_id = 't3:c'`)
	st.ExecText(ctx, `DELETE FROM requests WHERE request_id = 't3:c'`)
	res, err := export.Export(ctx, st, dir, export.Options{Days: []string{"2025-11-30"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 3 {
		t.Errorf("removed %d day partitions, want 3 (requests, attempts, daily)", res.Removed)
	}
	if _, err := os.Stat(filepath.Join(dir, "requests", "date=2025-11-30")); !os.IsNotExist(err) {
		t.Error("emptied day still on disk")
	}
}

func snapshot(t *testing.T, dir string) string {
	var b bytes.Buffer
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			data, _ := os.ReadFile(p)
			b.WriteString(strings.TrimPrefix(p, dir))
			b.WriteString(" ")
			b.Write(data)
			b.WriteString("\n")
		}
		return nil
	})
	return b.String()
}
