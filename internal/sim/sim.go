package sim

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
)

// faultKind is what happened to one attempt.
type faultKind int

const (
	faultNone faultKind = iota
	faultRateLimited
	faultServerError
	faultReset
	faultTimeout
	faultClientError
	faultCancelled
	faultRejected
	faultStalled // a stream that stopped; the application gave up on it
)

// trigger is the retry trigger the truth reports for a failed attempt.
func (f faultKind) trigger() string {
	return [...]string{"", "rate_limited", "server_error", "connection", "timeout", "client_error", "cancelled", "rejected_output", "abandoned"}[f]
}

// attempt is one physical try. Times are nanoseconds after Config.Start.
type attempt struct {
	try        []int // 1-based try number per layer, outermost first
	route      *route
	start, end int64 // client side: sent .. response, failure or abandonment
	// uncutMs is how long a served attempt the deadline cut would have
	// taken; 0 when the deadline cut nothing served.
	uncutMs     float64
	reached     bool // the server saw it (and emits a SERVER span)
	serverStart int64
	serverEnd   int64
	fault       faultKind
	httpStatus  int   // 0: no response
	retryAfterS int   // 429 (a 503 of the retryablehttp variant): Retry-After seconds
	firstToken  int64 // streams: first token at the client; 0: none
	outTokens   int   // output tokens the client received
	serverOut   int   // output tokens the server generated
	transparent bool  // gRPC transparent retry
	ended       bool  // the client is done with it
}

func (a *attempt) hiddenNs() int64 {
	if !a.reached || a.serverEnd <= a.end {
		return 0
	}
	return a.serverEnd - a.end
}

// interval is a stretch of client time.
type interval struct{ start, end int64 }

// wait is an intentional backoff before the next attempt.
type wait struct {
	interval
	layer int
	after *attempt // the failed attempt that caused it
}

// simRequest is one logical request and everything the simulation decided.
type simRequest struct {
	idx     int
	rng     *rand.Rand
	arrival int64

	shape         Shape
	variant       string
	service       string
	primary       *route
	fallback      *route
	model         string
	fallbackModel string
	genAI         bool // client spans carry gen_ai.* attributes
	// tokensOnAttempts: token usage sits on the attempt spans themselves
	// (otherwise on the LLM span around them, or nowhere).
	tokensOnAttempts  bool
	stream            bool
	evaluator         bool
	rejectProb        float64
	naive             bool
	backoffEvents     bool // this request records its backoff waits as events
	clientErrorStatus int  // non-zero: a bad request
	inputTokens       int
	outputTokens      int
	arm               string // Config.Experiment: ArmNoRetry or ArmRetry; "" without
	big               bool   // Config.BigInputs: a big, fragile request
	// healthyNs is how long the first attempt would have taken, start to
	// response, had it met no fault: the same network and server time at
	// the same load.
	healthyNs int64
	layers    []layerSpec
	worker    *splitWorker
	next      *simRequest // split: the worker's next call
	agent     *agentRun   // agent: the task this step belongs to
	nextStep  *simRequest // agent: the step after this one, if it succeeds
	content   bool        // apploop, agent: LLM spans capture the prompt
	stallLost bool        // apploop: an abandoned stream's call span is never ended
	chained   bool        // split: starts when its predecessor ends
	// retryablehttp split variant: the target called, and the worker's
	// mean pause between calls.
	target      endpoint
	thinkMeanMs float64

	// Pathologies: the client retries client errors (retry4xx) or
	// ignores Retry-After. retryAfterIgnored counts the retries sent
	// before the Retry-After of the response before them;
	// retryAfterEarlyNs sums how much before.
	retry4xx          bool
	ignoreRetryAfter  bool
	retryAfterIgnored int
	retryAfterEarlyNs int64

	tries      []int
	sleeps     []float64 // previous backoff per layer (decorrelated jitter)
	onFallback bool
	// transparentUsed: the one gRPC transparent retry is spent;
	// nextTransparent: the next attempt is that retry.
	transparentUsed bool
	nextTransparent bool
	start           int64
	end             int64
	attempts        []*attempt
	waits           []wait
	calls           []interval // nested: the SDK call spans, one per app try
	final           *attempt
	ok              bool
	exhausted       string
	// quotaLeft and quotaAsked are, for a request its client's retry quota
	// stopped, the tokens the quota had and the retry's cost.
	quotaLeft, quotaAsked float64
	done                  bool
	// The opt-in pathologies (pathology.go): the deadline after the
	// request's start (ns, 0: none) and where in a stream the client stops
	// reading (0: never).
	deadline  int64
	abandonAt float64
}

