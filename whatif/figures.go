package whatif

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/retryscope/retryscope/model"
)

// Figures are one policy's figures for a set of logical requests.
type Figures struct {
	Requests int `json:"requests"`
	Attempts int `json:"attempts"`
	// Amplification is attempts per logical request.
	Amplification float64 `json:"amplification"`
	// FinalFailureRate is the share of requests that failed in the end.
	FinalFailureRate float64 `json:"final_failure_rate"`
	// RetrySuccessRate is the share of retried requests that succeeded
	// in the end; nil without retried requests.
	RetrySuccessRate *float64 `json:"retry_success_rate"`
	// P50, P95, P99 are end-to-end latency percentiles (ms) under
	// model.DefaultRule; nil when the sample is too small.
	P50 *float64 `json:"p50_ms"`
	P95 *float64 `json:"p95_ms"`
	P99 *float64 `json:"p99_ms"`
	// Tokens are the input and output tokens of every attempt.
	Tokens int64 `json:"tokens"`
	// SpendUSD is what the attempts' tokens cost at their models' prices
	// (Options.Prices), absent when no attempt's model has one. A modeled
	// request's tokens are priced at its recorded spend per token, or its
	// segment's when it recorded none.
	SpendUSD *float64 `json:"spend_usd,omitempty"`
	// OfferedLoad is λ·S: attempts in flight on average over the recorded
	// span of time.
	OfferedLoad float64 `json:"offered_load"`
	// PeakInFlight is the most attempts in flight at once.
	PeakInFlight int `json:"peak_attempts_in_flight"`
	// Utilisation is OfferedLoad over the servers' workers (--workers),
	// absent without them.
	Utilisation *float64 `json:"utilisation,omitempty"`
	// FailedBy counts the failed requests by why no more attempts were
	// made: recorded, the request's outcome_detail ("unstated" when
	// nothing says); modeled, the policy's reason (attempt_cap,
	// no_retry_on, deadline, task_budget, no_progress, retry_quota,
	// retry_budget, no_capacity), or the recorded one for a request that
	// stopped where it was recorded to.
	FailedBy map[string]int `json:"failed_by"`
}

// againstWorkers sets the row's utilisation against n workers.
func (r *Row) againstWorkers(n int) {
	for _, f := range []*Figures{&r.Recorded, &r.Modeled} {
		u := f.OfferedLoad / float64(n)
		f.Utilisation = &u
	}
}

// Row is a segment's (or, with an empty Segment, every request's) figures
// as recorded and as modeled under the policy.
type Row struct {
	Segment  *Segment `json:"segment,omitempty"`
	Recorded Figures  `json:"recorded"`
	Modeled  Figures  `json:"modeled"`
}

// Result is a replay: the policy, how it was modeled, and the figures.
type Result struct {
	Policy string `json:"policy"`
	// Model names the level of the model: "replay without feedback" or
	// "replay with load feedback".
	Model       string   `json:"model"`
	Label       string   `json:"label"` // "modeled": every Modeled figure is a model's
	Overall     Row      `json:"overall"`
	Segments    []Row    `json:"segments"`
	Assumptions []string `json:"assumptions"`
	// RecordedQuotas are the retry quotas the recorded clients showed,
	// which the replay gave them (RecordedQuota).
	RecordedQuotas []RecordedQuota `json:"recorded_quotas,omitempty"`
}

// outcome is one request's end as the figures need it.
type outcome struct {
	attempts  int
	ok        bool
	latencyMs float64
	tokens    int64
	usd       float64
	priced    bool // some of its tokens have a price
	busyMs    float64
	failedBy  string     // why it failed; "" when it succeeded
	spans     [][2]int64 // its attempts' starts and ends, Unix ns
}

func recordedOutcome(r *recRequest) outcome {
	o := outcome{attempts: len(r.attempts), ok: r.ok, latencyMs: r.latencyMs}
	for _, a := range r.attempts {
		o.tokens += a.tokens
		o.usd += a.usd
		o.priced = o.priced || a.priced
		o.busyMs += a.endMs - a.startMs
		o.spans = append(o.spans, [2]int64{r.startNs + int64(a.startMs*1e6), r.startNs + int64(a.endMs*1e6)})
	}
	if !r.ok {
		o.failedBy = cmp.Or(r.detail, "unstated")
	}
	return o
}

