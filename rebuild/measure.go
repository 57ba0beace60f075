package rebuild

import (
	"cmp"
	"math"
	"slices"

	"github.com/retryscope/retryscope/model"
)

// emit measures a grouped request and writes it with its attempts.
func (b *builder) emit(g *group) error {
	req, attempts, final := measure(g)
	req.OutcomeDetail = outcomeDetail(req, g, attempts, final, b.dump)
	return b.out.write(req, attempts)
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// measure classifies the attempts of a request, picks its final attempt,
// and decomposes its latency (docs/recognition.md, "Latency decomposition").
// It returns the request, its attempts and the index of the final one.
func measure(g *group) (*model.Request, []*model.Attempt, int) {
	sortGroup(g)
	triggers := attemptTriggers(g)
	retryableClientErrors(g, triggers)
	final := finalAttempt(g.attempts, triggers)
	req := requestOf(g, triggers, final)
	decompose(req, g, final)
	attempts := attemptRows(g, req.ID, triggers, final)
	for i, a := range attempts {
		req.HiddenWorkMs += a.HiddenWorkMs
		req.HiddenOutputTokens += a.HiddenOutputTokens
		if a.InputTokens != nil {
			req.InputTokens += *a.InputTokens
		}
		if a.OutputTokens != nil {
			req.OutputTokens += *a.OutputTokens
			if i != final {
				req.DuplicatedOutputTokens += *a.OutputTokens
			}
		}
		req.Stream = req.Stream || firstToken(g, i) != nil
	}
	req.Route, req.FinalRoute = attempts[0].Route, attempts[final].Route
	req.Model, req.FinalModel = attempts[0].Model, attempts[final].Model
	if ft := firstToken(g, final); req.Outcome == model.OutcomeOK && ft != nil {
		ttft, gen := ms(*ft-req.StartNS), ms(g.attempts[final].end-*ft)
		req.TTFTMs, req.GenerationMs = &ttft, &gen
	}
	return req, attempts, final
}

// requestOf fills in what the anchor, the layers and the triggers say: id,
// times, outcome and triggers.
func requestOf(g *group, triggers []string, final int) *model.Request {
	first, f := g.attempts[0], g.attempts[final]
	req := &model.Request{Linkage: g.linkage, Inferred: g.inferred, Attempts: len(g.attempts), AttachedTo: g.attached,
		Service: first.service, Operation: first.name, TraceID: first.traceID, SpanID: first.spanID,
		StartNS: first.start, EndNS: f.end, LayerCounts: slices.Clone(g.layers), Layers: multipliers(g.layers)}
	if a := g.anchor; a != nil {
		req.Service, req.Operation, req.TraceID, req.SpanID = a.service, a.name, a.traceID, a.spanID
		// The client's clock runs to the final response: an anchor that
		// ends before its final attempt (or starts after its first, a
		// span ended or begun out of place) does not cut the request
		// short, so the latency is never shorter than its attempts and
		// the decomposition adds up.
		req.StartNS, req.EndNS = min(a.start, first.start), max(a.end, f.end)
	}
	req.ID = req.TraceID + ":" + req.SpanID
	req.LatencyMs = ms(req.EndNS - req.StartNS)
	req.Outcome = model.OutcomeOK
	if triggers[final] != "" || (g.anchor != nil && g.anchor.failedItself()) {
		req.Outcome = model.OutcomeError
		req.FinalTrigger = model.Trigger(triggers[final])
		if req.FinalTrigger == "" {
			req.FinalTrigger = model.Trigger(g.anchor.trigger)
		}
	}
	req.Triggers = []string{}
	for i, t := range triggers {
		if t != "" && (i != final || req.Outcome == model.OutcomeError) {
			req.Triggers = append(req.Triggers, t)
		}
	}
	return req
}

// attemptRows describes each attempt: its outcome, usage, first token, the
// gap before it and its overlap with earlier attempts, hidden work.
func attemptRows(g *group, requestID string, triggers []string, final int) []*model.Attempt {
	attempts := make([]*model.Attempt, len(g.attempts))
	var reach int64
	for i, s := range g.attempts {
		a := &model.Attempt{RequestID: requestID, TraceID: s.traceID, SpanID: s.spanID, Ordinal: i + 1, Tries: g.tries[i],
			Service: s.service, Name: s.name, Route: attemptRoute(s, g.owners[i]), Model: attemptModel(s, g.owners[i]),
			Operation: attemptOperation(s), StartNS: s.start, EndNS: s.end, Outcome: model.OutcomeOK,
			Trigger: model.Trigger(triggers[i]), Final: i == final, HTTPStatus: s.httpStatus, GRPCStatus: s.grpcStatus,
			ErrorType: s.errorType, RetryAfterS: s.retryAfterS, ServerEndNS: s.serverEnd}
		if triggers[i] != "" {
			a.Outcome = model.OutcomeError
		}
		a.InputTokens, a.OutputTokens = attemptUsage(g, i)
		if s.firstToken != nil {
			v := ms(*s.firstToken - s.start)
			a.TTFTMs = &v
		}
		a.FirstTokenOutside = s.firstTokenOutside
		if i > 0 {
			gap := ms(s.start - reach)
			a.GapBeforeMs = &gap
			if reach > s.start {
				a.OverlapMs = ms(min(reach, s.end) - s.start)
			}
		}
		reach = max(reach, s.end)
		if s.serverEnd != nil && *s.serverEnd > s.end {
			a.HiddenWorkMs = ms(*s.serverEnd - s.end)
			if s.serverOutput != nil {
				var received int64
				if a.OutputTokens != nil {
					received = *a.OutputTokens
				}
				a.HiddenOutputTokens = max(0, *s.serverOutput-received)
			}
		}
		setPhases(a, s)
		attempts[i] = a
	}
	fillModels(attempts)
	return attempts
}

// firstToken is the first token of attempt i: on its own span, or, for the
// last attempt of an SDK call, on the SDK span (OpenLLMetry records stream
// chunks there).
func firstToken(g *group, i int) *int64 {
	if ft := g.attempts[i].firstToken; ft != nil {
		return ft
	}
	if o := g.owners[i]; o != nil && lastOfOwner(g, i) {
		return o.firstToken
	}
	return nil
}

// sortGroup puts attempts in start order (attempts that start together
// in their counters' order), keeping tries and owners beside
// them.
func sortGroup(g *group) {
	idx := make([]int, len(g.attempts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		a, b := g.attempts[x], g.attempts[y]
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(retryOrder(a), retryOrder(b)), cmp.Compare(a.traceID, b.traceID), cmp.Compare(a.spanID, b.spanID))
	})
	attempts, tries, owners := make([]*span, len(idx)), make([][]int, len(idx)), make([]*span, len(idx))
	for i, j := range idx {
		attempts[i], tries[i], owners[i] = g.attempts[j], g.tries[j], g.owners[j]
	}
	g.attempts, g.tries, g.owners = attempts, tries, owners
}