// nested: an application loop around SDK calls around transport attempts.
func (r *simRequest) nested() bool {
	return r.shape == ShapeAppLoop || r.variant == variantNested || r.variant == variantNestedEval
}

// currentRoute is where the next attempt goes: the app loop's last try
// falls over to the second provider, since the primary has failed every
// try before it.
func (r *simRequest) currentRoute() *route {
	if r.onFallback {
		return r.fallback
	}
	return r.primary
}

// uniformMs draws U(lo, hi) milliseconds as nanoseconds.
func (r *simRequest) uniformMs(lo, hi float64) int64 { return ns(lo + (hi-lo)*r.rng.Float64()) }

func ns(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

type eventKind int

const (
	evBegin eventKind = iota
	evStartAttempt
	evEndAttempt
	evHedge
)

type event struct {
	at   int64
	seq  uint64
	kind eventKind
	req  *simRequest
	att  *attempt
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// simulation runs all logical requests against shared routes in time order,
// so every attempt sees the load that the attempts before it created.
type simulation struct {
	cfg    Config
	queue  eventQueue
	seq    uint64
	budget *retryBudget
	quota  retryQuotas   // Policy.Quota, per client service
	served servedWindows // Policy.DeadlineAdmit
	// flight counts attempts in flight when Config.FlightBucket is set.
	flight *flightCounter
	// retryLane counts each client service's SDK retries in flight
	// (Policy.RetryLane).
	retryLane map[string]int
	// slots count each client service's attempts in flight, and waiting
	// the requests whose next attempt waits for one (Policy.Concurrency).
	slots   map[string]int
	waiting map[string][]*simRequest
}

// flightChange tells the flight counter, if any, that a started (d = 1)
// or ended (d = −1) at now.
func (s *simulation) flightChange(r *simRequest, a *attempt, now int64, d int) {
	if s.cfg.Policy.RetryLane > 0 && len(a.try) > 0 && a.try[len(a.try)-1] > 1 {
		if s.retryLane == nil {
			s.retryLane = map[string]int{}
		}
		s.retryLane[r.service] += d
	}
	// A hedge holds no slot (it is not queued either).
	if n := s.cfg.Policy.Concurrency; n > 0 && (a == r.attempts[0] || !s.cfg.Policy.ConcurrencyFirst && r.shape != ShapeHedge) {
		if s.slots == nil {
			s.slots, s.waiting = map[string]int{}, map[string][]*simRequest{}
		}
		s.slots[r.service] += d
		if q := s.waiting[r.service]; d < 0 && len(q) > 0 && s.slots[r.service] < n {
			// The slot passes to the attempt that waited longest.
			s.waiting[r.service] = q[1:]
			s.startAttempt(q[0], now)
		}
	}
	if s.flight == nil {
		return
	}
	d1 := 0
	if a == r.attempts[0] {
		d1 = d
	}
	s.flight.change(s.cfg.Start.UnixNano()+now, d, d1)
}

func (s *simulation) push(at int64, kind eventKind, r *simRequest, a *attempt) {
	s.seq++
	heap.Push(&s.queue, event{at: at, seq: s.seq, kind: kind, req: r, att: a})
}

func (s *simulation) run(requests []*simRequest) {
	for _, r := range requests {
		if !r.chained {
			s.push(r.arrival, evBegin, r, nil)
		}
	}
	for s.queue.Len() > 0 {
		e := heap.Pop(&s.queue).(event)
		switch e.kind {
		case evBegin:
			s.begin(e.req, e.at)
		case evStartAttempt:
			if n := s.cfg.Policy.Concurrency; n > 0 && s.slots[e.req.service] >= n && (!s.cfg.Policy.ConcurrencyFirst || len(e.req.attempts) == 0) {
				s.waiting[e.req.service] = append(s.waiting[e.req.service], e.req)
				continue
			}
			s.startAttempt(e.req, e.at)
		case evEndAttempt:
			s.endAttempt(e.req, e.att, e.at)
		case evHedge:
			s.hedge(e.req, e.at)
		}
	}
}

func (s *simulation) begin(r *simRequest, now int64) {
	r.start = now
	r.tries = make([]int, len(r.layers))
	for i := range r.tries {
		r.tries[i] = 1
	}
	r.sleeps = make([]float64, len(r.layers))
	t := now + r.uniformMs(0.05, 2)
	if r.nested() {
		r.calls = append(r.calls, interval{start: t})
		t += r.uniformMs(0.2, 2)
	}
	s.push(t, evStartAttempt, r, nil)
	if r.shape == ShapeHedge && r.layers[0].maxTries > 1 {
		s.push(t+int64(s.cfg.Policy.HedgeDelay), evHedge, r, nil)
	}
}

func (s *simulation) startAttempt(r *simRequest, now int64) *attempt {
	a := &attempt{try: append([]int(nil), r.tries...), route: r.currentRoute(), start: now}
	if r.shape == ShapeHedge {
		a.try = []int{len(r.attempts) + 1}
	}
	a.transparent, r.nextTransparent = r.nextTransparent, false
	if s.cfg.CRN {
		// Everything from here to the next attempt (its fault, timing,
		// the backoff after it) draws from this attempt's stream.
		r.rng = attemptRNG(s.cfg.Seed, r.idx, len(r.attempts)+1)
	}
	s.serve(r, a)
	r.attempts = append(r.attempts, a)
	s.flightChange(r, a, now, 1)
	s.push(a.end, evEndAttempt, r, a)
	return a
}

// hedge starts the second attempt if the first is still running.
func (s *simulation) hedge(r *simRequest, now int64) {
	if r.done || len(r.attempts) != 1 || r.attempts[0].ended {
		return
	}
	s.startAttempt(r, now)
}

func (s *simulation) endAttempt(r *simRequest, a *attempt, now int64) {
	if a.ended || r.done {
		return
	}
	a.ended = true
	s.flightChange(r, a, now, -1)
	switch {
	case a.fault == faultNone:
		s.served.add(r.clientKey(a), float64(a.end-a.start)/1e6)
	case a.uncutMs > 0:
		s.served.add(r.clientKey(a), a.uncutMs)
	}
	if a.fault == faultNone && r.evaluator && r.rng.Float64() < r.rejectProb {
		a.fault = faultRejected
	}
	if s.budget != nil {
		s.budget.observe(now, a.fault == faultNone)
	}
	if s.quota != nil {
		s.quota.observe(r, a, float64(s.cfg.Policy.Quota))
	}
	if r.shape == ShapeHedge {
		s.endHedged(r, a, now)
		return
	}
	if a.fault == faultNone {
		s.finish(r, a, true, "", now)
		return
	}
	if r.shape == ShapeGRPC && a.fault == faultReset && !a.reached && !r.transparentUsed && r.layers[0].maxTries > 1 {
		// The RPC never left the client: gRPC retries it at once, outside
		// the retry policy's attempt count and backoff.
		r.transparentUsed, r.nextTransparent = true, true
		s.push(now+r.uniformMs(0.05, 0.5), evStartAttempt, r, nil)
		return
	}
	if s.endedByPathology(r, a, now) {
		return
	}
	layer, exhausted := r.retryLayer(a)
	if exhausted != "" {
		s.finish(r, a, false, exhausted, now)
		return
	}
	// The stops are checked in the order the what-if replay checks them,
	// and a retry spends budget or quota only once every check let it.
	inner := layer == len(r.layers)-1
	if s.cfg.Policy.NoProgress && inner && repeatsFailure(r, a) {
		s.finish(r, a, false, "no_progress", now)
		return
	}
	if n := s.cfg.Policy.TokenCap; n > 0 && r.tokensSpent() >= n {
		s.finish(r, a, false, "token_cap", now)
		return
	}
	if n := s.cfg.Policy.RetryLane; n > 0 && inner && s.retryLane[r.service] >= n {
		s.finish(r, a, false, "no_capacity", now)
		return
	}
	if s.quota != nil && inner && !s.quota.has(r, a, float64(s.cfg.Policy.Quota)) {
		r.quotaLeft, r.quotaAsked = s.quota.of(r, 0).tokens, quotaCostAfter(a)
		s.finish(r, a, false, "quota", now)
		return
	}
	if s.budget != nil && !s.budget.allowRetry(now) {
		s.finish(r, a, false, "budget", now)
		return
	}
	if s.quota != nil && inner {
		s.quota.take(r, a, float64(s.cfg.Policy.Quota))
	}
	s.scheduleRetry(r, a, layer, now)
}

// endHedged: the first attempt to succeed wins and the other is cancelled;
// a failure waits for the other attempt if it is still running.
func (s *simulation) endHedged(r *simRequest, a *attempt, now int64) {
	if a.fault == faultNone {
		for _, other := range r.attempts {
			if !other.ended {
				other.ended, other.fault, other.end = true, faultCancelled, now
				s.flightChange(r, other, now, -1)
				other.httpStatus, other.outTokens = 0, 0
				if other.serverStart > now {
					other.reached = false
				}
			}
		}
		s.finish(r, a, true, "", now)
		return
	}
	for _, other := range r.attempts {
		if !other.ended {
			return
		}
	}
	exhausted := "not_retryable" // hedging does not retry errors
	if len(r.attempts) == r.layers[0].maxTries {
		exhausted = "attempt_cap"
	}
	s.finish(r, a, false, exhausted, now)
}

// tokensSpent are the input and output tokens of r's ended attempts, as
// their spans record them: an attempt with output carries its prompt and
// its output (Policy.TokenCap).
func (r *simRequest) tokensSpent() int {
	n := 0
	for _, a := range r.attempts {
		if a.ended && a.outTokens > 0 {
			n += r.inputTokensOn(a.route) + a.outTokens
		}
	}
	return n
}

// retryLayer finds the innermost loop that retries this failure and still
// has tries left; an exhausted inner loop passes its failure outwards.
func (r *simRequest) retryLayer(a *attempt) (layer int, exhausted string) {
	capped := false
	for i := len(r.layers) - 1; i >= 0; i-- {
		l := r.layers[i]
		if !l.retryOn[a.fault] {
			continue
		}
		if r.tries[i] >= l.maxTries {
			capped = true
			continue
		}
		return i, ""
	}
	if capped {
		return 0, "attempt_cap"
	}
	return 0, "not_retryable"
}

func (s *simulation) scheduleRetry(r *simRequest, a *attempt, layer int, now int64) {
	t := now
	appRetry := r.nested() && layer == 0
	if appRetry {
		t += r.uniformMs(0.2, 2) // the SDK call raises
		r.calls[len(r.calls)-1].end = t
		t += r.uniformMs(0.5, 5) // the app loop handles the exception
	} else {
		t += r.uniformMs(0.1, 2)
	}
	if d := ns(r.backoffMs(layer, a)); d > 0 {
		r.waits = append(r.waits, wait{interval: interval{t, t + d}, layer: layer, after: a})
		t += d
	}
	t += r.uniformMs(0.2, 5) // serialization, connection, route choice
	if s.pastDeadline(r, a, t) {
		return
	}
	r.tries[layer]++
	for i := layer + 1; i < len(r.tries); i++ {
		r.tries[i] = 1
	}
	if appRetry {
		r.onFallback = r.fallback != nil && r.tries[0] == r.layers[0].maxTries
		r.calls = append(r.calls, interval{start: t})
		t += r.uniformMs(0.2, 2)
	}
	if wait := ns(float64(a.retryAfterS) * 1000); wait > 0 && t-now < wait {
		r.retryAfterIgnored++
		r.retryAfterEarlyNs += wait - (t - now)
	}
	s.push(t, evStartAttempt, r, nil)
}

// backoffMs is the policy's sleep before try n+1 of a layer, or a 429's
// Retry-After unless the client is naive.
func (r *simRequest) backoffMs(layer int, a *attempt) float64 {
	l := r.layers[layer]
	n := r.tries[layer]
	var d float64
	switch l.kind {
	case PolicyFixed:
		d = l.baseMs
	case PolicyFull:
		d = r.rng.Float64() * min(l.capMs, l.baseMs*math.Pow(2, float64(n-1)))
	case PolicyDecorrelated:
		prev := max(r.sleeps[layer], l.baseMs)
		d = min(l.capMs, l.baseMs+r.rng.Float64()*(3*prev-l.baseMs))
		r.sleeps[layer] = d
	case policyExponential:
		d = min(l.capMs, l.baseMs*math.Pow(2, float64(n-1)))
		if a.retryAfterS > 0 { // on a 429 or a 503
			return float64(a.retryAfterS) * 1000
		}
	}
	if a.fault == faultRateLimited && a.retryAfterS > 0 && !r.naive && !r.ignoreRetryAfter {
		// Clients that honour Retry-After sleep what it says, whatever
		// their own backoff (openai-python, go-retryablehttp).
		d = float64(a.retryAfterS) * 1000
	}
	return d
}

func (s *simulation) finish(r *simRequest, final *attempt, ok bool, exhausted string, now int64) {
	t := now
	if r.nested() {
		t += r.uniformMs(0.2, 2)
		r.calls[len(r.calls)-1].end = t
	}
	r.end = t + r.uniformMs(0.05, 2)
	r.final, r.ok, r.exhausted, r.done = final, ok, exhausted, true
	if r.nextStep != nil && ok {
		s.push(r.end+r.uniformMs(20, 300), evBegin, r.nextStep, nil) // the agent's tool call
	}
	if r.next != nil {
		// A batch worker moves on quickly after a success and sleeps long
		// after a failure, so its next call is never mistaken for a retry.
		think := r.uniformMs(5, 80)
		switch {
		case r.thinkMeanMs > 0:
			// A pool worker takes its next call after a short pause,
			// whatever became of the last one.
			think = ns(1 + r.rng.ExpFloat64()*r.thinkMeanMs)
		case !ok:
			think = r.uniformMs(30000, 60000)
		}
		s.push(r.end+think, evBegin, r.next, nil)
	}
}

// retryBudget allows retries up to ratio per success in tumbling windows,
// with a floor so a quiet window can still retry a little.
type retryBudget struct {
	ratio   float64
	window  int64
	floor   float64
	current int64
	ok      float64
	retries float64
}

func (b *retryBudget) roll(now int64) {
	if w := now / b.window; w != b.current {
		b.current, b.ok, b.retries = w, 0, 0
	}
}

func (b *retryBudget) observe(now int64, success bool) {
	b.roll(now)
	if success {
		b.ok++
	}
}

func (b *retryBudget) allowRetry(now int64) bool {
	b.roll(now)
	if b.retries >= max(b.floor, b.ratio*b.ok) {
		return false
	}
	b.retries++
	return true
}

// repeatsFailure: the attempt of r's call before a failed the same way as
// a (Policy.NoProgress).
func repeatsFailure(r *simRequest, a *attempt) bool {
	i := slices.Index(r.attempts, a)
	if i < 1 {
		return false
	}
	prev, n := r.attempts[i-1], len(a.try)
	return len(prev.try) == n && slices.Equal(prev.try[:n-1], a.try[:n-1]) &&
		prev.fault != faultNone && prev.fault.trigger() == a.fault.trigger()
}

// retryQuotas are the clients' retry quotas (Policy.Quota) by service:
// the tokens left, and the tokens each request's pending retry took.
type retryQuotas map[string]*retryQuota

type retryQuota struct {
	tokens float64
	taken  map[*simRequest]float64
}

// The AWS SDKs' standard retryer's costs.
const (
	quotaRetryCost   = 5
	quotaTimeoutCost = 10
	quotaNoRetryGain = 1
)

func (q retryQuotas) of(r *simRequest, initial float64) *retryQuota {
	b := q[r.service]
	if b == nil {
		b = &retryQuota{tokens: initial, taken: map[*simRequest]float64{}}
		q[r.service] = b
	}
	return b
}

// observe settles attempt a of r: a success gives back what its retry
// took, or, made without one, adds quotaNoRetryGain.
func (q retryQuotas) observe(r *simRequest, a *attempt, initial float64) {
	b := q.of(r, initial)
	cost, retried := b.taken[r]
	delete(b.taken, r)
	if a.fault != faultNone {
		return
	}
	if !retried {
		cost = quotaNoRetryGain
	}
	b.tokens = min(initial, b.tokens+cost)
}

// quotaCostAfter is what a retry after a takes from a quota.
func quotaCostAfter(a *attempt) float64 {
	if a.fault == faultTimeout {
		return quotaTimeoutCost
	}
	return quotaRetryCost
}

// has reports whether r's client has the tokens of a retry after a.
func (q retryQuotas) has(r *simRequest, a *attempt, initial float64) bool {
	return q.of(r, initial).tokens >= quotaCostAfter(a)
}

// take takes the tokens of a retry after a (has said there are enough).
func (q retryQuotas) take(r *simRequest, a *attempt, initial float64) {
	b := q.of(r, initial)
	cost := quotaCostAfter(a)
	b.tokens -= cost
	b.taken[r] = cost
}

// servedWindows hold, per client (service and model) and route, the
// durations of the latest served attempts, at most AdmitWindow, oldest
// first (Policy.DeadlineAdmit); an answer the deadline cut counts with the
// time it would have taken, so that the estimate is the client's history
// of the route, not one the deadline truncates.
type servedWindows map[string][]float64

// clientKey names the client and route of an attempt.
func (r *simRequest) clientKey(a *attempt) string {
	return r.service + "|" + r.model + "|" + a.route.host
}

func (w *servedWindows) add(key string, ms float64) {
	if *w == nil {
		*w = servedWindows{}
	}
	d := (*w)[key]
	if len(d) == AdmitWindow {
		d = d[1:]
	}
	(*w)[key] = append(d, ms)
}

// median is the median of the latest served attempts' durations, 0
// before the first.
func (w servedWindows) median(key string) float64 {
	d := slices.Clone(w[key])
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}
