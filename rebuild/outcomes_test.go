package rebuild_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// outcomeDetails reads outcome_detail by request.
func outcomeDetails(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	rows, err := st.QueryText(context.Background(), `SELECT request_id, coalesce(outcome_detail, '') FROM requests`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, d string
		if err := rows.Scan(&id, &d); err != nil {
			t.Fatal(err)
		}
		out[id] = d
	}
	return out
}

// TestOutcomePathologies rebuilds a deadline that exhausts requests and
// streams their clients stop reading: every request must still equal the
// truth, and outcome_detail must say deadline (cancelled) for exactly the
// requests the truth says the deadline exhausted (the client cancelled).
func TestOutcomePathologies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		detail string
		config func(*sim.Config)
	}{
		{"deadline", "deadline", func(c *sim.Config) {
			c.Shapes, c.Deadline = []sim.Shape{sim.ShapeExplicit}, 1500*time.Millisecond
		}},
		{"abandoned_streams", "cancelled", func(c *sim.Config) {
			c.Shapes, c.StreamShare, c.AbandonStreams = []sim.Shape{sim.ShapeExplicit, sim.ShapeAppLoop}, 1, 0.5
		}},
	} {
		for seed := int64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprint(tc.name, "/seed", seed), func(t *testing.T) {
				t.Parallel()
				cfg := shapeConfig(nil, 500, seed)
				tc.config(&cfg)
				st, truth := generated(t, cfg)
				got := loadRequests(t, st)
				compareTruth(t, truth, got)
				details := outcomeDetails(t, st)
				want := 0
				for _, r := range truth.Requests {
					isTruth := r.Exhausted == tc.detail
					if isTruth {
						want++
					}
					if (details[r.Key] == tc.detail) != isTruth {
						t.Errorf("%s: outcome_detail %q, truth exhausted %q", r.Key, details[r.Key], r.Exhausted)
					}
				}
				t.Logf("%d of %d requests %s", want, len(truth.Requests), tc.detail)
				if want < 10 {
					t.Fatalf("weak workload: %d requests %s", want, tc.detail)
				}
			})
		}
	}
}

