package analysis

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unique"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/texttab"
	"github.com/retryscope/retryscope/model"
)

// MarginalYield is what each further attempt buys (docs/report.md, "The JSON
// report"): for the workload and each segment of FindingDims, per attempt
// number n, the cumulative success C(n), the conditional success c(n), the
// requests attempt n rescued per 1,000 and the p99 that allowing attempt n
// adds; and the attempt ceiling the data supports within the stated budgets.
type MarginalYield struct {
	// P99BudgetMs and AmplificationBudget are the budgets the ceiling
	// keeps to; null when none was given.
	P99BudgetMs         *float64       `json:"p99_budget_ms"`
	AmplificationBudget *float64       `json:"amplification_budget"`
	Workload            YieldCurve     `json:"workload"`
	Segments            []YieldSegment `json:"segments"`
	// Transport and Evaluator, where the window has re-prompts after a
	// rejected output (null otherwise), count the two kinds of attempt
	// apart: Transport per try of one prompt (its rows count prompts),
	// Evaluator per prompt of a request.
	Transport *YieldCurve `json:"transport"`
	Evaluator *YieldCurve `json:"evaluator"`
}

// YieldCurve is the marginal yield of one set of requests.
type YieldCurve struct {
	// Requests counts what the curve follows: requests, or for the
	// transport curve prompts (Unit says which, where not requests).
	Requests int        `json:"requests"`
	Unit     string     `json:"unit,omitempty"`
	Rows     []YieldRow `json:"rows"`
	// Ceiling is the most attempts the budgets allow: the largest n whose
	// p99 and amplification, capped at n, keep to them. Null without a
	// budget, or when the sample is too small for its p99.
	Ceiling *int `json:"ceiling"`
	// CeilingWhy says how the ceiling was found, or why there is none.
	CeilingWhy string `json:"ceiling_why"`
}

// YieldSegment is the marginal yield of one segment of FindingDims.
type YieldSegment struct {
	Segment map[string]string `json:"segment"`
	YieldCurve
}

// YieldRow is attempt n of a yield curve.
type YieldRow struct {
	Attempt int `json:"attempt"`
	// Reached counts the requests that made attempt n (were still in the
	// loop); Cleared those whose answer came from attempt n.
	Reached int `json:"reached"`
	Cleared int `json:"cleared"`
	// Conditional is c(n) = Cleared / Reached; Cumulative is C(n), the
	// share of all requests that had succeeded by attempt n.
	Conditional float64 `json:"conditional_success"`
	Cumulative  float64 `json:"cumulative_success"`
	// RescuedPer1000 is 1,000 · (C(n) − C(n−1)); null for attempt 1,
	// which rescues nothing.
	RescuedPer1000 *float64 `json:"rescued_per_1000"`
	// P99Ms is the p99 latency of all the requests had they been capped
	// at n attempts (a request capped ends at attempt n's end, failed);
	// AddedP99Ms is P99Ms − the p99 capped at n−1. Null when the sample
	// is too small for a p99.
	P99Ms      *float64 `json:"p99_ms"`
	AddedP99Ms *float64 `json:"added_p99_ms"`
	// Amplification is attempts per request capped at n.
	Amplification float64 `json:"amplification"`
}

// cappedLatencies fills out (one per request) with the requests'
// latencies had they been capped at n attempts, sorted: a request capped
// ends at attempt n's end.
func cappedLatencies(reqs []*Request, n int, out []float64) {
	for i, r := range reqs {
		out[i] = r.latency
		if r.attempts > n {
			out[i] = r.at[n-1].endMs
		}
	}
	slices.Sort(out)
}

// YieldBudget is what an attempt ceiling must keep to; a nil side is no
// budget.
type YieldBudget struct {
	P99Ms         *float64
	Amplification *float64
}

// yieldArithmetic turns conditional success rates into the cumulative and
// rescued columns: C(n) = C(n−1) + in(n)·c(n), where in(n) is the share of
// all requests still in the loop at attempt n. Without inLoop every
// request not yet cleared is still in the loop, in(n) = 1 − C(n−1), which
// gives C(n+1) = C(n) + (1 − C(n))·c(n+1).
func yieldArithmetic(conditional, inLoop []float64) []YieldRow {
	rows := make([]YieldRow, len(conditional))
	prev := 0.0
	for i, c := range conditional {
		in := 1 - prev
		if inLoop != nil {
			in = inLoop[i]
		}
		cum := prev + in*c
		rows[i] = YieldRow{Attempt: i + 1, Conditional: c, Cumulative: cum}
		if i > 0 {
			r := 1000 * (cum - prev)
			rows[i].RescuedPer1000 = &r
		}
		prev = cum
	}
	return rows
}

