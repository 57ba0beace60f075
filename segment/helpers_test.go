package segment

import (
	"context"
	"database/sql/driver"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/queries"
)

// fakeRequest is a logical request with a known truth. The helpers turn it
// into a requests row and its first one or two attempts rows.
type fakeRequest struct {
	id                       string
	service, operation       string
	model, route, finalRoute string
	stream                   bool
	startNS                  int64
	latency                  float64
	attempts                 int
	ok                       bool
	trigger                  string // first failed attempt's trigger; "" for none
	ttft                     float64
	inTokens, outTokens, dup int64
	first, second            float64 // attempt elapsed; NaN for none
}

// newStore opens a database with the rebuilt tables created empty.
func newStore(t testing.TB) *store.Store {
	t.Helper()
	st := testkit.Open(t)
	if _, err := st.ExecText(context.Background(), queries.Get("rebuild_clear")); err != nil {
		t.Fatal(err)
	}
	return st
}

func nullIfNaN(v float64) driver.Value {
	if math.IsNaN(v) {
		return nil
	}
	return v
}

func nullIfEmpty(s string) driver.Value {
	if s == "" {
		return nil
	}
	return s
}

// insertRequests writes reqs to requests and attempts through a staging
// table, so the list columns are built in SQL.
func insertRequests(t testing.TB, st *store.Store, reqs []fakeRequest) {
	t.Helper()
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		if _, err := st.ExecText(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE OR REPLACE TEMP TABLE fake_requests (id VARCHAR, service VARCHAR, operation VARCHAR,
		model VARCHAR, route VARCHAR, final_route VARCHAR, stream BOOLEAN, start_ns BIGINT,
		latency DOUBLE, attempts INTEGER, ok BOOLEAN, trigger VARCHAR, ttft DOUBLE,
		in_tokens BIGINT, out_tokens BIGINT, dup BIGINT, first DOUBLE, second DOUBLE)`)
	app, err := st.NewAppender("temp", "fake_requests", []string{"id", "service", "operation", "model", "route",
		"final_route", "stream", "start_ns", "latency", "attempts", "ok", "trigger", "ttft",
		"in_tokens", "out_tokens", "dup", "first", "second"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		err := app.AppendRow(r.id, nullIfEmpty(r.service), nullIfEmpty(r.operation), nullIfEmpty(r.model),
			nullIfEmpty(r.route), nullIfEmpty(r.finalRoute), r.stream, r.startNS, r.latency,
			int32(r.attempts), r.ok, nullIfEmpty(r.trigger), nullIfNaN(r.ttft),
			r.inTokens, r.outTokens, r.dup, nullIfNaN(r.first), nullIfNaN(r.second))
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Close(); err != nil {
		t.Fatal(err)
	}
	insertSelect(t, st, "requests", map[string]string{
		"request_id": "id", "trace_id": "'trace-' || id", "span_id": "'span-' || id",
		"linkage": "'single'", "service": "service", "operation": "operation",
		"route": "route", "final_route": "final_route", "model": "model", "final_model": "model",
		"stream": "stream", "start_ns": "start_ns", "end_ns": "start_ns + CAST(latency * 1e6 AS BIGINT)",
		"latency_ms": "latency", "attempts": "attempts", "outcome": "CASE WHEN ok THEN 'ok' ELSE 'error' END",
		"final_trigger": "CASE WHEN NOT ok THEN coalesce(trigger, 'unknown') END",
		"triggers":      "CASE WHEN trigger IS NULL THEN []::VARCHAR[] ELSE [trigger] END",
		"t_final_ms":    "latency", "ttft_ms": "ttft", "input_tokens": "in_tokens",
		"output_tokens": "out_tokens", "duplicated_output_tokens": "dup",
	}, "fake_requests")
	for ord, col := range []string{"first", "second"} {
		insertSelect(t, st, "attempts", map[string]string{
			"request_id": "id", "trace_id": "'trace-' || id", "span_id": fmt.Sprintf("'span-%d-' || id", ord+1),
			"ordinal": fmt.Sprint(ord + 1), "service": "service", "name": "operation", "route": "route",
			"model": "model", "operation": "operation", "start_ns": "start_ns", "end_ns": "start_ns",
			"elapsed_ms": col, "outcome": "'ok'",
		}, "fake_requests WHERE "+col+" IS NOT NULL")
	}
	exec(`DROP TABLE fake_requests`)
}

// insertSelect inserts into table from the test's own query, one
// expression per column it names. The other columns get NULL, or a zero
// when they are NOT NULL, so the tests keep working while other packages
// add columns to the rebuilt tables.
func insertSelect(t testing.TB, st *store.Store, table string, exprs map[string]string, from string) {
	t.Helper()
	ctx := context.Background()
	rows, err := st.QueryText(ctx, `SELECT column_name, data_type, is_nullable FROM duckdb_columns()
		WHERE table_name = $1 AND schema_name = 'main' ORDER BY column_index`, table)
	if err != nil {
		t.Fatal(err)
	}
	var cols, values []string
	for rows.Next() {
		var name, typ string
		var nullable bool
		if err := rows.Scan(&name, &typ, &nullable); err != nil {
			t.Fatal(err)
		}
		e, ok := exprs[name]
		switch {
		case ok:
		case nullable:
			e = "NULL"
		case typ == "BOOLEAN":
			e = "false"
		case typ == "VARCHAR":
			e = "''"
		default:
			e = "0"
		}
		cols = append(cols, name)
		values = append(values, e+" AS "+name)
	}
	rows.Close()
	q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(values, ", ") + " FROM " + from
	if _, err := st.ExecText(ctx, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// insertAnchorSpan stores the anchor span of request id with one span
// attribute and one resource attribute (skipped when the key is empty).
func insertAnchorSpan(t testing.TB, st *store.Store, id, attrKey, attrValue, resKey, resValue string) {
	t.Helper()
	// The resource, once per key and value.
	_, err := st.ExecText(context.Background(), `INSERT INTO resources
		SELECT hash($1, $2) >> 1, map_from_entries(CASE WHEN $1 = '' THEN [] ELSE [{'k': $1, 'v': $2}] END)
		WHERE NOT EXISTS (SELECT 1 FROM resources WHERE resource_id = hash($1, $2) >> 1)`, resKey, resValue)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.ExecText(context.Background(), `INSERT INTO spans
		(trace_id, span_id, name, start_ns, end_ns, duration_ns, attributes, resource_id, file_id)
		VALUES ($1, $2, 'anchor', 0, 1, 1,
		  map_from_entries(CASE WHEN $3 = '' THEN [] ELSE [{'k': $3, 'v': $4}] END), hash($5, $6) >> 1, 1)`,
		"trace-"+id, "span-"+id, attrKey, attrValue, resKey, resValue)
	if err != nil {
		t.Fatal(err)
	}
}

func compute(t testing.TB, st *store.Store, spec Spec) Result {
	t.Helper()
	res, err := Compute(context.Background(), st, spec)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func segmentBy(t testing.TB, res Result, values ...string) Segment {
	t.Helper()
	for _, s := range res.Segments {
		if fmt.Sprint(s.Values) == fmt.Sprint(values) {
			return s
		}
	}
	t.Fatalf("no segment %q in %d segments", values, len(res.Segments))
	return Segment{}
}

func f64(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}