func multipliers(counts []int) []float64 {
	out := make([]float64, len(counts))
	prev := 1
	for i, c := range counts {
		out[i] = float64(c) / float64(prev)
		prev = c
	}
	return out
}

// attemptTriggers classifies each attempt: its own failure; a rejection
// recorded on the SDK span of the call whose answer it returned; an answer
// the caller gave up on and sent again (abandoned: the loop that grouped
// the request says so, or a later attempt re-sends this one); with no
// response at all, a timeout when another attempt came after it; with an
// answer but another attempt started after it ended, unknown; with no
// response while an overlapping attempt answered first, cancelled.
func attemptTriggers(g *group) []string {
	out := make([]string, len(g.attempts))
	for i, s := range g.attempts {
		out[i] = s.trigger
		if o := g.owners[i]; out[i] == "" && o != nil && o.rejected && lastOfOwner(g, i) {
			out[i] = string(model.TriggerRejectedOutput)
		}
		if out[i] == "" && g.abandoned[s] {
			out[i] = string(model.TriggerAbandoned)
		}
		if out[i] != "" {
			continue
		}
		if !s.hasResponse && s.status != "ok" && abandonedFor(g.attempts, i) {
			out[i] = string(model.TriggerCancelled)
			continue
		}
		for _, later := range g.attempts[i+1:] {
			switch {
			case !s.hasResponse && s.status != "ok" && later.start > s.start:
				out[i] = string(model.TriggerTimeout)
			case later.start >= s.end && resends(s, later):
				out[i] = string(model.TriggerAbandoned)
			case later.start >= s.end:
				// Retried after it answered: its answer was not used, for a
				// reason the spans do not show.
				out[i] = string(model.TriggerUnknown)
			default:
				continue
			}
			break
		}
	}
	return out
}

// abandonedFor: attempt i overlapped another attempt that answered without
// failing and no later than i ended, so i was given up once that answer came
// (the loser of a hedge).
func abandonedFor(attempts []*span, i int) bool {
	s := attempts[i]
	for j, o := range attempts {
		if j != i && o.start < s.end && s.start < o.end && o.end <= s.end && o.hasResponse && !o.failedItself() {
			return true
		}
	}
	return false
}

func lastOfOwner(g *group, i int) bool {
	for j := i + 1; j < len(g.attempts); j++ {
		if g.owners[j] == g.owners[i] {
			return false
		}
	}
	return true
}

// finalAttempt is the attempt whose answer was used (the first to succeed)
// or, when every attempt failed, the last to end.
func finalAttempt(attempts []*span, triggers []string) int {
	best := -1
	for i, a := range attempts {
		if triggers[i] == "" && (best < 0 || a.end < attempts[best].end) {
			best = i
		}
	}
	if best >= 0 {
		return best
	}
	best = 0
	for i, a := range attempts {
		if a.end >= attempts[best].end {
			best = i
		}
	}
	return best
}