// Request is one logical request with its attempts, as the yield
// curve and the capacity timeline see it.
type Request struct {
	seg      [3]string // service, operation, route
	startNs  int64
	latency  float64
	attempts int
	used     int // ordinal of the attempt whose answer was used, 0: failed
	// unfinished: the request never returned (outcome_detail unfinished).
	unfinished bool
	at         []yieldAttempt // by ordinal − 1
}

// yieldAttempt is one attempt of a Request.
type yieldAttempt struct {
	startNs, endNs int64
	endMs          float64 // end after the request's start
	costMs         float64 // elapsed time and the gap before it
	tokens         int64
	hiddenMs       float64 // server time after the client abandoned it
	rejected       bool    // an evaluator rejected its output
}

// loadedKey keys the requests Build loaded in the context it passes to
// the detectors, so they are read once per report.
type loadedKey struct{}

// loadedRequests are requests loaded for one window.
type loadedRequests struct {
	win  model.Window
	reqs []*Request
}

// WithRequests returns ctx carrying reqs, the requests of win.
func WithRequests(ctx context.Context, win model.Window, reqs []*Request) context.Context {
	return context.WithValue(ctx, loadedKey{}, loadedRequests{win, reqs})
}

// yieldRequests returns the requests of win with their attempts: those
// ctx carries for win, or else read from st.
func yieldRequests(ctx context.Context, st *store.Store, win model.Window) ([]*Request, error) {
	if l, ok := ctx.Value(loadedKey{}).(loadedRequests); ok && l.win == win {
		return l.reqs, nil
	}
	return LoadRequests(ctx, st, win)
}

// LoadRequests reads the requests of win with their attempts.
func LoadRequests(ctx context.Context, st *store.Store, win model.Window) ([]*Request, error) {
	lo, hi := win.Bounds()
	from := lo
	if from > math.MinInt64+int64(time.Hour) {
		from -= int64(time.Hour)
	}
	// Requests and attempts are cut from blocks: at ten million spans,
	// six slices grown per request held twice the memory.
	var out []*Request
	var reqs []Request
	var atts []yieldAttempt
	var cur *Request
	var curID string
	var curOK bool
	err := st.StreamChunks(ctx, store.QueryFile("yield_attempts"), []any{lo, hi, from}, yieldCols[:], func(c *store.Chunk) error {
		for i := range c.Len() {
			row := c.Row(i)
			// A request's attempts come together: its id is copied once.
			if cur == nil || !row.TextIs(yRequestID, curID) {
				if len(reqs) == cap(reqs) {
					reqs = make([]Request, 0, yieldBlock)
				}
				// Room for the attempts the request counts; more grow apart.
				n := int(row.Int(yReqAttempts))
				room := min(max(n, 0), yieldBlock)
				if room > cap(atts)-len(atts) {
					atts = make([]yieldAttempt, 0, yieldBlock)
				}
				// The segment's values repeat across requests: one copy each.
				seg := func(col int) string { return unique.Make(row.Text(col)).Value() }
				reqs = append(reqs, Request{seg: [3]string{seg(yService), seg(yOperation), seg(yRoute)},
					startNs: row.Int(yReqStart), latency: row.Float(yLatency), attempts: n, unfinished: row.Bool(yUnfinished),
					at: atts[len(atts) : len(atts) : len(atts)+room]})
				atts = atts[:len(atts)+room]
				cur, curOK = &reqs[len(reqs)-1], row.Bool(yOK)
				curID = row.Text(yRequestID)
				out = append(out, cur)
			}
			ordinal := row.Int(yOrdinal)
			if ordinal != int64(len(cur.at)+1) {
				return fmt.Errorf("request %s: attempt %d follows %d", curID, ordinal, len(cur.at))
			}
			// The answer used is the first final attempt that succeeded.
			if curOK && cur.used == 0 && row.Bool(yFinalOK) {
				cur.used = int(ordinal)
			}
			cur.at = append(cur.at, yieldAttempt{startNs: row.Int(yStart), endNs: row.Int(yEnd),
				endMs: row.Float(yEndOffset), costMs: row.Float(yCost), tokens: row.Int(yTokens), hiddenMs: row.Float(yHidden), rejected: row.Bool(yRejected)})
		}
		return nil
	})
	return out, err
}

// yieldBlock is how many requests, or attempts, one block holds.
const yieldBlock = 4096

// The columns of yield_attempts, read by name, by name.
const (
	yRequestID = iota
	yService
	yOperation
	yRoute
	yReqStart
	yLatency
	yReqAttempts
	yOK
	yOrdinal
	yFinalOK
	yStart
	yEnd
	yEndOffset
	yCost
	yTokens
	yHidden
	yRejected
	yUnfinished
	yieldColumns
)

