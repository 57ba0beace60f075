package segment

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unique"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/queries"
)

// query assembles queries/segment_rows.sql. Every piece of SQL it adds is
// a constant of this file; everything a user supplied goes in args.
type query struct {
	args     []any
	needSpan bool // a dimension reads the anchor span
	whereSQL []string
}

// param binds v and returns its placeholder.
func (q *query) param(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
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
		q.needSpan = true
		k := q.param("cloud.region")
		e = "coalesce(s.attributes[" + k + "], s.resource_attributes[" + k + "])"
	case KindEnvironment:
		q.needSpan = true
		name, old := q.param("deployment.environment.name"), q.param("deployment.environment")
		e = "coalesce(s.resource_attributes[" + name + "], s.resource_attributes[" + old + "], s.attributes[" + name + "], s.attributes[" + old + "])"
	case KindCache:
		q.needSpan = true
		keys := make([]string, len(d.CacheKeys))
		for i, k := range d.CacheKeys {
			keys[i] = "s.attributes[" + q.param(k) + "]"
		}
		n := "TRY_CAST(coalesce(" + strings.Join(keys, ", ") + ") AS DOUBLE)"
		e = "CASE WHEN " + n + " > 0 THEN 'hit' WHEN " + n + " = 0 THEN 'miss' END"
	case KindAttr:
		q.needSpan = true
		e = "s.attributes[" + q.param(d.Name) + "]"
	case KindResource:
		q.needSpan = true
		e = "s.resource_attributes[" + q.param(d.Name) + "]"
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

// build returns the SQL text for spec, with q.args holding its parameters.
func (q *query) build(spec *Spec, since, until int64, baseline bool) string {
	q.param(since)
	q.param(until)
	sqlText := queries.Get("segment_rows")
	var dims strings.Builder
	for i, d := range spec.By {
		fmt.Fprintf(&dims, ", %s AS dim_%d", q.expr(d), i+1)
	}
	for _, f := range spec.Where {
		q.filter(f)
	}
	if spec.TaskKey != "" {
		q.needSpan = true
		sqlText = fill(sqlText, "/*task*/", "s.attributes["+q.param(spec.TaskKey)+"],")
	} else {
		sqlText = fill(sqlText, "/*task*/", "")
	}
	var joins []string
	if q.needSpan {
		joins = append(joins, "LEFT JOIN spans s ON s.trace_id = r.trace_id AND s.span_id = r.span_id")
	}
	if baseline {
		joins = append(joins, "LEFT JOIN (SELECT request_id, avg(l0_ms) AS l0_ms,"+
			" string_agg(DISTINCT provenance, '+' ORDER BY provenance) FILTER (WHERE l0_ms IS NOT NULL) AS provenance"+
			" FROM baselines WHERE kind = "+q.param(spec.BaselineKind)+" GROUP BY request_id) b"+
			" ON b.request_id = r.request_id")
		sqlText = fill(sqlText, "/*baseline*/ NULL::DOUBLE AS l0_ms, NULL::VARCHAR AS provenance", "b.l0_ms, b.provenance")
	} else {
		sqlText = fill(sqlText, "/*baseline*/", "")
	}
	sqlText = fill(sqlText, "/*dims*/", dims.String())
	sqlText = fill(sqlText, "/*joins*/", strings.Join(joins, "\n"))
	return fill(sqlText, "/*where*/", strings.Join(q.whereSQL, "\n"))
}

// fill replaces marker, which must occur exactly once in sqlText.
func fill(sqlText, marker, with string) string {
	if n := strings.Count(sqlText, marker); n != 1 {
		panic(fmt.Sprintf("segment: segment_rows.sql has %d markers %s, want 1", n, marker))
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
	// detail is outcome_detail ("" for NULL); finalTokens and finalMs
	// the final attempt's output tokens and time.
	detail      string
	finalTokens int64
	finalMs     float64
	// loops, appTries, sdkMax: retry loops, tries of the outer one, most
	// tries of the inner one in one outer try (0 for one loop).
	loops, appTries, sdkMax int32
	// model, input and output: what spend is computed from.
	model         string
	input, output int64
	// task identifies the request's task.
	task string
	// phaseMs, phaseN: queue, connect, serve and generate time summed over
	// the attempts that show each, and how many do.
	phaseMs [4]float64
	phaseN  [4]int64
	// firstTokenSeen: start to the first token of any attempt, NaN for none.
	firstTokenSeen float64
	attempts       int32
	ok             bool
	stream         bool
	provenance     string
}

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
		h.raRetries == 0 && h.raIgnored == 0 && h.raEarlyMs == 0 && h.raMs == 0 && len(h.gapsMs) == 0 && len(h.retryStarts) == 0
}

// cohort is the requests sharing one combination of dimension values.
type cohort struct {
	values []string
	rows   []int32 // indexes into the loaded rows
}

// loadRows runs the segment query and returns each request, and the
// values of its dimensions: those of row i are values[i*len(spec.By):].
func loadRows(ctx context.Context, st *store.Store, spec *Spec, since, until int64, baseline bool) ([]reqRow, []string, error) {
	var q query
	text := q.build(spec, since, until, baseline)
	// The rows are sized once: growing a slice of rows this wide (248
	// bytes each) by appending copies them again at every doubling, and at
	// a million requests that cost seconds in fresh pages. Without filters
	// the query yields one row per request of the window, so their count
	// is exact; a filter may keep few of them, and then the rows grow as
	// they come rather than reserve room for all.
	var n int64
	if len(q.whereSQL) == 0 {
		if err := st.Conn.QueryRowContext(ctx, `SELECT count(*) FROM requests WHERE start_ns >= $1 AND start_ns < $2`, since, until).Scan(&n); err != nil {
			return nil, nil, fmt.Errorf("segment requests: %w", err)
		}
	}
	rows, err := st.Conn.QueryContext(ctx, text, q.args...)
	if err != nil {
		return nil, nil, fmt.Errorf("segment requests: %w", err)
	}
	defer rows.Close()
	out := make([]reqRow, 0, n)
	values := make([]string, 0, n*int64(len(spec.By)))
	order := make([]int64, 0, n)
	dims := make([]string, len(spec.By))
	var (
		r                                         reqRow
		x                                         retryFacts
		ttft, first, second, gen, l0, dupMs, hidd sql.NullFloat64
		dupIn, hiddTok, ceRetries, ceTokens       sql.NullInt64
		ceMs                                      sql.NullFloat64
		hyg                                       hygieneScan
		prov                                      sql.NullString
		detail, mdl                               sql.NullString
		finalMs                                   sql.NullFloat64
		sdkMax                                    sql.NullInt32
		seen                                      sql.NullFloat64
		place                                     int64
	)
	dest := []any{&r.startNs, &r.latency, &r.attempts, &r.ok, &r.stream, &ttft, &x.dup, &first, &second,
		&gen, &dupIn, &dupMs, &hidd, &hiddTok, &ceRetries, &ceMs, &ceTokens}
	dest = append(dest, x.route.dest()...)
	dest = append(dest, hyg.dest()...)
	dest = append(dest, &detail, &r.finalTokens, &finalMs, &r.loops, &r.appTries, &sdkMax, &seen, &r.task,
		&r.phaseMs[0], &r.phaseN[0], &r.phaseMs[1], &r.phaseN[1], &r.phaseMs[2], &r.phaseN[2], &r.phaseMs[3], &r.phaseN[3],
		&mdl, &r.input, &r.output, &l0, &prov, &place)
	for i := range dims {
		dest = append(dest, &dims[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, fmt.Errorf("segment requests: %w", err)
		}
		r.ttft, r.first, r.generation, r.l0 = orNaN(ttft), orNaN(first), orNaN(gen), orNaN(l0)
		x.second = orNaN(second)
		x.dupInput, x.dupMs, x.hiddenMs, x.hiddenTokens = dupIn.Int64, dupMs.Float64, hidd.Float64, hiddTok.Int64
		x.ceRetries, x.ceMs, x.ceTokens = ceRetries.Int64, ceMs.Float64, ceTokens.Int64
		x.hygiene = hyg.row()
		r.more = noRetries
		if r.retried() || !x.none() {
			more := x
			r.more = &more
		}
		r.provenance = intern(prov.String)
		r.detail, r.finalMs, r.sdkMax, r.model = intern(detail.String), finalMs.Float64, sdkMax.Int32, intern(mdl.String)
		r.firstTokenSeen = orNaN(seen)
		for _, d := range dims {
			values = append(values, intern(d))
		}
		out = append(out, r)
		order = append(order, place)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("segment requests: %w", err)
	}
	byID(out, values, order, len(dims))
	return out, values, nil
}

// intern returns the one copy of s that the rows share: segment values,
// models and outcome details repeat across requests, and a copy per
// request would hold millions of small strings.
func intern(s string) string { return unique.Make(s).Value() }

// byID puts rows, and their width values each, in the order of their ids,
// given as each row's place in that order (segment_rows' request_order;
// with a filter some places are missing), moving each row once.
func byID(rows []reqRow, values []string, order []int64, width int) {
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
// per row), in the order each combination was first seen.
func cohortsOf(rows int, values []string, width, first, n int) []*cohort {
	var cohorts []*cohort
	byKey := make(map[string]*cohort)
	for i := range rows {
		dims := values[i*width+first : i*width+first+n]
		key := strings.Join(dims, "\x00")
		c := byKey[key]
		if c == nil {
			c = &cohort{values: append([]string{}, dims...)}
			byKey[key] = c
			cohorts = append(cohorts, c)
		}
		c.rows = append(c.rows, int32(i))
	}
	return cohorts
}

func orNaN(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}
