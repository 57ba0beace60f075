package queries_test

// The queries' data-driven tests, as promql/promqltest's: each file
// testdata/<query> holds cases that load a few rows into a fresh schema,
// run the query queries/<query>.sql and compare what it yields with the
// expected rows. go test ./queries -rewrite writes the expected rows
// anew (read the diff before committing it).
//
// A case:
//
//	# comments anywhere before ----
//	case <what it shows>
//	args <expr> | <expr> ...     the query's $1, $2 ..., as DuckDB expressions
//	rowsort                      sort the rows (a query with no ORDER BY)
//	table <name>                 rows for a table of the schema: a header of
//	<col> | <col> ...            column names, then one line per row of
//	<expr> | <expr> ...          DuckDB expressions ('text', 12, [1, 2],
//	                             MAP {'k': 'v'}, NULL); a column left out is
//	                             NULL, or the zero of its type when NOT NULL
//	temp <name>                  the same for a temporary table it creates,
//	<col> <TYPE> | ...           from a header of names and types
//	exec <statement>             a statement run as it comes
//	run <query>                  another query file run first (one of no
//	                             parameters, such as stage)
//	after <statement>            a statement run after the query
//	notx                         run the case outside a transaction (a query
//	                             that begins or ends one): what it writes
//	                             stays for the file's next cases
//	show <table>[: <select list> [WHERE <condition>]]
//	                             after the query ran, print the table's rows
//	----
//	<expected output, up to a blank line>
//
// $TMPDIR in a case's lines is a directory of the test's own, for files a
// case writes (COPY ... TO '$TMPDIR/x.parquet').
//
// Without show the output is the rows of the query's last statement;
// with it, the shown tables' rows, after "affected: N" for a file of one
// INSERT, UPDATE or DELETE (the rows it changed, which callers count).
// Each case runs in a transaction that is rolled back, so the cases of a
// file share one database.
//
// An error of the query is its output ("error: ..."); an error of the
// case's own lines fails the test.

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/queries"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected rows of queries/testdata")

// queryText is the text of the query a case runs: queries.Get, but for
// TestQueryDataCatchesSwappedColumns.
var queryText = queries.Get

// dataCase is one case of a testdata file.
type dataCase struct {
	line     int      // of its "case" line
	input    []string // its lines up to ----, as written
	expected []string
}

// TestQueryData runs every case of every file of testdata, one subtest
// (and one fresh database) per file.
func TestQueryData(t *testing.T) {
	files, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) { runDataFile(t, path) })
	}
}

func runDataFile(t *testing.T, path string) {
	name := filepath.Base(path)
	if _, err := os.Stat(name + ".sql"); err != nil {
		t.Fatalf("%s names no query: there is no queries/%s.sql", path, name)
	}
	cases := parseDataFile(t, path)
	conn := openFresh(t)
	tmpDir := t.TempDir()
	var out strings.Builder
	for i, c := range cases {
		got := runCase(t, conn, tmpDir, name, c)
		if want := strings.Join(c.expected, "\n"); !*rewrite && got != want {
			t.Errorf("%s:%d: got (first) and want (second) differ at %s\ngot:\n%s", path, c.line, testkit.FirstDiff(got, want), got)
		}
		if i > 0 {
			out.WriteString("\n\n")
		}
		out.WriteString(strings.Join(c.input, "\n") + "\n" + got)
	}
	out.WriteString("\n")
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// parseDataFile splits a file into its cases. The comments before a case
// belong to it.
func parseDataFile(t *testing.T, path string) []dataCase {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []dataCase
	var pending []string
	inExpected, done := false, true
	for i, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		switch {
		case inExpected && l == "":
			inExpected = false
		case inExpected:
			cases[len(cases)-1].expected = append(cases[len(cases)-1].expected, l)
		case strings.HasPrefix(l, "case "):
			cases = append(cases, dataCase{line: i + 1, input: append(trimBlank(pending), l)})
			pending, done = nil, false
		case done:
			pending = append(pending, l)
		default:
			c := &cases[len(cases)-1]
			c.input = append(c.input, l)
			inExpected, done = l == "----", l == "----"
		}
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no case", path)
	}
	if !done {
		t.Fatalf("%s:%d: the case has no ---- line", path, cases[len(cases)-1].line)
	}
	return cases
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// openFresh makes a database in t.TempDir() as every retryscope command
// finds it (store.Open, migrations applied), and opens it again on one
// connection of its own, on which the temporary tables a query reads
// live: the store keeps its connection to itself.
func openFresh(t *testing.T) *sql.Conn {
	path := filepath.Join(t.TempDir(), "t.duckdb")
	if err := testkit.OpenFile(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); db.Close() })
	// As store.Open sets it; one thread keeps the run light and the rows'
	// order that of the plan.
	mustExec(t, conn, `SET asof_loop_join_threshold = 0; SET threads = 1`)
	return conn
}

