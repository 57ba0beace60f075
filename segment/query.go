package segment

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/queries"
)

// query assembles queries/segment_rows.sql, joined to
// segment_anchor_values.sql and segment_baselines.sql when it needs them.
//
// inline SQL: the one statement of the product built in Go. Its select
// items, joins and filters are the dimensions and --where filters the user
// chose (any number, attr:/resource: keys among them), so no fixed file
// can hold it; each piece it adds is a constant expression of this file
// and everything a user supplied goes in args.
type query struct {
	args []any
	// spanCols are the anchor span's values the dimensions read (see
	// spanValue), as select items of the spans joined.
	spanCols []string
	whereSQL []string
}

// param binds v and returns its placeholder.
func (q *query) param(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

// The maps spanValue reads: the anchor span's attributes, and its
// resource's (segment_anchor_values joins the span's row of resources as
// res).
const (
	spanAttrs     = "sp.attributes"
	resourceAttrs = "res.attributes"
)

// spanValue returns the column that holds the anchor span's value of key
// in m (spanAttrs or resourceAttrs). The spans' maps are not joined whole:
// the join carries only the values read, which at 10M spans is about a
// quarter less work (as in baseline_input).
func (q *query) spanValue(m, key string) string {
	col := "v" + strconv.Itoa(len(q.spanCols)+1)
	q.spanCols = append(q.spanCols, m+"["+q.param(key)+"] AS "+col)
	return "s." + col
}

// expr returns the SQL expression of d's value for a request r with anchor
// span s, as VARCHAR and never NULL.
func (q *query) expr(d Dim) string {
	var e string
	switch d.Kind {
	case KindService:
		e = "r.service"
	case KindOperation:
		e = "r.operation"
	case KindModel:
		e = "r.model"
	case KindRoute:
		e = "r.route"
	case KindRetryRoute:
		e = "CASE WHEN r.attempts > 1 THEN coalesce(r.final_route, " + q.param(Unset) + ") ELSE " + q.param(NotRetried) + " END"
	case KindTrigger:
		e = "coalesce(r.triggers[1], r.final_trigger, 'none')"
	case KindOutcome:
		e = "r.outcome"
	case KindStream:
		e = "CASE WHEN r.stream THEN 'true' ELSE 'false' END"
	case KindInputTokens:
		e = q.bucket("r.input_tokens", d.Edges)
	case KindOutputTokens:
		e = q.bucket("r.output_tokens", d.Edges)
	case KindTime:
		w := q.param(d.Width.Nanoseconds())
		e = "strftime(make_timestamp((r.start_ns // " + w + ") * " + w + " // 1000), '%Y-%m-%dT%H:%M:%SZ')"
	case KindRegion:
		e = "coalesce(" + q.spanValue(spanAttrs, "cloud.region") + ", " + q.spanValue(resourceAttrs, "cloud.region") + ")"
	case KindEnvironment:
		const name, old = "deployment.environment.name", "deployment.environment"
		e = "coalesce(" + q.spanValue(resourceAttrs, name) + ", " + q.spanValue(resourceAttrs, old) + ", " +
			q.spanValue(spanAttrs, name) + ", " + q.spanValue(spanAttrs, old) + ")"
	case KindCache:
		keys := make([]string, len(d.CacheKeys))
		for i, k := range d.CacheKeys {
			keys[i] = q.spanValue(spanAttrs, k)
		}
		n := "TRY_CAST(coalesce(" + strings.Join(keys, ", ") + ") AS DOUBLE)"
		e = "CASE WHEN " + n + " > 0 THEN 'hit' WHEN " + n + " = 0 THEN 'miss' END"
	case KindAttr:
		e = q.spanValue(spanAttrs, d.Name)
	case KindResource:
		e = q.spanValue(resourceAttrs, d.Name)
	default:
		panic(fmt.Sprintf("segment: unvalidated dimension %q", d.Kind))
	}
	return "coalesce(CAST(" + e + " AS VARCHAR), " + q.param(Unset) + ")"
}

// bucket labels col by the token bucket it falls in.
func (q *query) bucket(col string, edges []int64) string {
	labels := TokenLabels(edges)
	var b strings.Builder
	b.WriteString("CASE")
	for i, e := range edges {
		b.WriteString(" WHEN " + col + " < " + q.param(e) + " THEN " + q.param(labels[i]))
	}
	b.WriteString(" ELSE " + q.param(labels[len(edges)]) + " END")
	return b.String()
}

func (q *query) filter(f Filter) {
	e := q.expr(f.Dim)
	ph := make([]string, len(f.Values))
	for i, v := range f.Values {
		ph[i] = q.param(v)
	}
	op := " IN ("
	if f.Exclude {
		op = " NOT IN ("
	}
	q.whereSQL = append(q.whereSQL, "AND "+e+op+strings.Join(ph, ", ")+")")
}

// idRange is the requests a query reads when the window's are read in
// slices (see sliceRequests): ids above after, up to and including
// through, either bound left off when empty. The zero value is every
// request.
type idRange struct{ after, through string }

// build returns the SQL text for spec over the requests of rg, with q.args
// holding its parameters.
func (q *query) build(spec *Spec, since, until int64, baseline bool, rg idRange) string {
	q.param(since)
	q.param(until)
	const rows = "segment_rows"
	sqlText := rowsSQL()
	// The bounds are bound once and read by each part.
	var after, through string
	if rg.after != "" {
		after = q.param(rg.after)
	}
	if rg.through != "" {
		through = q.param(rg.through)
	}
	inRange := func(col string) string {
		var b strings.Builder
		if after != "" {
			b.WriteString(" AND " + col + " > " + after)
		}
		if through != "" {
			b.WriteString(" AND " + col + " <= " + through)
		}
		return b.String()
	}
	sqlText = fill(rows, sqlText, "/*slice*/", inRange("request_id"))
	var dims strings.Builder
	for i, d := range spec.By {
		fmt.Fprintf(&dims, ", %s AS %s", q.expr(d), dimColumn(i))
	}
	for _, f := range spec.Where {
		q.filter(f)
	}
	if spec.TaskKey != "" {
		sqlText = fill(rows, sqlText, "/*task*/", q.spanValue(spanAttrs, spec.TaskKey)+",")
	} else {
		sqlText = fill(rows, sqlText, "/*task*/", "")
	}
	var joins []string
	if len(q.spanCols) > 0 {
		// The window's anchor spans are found first, by a join of narrow
		// rows, and their values joined to the wide ones by request.
		const anchor = "segment_anchor_values"
		values := fill(anchor, queries.Get(anchor), "/*values*/", strings.Join(q.spanCols, ", "))
		values = fill(anchor, values, "/*slice*/", inRange("rr.request_id"))
		joins = append(joins, "LEFT JOIN ("+values+") s ON s.request_id = r.request_id")
	}
	if baseline {
		const baselines = "segment_baselines"
		kind := fill(baselines, queries.Get(baselines), "kind = $1", "kind = "+q.param(spec.BaselineKind))
		kind = fill(baselines, kind, "/*slice*/", inRange("request_id"))
		joins = append(joins, "LEFT JOIN ("+kind+") b ON b.request_id = r.request_id")
		sqlText = fill(rows, sqlText, "/*baseline*/ NULL::DOUBLE AS l0_ms, NULL::VARCHAR AS provenance", "b.l0_ms, b.provenance")
	} else {
		sqlText = fill(rows, sqlText, "/*baseline*/", "")
	}
	sqlText = fill(rows, sqlText, "/*dims*/", dims.String())
	sqlText = fill(rows, sqlText, "/*joins*/", strings.Join(joins, "\n"))
	return fill(rows, sqlText, "/*where*/", strings.Join(q.whereSQL, "\n"))
}

// rowsSQL is the text of queries/segment_rows.sql. A test changes it, to
// show that moving its columns changes nothing the segments read
// (swap_test.go).
var rowsSQL = func() string { return queries.Get("segment_rows") }

// fill replaces marker, which must occur exactly once in sqlText, the
// text of the query file name.
func fill(name, sqlText, marker, with string) string {
	if n := strings.Count(sqlText, marker); n != 1 {
		panic(fmt.Sprintf("segment: %s.sql has %d markers %s, want 1", name, n, marker))
	}
	return strings.Replace(sqlText, marker, with, 1)
}

// reqRow is one logical request as the measures see it. NaN stands for an
// unknown value.
type reqRow struct {
	startNs    int64
	latency    float64
	ttft       float64
	first      float64
	generation float64
	l0         float64
	// more holds what a request with retries has; noRetries when it made
	// one attempt and every one of those figures is zero, as for most
	// requests (a report holds a row per request of its window).
	more *retryFacts
	// finalTokens and finalMs: the final attempt's output tokens and time.
	finalTokens int64
	finalMs     float64
	// input and output, with model: what spend is computed from.
	input, output int64
	// phaseMs, phaseN: queue, connect, serve and generate time summed over
	// the attempts that show each, and how many do.
	phaseMs [4]float64
	// firstTokenSeen: start to the first token of any attempt, NaN for none.
	firstTokenSeen float64
	// task tells the request's task from others: segment_rows' task_hash,
	// 8 bytes where the task's text (a trace id) took 64 with its header;
	// two of a report's million tasks sharing a 63-bit hash is as unlikely
	// as the rebuild's joins by hash going wrong.
	task   int64
	phaseN [4]int32
	// loops, appTries, sdkMax: retry loops, tries of the outer one, most
	// tries of the inner one in one outer try (0 for one loop).
	loops, appTries, sdkMax int32
	attempts                int32
	// detail is outcome_detail, model the model, provenance the baseline's
	// provenance, each as its number in the rows' names ("" for NULL).
	detail, model, provenance name
	ok, stream                bool
}

// name is a text many rows share, as its number in their names.
type name uint32

// names numbers the texts that rows share (outcome details, models,
// provenances, dimension values): a row holds a 4-byte number for each
// instead of a 16-byte string. Number 0 is "". Filled while the rows are
// read, it is only read once they are measured, side by side.
type names struct {
	texts []string
	index map[string]name
}

func newNames() *names { return &names{texts: []string{""}, index: map[string]name{"": 0}} }

// number returns text's number, giving it the next one if it has none;
// only a text not seen before is copied.
func (n *names) number(text []byte) name {
	x, ok := n.index[string(text)]
	if !ok {
		s := string(text)
		x = name(len(n.texts))
		n.texts = append(n.texts, s)
		n.index[s] = x
	}
	return x
}

// text returns the text numbered x.
func (n *names) text(x name) string { return n.texts[x] }

func (r *reqRow) retried() bool { return r.attempts > 1 }

// retryFacts are the figures of a request that only its retries, hidden
// work and duplicated work make other than zero.
type retryFacts struct {
	second       float64
	dupMs        float64
	hiddenMs     float64
	dup          int64
	dupInput     int64
	hiddenTokens int64
	// ceRetries, ceMs, ceTokens: attempts right after a client error.
	ceRetries int64
	ceMs      float64
	ceTokens  int64
	// route: retry attempts on the first attempt's route and on another.
	route   routeRetries
	hygiene hygieneRow
}

// noRetries is the retry figures every row without any shares: all zero
// (second, which only a retried request reads, too). Nothing writes to it.
var noRetries = &retryFacts{}

// none says whether every figure but second, which only a retried request
// reads, is zero.
func (x *retryFacts) none() bool {
	h := &x.hygiene
	return x.dupMs == 0 && x.hiddenMs == 0 && x.dup == 0 && x.dupInput == 0 && x.hiddenTokens == 0 &&
		x.ceRetries == 0 && x.ceMs == 0 && x.ceTokens == 0 && x.route == (routeRetries{}) &&
		h.raRetries == 0 && h.raIgnored == 0 && h.raEarlyMs == 0 && h.raMs == 0 && len(h.gapsMs) == 0 && len(h.retryStarts) == 0 &&
		h.gapsCostMs == 0
}

// cohort is the requests sharing one combination of dimension values.
type cohort struct {
	values []string
	rows   []int32 // indexes into the loaded rows
}

// sliceRequests is the most requests one segment query reads. DuckDB
// holds a query's joins and per-request lists in memory, about 700 bytes
// a request (the workload's query over 292k requests needs between 150
// and 250 MB), so a larger window is read a slice of ids at a time and
// its rows put together here: at 10M spans (2.9M requests) one query
// over the whole window ran out of the default 1 GB, and in six slices
// the report finished within it. The rebuild's request ids are never
// empty, so an empty bound means none.
var sliceRequests int64 = 1 << 19

// loadRows runs the segment query over the n requests of the window and
// returns each request, the values of its dimensions (those of row i are
// values[i*len(spec.By):]) and the texts the rows and values number.
func loadRows(ctx context.Context, st *store.Store, spec *Spec, since, until int64, baseline bool, n int64) ([]reqRow, []name, *names, error) {
	ranges := []idRange{{}}
	if n > sliceRequests {
		ends, err := st.Strings(ctx, "segment_slices", since, until, sliceRequests)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("segment requests: %w", err)
		}
		ranges = make([]idRange, len(ends)+1)
		for i, id := range ends {
			ranges[i].through = id
			ranges[i+1].after = id
		}
	}
	// The rows are sized once: growing a slice of rows this wide (184
	// bytes each) by appending copies them again at every doubling, and at
	// a million requests that cost seconds in fresh pages. Without filters
	// the query yields one row per request of the window, so their count
	// is exact; a filter may keep few of them, and then the rows grow as
	// they come rather than reserve room for all.
	if len(spec.Where) > 0 {
		n = 0
	}
	nm := newNames()
	out := make([]reqRow, 0, n)
	values := make([]name, 0, n*int64(len(spec.By)))
	order := make([]int64, 0, n)
	cols := slices.Clone(rowCols[:])
	for d := range spec.By {
		cols = append(cols, store.TextCol(dimColumn(d)))
	}
	// The rows are put in order here (byID), so DuckDB need not keep them
	// in any: holding them back in order is what ran out of memory.
	if _, err := st.Exec(ctx, "segment_order_off"); err != nil {
		return nil, nil, nil, fmt.Errorf("segment requests: %w", err)
	}
	defer st.Exec(context.WithoutCancel(ctx), "segment_order_reset")
	for k, rg := range ranges {
		// What the slice before read (blocks of requests, attempts and
		// baselines) would stay cached up to DuckDB's memory limit beside
		// Go's growing rows: at 10M spans it took the first report's peak
		// to 1.9-2.2 GB there. It is given back before each next slice.
		if k > 0 {
			if err := st.DropCache(ctx); err != nil {
				return nil, nil, nil, fmt.Errorf("segment requests: %w", err)
			}
		}
		// Every slice but the last holds sliceRequests requests of the
		// window, so a row's place in the window is its place in its slice
		// after theirs.
		offset := int64(k) * sliceRequests
		var q query
		text := q.build(spec, since, until, baseline, rg)
		err := st.StreamChunks(ctx, store.SQL{Name: "segment_rows", Text: text}, q.args, cols, func(c *store.Chunk) error {
			for i := range c.Len() {
				r, place := readRow(c, i, nm)
				for d := range spec.By {
					values = append(values, nm.number(c.Row(i).TextBytes(rowColumns+d)))
				}
				out = append(out, r)
				order = append(order, offset+place)
			}
			return nil
		})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("segment requests: %w", err)
		}
	}
	byID(out, values, order, len(spec.By))
	// Texts are only looked up by number from here on; with a value per
	// request (a user id) the index is as large as the texts.
	nm.index = nil
	return out, values, nm, nil
}