// TestOutcomeRules: each outcome_detail rule on a request written by hand:
// every attempt turned away (429, 503), the cap the other requests of the
// loop show, an answer cut at the token cap, a deadline on the logical
// span, and a retry loop whose logical span had not ended when the dump
// was cut; and a reason the loop states itself (no_progress).
func TestOutcomeRules(t *testing.T) {
	f := newFixture()
	get := func(trace, id, parent string, startMs, endMs float64, status int) fspan {
		s := fspan{trace: trace, id: id, parent: parent, service: "shop", scope: "io.opentelemetry.okhttp-3.0", name: "GET",
			kind: client, startMs: startMs, endMs: endMs, attrs: map[string]any{"http.request.method": "GET",
				"url.full": "http://inv:8080/v1/stock", "server.address": "inv", "http.response.status_code": status}}
		if status >= 400 {
			s.errMsg = "HTTP " + strconv.Itoa(status)
			s.attrs["error.type"] = strconv.Itoa(status)
		}
		return s
	}
	loop := func(trace, id, name string, startMs, endMs float64, attrs map[string]any) fspan {
		return fspan{trace: trace, id: id, service: "shop", scope: "shop", name: name, kind: internal, startMs: startMs, endMs: endMs,
			errMsg: "giving up", attrs: attrs}
	}
	const (
		capacity = "a1111111111111111111111111111111"
		capped   = "a2222222222222222222222222222222"
		short    = "a3333333333333333333333333333333"
		tokens   = "a4444444444444444444444444444444"
		deadline = "a5555555555555555555555555555555"
		open     = "a6666666666666666666666666666666"
		stuck    = "a7777777777777777777777777777777"
	)
	f.add(loop(capacity, "b100000000000001", "reserve", 0, 400, nil))
	f.add(get(capacity, "b100000000000002", "b100000000000001", 10, 20, 429))
	f.add(get(capacity, "b100000000000003", "b100000000000001", 200, 210, 503))
	f.add(loop(capped, "b200000000000001", "sync", 0, 900, nil))
	for i, at := range []float64{10, 300, 600} {
		f.add(get(capped, "b20000000000001"+strconv.Itoa(i), "b200000000000001", at, at+50, 500))
	}
	f.add(loop(short, "b300000000000001", "sync", 0, 400, nil))
	f.add(get(short, "b300000000000011", "b300000000000001", 10, 60, 500))
	f.add(get(short, "b300000000000012", "b300000000000001", 300, 350, 200))
	chat := get(tokens, "b400000000000001", "", 0, 800, 200)
	chat.attrs["gen_ai.response.finish_reasons"] = []string{"length"}
	f.add(chat)
	f.add(loop(deadline, "b500000000000001", "quote", 0, 2001, map[string]any{"retryscope.deadline_ms": 2000}))
	f.add(get(deadline, "b500000000000002", "b500000000000001", 10, 900, 500))
	f.add(get(deadline, "b500000000000003", "b500000000000001", 1200, 2000, 502))
	f.add(get(open, "b600000000000002", "b600000000000001", 5000, 5050, 500))
	f.add(get(open, "b600000000000003", "b600000000000001", 5300, 5350, 500))

	f.add(loop(stuck, "b700000000000001", "extract", 0, 400, map[string]any{"retryscope.exhausted.reason": "no_progress"}))
	f.add(get(stuck, "b700000000000002", "b700000000000001", 10, 60, 500))
	f.add(get(stuck, "b700000000000003", "b700000000000001", 300, 350, 500))

	st := fixtureStore(t, f)
	got := outcomeDetails(t, st)
	want := map[string]string{
		capacity + ":b100000000000001": "no_capacity",
		capped + ":b200000000000001":   "attempt_cap",
		short + ":b300000000000001":    "",
		tokens + ":b400000000000001":   "token_cap",
		deadline + ":b500000000000001": "deadline",
		open + ":b600000000000002":     "unfinished",
		stuck + ":b700000000000001":    "no_progress",
	}
	for id, w := range want {
		if g, ok := got[id]; !ok || g != w {
			t.Errorf("%s: outcome_detail %q (rebuilt %v), want %q", id, g, ok, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d requests, want %d: %v", len(got), len(want), got)
	}
}

// TestOutcomeRulesIgnoreMalformedStatements: a deadline that is not a
// number, or is infinite or NaN, and a stated reason outside the known ones
// are read as not stated, and the request falls through to the next rule
// (here attempt_cap: every loop made its operation's most attempts).
func TestOutcomeRulesIgnoreMalformedStatements(t *testing.T) {
	f := newFixture()
	statements := []map[string]any{
		{"retryscope.deadline_ms": "soon"},
		{"retryscope.deadline_ms": "1e999"},
		{"retryscope.deadline_ms": "NaN"},
		{"retryscope.deadline_ms": ""},
		{"retryscope.exhausted.reason": "gave_up"},
		{"retryscope.exhausted.reason": "ATTEMPT_CAP"},
	}
	want := map[string]string{}
	for i, attrs := range statements {
		trace := fmt.Sprintf("e%031d", i+1)
		id := fmt.Sprintf("f%015d", 10*i+1)
		f.add(fspan{trace: trace, id: id, service: "shop", scope: "shop", name: "sync", kind: internal,
			startMs: 0, endMs: 5000, errMsg: "giving up", attrs: attrs})
		for k, at := range []float64{10, 300} {
			f.add(fspan{trace: trace, id: fmt.Sprintf("f%015d", 10*i+2+k), parent: id, service: "shop",
				scope: "io.opentelemetry.okhttp-3.0", name: "GET", kind: client, startMs: at, endMs: at + 50, errMsg: "HTTP 500",
				attrs: map[string]any{"http.request.method": "GET", "url.full": "http://inv:8080/v1/stock",
					"server.address": "inv", "http.response.status_code": 500, "error.type": "500"}})
		}
		want[trace+":"+id] = "attempt_cap"
	}
	st := fixtureStore(t, f)
	if got := outcomeDetails(t, st); !maps.Equal(got, want) {
		t.Errorf("outcome_detail %v, want %v", got, want)
	}
}

// TestMigrationAddsNewColumns: a database at schema version 3, rebuilt
// before outcome_detail and the attempt phases existed (and before
// resources were stored once), gains them when it is opened (migrations
// 004 and 005), and the next Ensure rebuilds in full and fills them.
func TestMigrationAddsNewColumns(t *testing.T) {
	cfg := shapeConfig([]sim.Shape{sim.ShapeExplicit}, 300, 3)
	res, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := testkit.WriteFile(t, filepath.Join(t.TempDir(), "traces.jsonl"), sim.WriteJSONLines, res.Traces)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "v3.duckdb")
	st := testkit.OpenFile(t, db)
	if _, err := ingest.Run(ctx, st, []string{path}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := rebuild.Rebuild(ctx, st); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ExecText(ctx, `ALTER TABLE requests DROP COLUMN outcome_detail;
		ALTER TABLE attempts DROP COLUMN queue_ms; ALTER TABLE attempts DROP COLUMN connect_ms;
		ALTER TABLE attempts DROP COLUMN serve_ms; ALTER TABLE attempts DROP COLUMN generate_ms;
		ALTER TABLE spans ADD COLUMN resource_attributes MAP(VARCHAR, VARCHAR);
		UPDATE spans SET resource_attributes = r.attributes FROM resources r WHERE r.resource_id = spans.resource_id;
		ALTER TABLE spans DROP COLUMN resource_id; DROP TABLE resources;
		UPDATE schema_version SET version = 3`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = testkit.OpenFile(t, db)
	if v := testkit.Count(t, st, `SELECT version FROM schema_version`); v < 4 {
		t.Fatalf("schema version %d after open, want at least 4", v)
	}
	if did, err := rebuild.Ensure(ctx, st, rebuild.Options{}); err != nil || !did {
		t.Fatalf("ensure: did %v, err %v", did, err)
	}
	if n := testkit.Count(t, st, `SELECT count(*) FROM requests WHERE outcome_detail IS NOT NULL`); n == 0 {
		t.Error("no outcome_detail after the migration")
	}
	if n := testkit.Count(t, st, `SELECT count(*) FROM attempts WHERE serve_ms IS NOT NULL`); n == 0 {
		t.Error("no attempt phases after the migration")
	}
}

// TestOutcomesFollowLaterFiles: an update judges again the requests it did
// not rebuild whose detail the new file changes: a later request with more
// attempts raises its segment's cap seen (the earlier request is no longer
// attempt_cap, the later one is), and later spans move the dump's end
// past a loop that looked unfinished. Each update must give what one full
// rebuild over the same files gives.
func TestOutcomesFollowLaterFiles(t *testing.T) {
	get := func(trace, id, parent string, startMs float64) fspan {
		return fspan{trace: trace, id: id, parent: parent, service: "shop", scope: "io.opentelemetry.okhttp-3.0", name: "GET",
			kind: client, startMs: startMs, endMs: startMs + 50, errMsg: "HTTP 500", attrs: map[string]any{"http.request.method": "GET",
				"url.full": "http://inv:8080/v1/stock", "server.address": "inv", "http.response.status_code": 500, "error.type": "500"}}
	}
	loop := func(trace, id string, startMs float64, tries int) []fspan {
		out := []fspan{{trace: trace, id: id, service: "shop", scope: "shop", name: "sync", kind: internal,
			startMs: startMs, endMs: startMs + 300*float64(tries), errMsg: "giving up"}}
		for i := range tries {
			out = append(out, get(trace, id[:15]+strconv.Itoa(i+2), id, startMs+10+300*float64(i)))
		}
		return out
	}
	first, second, third := newFixture(), newFixture(), newFixture()
	for _, s := range loop("c1111111111111111111111111111111", "d100000000000001", 0, 2) {
		first.add(s)
	}
	// Its logical span had not been exported when the first file was cut.
	first.add(get("c2222222222222222222222222222222", "d200000000000002", "d200000000000001", 900))
	first.add(get("c2222222222222222222222222222222", "d200000000000003", "d200000000000001", 1200))
	for _, s := range loop("c3333333333333333333333333333333", "d300000000000001", 60_000, 3) {
		second.add(s)
	}
	for _, s := range loop("c4444444444444444444444444444444", "d400000000000001", 120_000, 2) {
		third.add(s)
	}
	paths := writeParts(t, []ptrace.Traces{first.td, second.td, third.td})
	ctx := context.Background()
	inc := testkit.Open(t)
	for i, p := range paths {
		if _, err := ingest.Run(ctx, inc, []string{p}, ingest.Options{}); err != nil {
			t.Fatal(err)
		}
		if did, err := rebuild.Ensure(ctx, inc, rebuild.Options{}); err != nil || !did {
			t.Fatalf("update after file %d: did %v, err %v", i, did, err)
		}
		full := testkit.Open(t)
		if _, err := ingest.Run(ctx, full, paths[:i+1], ingest.Options{}); err != nil {
			t.Fatal(err)
		}
		if _, err := rebuild.Run(ctx, full, rebuild.Options{}); err != nil {
			t.Fatal(err)
		}
		if got, want := outcomeDetails(t, inc), outcomeDetails(t, full); !maps.Equal(got, want) {
			t.Errorf("after file %d: outcome_detail %v, a full rebuild gives %v", i, got, want)
		}
		if i == 0 {
			if d := outcomeDetails(t, inc); d["c1111111111111111111111111111111:d100000000000001"] != "attempt_cap" ||
				d["c2222222222222222222222222222222:d200000000000002"] != "unfinished" {
				t.Fatalf("after the first file: %v, want attempt_cap and unfinished: the test shows nothing", d)
			}
		}
	}
}
