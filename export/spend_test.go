package export_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/baseline"
	"github.com/retryscope/retryscope/export"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/internal/testkit/workload"
	"github.com/retryscope/retryscope/report"
	"github.com/retryscope/retryscope/segment"
)

// llmWorkload is a generated workload of LLM calls (streams, retries,
// fallback models) rebuilt and exported with prices, one model of it
// left unpriced; it returns the database and the Parquet directory.
func llmWorkload(t *testing.T) (*store.Store, string, segment.Spec) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Seed = 600, 21
	cfg.Shapes = []sim.Shape{sim.ShapeWrapped, sim.ShapeAppLoop, sim.ShapeExplicit}
	cfg.Faults = sim.DefaultFaults().Scale(2)
	st, _ := workload.Rebuilt(t, cfg)
	if err := baseline.Compute(context.Background(), st, baseline.Options{}); err != nil {
		t.Fatal(err)
	}
	prices := report.DefaultPrices()
	// A model no price covers: its requests' spend is unknown.
	for name := range prices {
		if strings.HasPrefix(name, "claude") {
			delete(prices, name)
		}
	}
	dir := t.TempDir()
	if _, err := export.Export(context.Background(), st, dir, export.Options{Prices: prices}); err != nil {
		t.Fatal(err)
	}
	return st, dir, segment.Spec{Prices: prices}
}

// TestExportSpendIsTheReports: the requests' spend_usd and
// duplicated_spend_usd in Parquet add up to the report's spend_usd and
// duplicated_spend_usd, the requests whose spend is NULL are the report's
// unpriced_requests, and each request's attempts add up to its spend.
// generation_ms is the time after the first token.
func TestExportSpendIsTheReports(t *testing.T) {
	st, dir, spec := llmWorkload(t)
	ctx := context.Background()
	requests := filepath.Join(dir, "requests", "*", "*.parquet")
	attempts := filepath.Join(dir, "attempts", "*", "*.parquet")
	var spend, dupSpend float64
	var unpriced, generated int64
	err := st.QueryRowText(ctx, `SELECT sum(spend_usd), sum(duplicated_spend_usd), count(*) FILTER (WHERE spend_usd IS NULL),
		count(generation_ms) FROM read_parquet($1, hive_partitioning = true)`, requests).Scan(&spend, &dupSpend, &unpriced, &generated)
	if err != nil {
		t.Fatal(err)
	}
	res, err := segment.Compute(ctx, st, spec)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Workload
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	if !near(spend, m.SpendUSD) || !near(dupSpend, m.DuplicatedSpendUSD) || unpriced != int64(m.UnpricedRequests) {
		t.Errorf("Parquet: spend %.9f, duplicated %.9f, %d unpriced; report: %.9f, %.9f, %d",
			spend, dupSpend, unpriced, m.SpendUSD, m.DuplicatedSpendUSD, m.UnpricedRequests)
	}
	if spend == 0 || dupSpend == 0 || unpriced == 0 {
		t.Errorf("spend %.6f, duplicated %.6f, %d unpriced: the workload should have all three", spend, dupSpend, unpriced)
	}
	if generated != int64(m.GenerationMs.All.N) || generated == 0 {
		t.Errorf("%d requests with generation_ms; the report's generation_ms has n = %d", generated, m.GenerationMs.All.N)
	}
	// Per request, its attempts' spend adds up to its own (NULL with it).
	if n := testkit.Count(t, st, `SELECT count(*) FROM read_parquet($1, hive_partitioning = true) r
		JOIN (SELECT request_id, sum(spend_usd) AS s, count(*) FILTER (WHERE spend_usd IS NULL) AS unknown
		      FROM read_parquet($2, hive_partitioning = true) GROUP BY request_id) a USING (request_id)
		WHERE (r.spend_usd IS NULL) != (a.unknown > 0) OR abs(r.spend_usd - a.s) > 1e-12`, requests, attempts); n != 0 {
		t.Errorf("%d requests whose attempts' spend does not add up to theirs", n)
	}
	// An attempt's generation is what follows its first token.
	if n := testkit.Count(t, st, `SELECT count(*) FROM read_parquet($1, hive_partitioning = true)
		WHERE (generation_ms IS NULL) != (ttft_ms IS NULL) OR abs(generation_ms - (elapsed_ms - ttft_ms)) > 1e-9 OR generation_ms < 0`,
		attempts); n != 0 {
		t.Errorf("%d attempts whose generation_ms is not elapsed_ms - ttft_ms", n)
	}
	if n := testkit.Count(t, st, `SELECT count(generation_ms) FROM read_parquet($1, hive_partitioning = true)`, attempts); n == 0 {
		t.Error("no attempt has a generation_ms")
	}
}

// TestExportTypes: in every table the export writes, what counts is an
// integer, a DOUBLE is a measure (milliseconds, seconds, dollars, a
// ratio), never a count, and docs/parquet.md names every column.
func TestExportTypes(t *testing.T) {
	st, dir, _ := llmWorkload(t)
	doc, err := os.ReadFile("../docs/parquet.md")
	if err != nil {
		t.Fatal(err)
	}
	measure := regexp.MustCompile(`(_ms|_ms_sum|_s|_usd|^amplification|^ratio|^layers|^match_distance)$`)
	count := regexp.MustCompile(`(_tokens|_retries|_ignored|^attempts|^logical_requests|^retried|^retried_ok|^failed|^ordinal|^cohort_size|^tries|^layer_counts|_status)$`)
	for _, table := range export.Tables {
		if _, err := os.Stat(filepath.Join(dir, table)); (table == "join_alternatives" || table == "baseline_arms") && err != nil {
			// Written only where attempts were joined across traces with
			// doubt, or where a policy experiment ran, which this workload
			// has neither of; the sharding test reads them (cmd/retryscope
			// TestShardedRunEqualsOneRun).
			continue
		}
		types := map[string]string{}
		rows := testkit.Dump(t, st, `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet($1, hive_partitioning = true))`,
			filepath.Join(dir, table, "*", "*.parquet"))
		for _, line := range strings.Split(strings.TrimSpace(rows), "\n") {
			name, typ, _ := strings.Cut(line, "\t")
			types[name] = typ
		}
		if len(types) < 5 {
			t.Fatalf("%s: columns %v", table, types)
		}
		for name, typ := range types {
			if !strings.Contains(string(doc), "`"+name+"`") {
				t.Errorf("%s.%s is not in docs/parquet.md", table, name)
			}
			base := strings.TrimSuffix(typ, "[]")
			switch {
			case count.MatchString(name) && base != "INTEGER" && base != "BIGINT":
				t.Errorf("%s.%s counts, but is %s", table, name, typ)
			case base == "DOUBLE" && !measure.MatchString(name):
				t.Errorf("%s.%s is %s but not a measure in ms, s, USD or a ratio", table, name, typ)
			}
		}
	}
}