// The columns of segment_rows.sql before the dimensions that readRow
// reads, in its order: rowCols names them, and readRow reads the chunk's
// column rowStartNs and so on, wherever the query puts it. The
// dimensions' columns come after them, dimColumn(0) at rowColumns.
const (
	rowStartNs = iota
	rowLatency
	rowAttempts
	rowOK
	rowStream
	rowTTFT
	rowDupTokens
	rowFirst
	rowSecond
	rowGeneration
	rowDupInput
	rowDupMs
	rowHiddenMs
	rowHiddenTokens
	rowCERetries
	rowCEMs
	rowCETokens
	rowSameRetries
	rowSameOK
	rowSameMs
	rowSameFailedMs
	rowSameFailedTokens
	rowAltRetries
	rowAltOK
	rowAltMs
	rowRARetries
	rowRAIgnored
	rowRAEarlyMs
	rowRAIgnoredMs
	rowGapsMs
	rowRetryStarts
	rowDetail
	rowFinalTokens
	rowFinalMs
	rowLoops
	rowAppTries
	rowSDKMax
	rowFirstTokenSeen
	rowTask
	rowQueueMs
	rowQueueN
	rowConnectMs
	rowConnectN
	rowServeMs
	rowServeN
	rowGenerateMs
	rowGenerateN
	rowModel
	rowInput
	rowOutput
	rowL0
	rowProvenance
	rowGapsCostMs
	rowRetryCostsMs
	rowOrder
	rowColumns // how many
)