var yieldCols = [yieldColumns]store.Col{
	yRequestID:   store.TextCol("request_id"),
	yService:     store.TextCol("service"),
	yOperation:   store.TextCol("operation"),
	yRoute:       store.TextCol("route"),
	yReqStart:    store.IntCol("req_start_ns"),
	yLatency:     store.FloatCol("latency_ms"),
	yReqAttempts: store.IntCol("req_attempts"),
	yOK:          store.BoolCol("ok"),
	yOrdinal:     store.IntCol("ordinal"),
	yFinalOK:     store.BoolCol("final_ok"),
	yStart:       store.IntCol("start_ns"),
	yEnd:         store.IntCol("end_ns"),
	yEndOffset:   store.FloatCol("end_offset_ms"),
	yCost:        store.FloatCol("cost_ms"),
	yTokens:      store.IntCol("tokens"),
	yHidden:      store.FloatCol("hidden_work_ms"),
	yRejected:    store.BoolCol("rejected"),
	yUnfinished:  store.BoolCol("unfinished"),
}

// yieldCurve measures the marginal yield of reqs.
func yieldCurve(reqs []*Request, rule model.Rule, budget YieldBudget) YieldCurve {
	most := 0
	for _, r := range reqs {
		most = max(most, r.attempts)
	}
	if most == 0 {
		return YieldCurve{Requests: len(reqs), Rows: []YieldRow{}, CeilingWhy: "no requests"}
	}
	reached, cleared := make([]int, most), make([]int, most)
	for _, r := range reqs {
		for k := range r.attempts {
			reached[k]++
		}
		if r.used > 0 {
			cleared[r.used-1]++
		}
	}
	// Capped at n, a request ends, failed, at attempt n's end.
	capAt := func(i, n int) (float64, int) {
		r := reqs[i]
		if r.attempts > n {
			return r.at[n-1].endMs, n
		}
		return r.latency, r.attempts
	}
	return *curveOf(len(reqs), len(reqs), reached, cleared, capAt, rule, budget, "")
}

// ceiling is the largest attempt count whose capped p99 and amplification
// keep to budget.
func ceiling(rows []YieldRow, budget YieldBudget) (*int, string) {
	if budget.P99Ms == nil && budget.Amplification == nil {
		return nil, "no budget given (--p99-budget, --amplification-budget)"
	}
	var parts []string
	if budget.P99Ms != nil {
		parts = append(parts, "p99 at most "+texttab.FormatMs(*budget.P99Ms))
	}
	if budget.Amplification != nil {
		parts = append(parts, "amplification at most "+texttab.Format(texttab.Times, *budget.Amplification))
	}
	why := "the most attempts that keep " + strings.Join(parts, " and ")
	best := 0
	for _, r := range rows {
		if budget.P99Ms != nil && r.P99Ms == nil {
			return nil, "too few requests for a p99"
		}
		if (budget.P99Ms == nil || *r.P99Ms <= *budget.P99Ms) && (budget.Amplification == nil || r.Amplification <= *budget.Amplification) {
			best = r.Attempt
		}
	}
	if best == 0 {
		return nil, "even one attempt breaks the budget (" + strings.Join(parts, ", ") + ")"
	}
	return &best, why
}

// MarginalYieldOf measures the yield curve of the workload and of each
// segment of FindingDims with at least minCohort requests and a retry.
func MarginalYieldOf(reqs []*Request, rule model.Rule, budget YieldBudget, minCohort int) *MarginalYield {
	my := &MarginalYield{P99BudgetMs: budget.P99Ms, AmplificationBudget: budget.Amplification,
		Workload: yieldCurve(reqs, rule, budget), Segments: []YieldSegment{}}
	if p, reprompted := roundsOf(reqs); reprompted {
		my.Transport, my.Evaluator = transportCurve(p, rule, budget), evaluatorCurve(p, rule, budget)
	}
	for _, g := range bySegment(reqs) {
		retried := slices.ContainsFunc(g.reqs, func(r *Request) bool { return r.attempts > 1 })
		if len(g.reqs) < minCohort || !retried {
			continue
		}
		my.Segments = append(my.Segments, YieldSegment{Segment: g.seg, YieldCurve: yieldCurve(g.reqs, rule, budget)})
	}
	return my
}

// segmentRequests are the requests of one segment of FindingDims.
type segmentRequests struct {
	seg  map[string]string
	reqs []*Request
}

// bySegment groups reqs by FindingDims, in the order of the values.
func bySegment(reqs []*Request) []segmentRequests {
	groups := map[[3]string]*segmentRequests{}
	var keys [][3]string
	for _, r := range reqs {
		g := groups[r.seg]
		if g == nil {
			g = &segmentRequests{seg: map[string]string{}}
			for i, k := range FindingDims {
				g.seg[string(k)] = r.seg[i]
			}
			groups[r.seg] = g
			keys = append(keys, r.seg)
		}
		g.reqs = append(g.reqs, r)
	}
	slices.SortFunc(keys, func(a, b [3]string) int { return slices.Compare(a[:], b[:]) })
	out := make([]segmentRequests, len(keys))
	for i, k := range keys {
		out[i] = *groups[k]
	}
	return out
}
