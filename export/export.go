// Package export writes the derived tables as Parquet for notebooks,
// Hive-partitioned by day (DIR/<table>/date=YYYY-MM-DD/data.parquet), so one
// glob reads the whole history. Each day's file is written beside its final
// name and renamed into place: a reader sees the old file or the new one,
// never half of one.
package export

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/retryscope/retryscope/internal/atomicfile"
	"github.com/retryscope/retryscope/internal/crashpoint"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/queries"
)

// Tables lists what is exported, in order. Each has a query file
// queries/export_<name>.sql that yields the documented columns plus a DATE
// column "date" (the request's UTC start day).
var Tables = []string{"requests", "attempts", "baselines", "daily", "join_alternatives", "baseline_arms"}

// Options choose what to write.
type Options struct {
	// Days limits the export to these days (YYYY-MM-DD); nil means every
	// day present. Days listed but holding no rows are removed.
	Days []string
	// Log gets a line per table.
	Log io.Writer
	// Progress, when set, is told after each day file: the table, and
	// how many files of all the export are written.
	Progress func(table string, done, total int)
	// Prices price the spend columns of requests and attempts as the
	// report prices its spend (report.DefaultPrices, or --prices over
	// them). With none, spend is NULL wherever there are tokens.
	Prices model.Prices
}

// Result counts what was written.
type Result struct {
	Files   int
	Rows    int64
	Removed int
}

var dayPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// Export writes the Parquet files under dir.
func Export(ctx context.Context, st *store.Store, dir string, opt Options) (Result, error) {
	var res Result
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	for _, q := range []string{"export_timezone", "export_scope"} {
		if _, err := st.Exec(ctx, q); err != nil {
			return res, err
		}
	}
	for _, d := range opt.Days {
		if !dayPattern.MatchString(d) {
			return res, fmt.Errorf("export: bad day %q, want YYYY-MM-DD", d)
		}
	}
	// A full export writes the days the requests start on (every table's
	// partitions are its requests' start days), found once for all tables.
	days, full := opt.Days, opt.Days == nil
	if full {
		var err error
		if days, err = requestDays(ctx, st); err != nil {
			return res, err
		}
	}
	if err := priceModels(ctx, st, days, opt.Prices); err != nil {
		return res, fmt.Errorf("export: prices: %w", err)
	}
	done, total := 0, len(Tables)*len(days)
	tell := func(name string) {
		done++
		if opt.Progress != nil {
			opt.Progress(name, min(done, total), total)
		}
	}
	for _, name := range Tables {
		r, err := exportTable(ctx, st, dir, name, days, full, tell)
		if err != nil {
			return res, fmt.Errorf("export %s: %w", name, err)
		}
		fmt.Fprintf(opt.Log, "export %s: %d rows in %d day files, %d days removed\n", name, r.Rows, r.Files, r.Removed)
		res.Files += r.Files
		res.Rows += r.Rows
		res.Removed += r.Removed
	}
	return res, nil
}