var rowCols = [rowColumns]store.Col{
	rowStartNs:          store.IntCol("start_ns"),
	rowLatency:          store.FloatCol("latency_ms"),
	rowAttempts:         store.IntCol("attempts"),
	rowOK:               store.BoolCol("ok"),
	rowStream:           store.BoolCol("stream"),
	rowTTFT:             store.FloatCol("ttft_ms"),
	rowDupTokens:        store.IntCol("duplicated_output_tokens"),
	rowFirst:            store.FloatCol("first_attempt_ms"),
	rowSecond:           store.FloatCol("second_attempt_ms"),
	rowGeneration:       store.FloatCol("generation_ms"),
	rowDupInput:         store.IntCol("duplicated_input_tokens"),
	rowDupMs:            store.FloatCol("duplicated_attempt_ms"),
	rowHiddenMs:         store.FloatCol("hidden_work_ms"),
	rowHiddenTokens:     store.IntCol("hidden_output_tokens"),
	rowCERetries:        store.IntCol("client_error_retries"),
	rowCEMs:             store.FloatCol("client_error_retry_ms"),
	rowCETokens:         store.IntCol("client_error_retry_tokens"),
	rowSameRetries:      store.IntCol("same_route_retries"),
	rowSameOK:           store.IntCol("same_route_retry_ok"),
	rowSameMs:           store.FloatCol("same_route_retry_ms"),
	rowSameFailedMs:     store.FloatCol("same_route_failed_ms"),
	rowSameFailedTokens: store.IntCol("same_route_failed_tokens"),
	rowAltRetries:       store.IntCol("alternate_route_retries"),
	rowAltOK:            store.IntCol("alternate_route_retry_ok"),
	rowAltMs:            store.FloatCol("alternate_route_retry_ms"),
	rowRARetries:        store.IntCol("retry_after_retries"),
	rowRAIgnored:        store.IntCol("retry_after_ignored"),
	rowRAEarlyMs:        store.FloatCol("retry_after_early_ms"),
	rowRAIgnoredMs:      store.FloatCol("retry_after_ignored_ms"),
	rowGapsMs:           store.FloatListCol("retry_gaps_ms"),
	rowRetryStarts:      store.IntListCol("retry_starts_ns"),
	rowDetail:           store.TextCol("outcome_detail"),
	rowFinalTokens:      store.IntCol("final_output_tokens"),
	rowFinalMs:          store.FloatCol("final_attempt_ms"),
	rowLoops:            store.IntCol("retry_loops"),
	rowAppTries:         store.IntCol("app_tries"),
	rowSDKMax:           store.IntCol("sdk_attempts_max"),
	rowFirstTokenSeen:   store.FloatCol("first_token_seen_ms"),
	rowTask:             store.IntCol("task_hash"),
	rowQueueMs:          store.FloatCol("queue_sum_ms"),
	rowQueueN:           store.IntCol("queue_n"),
	rowConnectMs:        store.FloatCol("connect_sum_ms"),
	rowConnectN:         store.IntCol("connect_n"),
	rowServeMs:          store.FloatCol("serve_sum_ms"),
	rowServeN:           store.IntCol("serve_n"),
	rowGenerateMs:       store.FloatCol("generate_sum_ms"),
	rowGenerateN:        store.IntCol("generate_n"),
	rowModel:            store.TextCol("model"),
	rowInput:            store.IntCol("input_tokens"),
	rowOutput:           store.IntCol("output_tokens"),
	rowL0:               store.FloatCol("l0_ms"),
	rowProvenance:       store.TextCol("provenance"),
	rowGapsCostMs:       store.FloatCol("retry_gaps_cost_ms"),
	rowRetryCostsMs:     store.FloatListCol("retry_costs_ms"),
	rowOrder:            store.IntCol("request_order"),
}