// decompose splits the request's latency: time before the final attempt F
// started that other attempts cover (t_failed), intentional waits recorded
// as retry.backoff events (or, without any, told by captured Retry-After
// headers) that no attempt covers (backoff), the rest of the
// time outside F (overhead) and F itself (t_final). Overhead is measured,
// not taken as the remainder, so the residual shows any inconsistency
// (clock skew, an attempt outside its logical span).
func decompose(req *model.Request, g *group, final int) {
	f := g.attempts[final]
	start, end := req.StartNS, req.EndNS
	var busy, waits []interval
	for i, a := range g.attempts {
		if i != final {
			busy = append(busy, clip(interval{a.start, a.end}, start, f.start))
		}
	}
	for _, s := range backoffSources(g) {
		for _, w := range s.backoffs {
			waits = append(waits, clip(w, start, f.start))
		}
	}
	if len(waits) == 0 {
		for _, w := range retryAfterWaits(g.attempts, f) {
			waits = append(waits, clip(w, start, f.start))
		}
	}
	failed := unionLength(busy)
	covered := unionLength(append(busy, waits...))
	before := max(0, f.start-start)
	after := max(0, end-f.end)
	gap := before - failed + after
	req.TFailedMs = ms(failed)
	req.TFinalMs = ms(f.end - f.start)
	req.GapMs = ms(gap)
	req.GapSplit = len(g.attempts) == 1 || len(waits) > 0
	if req.GapSplit {
		backoff, overhead := ms(covered-failed), ms(gap-(covered-failed))
		req.BackoffMs, req.OverheadMs = &backoff, &overhead
	}
	req.ResidualMs = ms((end - start) - failed - gap - (f.end - f.start))
}

// retryAfterWaits are the waits captured Retry-After headers tell, when
// they tell every one: each attempt up to the final one f followed a
// response whose Retry-After it waited out, and waited Retry-After from
// that response's end (docs/recognition.md, "Latency decomposition"). A retry
// sent sooner did not wait as told, and then the telemetry does not say how
// long it waited: nil.
func retryAfterWaits(attempts []*span, f *span) []interval {
	sorted := slices.SortedStableFunc(slices.Values(attempts), func(a, b *span) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(retryOrder(a), retryOrder(b)))
	})
	var out []interval
	for i := 1; i < len(sorted) && sorted[i].start <= f.start; i++ {
		prev, next := sorted[i-1], sorted[i]
		if prev.retryAfterS == nil || *prev.retryAfterS <= 0 {
			return nil
		}
		wait := int64(math.Round(*prev.retryAfterS * 1e9))
		if next.start-prev.end < wait {
			return nil
		}
		out = append(out, interval{prev.end, prev.end + wait})
	}
	return out
}

// backoffSources are the spans whose retry.backoff events belong to the
// request: the logical span, the SDK spans of its calls, its attempts.
func backoffSources(g *group) []*span {
	var out []*span
	seen := map[*span]bool{}
	add := func(s *span) {
		if s != nil && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	add(g.anchor)
	for i, a := range g.attempts {
		add(g.owners[i])
		add(a)
	}
	return out
}

func clip(iv interval, lo, hi int64) interval {
	iv.start, iv.end = max(iv.start, lo), min(iv.end, hi)
	if iv.end < iv.start {
		iv.end = iv.start
	}
	return iv
}

// unionLength is the total time the intervals cover.
func unionLength(ivs []interval) int64 {
	sorted := slices.SortedFunc(slices.Values(ivs), func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	var total, reach int64
	started := false
	for _, iv := range sorted {
		if iv.end <= iv.start {
			continue
		}
		switch {
		case !started || iv.start >= reach:
			total += iv.end - iv.start
			reach, started = iv.end, true
		case iv.end > reach:
			total += iv.end - reach
			reach = iv.end
		}
	}
	return total
}

// attemptUsage is the attempt's token usage: its own, or, for the last
// attempt of an SDK call, the usage the SDK span recorded.
func attemptUsage(g *group, i int) (in, out *int64) {
	s := g.attempts[i]
	if s.inputTokens != nil || s.outputTokens != nil {
		return s.inputTokens, s.outputTokens
	}
	if o := g.owners[i]; o != nil && lastOfOwner(g, i) {
		return o.inputTokens, o.outputTokens
	}
	return nil, nil
}

func attemptModel(s, owner *span) string {
	switch {
	case s.model != "":
		return s.model
	case owner != nil && owner.model != "":
		return owner.model
	}
	return s.serverModel
}

func attemptRoute(s, owner *span) string {
	if s.route == "" && owner != nil {
		return owner.route
	}
	return s.route
}

// fillModels gives an attempt that names no model (it failed before the
// callee's SERVER span could say) the model of another attempt of the
// request on the same route.
func fillModels(attempts []*model.Attempt) {
	byRoute := map[string]string{}
	for _, a := range attempts {
		if a.Model != "" && byRoute[a.Route] == "" {
			byRoute[a.Route] = a.Model
		}
	}
	for _, a := range attempts {
		if a.Model == "" {
			a.Model = byRoute[a.Route]
		}
	}
}

func attemptOperation(s *span) string {
	if s.genAIOperation != "" {
		return s.genAIOperation
	}
	return s.name
}