// exportTable writes table name's partitions of days; a full export also
// removes the partitions on disk of any other day.
func exportTable(ctx context.Context, st *store.Store, dir, name string, days []string, full bool, tell func(string)) (Result, error) {
	var res Result
	src := queries.Get("export_" + name)
	tableDir := filepath.Join(dir, name)
	if name == "requests" {
		// The requests' folder marks the dataset, and is there even with
		// no rows: a run of a shard that got no spans writes a dataset of
		// no requests, which report --dataset takes as one.
		if err := os.MkdirAll(tableDir, 0o755); err != nil {
			return res, err
		}
	} else if _, err := os.Stat(tableDir); err != nil {
		// Any other table with no rows on any day gets no folder.
		defer func() {
			if res.Files == 0 {
				os.Remove(tableDir)
			}
		}()
	}
	days = slices.Clone(days)
	if full {
		days = append(days, existingDays(tableDir)...)
	}
	sort.Strings(days)
	days = compact(days)
	// A kill between writing a day's file and renaming it leaves the file
	// beside its final name; a reader never sees it, and it goes now.
	stale, _ := filepath.Glob(filepath.Join(tableDir, "date=*", ".data.parquet.tmp"))
	for _, f := range stale {
		os.Remove(f)
	}
	for _, day := range days {
		tell(name)
		partDir := filepath.Join(tableDir, "date="+day)
		final := filepath.Join(partDir, "data.parquet")
		_, statErr := os.Stat(partDir)
		existed := statErr == nil
		if err := os.MkdirAll(partDir, 0o755); err != nil {
			return res, err
		}
		if err := scope(ctx, st, []string{day}); err != nil {
			return res, err
		}
		tmp := filepath.Join(partDir, ".data.parquet.tmp")
		// inline SQL: the COPY wraps the text of the table's export query
		// (a queries/ file), which it cannot take as a parameter; the day
		// and the path are parameters.
		copySQL := `COPY (SELECT * EXCLUDE (date) FROM (` + strings.TrimRight(strings.TrimSpace(src), ";") +
			`) WHERE date = $1::DATE) TO $2 (FORMAT parquet, COMPRESSION zstd)`
		n, err := st.ExecText(ctx, copySQL, day, tmp)
		if err != nil {
			os.Remove(tmp)
			return res, err
		}
		if n == 0 {
			// The day holds no rows of this table (any more): it has no
			// partition.
			if err := os.RemoveAll(partDir); err != nil {
				return res, err
			}
			if existed {
				res.Removed++
			}
			continue
		}
		if err := atomicfile.Publish(tmp, final, "export.tmp"); err != nil {
			return res, err
		}
		if err := crashpoint.Hit("export.written"); err != nil {
			return res, err
		}
		res.Files++
		res.Rows += n
	}
	return res, nil
}

// scope sets what the view export_scope (queries/export_scope.sql), which
// the export queries read, holds: the requests starting on the given days
// (all of them when days is nil), by a range of start_ns that lets DuckDB
// skip the other days' row groups.
func scope(ctx context.Context, st *store.Store, days []string) error {
	var since, until any // NULL: every request
	if len(days) > 0 {
		first, last := slices.Min(days), slices.Max(days)
		lo, err := time.Parse(time.DateOnly, first)
		if err != nil {
			return err
		}
		hi, err := time.Parse(time.DateOnly, last)
		if err != nil {
			return err
		}
		since, until = lo.UnixNano(), hi.AddDate(0, 0, 1).UnixNano()
	}
	_, err := st.Exec(ctx, "export_scope_bounds", since, until)
	return err
}

// priceModels fills the temporary table export_prices, which the export
// queries join to price tokens: a row for each model the requests of days
// were answered by (else asked for) that prices has, found by the same
// lookup the report uses (its own name, else the longest prefix before
// "-" or "@"), so the Parquet's spend is the report's.
func priceModels(ctx context.Context, st *store.Store, days []string, prices model.Prices) error {
	if _, err := st.Exec(ctx, "export_prices_create"); err != nil {
		return err
	}
	if err := scope(ctx, st, days); err != nil {
		return err
	}
	models, err := st.Strings(ctx, "export_models")
	if err != nil {
		return err
	}
	for _, m := range models {
		p, ok := prices.Lookup(m)
		if !ok {
			continue
		}
		if _, err := st.Exec(ctx, "export_price_row", m, p.InputPerMTok, p.OutputPerMTok); err != nil {
			return err
		}
	}
	return nil
}

// requestDays lists the UTC days the requests start on: the days any
// exported table can have rows for, since each is partitioned by its
// request's start day. A table without rows on one of them (baselines) is
// left without that day's partition.
func requestDays(ctx context.Context, st *store.Store) ([]string, error) {
	if err := scope(ctx, st, nil); err != nil {
		return nil, err
	}
	return st.Strings(ctx, "export_days")
}

// existingDays lists the partitions already on disk, so a full export also
// removes days that no longer hold data (after retention pruned them).
func existingDays(tableDir string) []string {
	entries, _ := os.ReadDir(tableDir)
	var days []string
	for _, e := range entries {
		if d, ok := strings.CutPrefix(e.Name(), "date="); ok && e.IsDir() && dayPattern.MatchString(d) {
			days = append(days, d)
		}
	}
	return days
}

func compact(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