// modeledOutcome is s's end; its tokens cost usdPerToken when priced.
func modeledOutcome(s *replayed, usdPerToken float64, priced bool) outcome {
	o := outcome{attempts: len(s.kept), ok: s.ok, latencyMs: s.latencyMs}
	for _, a := range s.kept {
		o.tokens += a.tokens
		o.busyMs += a.endMs - a.startMs
		o.spans = append(o.spans, [2]int64{s.startNs + int64(a.startMs*1e6), s.startNs + int64(a.endMs*1e6)})
	}
	if priced {
		o.usd, o.priced = float64(o.tokens)*usdPerToken, true
	}
	if !s.ok {
		o.failedBy = s.stop
	}
	return o
}

// attemptsAtOnce is the most of the outcomes' attempts in flight at once.
func attemptsAtOnce(outs []outcome) int {
	var spans [][2]int64
	for _, o := range outs {
		spans = append(spans, o.spans...)
	}
	return mostAtOnce(spans)
}

// figures measures outcomes over a span of spanMs.
func figures(outs []outcome, spanMs float64) Figures {
	f := Figures{Requests: len(outs)}
	if len(outs) == 0 {
		return f
	}
	var failed, retried, retriedOK int
	var busy float64
	f.FailedBy = map[string]int{}
	lat := make([]float64, 0, len(outs))
	var usd float64
	var priced bool
	for _, o := range outs {
		f.Attempts += o.attempts
		f.Tokens += o.tokens
		usd += o.usd
		priced = priced || o.priced
		busy += o.busyMs
		lat = append(lat, o.latencyMs)
		if !o.ok {
			failed++
			f.FailedBy[o.failedBy]++
		}
		if o.attempts > 1 {
			retried++
			if o.ok {
				retriedOK++
			}
		}
	}
	n := float64(len(outs))
	f.Amplification, f.FinalFailureRate = float64(f.Attempts)/n, float64(failed)/n
	if retried > 0 {
		v := float64(retriedOK) / float64(retried)
		f.RetrySuccessRate = &v
	}
	slices.Sort(lat)
	f.P50, f.P95, f.P99 = model.DefaultRule.Percentile(lat, 50), model.DefaultRule.Percentile(lat, 95), model.DefaultRule.Percentile(lat, 99)
	if spanMs > 0 {
		f.OfferedLoad = busy / spanMs
	}
	f.PeakInFlight = attemptsAtOnce(outs)
	if priced {
		f.SpendUSD = &usd
	}
	return f
}

// spendRate is spend per token: USD over the tokens priced.
type spendRate struct{ usd, tokens float64 }

func (s *spendRate) add(r *recRequest) {
	for _, a := range r.attempts {
		if a.priced && a.tokens > 0 {
			s.usd, s.tokens = s.usd+a.usd, s.tokens+float64(a.tokens)
		}
	}
}

// perToken is USD per token, and whether any priced tokens were seen.
func (s spendRate) perToken() (float64, bool) {
	if s.tokens == 0 {
		return 0, false
	}
	return s.usd / s.tokens, true
}