// dimColumn is the name of segment_rows' column of dimension i (from 0).
func dimColumn(i int) string { return "dim_" + strconv.Itoa(i+1) }

// readRow reads row i of a chunk of segment_rows.sql, read as rowCols: the
// request and its request_order, with its texts numbered in nm. NULL
// numbers are zero, or NaN where reqRow says unknown.
func readRow(c *store.Chunk, i int, nm *names) (reqRow, int64) {
	row := c.Row(i)
	num, float, nan := row.Int, row.Float, math.NaN()
	r := reqRow{startNs: num(rowStartNs), latency: float(rowLatency), attempts: int32(num(rowAttempts)),
		ok: row.Bool(rowOK), stream: row.Bool(rowStream), ttft: row.FloatOr(rowTTFT, nan), first: row.FloatOr(rowFirst, nan),
		generation: row.FloatOr(rowGeneration, nan)}
	x := retryFacts{dup: num(rowDupTokens), second: row.FloatOr(rowSecond, nan), dupInput: num(rowDupInput),
		dupMs: float(rowDupMs), hiddenMs: float(rowHiddenMs), hiddenTokens: num(rowHiddenTokens),
		ceRetries: num(rowCERetries), ceMs: float(rowCEMs), ceTokens: num(rowCETokens)}
	x.route = routeRetries{n: [2]int64{num(rowSameRetries), num(rowAltRetries)}, ok: [2]int64{num(rowSameOK), num(rowAltOK)},
		ms: [2]float64{float(rowSameMs), float(rowAltMs)}, failedMs: float(rowSameFailedMs), failedTokens: num(rowSameFailedTokens)}
	x.hygiene = hygieneRow{raRetries: num(rowRARetries), raIgnored: num(rowRAIgnored), raEarlyMs: float(rowRAEarlyMs),
		raMs: float(rowRAIgnoredMs), gapsMs: row.Floats(rowGapsMs), retryStarts: row.Ints(rowRetryStarts),
		gapsCostMs: float(rowGapsCostMs), retryCostsMs: row.Floats(rowRetryCostsMs)}
	// Only a row that has them keeps its own: x stays on the stack, and a
	// row of one attempt (most of them) allocates nothing for it.
	r.more = noRetries
	if r.retried() || !x.none() {
		kept := x
		r.more = &kept
	}
	r.detail, r.finalTokens, r.finalMs = nm.number(row.TextBytes(rowDetail)), num(rowFinalTokens), float(rowFinalMs)
	r.loops, r.appTries, r.sdkMax = int32(num(rowLoops)), int32(num(rowAppTries)), int32(num(rowSDKMax))
	r.firstTokenSeen, r.task = row.FloatOr(rowFirstTokenSeen, nan), num(rowTask)
	phases := [4][2]int{{rowQueueMs, rowQueueN}, {rowConnectMs, rowConnectN}, {rowServeMs, rowServeN}, {rowGenerateMs, rowGenerateN}}
	for p, col := range phases {
		r.phaseMs[p], r.phaseN[p] = float(col[0]), int32(num(col[1]))
	}
	r.model, r.input, r.output = nm.number(row.TextBytes(rowModel)), num(rowInput), num(rowOutput)
	r.l0, r.provenance = row.FloatOr(rowL0, nan), nm.number(row.TextBytes(rowProvenance))
	return r, num(rowOrder)
}

