package whatif

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/retryscope/retryscope/model"
	"slices"
	"strconv"
	"strings"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/queries"
)

// Segment is where a request belongs: its service, operation and route.
type Segment struct {
	Service   string `json:"service"`
	Operation string `json:"operation"`
	Route     string `json:"route"`
}

// recAttempt is one recorded attempt; times are ms after its request's
// start.
type recAttempt struct {
	tries    []int
	startMs  float64
	endMs    float64
	latestMs float64 // the latest end of the attempts before it
	route    string
	ok       bool
	trigger  string
	tokens   int64
	gapMs    float64 // start minus latestMs; 0 for the first
	hiddenMs float64 // server time after the client abandoned it
	atNs     int64   // its start, Unix ns
	// retryAfterMs is the wait its answer asked for (Retry-After), 0
	// when none.
	retryAfterMs float64
	// target is where it went: its endpoint (host:port) and model.
	target string
	// usd is its input and output tokens at its model's price, and
	// priced whether there was one (Options.Prices).
	usd    float64
	priced bool
	// fallback marks an attempt of the request's fallback try
	// (markFallback).
	fallback bool
}

// recRequest is one recorded logical request.
type recRequest struct {
	id        string
	seg       Segment
	startNs   int64
	endNs     int64
	latencyMs float64
	ok        bool
	attempts  []recAttempt
	task      string // its trace, or its --task-key value
	detail    string // what ended it (requests.outcome_detail), "" when nothing says
	// quotaStop, when set, says its client's retry quota stopped it, in
	// the AWS SDKs' words (whatif_quota_stops).
	quotaStop *quotaStop
}

// quotaStop is what a request's error said of the retry quota that
// stopped it: the tokens left and the retry's cost, each -1 when it did
// not say.
type quotaStop struct {
	available, requested float64
}

// load reads every logical request starting in window with its attempts,
// in start order; a
// request's task is the value of the taskKey attribute of its anchor span
// ("" for its trace).
func load(ctx context.Context, st *store.Store, taskKey string, window model.Window, prices model.Prices) ([]*recRequest, error) {
	lo, hi := window.Bounds()
	text, args := queries.Get("whatif_attempts"), []any{lo, hi}
	if taskKey != "" {
		// The query's task parts, commented out, read the task from $3.
		text = strings.NewReplacer("/*task:", "", ":task*/", "").Replace(text)
		args = append(args, taskKey)
	}
	rows, err := st.QueryText(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("read attempts: %w", err)
	}
	defer rows.Close()
	var out []*recRequest
	var cur *recRequest
	// A model's price is looked up once: a miss (a model the table does
	// not list) sorts the table's names, and every attempt would pay it.
	type price struct {
		p  model.Price
		ok bool
	}
	priced := map[string]price{}
	priceOf := func(name string) (model.Price, bool) {
		if name == "" {
			return model.Price{}, false
		}
		pr, seen := priced[name]
		if !seen {
			pr.p, pr.ok = prices.Lookup(name)
			priced[name] = pr
		}
		return pr.p, pr.ok
	}
	for rows.Next() {
		var (
			r               recRequest
			a               recAttempt
			ordinal         int
			tries           string
			start, end      int64
			gap             sql.NullFloat64
			endpoint, model string
			input, output   int64
		)
		if err := rows.Scan(&r.id, &r.seg.Service, &r.seg.Operation, &r.seg.Route, &r.startNs, &r.endNs, &r.latencyMs, &r.ok,
			&ordinal, &tries, &start, &end, &a.route, &a.ok, &a.trigger, &gap, &input, &output, &a.hiddenMs, &a.retryAfterMs, &r.task,
			&endpoint, &model, &r.detail); err != nil {
			return nil, fmt.Errorf("read attempts: %w", err)
		}
		a.tokens = input + output
		if p, ok := priceOf(model); ok {
			a.usd, a.priced = p.Cost(input, output), true
		}
		if endpoint != "" || model != "" {
			a.target = endpoint + " " + model
		}
		if cur == nil || cur.id != r.id {
			markFallback(cur)
			cur = &r
			out = append(out, cur)
		}
		if ordinal != len(cur.attempts)+1 {
			return nil, fmt.Errorf("request %s: attempt %d follows %d", r.id, ordinal, len(cur.attempts))
		}
		if a.tries, err = parseTries(tries, ordinal); err != nil {
			return nil, fmt.Errorf("request %s: %w", r.id, err)
		}
		a.startMs, a.endMs = msAfter(start, cur.startNs), msAfter(end, cur.startNs)
		a.gapMs, a.atNs = gap.Float64, start
		a.latestMs = a.startMs - a.gapMs
		cur.attempts = append(cur.attempts, a)
	}
	markFallback(cur)
	if err := rows.Err(); err != nil {
		return nil, err
	}
	keepLoopFallbacks(out)
	if err := markQuotaStops(ctx, st, window, out); err != nil {
		return nil, err
	}
	return out, nil
}