// measure compares the recorded requests with their replay, overall and
// per segment.
func measure(reqs []*recRequest, reps []*replayed, policy Policy, withFeedback bool, l loops) *Result {
	res := &Result{Policy: policy.String(), Model: "replay without feedback", Label: "modeled", Segments: []Row{},
		Assumptions: assumptions()}
	if withFeedback {
		res.Model = "replay with load feedback"
		res.Assumptions = append(feedbackAssumptions(), res.Assumptions[1:]...)
	}
	res.Assumptions = append(res.Assumptions, policy.assumptions()...)
	if slices.ContainsFunc(reqs, func(r *recRequest) bool { return r.fallbackTry() > 0 }) {
		res.Assumptions = append(res.Assumptions, fallbackAssumption)
	}
	res.Assumptions = append(res.Assumptions, closedLoopAssumptions(l)...)
	if slices.ContainsFunc(reqs, func(r *recRequest) bool {
		return slices.ContainsFunc(r.attempts, func(a recAttempt) bool { return a.priced })
	}) {
		res.Assumptions = append(res.Assumptions, spendAssumption)
	}
	if len(reqs) == 0 {
		return res
	}
	lo, hi := reqs[0].startNs, reqs[0].endNs
	for _, r := range reqs {
		lo, hi = min(lo, r.startNs), max(hi, r.endNs)
	}
	spanMs := float64(hi-lo) / 1e6
	var allRec, allMod []outcome
	recBy, modBy := map[Segment][]outcome{}, map[Segment][]outcome{}
	// Each request's spend per token, and its segment's for the requests
	// that recorded none.
	own := make([]spendRate, len(reqs))
	segRate := map[Segment]*spendRate{}
	for i, r := range reqs {
		own[i].add(r)
		seg := segRate[r.seg]
		if seg == nil {
			seg = &spendRate{}
			segRate[r.seg] = seg
		}
		seg.usd, seg.tokens = seg.usd+own[i].usd, seg.tokens+own[i].tokens
	}
	for i, r := range reqs {
		rate, priced := own[i].perToken()
		if !priced {
			rate, priced = segRate[r.seg].perToken()
		}
		rec, mod := recordedOutcome(r), modeledOutcome(reps[i], rate, priced)
		allRec, allMod = append(allRec, rec), append(allMod, mod)
		recBy[r.seg], modBy[r.seg] = append(recBy[r.seg], rec), append(modBy[r.seg], mod)
	}
	res.Overall = Row{Recorded: figures(allRec, spanMs), Modeled: figures(allMod, spanMs)}
	for seg, rec := range recBy {
		seg := seg
		res.Segments = append(res.Segments, Row{Segment: &seg, Recorded: figures(rec, spanMs), Modeled: figures(modBy[seg], spanMs)})
	}
	slices.SortFunc(res.Segments, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.Recorded.Requests, a.Recorded.Requests), cmp.Compare(a.Segment.Service, b.Segment.Service),
			cmp.Compare(a.Segment.Operation, b.Segment.Operation), cmp.Compare(a.Segment.Route, b.Segment.Route))
	})
	return res
}

// spendAssumption is how the replay prices what the policy spends.
const spendAssumption = "spend: a recorded attempt's input and output tokens at its model's price (--prices over the built-in list prices); a modeled request's tokens at the spend per token its recorded attempts had, or its segment's where they had no tokens"

// fallbackAssumption is what the replay takes for granted of requests
// with a fallback try.
const fallbackAssumption = "a nested request's last app try to another endpoint or model than its first, right after the app loop (no backoff), is a fallback try after the loop: --max-attempts app=N caps the tries before it, and when the policy ends that loop failed the fallback try comes after its recorded wait (the request's own, else drawn from the segment's near in time), unless fallback=0; its SDK retries follow under the sdk cap"

// assumptions are what the replay without feedback takes for granted.
func assumptions() []string {
	return []string{
		"no feedback: every recorded attempt keeps its outcome and duration, whatever load the policy removes or adds",
		"an attempt the policy would not make is removed with the wait before it; the attempts after it start that much earlier",
		"a request that stopped before its recorded cap stopped for a reason the policy keeps (not retryable, budget, deadline)",
		"an attempt the policy makes after cutting others comes at the moment of the first one it cut on the same route and meets what that one met (outcome, duration, tokens); its own moment passes to the attempts after it",
		"an attempt no recorded moment covers (beyond the recorded cap, or an outer retry after a cut inner loop on another route) is drawn from the segment's recorded attempts with the same tries that followed the same trigger, among the 20 nearest in time (faults come in incidents), with its outcome, duration, wait and tokens; a client error fails again, and whether the caller accepts a served answer follows the request's own record",
		"a retry budget counts successful attempts and retries of all clients together, in tumbling windows",
	}
}

// closedLoopAssumptions say which segments were replayed as closed loops,
// one line each, in segment order; none for open-loop data.
func closedLoopAssumptions(l loops) []string {
	segs := make([]Segment, 0, len(l.workers))
	for seg := range l.workers {
		segs = append(segs, seg)
	}
	slices.SortFunc(segs, func(a, b Segment) int {
		return cmp.Or(cmp.Compare(a.Service, b.Service), cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Route, b.Route))
	})
	var out []string
	for _, seg := range segs {
		out = append(out, fmt.Sprintf("%s / %s / %s is replayed as a closed loop of %d workers (nearly every request started within %d ms of another's end): a request starts its recorded think time after the modeled end of its worker's previous one, not at its recorded time; one moved so far that its recorded first attempt is not among the segment's %d nearest its new moment meets that moment: its attempts are drawn from the segment's recorded ones with the same tries near it (a client error fails again)",
			seg.Service, seg.Operation, seg.Route, l.workers[seg], maxThinkMs, nearWindow))
	}
	return out
}
