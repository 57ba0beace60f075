package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retryscope/retryscope/baseline"
	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/internal/texttab"
	"github.com/retryscope/retryscope/rebuild"
	"github.com/retryscope/retryscope/segment"
)

// sampleReport builds the report of the bundled sample: every baseline
// kind, segments by trigger and model, intervals, the rebuild rules.
func sampleReport(t *testing.T) *Report {
	t.Helper()
	st := sampleStore(t)
	ctx := context.Background()
	by, err := segment.ParseDims("trigger,model", segment.DimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(ctx, st, Options{Segments: segment.Spec{By: by, CI: true, MinCohort: 10, BaselineKind: "healthy"},
		Baseline: "all", Source: "sample.duckdb", Explain: true, Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Workload.LogicalRequests == 0 || len(rep.Segments) < 2 {
		t.Fatalf("the sample gives %d requests in %d segments; the test needs some of both", rep.Workload.LogicalRequests, len(rep.Segments))
	}
	return rep
}

// sampleStore is the bundled sample ingested and derived.
func sampleStore(t *testing.T) *store.Store {
	t.Helper()
	st := testkit.Open(t)
	ctx := context.Background()
	if _, err := ingest.Run(ctx, st, []string{"../testdata/sample/traces.jsonl"}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := rebuild.Rebuild(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := baseline.Compute(ctx, st, baseline.Options{}); err != nil {
		t.Fatal(err)
	}
	return st
}

func render(t *testing.T, rep *Report, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, rep, format); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestFiveFormatsAgree renders one report five ways and reads the figures
// back from each: Markdown, HTML and the text tables show the same cells;
// each figure shown is the CSV's full-precision value, rounded; and the
// CSV holds the same values as the JSON, key by key.
func TestFiveFormatsAgree(t *testing.T) {
	rep := sampleReport(t)
	md := markdownTables(render(t, rep, "markdown"))
	htm := htmlTables(render(t, rep, "html"))
	txt := render(t, rep, "table")

	// Markdown and HTML: the same tables, cell for cell.
	if len(md) < 10 || len(md) != len(htm) {
		t.Fatalf("%d Markdown tables, %d HTML tables", len(md), len(htm))
	}
	for i := range md {
		if fmt.Sprint(md[i]) != fmt.Sprint(htm[i]) {
			t.Errorf("table %d differs:\nMarkdown %q\nHTML     %q", i, md[i], htm[i])
		}
	}
	// Text: every row's cells, in order, on one line of the table.
	for _, tab := range md {
		for _, row := range tab.rows {
			if !textHasRow(txt, row) {
				t.Errorf("text has no line for %s row %q", tab.title, row)
			}
		}
	}

	// Shown figures against the CSV's values.
	records, err := csv.NewReader(strings.NewReader(render(t, rep, "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := map[string]int{}
	for i, h := range records[0] {
		head[h] = i
	}
	seg := rep.SegmentTable()
	checked := 0
	for _, g := range seg.Groups {
		tab := findTable(t, md, g.Title)
		for r, row := range tab.rows {
			for k, key := range g.Keys {
				shown := row[seg.Labels+k]
				if strings.HasSuffix(key, "_ci") {
					continue // ranges are compared with JSON below
				}
				raw := records[r+1][head[key]]
				if !sameFigure(shown, raw) {
					t.Errorf("%s row %d %s: shows %q, CSV holds %q", g.Title, r, key, shown, raw)
				}
				checked++
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d figures compared", checked)
	}
	t.Logf("%d tables agree cell for cell in Markdown, HTML and text; %d shown figures match the CSV", len(md), checked)

	// CSV against JSON: the whole row (workload) and each segment.
	var js map[string]any
	if err := json.Unmarshal([]byte(render(t, rep, "json")), &js); err != nil {
		t.Fatal(err)
	}
	segs := js["segments"].([]any)
	if len(records) != len(segs)+2 {
		t.Fatalf("CSV has %d rows, JSON %d segments", len(records)-1, len(segs))
	}
	jsonChecked := 0
	defer func() { t.Logf("%d CSV cells match the JSON", jsonChecked) }()
	for r, rec := range records[1:] {
		obj := js["workload"].(map[string]any)
		if r > 0 {
			obj = segs[r-1].(map[string]any)
		}
		for key, path := range csvJSON {
			want := lookup(obj, path)
			got := rec[head[key]]
			if !sameValue(got, want) {
				t.Errorf("row %d %s: CSV %q, JSON %s = %v", r, key, got, path, want)
			}
			jsonChecked++
		}
	}
	// The workload table against JSON.
	work := findTable(t, md, "Workload")
	for _, row := range work.rows {
		path := workloadKey(row[0])
		if path == "" {
			t.Errorf("workload row %q has no JSON key in the test", row[0])
			continue
		}
		if want := lookup(js["workload"].(map[string]any), path); !sameFigure(row[1], fmt.Sprint(want)) {
			t.Errorf("workload %s: shows %q, JSON %s = %v", row[0], row[1], path, want)
		}
	}
}

// csvJSON maps CSV columns to JSON paths in a segment or the workload.
var csvJSON = map[string]string{
	"logical_requests": "logical_requests", "attempts": "attempts", "amplification": "amplification",
	"retry_rate": "retry_rate", "retry_success_rate": "retry_success_rate", "final_failure_rate": "final_failure_rate",
	"duplicated_output_tokens": "duplicated_output_tokens", "hidden_work_ms": "hidden_work_ms",
	"duplicated_attempt_ms": "duplicated_attempt_ms", "failed_requests": "failed_requests",
	"latency_all_p50_ms": "latency_ms.all.p50", "latency_all_p95_ms": "latency_ms.all.p95",
	"latency_retried_p95_ms": "latency_ms.retried.p95", "latency_all_mean_ms": "latency_ms.all.mean",
	"latency_all_p95_ci_lo": "latency_ms.all.ci95.p95.lo", "latency_all_p95_ci_hi": "latency_ms.all.ci95.p95.hi",
	"ttft_all_p50_ms": "ttft_ms.all.p50", "generation_all_p50_ms": "generation_ms.all.p50",
	"stream_total_all_p50_ms": "stream_total_ms.all.p50", "second_attempt_p50_ms": "second_attempt_ms.p50",
	"first_attempt_retried_p50_ms": "first_attempt_ms.retried.p50", "added_mean_ms": "added_latency.ms.mean",
	"added_per_request_ms": "added_latency.per_request_ms", "tail_p99_ms": "tail_movement.p99.ms",
	"client_error_retries": "client_error_retries", "client_error_retry_ms": "client_error_retry_ms",
	"retry_after_ignored": "retry_after_ignored", "retry_after_early_ms": "retry_after_early_ms",
	"retry_gaps": "retry_gaps", "retry_gap_fixed_share": "retry_gap_fixed_share",
	"retry_peak_retries": "retry_peak.retries", "retry_peak_spread_ms": "retry_peak.spread_ms",
	"spend_usd": "spend_usd", "duplicated_spend_usd": "duplicated_spend_usd", "outcome_deadline": "outcomes.deadline",
	"outcome_cancelled": "outcomes.cancelled", "abandoned_stream_tokens": "abandoned_stream_tokens",
	"nested_requests": "nested_requests", "sdk_attempts_max": "sdk_attempts_max",
}

// workloadJSON pairs the workload table's rows with their JSON keys.
var workloadJSON = [][2]string{
	{"logical requests", "logical_requests"}, {"attempts", "attempts"},
	{"amplification (attempts per request)", "amplification"}, {"retry rate", "retry_rate"},
	{"retry success rate", "retry_success_rate"}, {"final failure rate", "final_failure_rate"},
	{"duplicated attempts", "duplicated_attempts"}, {"time in duplicated attempts", "duplicated_attempt_ms"},
	{"duplicated input tokens", "duplicated_input_tokens"}, {"duplicated output tokens", "duplicated_output_tokens"},
	{"hidden work", "hidden_work_ms"}, {"hidden output tokens", "hidden_output_tokens"},
	{"spend (price table)", "spend_usd"}, {"spend in duplicated attempts", "duplicated_spend_usd"},
	{"requests with tokens but no price", "unpriced_requests"}, {"failed at the attempt cap", "outcomes.attempt_cap"},
	{"ended by a deadline", "outcomes.deadline"}, {"failed for want of capacity (429/503)", "outcomes.no_capacity"},
	{"stopped at the output token cap", "outcomes.token_cap"}, {"cancelled by the client", "outcomes.cancelled"},
	{"unfinished at the end of the dump", "outcomes.unfinished"},
	{"gave up for want of progress (stated)", "outcomes.no_progress"},
	{"stopped by a retry budget or quota", "outcomes.retry_budget"},
	{"stopped on a failure no retry fixes", "outcomes.not_retryable"}, {"streams abandoned part-way", "abandoned_streams"},
	{"output tokens read from abandoned streams", "abandoned_stream_tokens"},
	{"requests with nested retry loops", "nested_requests"}, {"most app tries seen (nested)", "app_tries_max"},
	{"most SDK attempts in one app try (nested)", "sdk_attempts_max"},
	{"tasks of several requests", "tasks"}, {"most requests in one task", "task_calls_max"},
	{"most attempts in one task", "task_attempts_max"}, {"worst case attempts per task", "task_worst_attempts"},
}

// workloadKey is the JSON key of a workload table row, "" for none.
func workloadKey(row string) string {
	for _, p := range workloadJSON {
		if p[0] == row {
			return p[1]
		}
	}
	return ""
}

func lookup(obj map[string]any, path string) any {
	var v any = obj
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// sameValue compares a CSV cell with a JSON value exactly: both hold the
// full-precision figure, or both nothing.
func sameValue(csvCell string, js any) bool {
	if js == nil {
		return csvCell == ""
	}
	f, err := strconv.ParseFloat(csvCell, 64)
	return err == nil && f == js.(float64)
}

var shownFigure = regexp.MustCompile(`^\$?([-+]?[0-9.]+) ?(ms|s|min|h|%|x)?$`)

// sameFigure reports whether a figure as shown is raw rounded the way its
// unit is shown; "-" and "n<N" stand for an empty raw value, "" for a
// value nobody asked for.
func sameFigure(shown, raw string) bool {
	if shown == "-" || strings.HasPrefix(shown, "n<") || shown == "" || raw == "<nil>" {
		return raw == "" || raw == "<nil>" || (shown == "" && raw == "")
	}
	m := shownFigure.FindStringSubmatch(shown)
	v, err := strconv.ParseFloat(raw, 64)
	if m == nil || err != nil {
		return shown == raw
	}
	s, _ := strconv.ParseFloat(m[1], 64)
	if m[2] == "%" {
		s /= 100
		v = math.Round(v*1000) / 1000
		return math.Abs(s-v) < 1e-9
	}
	switch m[2] { // durations are shown in the unit that reads best; raw is ms
	case "s":
		v /= 1000
	case "min":
		v /= 60_000
	case "h":
		v /= 3_600_000
	}
	decimals := 0
	if i := strings.IndexByte(m[1], '.'); i >= 0 {
		decimals = len(m[1]) - i - 1
	}
	return math.Abs(s-v) <= 0.5*math.Pow(10, -float64(decimals))+1e-9
}

type parsedTable struct {
	title string
	rows  [][]string
}

func findTable(t *testing.T, tabs []parsedTable, title string) parsedTable {
	t.Helper()
	for _, tab := range tabs {
		if tab.title == title {
			return tab
		}
	}
	t.Fatalf("no table %q", title)
	return parsedTable{}
}

// markdownTables reads the tables of a Markdown report back: body rows,
// cells unescaped.
func markdownTables(s string) []parsedTable {
	var out []parsedTable
	unescape := strings.NewReplacer(`\|`, "|", `\*`, "*", `\_`, "_")
	for _, line := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			out = append(out, parsedTable{title: unescape.Replace(line[3:])})
		case strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| ---"):
			tab := &out[len(out)-1]
			cells := regexp.MustCompile(`\s\|\s?`).Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), -1)
			for i := range cells {
				cells[i] = unescape.Replace(strings.TrimSpace(cells[i]))
			}
			tab.rows = append(tab.rows, cells)
		}
	}
	for i := range out { // drop each heading row
		if len(out[i].rows) > 0 {
			out[i].rows = out[i].rows[1:]
		}
	}
	return out
}

var (
	htmlTitle = regexp.MustCompile(`<h2>(.*?)</h2>`)
	htmlRow   = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	htmlCell  = regexp.MustCompile(`<td[^>]*>(.*?)</td>`)
)

// htmlTables reads the tables of the HTML page back.
func htmlTables(s string) []parsedTable {
	var out []parsedTable
	parts := htmlTitle.FindAllStringSubmatchIndex(s, -1)
	for i, p := range parts {
		title := html.UnescapeString(s[p[2]:p[3]])
		if title == "Charts" {
			continue
		}
		end := len(s)
		if i+1 < len(parts) {
			end = parts[i+1][0]
		}
		tab := parsedTable{title: title}
		for _, r := range htmlRow.FindAllStringSubmatch(s[p[1]:end], -1) {
			cells := htmlCell.FindAllStringSubmatch(r[1], -1)
			if len(cells) == 0 {
				continue // the heading row
			}
			row := make([]string, len(cells))
			for j, c := range cells {
				row[j] = html.UnescapeString(c[1])
			}
			tab.rows = append(tab.rows, row)
		}
		out = append(out, tab)
	}
	return out
}

// textHasRow reports whether a line of the text report holds the cells in
// order, a label possibly cut short with "…".
func textHasRow(txt string, cells []string) bool {
	for _, line := range strings.Split(txt, "\n") {
		rest, ok := line, true
		for _, c := range cells {
			if c == "" {
				continue
			}
			i := strings.Index(rest, c)
			if i < 0 {
				if j := strings.Index(rest, "…"); j >= 0 && strings.HasPrefix(c, strings.TrimSpace(rest[:j])) {
					rest = rest[j+len("…"):]
					continue
				}
				ok = false
				break
			}
			rest = rest[i+len(c):]
		}
		if ok {
			return true
		}
	}
	return false
}

// TestTextFitsWidth: no line of the text report is wider than Width.
func TestTextFitsWidth(t *testing.T) {
	for i, line := range strings.Split(render(t, sampleReport(t), "table"), "\n") {
		if n := utf8.RuneCountInString(line); n > texttab.Width {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, line)
		}
	}
}
