package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/retryscope/retryscope/internal/store"
)

// datasetTables are the derived tables a report reads, loaded from the
// Parquet datasets of shard runs (docs/sharding.md).
var datasetTables = []string{"requests", "attempts", "baselines", "join_alternatives", "baseline_arms"}

// OpenDataset opens a scratch database in a temporary directory holding
// the union of the requests, attempts and baselines of the Parquet
// datasets dirs (each a --parquet directory of run or export), for a
// report over all of them; close removes it. The spans stay in the
// shards' databases, so what needs them (attr: and resource: segments,
// the ingest summary) is not there.
func OpenDataset(ctx context.Context, dirs []string, opt store.Options) (st *store.Store, closeAll func(), err error) {
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "requests")); err != nil {
			return nil, nil, fmt.Errorf("dataset %s: no requests/ under it (%w): name a --parquet directory of retryscope run or export", d, err)
		}
	}
	tmp, err := os.MkdirTemp("", "retryscope-dataset-")
	if err != nil {
		return nil, nil, err
	}
	st, err = openScratch(ctx, filepath.Join(tmp, "union.duckdb"), opt)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	closeAll = func() {
		st.Close()
		os.RemoveAll(tmp)
	}
	var requests parquetSource
	for _, table := range datasetTables {
		src, err := loadParquet(ctx, st, table, dirs)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		if table == "requests" {
			requests = src
		}
	}
	if err := judgeOutcomes(ctx, st, requests); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("dataset: outcomes: %w", err)
	}
	// The shards computed their baselines: the report reads them as they are.
	if err := st.MarkBaselinesFresh(ctx); err != nil {
		closeAll()
		return nil, nil, err
	}
	return st, closeAll, nil
}

// openScratch opens the database at path as a scratch one, removed once
// it is closed: closing it does not checkpoint what was written
// (pipeline_dataset_scratch).
func openScratch(ctx context.Context, path string, opt store.Options) (*store.Store, error) {
	st, err := store.Open(ctx, path, opt)
	if err != nil {
		return nil, err
	}
	if _, err := st.Exec(ctx, "pipeline_dataset_scratch"); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// parquetSource is a table's files as DuckDB reads them (read_parquet of
// their globs; none without files) and the columns they hold.
type parquetSource struct {
	globs   []string
	columns map[string]bool
}

// loadParquet inserts the rows of table's files under every dir, the
// table's own columns read by name (the Parquet files carry more), and
// returns where it read them.
func loadParquet(ctx context.Context, st *store.Store, table string, dirs []string) (parquetSource, error) {
	var none parquetSource
	cols, err := st.Strings(ctx, "pipeline_table_columns", table)
	if err != nil {
		return none, err
	}
	var globs []string
	for _, d := range dirs {
		g := filepath.Join(d, table, "*", "*.parquet")
		if strings.ContainsAny(d, "*?[") {
			return none, fmt.Errorf("dataset %s: a name with *, ? or [ would be read as a pattern; rename it", d)
		}
		m, err := filepath.Glob(g)
		if err != nil {
			return none, fmt.Errorf("dataset %s: %w", d, err)
		}
		if len(m) > 0 {
			globs = append(globs, g)
		}
	}
	if len(globs) == 0 {
		return none, nil
	}
	in, err := st.Strings(ctx, "pipeline_dataset_columns", globs)
	if err != nil {
		return none, fmt.Errorf("dataset %s: %w", table, err)
	}
	have := map[string]bool{}
	for _, c := range in {
		have[c] = true
	}
	// The files hold the columns notebooks read; those only the database
	// keeps take their defaults.
	cols = slices.DeleteFunc(cols, func(c string) bool { return !have[c] })
	if _, err := st.Exec(ctx, "pipeline_dataset_"+table, globs, cols); err != nil {
		return none, fmt.Errorf("dataset %s: %w", table, err)
	}
	return parquetSource{globs: globs, columns: have}, nil
}

// judgeOutcomes judges the failed requests' outcome_detail again as one run
// over the union does (rebuild_outcomes: the attempt cap seen and the
// triggers retried are the union's, not a shard's). The anchors that stated
// their own reason (outcome_stated in the requests' files; a dataset
// written before it has none) stand in as spans while it runs.
func judgeOutcomes(ctx context.Context, st *store.Store, requests parquetSource) error {
	if requests.columns["outcome_stated"] {
		if _, err := st.Exec(ctx, "pipeline_dataset_stated", requests.globs); err != nil {
			return err
		}
	}
	if err := st.ExecScript(ctx, "rebuild_outcomes"); err != nil {
		return err
	}
	_, err := st.Exec(ctx, "pipeline_dataset_spans_clear")
	return err
}