// markQuotaStops marks the requests of reqs whose client's retry quota
// stopped them (whatif_quota_stops).
func markQuotaStops(ctx context.Context, st *store.Store, window model.Window, reqs []*recRequest) error {
	lo, hi := window.Bounds()
	rows, err := st.Query(ctx, "whatif_quota_stops", lo, hi)
	if err != nil {
		return fmt.Errorf("read retry quota stops: %w", err)
	}
	defer rows.Close()
	byID := map[string]*recRequest{}
	for _, r := range reqs {
		byID[r.id] = r
	}
	for rows.Next() {
		var (
			id                   string
			available, requested sql.NullFloat64
		)
		if err := rows.Scan(&id, &available, &requested); err != nil {
			return fmt.Errorf("read retry quota stops: %w", err)
		}
		if r := byID[id]; r != nil {
			r.quotaStop = &quotaStop{available: -1, requested: -1}
			if available.Valid && requested.Valid {
				r.quotaStop.available, r.quotaStop.requested = available.Float64, requested.Float64
			}
		}
	}
	return rows.Err()
}

// keepLoopFallbacks unmarks, per segment, fallback tries that are the app
// loop's own last try rather than a try after it: those that follow the
// try before them after the loop's backoff (their median wait at least a
// quarter of the median wait before the segment's primary app retries).
// Such a client (gen's nested one) counts its fallback among the app
// loop's tries, so a cap on the app loop caps it too, as any app try.
func keepLoopFallbacks(reqs []*recRequest) {
	retryGaps, fallbackGaps := map[Segment][]float64{}, map[Segment][]float64{}
	for _, r := range reqs {
		for i, a := range r.attempts {
			n := len(a.tries)
			if i == 0 || n < 2 || a.tries[0] < 2 || a.tries[n-1] != 1 {
				continue
			}
			if a.fallback {
				fallbackGaps[r.seg] = append(fallbackGaps[r.seg], a.gapMs)
			} else {
				retryGaps[r.seg] = append(retryGaps[r.seg], a.gapMs)
			}
		}
	}
	inLoop := map[Segment]bool{}
	for seg, f := range fallbackGaps {
		g := retryGaps[seg]
		inLoop[seg] = len(g) > 0 && median(f) >= median(g)/4
	}
	for _, r := range reqs {
		if !inLoop[r.seg] {
			continue
		}
		for i := range r.attempts {
			r.attempts[i].fallback = false
		}
	}
}

// median is the median of v, which it sorts.
func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// markFallback marks the fallback try of a nested request (attempts of
// two layers or more): its last app try, when that went to another
// target (endpoint or model) than its first app try. A client falls over
// to a second provider once its own loop on the first is spent; the
// route (server.address) alone may not tell them apart.
func markFallback(r *recRequest) {
	if r == nil || len(r.attempts) == 0 || len(r.attempts[0].tries) < 2 {
		return
	}
	last, first, lastTarget := 0, "", ""
	for _, a := range r.attempts {
		if len(a.tries) < 2 {
			return
		}
		if a.tries[0] == 1 && first == "" {
			first = a.target
		}
		if a.tries[0] > last {
			last, lastTarget = a.tries[0], a.target
		}
	}
	if last < 2 || first == "" || lastTarget == "" || lastTarget == first {
		return
	}
	for i := range r.attempts {
		r.attempts[i].fallback = r.attempts[i].tries[0] == last
	}
}

// fallbackTry is the app try of r's fallback, 0 when it has none.
func (r *recRequest) fallbackTry() int {
	if n := len(r.attempts); n > 0 && r.attempts[n-1].fallback {
		return r.attempts[n-1].tries[0]
	}
	return 0
}

func msAfter(t, base int64) float64 { return float64(t-base) / 1e6 }

// parseTries reads "1,2"; without any, the attempt is try ordinal of one loop.
func parseTries(s string, ordinal int) ([]int, error) {
	if s == "" {
		return []int{ordinal}, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("tries %q: %w", s, err)
		}
		out[i] = n
	}
	return out, nil
}

// served reports whether the server answered the attempt: it succeeded,
// or the caller turned its answer down.
func (a recAttempt) served() bool { return a.ok || a.trigger == "rejected_output" }

// verdicts counts the request's served attempts and those of them whose
// answer the caller turned down.
func (r *recRequest) verdicts() (served, rejected int) {
	for _, a := range r.attempts {
		if a.served() {
			served++
			if !a.ok {
				rejected++
			}
		}
	}
	return served, rejected
}