// byID puts rows, and their width values each, in the order of their ids,
// given as each row's place in that order (segment_rows' request_order;
// with a filter some places are missing), moving each row once.
func byID(rows []reqRow, values []name, order []int64, width int) {
	perm := make([]int32, len(rows))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, func(a, b int32) int { return cmp.Compare(order[a], order[b]) })
	// Position i takes the row at perm[i]: follow each cycle once.
	for i := range perm {
		if perm[i] < 0 || int(perm[i]) == i {
			continue
		}
		row, vals := rows[i], slices.Clone(values[i*width:(i+1)*width])
		j := i
		for {
			k := int(perm[j])
			perm[j] = -1
			if k == i {
				rows[j] = row
				copy(values[j*width:(j+1)*width], vals)
				break
			}
			rows[j] = rows[k]
			copy(values[j*width:(j+1)*width], values[k*width:(k+1)*width])
			j = k
		}
	}
}

// cohortsOf groups rows requests into cohorts by their values of n
// dimensions from the first-th on (values as loadRows gives them, width
// per row, numbered in nm), in the order each combination was first seen.
// A dimension such as a user id can give a cohort per request, a million
// of them: the cohorts share one array of row indexes and one of values
// rather than holding two small slices each.
func cohortsOf(rows int, values []name, nm *names, width, first, n int) []cohort {
	of := make([]int32, rows) // each row's cohort
	var firstRow []int32      // each cohort's first row
	if n == 1 {
		// One dimension: its value's number is the key.
		byName := slices.Repeat([]int32{-1}, len(nm.texts))
		for i := range rows {
			v := values[i*width+first]
			if byName[v] < 0 {
				byName[v] = int32(len(firstRow))
				firstRow = append(firstRow, int32(i))
			}
			of[i] = byName[v]
		}
	} else {
		byKey := make(map[string]int32)
		key := make([]byte, 4*n)
		for i := range rows {
			for d, v := range values[i*width+first : i*width+first+n] {
				binary.LittleEndian.PutUint32(key[4*d:], uint32(v))
			}
			c, ok := byKey[string(key)]
			if !ok {
				c = int32(len(firstRow))
				byKey[string(key)] = c
				firstRow = append(firstRow, int32(i))
			}
			of[i] = c
		}
	}
	// Each cohort's rows are a run of one array, in row order.
	start := make([]int32, len(firstRow)+1)
	for _, c := range of {
		start[c+1]++
	}
	for c := range firstRow {
		start[c+1] += start[c]
	}
	members := make([]int32, rows)
	next := slices.Clone(start[:len(firstRow)])
	for i, c := range of {
		members[next[c]] = int32(i)
		next[c]++
	}
	texts := make([]string, len(firstRow)*n)
	cohorts := make([]cohort, len(firstRow))
	for c, i := range firstRow {
		vals := texts[c*n : (c+1)*n : (c+1)*n]
		for d, v := range values[int(i)*width+first : int(i)*width+first+n] {
			vals[d] = nm.text(v)
		}
		cohorts[c] = cohort{values: vals, rows: members[start[c]:start[c+1]:start[c+1]]}
	}
	return cohorts
}