func mustExec(t *testing.T, conn *sql.Conn, stmt string, args ...any) {
	t.Helper()
	if _, err := conn.ExecContext(context.Background(), stmt, args...); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// caseSetup is what a case's lines ask of the run, besides the rows they
// load.
type caseSetup struct {
	args     []any
	shows    []string // show lines, after "show "
	after    []string // statements run after the query
	sortRows bool
}

// runCase runs one case, in a transaction it rolls back unless the case
// says notx, and returns its output.
func runCase(t *testing.T, conn *sql.Conn, tmpDir, query string, c dataCase) string {
	ctx := context.Background()
	inTx := true
	var lines []string
	for _, l := range c.input[:len(c.input)-1] {
		inTx = inTx && l != "notx"
		lines = append(lines, strings.ReplaceAll(l, "$TMPDIR", tmpDir))
	}
	if inTx {
		mustExec(t, conn, "BEGIN TRANSACTION")
		defer conn.ExecContext(ctx, "ROLLBACK")
	}
	setup := setUp(t, conn, fmt.Sprintf("testdata/%s:%d", query, c.line), lines)
	out, ok := runQuery(ctx, conn, query, setup.args, len(setup.shows) > 0, setup.sortRows)
	if !ok {
		return strings.Join(out, "\n")
	}
	for _, s := range setup.after {
		mustExec(t, conn, s)
	}
	for _, s := range setup.shows {
		table, cols, ok := strings.Cut(s, ":")
		if !ok {
			cols = "*"
		}
		cols, where := cutWhere(cols)
		out = append(out, table+":")
		out = append(out, printQuery(ctx, conn, "SELECT "+cols+" FROM "+table+where+" ORDER BY ALL", nil, false)...)
	}
	return strings.Join(out, "\n")
}

// setUp runs a case's lines before the query: it loads the rows and runs
// the statements they give, and returns the rest for the run.
func setUp(t *testing.T, conn *sql.Conn, where string, lines []string) caseSetup {
	var c caseSetup
	for i := 0; i < len(lines); i++ {
		word, rest, _ := strings.Cut(lines[i], " ")
		switch {
		case word == "" || word == "case" || word == "notx" || strings.HasPrefix(word, "#"):
		case word == "args":
			for _, e := range splitCells(rest) {
				c.args = append(c.args, evalArg(t, conn, e))
			}
		case word == "rowsort":
			c.sortRows = true
		case word == "exec":
			mustExec(t, conn, rest)
		case word == "run":
			for _, s := range statements(queries.Get(rest)) {
				mustExec(t, conn, s)
			}
		case word == "after":
			c.after = append(c.after, rest)
		case word == "show":
			c.shows = append(c.shows, rest)
		case word == "table" || word == "temp":
			n := i + 1
			for n < len(lines) && strings.TrimSpace(lines[n]) != "" && !strings.HasPrefix(lines[n], "#") {
				n++
			}
			if n == i+1 {
				t.Fatalf("%s: %s %s has no header", where, word, rest)
			}
			load(t, conn, word == "temp", strings.TrimSpace(rest), lines[i+1:n])
			i = n - 1
		default:
			t.Fatalf("%s: unknown line %q", where, lines[i])
		}
	}
	return c
}

// runQuery runs the query's statements, and prints the rows of the last
// unless written is set; ok is false when a statement failed.
func runQuery(ctx context.Context, conn *sql.Conn, query string, args []any, written, sortRows bool) (out []string, ok bool) {
	stmts := statements(queryText(query))
	for i, s := range stmts {
		var a []any
		if paramPattern.MatchString(s) {
			a = args
		}
		if i == len(stmts)-1 && !written {
			return printQuery(ctx, conn, s, a, sortRows), true
		}
		res, err := conn.ExecContext(ctx, s, a...)
		if err != nil {
			return []string{"error: " + oneLine(err.Error())}, false
		}
		if len(stmts) == 1 && writePattern.MatchString(s) {
			n, _ := res.RowsAffected()
			out = append(out, fmt.Sprintf("affected: %d", n))
		}
	}
	return out, true
}

// cutWhere splits a show line's select list from its WHERE clause, if it
// has one outside parentheses.
func cutWhere(s string) (cols, where string) {
	depth := 0
	for i := range len(s) {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth == 0 && strings.HasPrefix(s[i:], " WHERE ") {
			return s[:i], s[i:]
		}
	}
	return s, ""
}

var (
	paramPattern = regexp.MustCompile(`\$[0-9]`)
	writePattern = regexp.MustCompile(`(?m)^(INSERT|UPDATE|DELETE)\b`)
	identifier   = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
)

// statements splits a query file as store.ExecScript does, leaving out
// the parts that hold only comments.
func statements(text string) []string {
	var out []string
	for _, s := range strings.SplitAfter(text, ";\n") {
		for l := range strings.Lines(s) {
			if l := strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// splitCells splits a row at the '|' outside quotes and brackets.
func splitCells(line string) []string {
	var cells []string
	depth, quote, start := 0, byte(0), 0
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '[' || ch == '(' || ch == '{':
			depth++
		case ch == ']' || ch == ')' || ch == '}':
			depth--
		case ch == '|' && depth == 0:
			cells = append(cells, strings.TrimSpace(line[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(line[start:]))
}

// evalArg evaluates a DuckDB expression to the Go value the query's
// callers pass: integers as int64, decimals as float64, lists of text as
// []string.
func evalArg(t *testing.T, conn *sql.Conn, expr string) any {
	var v any
	if err := conn.QueryRowContext(context.Background(), "SELECT "+expr).Scan(&v); err != nil {
		t.Fatalf("args %s: %v", expr, err)
	}
	switch x := v.(type) {
	case int8, int16, int32, uint8, uint16, uint32:
		n, _ := strconv.ParseInt(fmt.Sprint(x), 10, 64)
		return n
	case duckdb.Decimal:
		return x.Float64()
	case []any:
		texts := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return v
			}
			texts[i] = s
		}
		return texts
	}
	return v
}

// load inserts rows into table (made first as a temporary table when
// temp), filling the NOT NULL columns a row leaves out with their type's
// zero.
func load(t *testing.T, conn *sql.Conn, temp bool, table string, lines []string) {
	header := splitCells(lines[0])
	if temp {
		mustExec(t, conn, "CREATE TEMP TABLE "+table+" ("+strings.Join(header, ", ")+")")
		for i, h := range header {
			header[i], _, _ = strings.Cut(h, " ")
		}
	}
	rows, err := conn.QueryContext(context.Background(), `SELECT column_name, data_type FROM duckdb_columns()
		WHERE table_name = $1 AND NOT is_nullable AND column_default IS NULL ORDER BY column_index`, table)
	if err != nil {
		t.Fatal(err)
	}
	cols, zeros := slices.Clone(header), []string(nil)
	for rows.Next() {
		var col, typ string
		if err := rows.Scan(&col, &typ); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(header, col) {
			cols = append(cols, col)
			zeros = append(zeros, zeroOf(typ))
		}
	}
	rows.Close()
	if len(lines) == 1 {
		return
	}
	var values []string
	for _, l := range lines[1:] {
		cells := splitCells(l)
		if len(cells) != len(header) {
			t.Fatalf("table %s: row %q has %d values for %d columns", table, l, len(cells), len(header))
		}
		values = append(values, "("+strings.Join(append(cells, zeros...), ", ")+")")
	}
	mustExec(t, conn, "INSERT INTO "+table+" ("+strings.Join(quoteAll(cols), ", ")+") VALUES "+strings.Join(values, ", "))
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = `"` + n + `"`
	}
	return out
}

func zeroOf(typ string) string {
	switch {
	case strings.HasSuffix(typ, "[]"):
		return "[]"
	case typ == "VARCHAR":
		return "''"
	case typ == "BOOLEAN":
		return "false"
	case strings.HasPrefix(typ, "TIMESTAMP"):
		return "'epoch'::" + typ
	}
	return "0"
}

// printQuery runs a query and prints its rows (see layout), or its error.
func printQuery(ctx context.Context, conn *sql.Conn, query string, args []any, sortRows bool) []string {
	cols, table, err := queryRows(ctx, conn, query, args)
	if err != nil {
		return []string{"error: " + oneLine(err.Error())}
	}
	if sortRows {
		slices.SortFunc(table, func(a, b []string) int { return slices.Compare(a, b) })
	}
	return layout(cols, table)
}

// queryRows runs a query and formats every value it yields.
func queryRows(ctx context.Context, conn *sql.Conn, query string, args []any) (cols []string, table [][]string, err error) {
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, _ = rows.Columns()
	for i, c := range cols {
		// An unnamed column is printed by its place, which is how the
		// callers read it, rather than by DuckDB's text of its expression.
		if !identifier.MatchString(c) {
			cols[i] = fmt.Sprintf("#%d", i+1)
		}
	}
	types, _ := rows.ColumnTypes()
	for rows.Next() {
		vals, err := testkit.ScanRow(rows, len(cols))
		if err != nil {
			return nil, nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = format(v)
			if d, ok := v.(time.Time); ok && types[i].DatabaseTypeName() == "DATE" {
				row[i] = "'" + d.Format(time.DateOnly) + "'"
			}
		}
		table = append(table, row)
	}
	return cols, table, rows.Err()
}

// layout prints rows under a header of column names, in aligned columns,
// or, when a row would be wider than 100 characters, one line per value.
func layout(cols []string, table [][]string) []string {
	if len(table) == 0 {
		return []string{strings.Join(cols, " | "), "(no rows)"}
	}
	widths := make([]int, len(cols))
	total := 0
	for i := range cols {
		for _, r := range append([][]string{cols}, table...) {
			widths[i] = max(widths[i], len(r[i]))
		}
		total += widths[i] + 3
	}
	var out []string
	if total > 100 {
		for n, r := range table {
			out = append(out, fmt.Sprintf("row %d:", n+1))
			for i, v := range r {
				out = append(out, "  "+cols[i]+" = "+v)
			}
		}
		return out
	}
	for _, r := range append([][]string{cols}, table...) {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = v + strings.Repeat(" ", widths[i]-len(v))
		}
		out = append(out, strings.TrimRight(strings.Join(cells, " | "), " "))
	}
	return out
}

// format prints a value as a DuckDB expression that gives it back.
func format(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.NewReplacer("'", "''", "\n", `\n`).Replace(x) + "'"
	case float64:
		return formatFloat(x)
	case float32:
		return formatFloat(float64(x))
	case time.Time:
		return "'" + x.UTC().Format("2006-01-02 15:04:05.999999") + "'"
	case *big.Int:
		return x.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = format(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		var parts []string
		for k, e := range x {
			parts = append(parts, format(k)+": "+format(e))
		}
		slices.Sort(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	case duckdb.OrderedMap:
		keys, values := x.Keys(), x.Values()
		parts := make([]string, len(keys))
		for i := range keys {
			parts[i] = format(keys[i]) + ": " + format(values[i])
		}
		return "MAP {" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

func formatFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".NI") {
		s += ".0"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestQueryDataCatchesSwappedColumns swaps two figures of the same type in
// a query's SQL (report_workload's retried and retried_ok, both counts)
// and requires its cases to fail: a case shows every column by name, so a
// reordered or swapped column cannot pass unseen.
func TestQueryDataCatchesSwappedColumns(t *testing.T) {
	const name = "report_workload"
	retried := "count(*) FILTER (WHERE attempts > 1) AS retried,"
	retriedOK := "count(*) FILTER (WHERE attempts > 1 AND outcome = 'ok') AS retried_ok,"
	swapped := testkit.ReplaceOnce(t, queries.Get(name), retried, "/*retried*/")
	swapped = testkit.ReplaceOnce(t, swapped, retriedOK, strings.Replace(retriedOK, "retried_ok", "retried", 1))
	swapped = testkit.ReplaceOnce(t, swapped, "/*retried*/", strings.Replace(retried, "retried", "retried_ok", 1))
	queryText = func(q string) string {
		if q == name {
			return swapped
		}
		return queries.Get(q)
	}
	defer func() { queryText = queries.Get }()
	conn := openFresh(t)
	failed := 0
	for _, c := range parseDataFile(t, filepath.Join("testdata", name)) {
		if runCase(t, conn, t.TempDir(), name, c) != strings.Join(c.expected, "\n") {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("testdata/%s passes with retried and retried_ok swapped in its SQL", name)
	}
}

// TestQueryDataCoverage checks that every query has a testdata file and
// every testdata file a query.
func TestQueryDataCoverage(t *testing.T) {
	sqls, _ := filepath.Glob("*.sql")
	data, _ := filepath.Glob("testdata/*")
	var want, have []string
	for _, s := range sqls {
		want = append(want, strings.TrimSuffix(s, ".sql"))
	}
	for _, d := range data {
		have = append(have, filepath.Base(d))
	}
	for _, q := range want {
		if !slices.Contains(have, q) {
			t.Errorf("queries/%s.sql has no tests: add testdata/%s (see queries_data_test.go)", q, q)
		}
	}
	for _, d := range have {
		if !slices.Contains(want, d) {
			t.Errorf("testdata/%s names no query: there is no queries/%s.sql", d, d)
		}
	}
}
