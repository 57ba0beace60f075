package whatif

import (
	"cmp"
	"container/heap"
	"context"
	"github.com/retryscope/retryscope/model"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/retryscope/retryscope/internal/store"
)

// Options tune a replay.
type Options struct {
	// Seed seeds the draws of attempts beyond the recorded ones; the same
	// seed gives the same result.
	Seed int64
	// Feedback makes the servers answer the load the policy offers: each
	// route's attempt latency and load-driven failures (429 sheds,
	// timeouts) follow the relation recorded between them and the
	// attempts in flight.
	Feedback bool
	// TaskKey names the anchor-span attribute whose value is a request's
	// task, for a per-task budget; "" makes each trace a task.
	TaskKey string
	// Window bounds the requests replayed by start time (zero: all).
	Window model.Window
	// OpenLoop keeps every request's recorded start even where its
	// segment's client is a closed loop of workers.
	OpenLoop bool
	// Workers, when above 0, are the servers' concurrent workers the
	// offered load is set against: Figures.Utilisation.
	Workers int
	// NoRecordedQuota replays without the retry quotas the recorded
	// clients showed (RecordedQuota): --retry-quota off. A policy's Quota
	// replaces them anyway.
	NoRecordedQuota bool
	// Prices price the attempts' tokens by model, for Figures.SpendUSD;
	// nil prices nothing.
	Prices model.Prices
}

// modAttempt is one attempt of the modeled request; times are ms after the
// request's start.
type modAttempt struct {
	rec            int     // the recorded attempt it is, -1 when drawn
	hiddenMs       float64 // server time after the client abandoned it
	route          string  // where it went
	tries          []int
	startMs, endMs float64
	recEndMs       float64 // its recorded end; for a drawn attempt, endMs
	ok             bool
	trigger        string
	tokens         int64
	retryAfterMs   float64 // the wait its answer asked for
	fallback       bool    // an attempt of the fallback try
}

// replayed is one logical request under the policy.
type replayed struct {
	idx     int // in the recorded requests
	req     *recRequest
	startNs int64 // its modeled start: recorded, or after its worker's last request (closed loop)
	// moved marks a request of a closed loop whose modeled start left the
	// neighbourhood of its recorded one: its attempts are drawn near its
	// new moment.
	moved   bool
	next    int // the recorded attempt to consider next
	kept    []modAttempt
	shift   float64 // ms the kept attempts moved earlier than recorded
	changed bool    // an attempt was removed or drawn
	drawn   bool    // the recorded attempts no longer apply: the rest are drawn
	// spare are the recorded attempts the policy cut whose moment no
	// attempt it made has taken yet: the request's own draws for the
	// attempts it makes instead, in order.
	spare     []int
	rng       *rand.Rand
	ok        bool
	latencyMs float64
	// sleeps are the policy's latest waits in the innermost loop and in
	// the loop around it, for a decorrelated backoff.
	sleeps [2]float64
	// quotaTaken is what the retry running took from its service's retry
	// quota, given back if it succeeds; 0 when it took nothing.
	quotaTaken float64
	// slot: its latest attempt holds a slot of its service's
	// concurrency limit.
	slot bool
	// stop is why the policy made no more attempts after a failure (see
	// Figures.FailedBy).
	stop string
	// hedgedRun marks a request whose attempts the policy's hedge delay
	// made (startHedged).
	hedgedRun bool
}

// replayer runs every request's attempts in time order, so that a retry
// budget sees the successes and retries of all clients as they happen.
type replayer struct {
	policy Policy
	pools  pools
	budget *budgetState
	// taskRetries counts the retries each task made, for a per-task
	// budget.
	taskRetries map[string]int
	queue       endQueue
	seq         uint64
	// feedback, when set, makes recorded attempts answer the modeled load.
	feedback *feedback
	// quota holds each client service's retry tokens, for the services
	// with a quota (quotaOf).
	quota map[string]float64
	// lane holds each client service's admitted SDK retries
	// (Policy.RetryLane), as requests and their attempt's index in kept.
	lane map[string][]laneRetry
	// slots holds each client service's attempts in flight and the
	// requests whose latest attempt waits for one (Policy.Concurrency).
	slots map[string]*slots
	// reps are the requests of the pass, for a closed-loop worker's next.
	reps []*replayed
	// loops are the closed-loop segments replayed as such.
	loops loops
}

// Replay reads the recorded requests of st and replays them under policy:
// recorded attempts stand as they happened, attempts the policy would not
// make are removed (and the attempts after them moved earlier), and
// attempts it would make that the recorded requests did not are drawn from
// the segment's recorded attempts with the same tries. With
// opts.Feedback, recorded attempts also answer the load the policy offers.
func Replay(ctx context.Context, st *store.Store, policy Policy, opts Options) (*Result, error) {
	reqs, err := load(ctx, st, opts.TaskKey, opts.Window, opts.Prices)
	if err != nil {
		return nil, err
	}
	return replay(reqs, policy, opts), nil
}

func replay(reqs []*recRequest, policy Policy, opts Options) *Result {
	pl := pools{}
	if len(reqs) > 0 {
		pl = newPools(reqs)
	}
	var recorded []RecordedQuota
	if policy.Quota == nil && !opts.NoRecordedQuota {
		recorded = inferQuotas(reqs)
		pl.quotas = map[string]*RecordedQuota{}
		for i := range recorded {
			pl.quotas[recorded[i].Service] = &recorded[i]
		}
	}
	out := runPass(reqs, policy, opts, pl, nil)
	var fb *feedback
	if opts.Feedback {
		fb = fitFeedback(reqs)
		for range feedbackPasses {
			fb.modeled = modeledLoads(out)
			out = runPass(reqs, policy, opts, pl, fb)
		}
	}
	l := pl.loops
	if opts.OpenLoop {
		l = loops{}
	}
	res := measure(reqs, out, policy, fb != nil, l)
	res.addRecordedQuotas(recorded)
	if opts.Workers > 0 {
		res.Overall.againstWorkers(opts.Workers)
		for i := range res.Segments {
			res.Segments[i].againstWorkers(opts.Workers)
		}
	}
	return res
}

// runPass replays every request once; with fb, each recorded attempt's
// outcome and duration answer the load the previous pass modeled.
func runPass(reqs []*recRequest, policy Policy, opts Options, pl pools, fb *feedback) []*replayed {
	r := &replayer{policy: policy, pools: pl, feedback: fb, taskRetries: map[string]int{}}
	if policy.Budget != nil {
		r.budget = &budgetState{Budget: *policy.Budget}
	}
	if policy.Quota != nil || len(pl.quotas) > 0 {
		r.quota = map[string]float64{}
	}
	if policy.RetryLane > 0 {
		r.lane = map[string][]laneRetry{}
	}
	if policy.Concurrency > 0 {
		r.slots = map[string]*slots{}
	}
	out := make([]*replayed, len(reqs))
	r.reps = out
	if !opts.OpenLoop {
		r.loops = pl.loops
	}
	for i, req := range reqs {
		out[i] = &replayed{idx: i, req: req, startNs: req.startNs, rng: requestRNG(opts.Seed, req.id), next: 1}
	}
	for i, s := range out {
		if r.loops.pred == nil || r.loops.pred[i] < 0 {
			// (A closed-loop worker's later requests start when the one
			// before ends.)
			r.start(s)
		}
	}
	for r.queue.Len() > 0 {
		e := heap.Pop(&r.queue).(endEvent)
		if e.start {
			e.s.startNs = e.atNs
			r.start(e.s)
			continue
		}
		if e.admit {
			r.admit(e.s)
			continue
		}
		r.attemptEnded(e.s, e.atNs)
	}
	return out
}

// start makes s's first attempt at its modeled start: the recorded one,
// unless s is a closed-loop request the policy moved out of its recorded
// neighbourhood (see firstAttempt).
func (r *replayer) start(s *replayed) {
	if r.hedgeable(s) {
		r.startHedged(s)
		return
	}
	s.kept = []modAttempt{r.firstAttempt(s)}
	r.launch(s)
}

// slots are a client service's attempts in flight and the requests whose
// latest attempt waits for one, in the order they came
// (Policy.Concurrency).
type slots struct {
	held    int
	waiting []*replayed
}

// launch schedules s's latest attempt: its end, or, under a concurrency
// limit, its claim on a slot at its start.
func (r *replayer) launch(s *replayed) {
	if r.slots == nil || r.policy.ConcurrencyFirst && len(s.kept) > 1 {
		r.push(s)
		return
	}
	r.seq++
	at := s.startNs + int64(s.kept[len(s.kept)-1].startMs*1e6)
	heap.Push(&r.queue, endEvent{atNs: at, seq: r.seq, s: s, admit: true})
}

// admit starts s's latest attempt if its service has a slot free, else
// makes it wait for one.
func (r *replayer) admit(s *replayed) {
	sl := r.slots[s.req.seg.Service]
	if sl == nil {
		sl = &slots{}
		r.slots[s.req.seg.Service] = sl
	}
	if sl.held >= r.policy.Concurrency {
		sl.waiting = append(sl.waiting, s)
		return
	}
	sl.held++
	s.slot = true
	r.push(s)
}

// release frees the slot of s's attempt that ended at nowNs: the request
// that waited longest starts its attempt then, later than it was to by
// the wait, and its later attempts move with it.
func (r *replayer) release(s *replayed, nowNs int64) {
	if !s.slot {
		return
	}
	s.slot = false
	sl := r.slots[s.req.seg.Service]
	sl.held--
	if len(sl.waiting) == 0 {
		return
	}
	w := sl.waiting[0]
	sl.waiting = sl.waiting[1:]
	a := &w.kept[len(w.kept)-1]
	if d := float64(nowNs-w.startNs)/1e6 - a.startMs; d > 0 {
		a.startMs += d
		a.endMs += d
		w.shift -= d
		w.changed = true
	}
	sl.held++
	w.slot = true
	r.push(w)
}

// recorded is recorded attempt i of s as the policy makes it: moved
// earlier by what was removed before it, and, with feedback, answering
// the modeled load.
func (r *replayer) recorded(s *replayed, i int) modAttempt { return r.made(s, i, i) }

// made is the attempt the policy makes where recorded attempt i of s
// stands (its tries, route and the wait before it), with the outcome of
// recorded attempt o on the same route: its outcome, duration, tokens and
// hidden work. o is i unless the policy cut attempts before i: then the
// attempt moves earlier, to the moment of the first one cut, and takes
// what that moment gave. With feedback, it answers the modeled load.
func (r *replayer) made(s *replayed, i, o int) modAttempt {
	a, b := s.req.attempts[i], s.req.attempts[o]
	m := modAttempt{rec: o, route: a.route, tries: a.tries, startMs: a.startMs - s.shift, recEndMs: a.endMs,
		ok: b.ok, trigger: b.trigger, tokens: b.tokens, hiddenMs: b.hiddenMs, retryAfterMs: b.retryAfterMs, fallback: a.fallback}
	m.endMs = m.startMs + b.endMs - b.startMs
	if r.feedback != nil && r.feedback.adjust(s, b, &m) || i != o {
		s.changed = true
		s.shift += (a.endMs - a.startMs) - (m.endMs - m.startMs)
	}
	return m
}

// takeSpare removes and returns the first attempt the policy cut from s on
// route, of the fallback try or not as fallback says, or -1: a primary
// and a fallback endpoint may share a route.
func (s *replayed) takeSpare(route string, fallback bool) int {
	for k, o := range s.spare {
		if a := s.req.attempts[o]; a.route == route && a.fallback == fallback {
			s.spare = slices.Delete(s.spare, k, k+1)
			return o
		}
	}
	return -1
}

func requestRNG(seed int64, id string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(id))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// push schedules the end of s's last kept attempt, cut at the deadline if
// it runs past it.
func (r *replayer) push(s *replayed) {
	r.seq++
	last := &s.kept[len(s.kept)-1]
	if d := ms(r.policy.Deadline); d > 0 && last.endMs > d {
		// The client cancels the attempt; the server works on.
		last.hiddenMs += last.endMs - max(d, last.startMs)
		last.endMs = max(d, last.startMs)
		last.ok, last.trigger, last.tokens, last.retryAfterMs = false, "timeout", 0, 0
		s.changed = true
	}
	heap.Push(&r.queue, endEvent{atNs: s.startNs + int64(last.endMs*1e6), seq: r.seq, s: s})
}

func (r *replayer) queueEnd(e endEvent) { heap.Push(&r.queue, e) }

// attemptEnded decides, when s's last attempt has ended, whether the
// policy makes another.
func (r *replayer) attemptEnded(s *replayed, nowNs int64) {
	if r.slots != nil {
		r.release(s, nowNs)
	}
	if s.hedgedRun {
		r.endHedged(s, nowNs)
		return
	}
	last := s.kept[len(s.kept)-1]
	if r.budget != nil {
		r.budget.observe(nowNs, last.ok)
	}
	if q := r.quotaOf(s); q != nil {
		r.settleQuota(s, last, q)
	}
	if last.ok || !r.policy.retries(last.trigger) {
		s.stop = s.stoppedBy(last, StopNoRetryOn)
		r.finish(s)
		return
	}
	changed, drawn := s.changed, s.drawn
	next, ok := r.nextAttempt(s, last)
	if !ok {
		s.stop = s.stoppedBy(last, StopAttemptCap)
	} else if s.stop = r.admits(s, next, nowNs); s.stop == StopRetryQuota && !changed && s.req.quotaStop != nil {
		// The modeled quota stops the request where the recorded one
		// did: it ends as recorded.
		ok, s.changed, s.drawn = false, false, drawn
		s.stop = s.stoppedBy(last, StopRetryQuota)
	} else if s.stop != "" {
		ok, s.changed = false, true
	}
	if !ok {
		r.finish(s)
		return
	}
	s.kept = append(s.kept, next)
	r.launch(s)
}

// admits says why the policy does not let s make the retry next now, ""
// when it does: it
// could finish before the deadline, taking as long as the segment's median
// served attempt on its route; its task has retries left; the retry
// budget allows it. A retry admitted is counted against the budgets.
func (r *replayer) admits(s *replayed, next modAttempt, nowNs int64) string {
	if d := ms(r.policy.Deadline); d > 0 && (next.startMs >= d || next.startMs+r.pools.medianMs(s.req.seg, next.route) > d) {
		return StopDeadline
	}
	if n := r.policy.PerTaskBudget; n > 0 && r.taskRetries[s.req.task] >= n {
		return StopTaskBudget
	}
	if r.policy.NoProgress && s.repeatsFailure(next) {
		return StopNoProgress
	}
	if n := r.policy.TokenCap; n > 0 && s.tokensSpent() >= n {
		return StopTokenCap
	}
	inner := innerRetry(next.tries)
	if r.lane != nil && inner && r.retriesInFlight(s.req.seg.Service, nowNs) >= r.policy.RetryLane {
		return StopNoCapacity
	}
	var cost float64
	if q := r.quotaOf(s); q != nil && inner {
		cost = r.quotaCost(s, q)
	}
	if cost > 0 && !r.quotaAdmits(s, next, r.quotaOf(s), cost, nowNs) {
		return StopRetryQuota
	}
	if r.budget != nil && !r.budget.allowRetry(nowNs) {
		return StopRetryBudget
	}
	if cost > 0 {
		r.quota[s.req.seg.Service] -= cost
		s.quotaTaken = cost
	}
	if r.lane != nil && inner {
		// next is appended to s.kept once admitted.
		r.lane[s.req.seg.Service] = append(r.lane[s.req.seg.Service], laneRetry{s, len(s.kept)})
	}
	r.taskRetries[s.req.task]++
	return ""
}

// laneRetry is an admitted SDK retry: attempt i of s.kept.
type laneRetry struct {
	s *replayed
	i int
}

// retriesInFlight counts service's admitted SDK retries in flight at
// nowNs (started, not ended), forgetting those that ended.
func (r *replayer) retriesInFlight(service string, nowNs int64) int {
	held := r.lane[service][:0]
	n := 0
	for _, l := range r.lane[service] {
		a := l.s.kept[l.i]
		start, end := l.s.startNs+int64(a.startMs*1e6), l.s.startNs+int64(a.endMs*1e6)
		if end <= nowNs {
			continue
		}
		held = append(held, l)
		if start <= nowNs {
			n++
		}
	}
	r.lane[service] = held
	return n
}

// Why a modeled request that failed made no more attempts
// (Figures.FailedBy).
const (
	StopAttemptCap  = "attempt_cap"   // its loops had no try left (the policy's caps, or as recorded)
	StopNoRetryOn   = "no_retry_on"   // the policy never retries its last failure's trigger
	StopDeadline    = "deadline"      // a retry would have ended past the deadline
	StopTaskBudget  = "task_budget"   // its task had spent its retries
	StopNoProgress  = "no_progress"   // two attempts in a row failed the same way
	StopRetryQuota  = "retry_quota"   // its client's retry quota was empty
	StopRetryBudget = "retry_budget"  // the retry budget was spent
	StopNoCapacity  = "no_capacity"   // its client's retry lane was full (--retry-concurrency)
	StopNotRetried  = "not_retryable" // a hedging client's only attempt failed: it does not retry errors
	StopTokenCap    = "token_cap"     // its attempts' tokens had reached the cap (--token-cap)
)

// stoppedBy is why s made no attempt after last: the recorded request's
// reason when last is its final attempt, reached with none of the recorded
// attempts cut and none drawn (it stopped where it was recorded to), else
// the policy's.
func (s *replayed) stoppedBy(last modAttempt, policy string) string {
	if !s.drawn && len(s.spare) == 0 && last.rec == len(s.req.attempts)-1 && s.next >= len(s.req.attempts) {
		return cmp.Or(s.req.detail, "unstated")
	}
	return policy
}

// tokensSpent are the input and output tokens of s's attempts so far
// (Policy.TokenCap).
func (s *replayed) tokensSpent() int64 {
	var n int64
	for _, a := range s.kept {
		n += a.tokens
	}
	return n
}

// innerRetry: an attempt with these tries retries the innermost loop.
func innerRetry(tries []int) bool { return len(tries) > 0 && tries[len(tries)-1] > 1 }

// repeatsFailure: next retries the innermost loop of a call whose last two
// attempts failed the same way (Policy.NoProgress).
func (s *replayed) repeatsFailure(next modAttempt) bool {
	n := len(next.tries)
	if !innerRetry(next.tries) || len(s.kept) < 2 {
		return false
	}
	a, b := s.kept[len(s.kept)-2], s.kept[len(s.kept)-1]
	return len(a.tries) == n && len(b.tries) == n && slices.Equal(a.tries[:n-1], b.tries[:n-1]) &&
		!a.ok && !b.ok && a.trigger == b.trigger
}

// quotaOf is the retry quota of s's client: the policy's, else the one
// its recorded requests showed (RecordedQuota), else none.
func (r *replayer) quotaOf(s *replayed) *Quota {
	if r.policy.Quota != nil {
		return r.policy.Quota
	}
	if q := r.pools.quotas[s.req.seg.Service]; q != nil {
		return &q.Quota
	}
	return nil
}

// quotaAdmits reports whether the quota q of s's client pays for the
// retry next, which costs cost, at nowNs. A policy's quota pays when it
// has the tokens. The recorded quota is read against the recording: the
// modeled tokens differ from the recorded ones (read from the recorded
// retries and refunds, RecordedQuota.leftAt) by what the policy changed,
// and that difference is added to what the recording shows then: at
// least the cost where the recorded client made this retry, the tokens
// its error stated where the recorded quota stopped the request. With
// nothing changed, the recorded retries are made and the stops stand,
// whatever order the spans settled in.
func (r *replayer) quotaAdmits(s *replayed, next modAttempt, q *Quota, cost float64, nowNs int64) bool {
	tokens := r.quotaTokens(s, q)
	rq := r.pools.quotas[s.req.seg.Service]
	if r.policy.Quota != nil || rq == nil {
		return tokens >= cost
	}
	recorded := rq.leftAt(nowNs)
	diff := tokens - recorded
	last := s.kept[len(s.kept)-1]
	switch stop := s.req.quotaStop; {
	case next.rec >= 0 && !s.drawn:
		return max(recorded, cost)+diff >= cost
	case stop != nil && stop.available >= 0 && last.rec == len(s.req.attempts)-1:
		return stop.available+diff >= cost
	}
	return tokens >= cost
}

// quotaTokens are the tokens left in the retry quota q of s's client; it
// starts full.
func (r *replayer) quotaTokens(s *replayed, q *Quota) float64 {
	t, ok := r.quota[s.req.seg.Service]
	if !ok {
		t = q.Tokens
		r.quota[s.req.seg.Service] = t
	}
	return t
}

// quotaCost is what s's next retry takes from its client's quota q, more
// after a timeout. Only a retry of the innermost loop (the SDK's, whose
// retryer holds the quota) takes any.
func (r *replayer) quotaCost(s *replayed, q *Quota) float64 {
	if s.kept[len(s.kept)-1].trigger == "timeout" {
		return q.TimeoutCost
	}
	return q.Cost
}

// reopens reports whether the replay goes on with s where its recorded
// attempts end: its client's retry quota stopped it, and the replay
// models that quota, which decides anew whether the retry is made.
func (r *replayer) reopens(s *replayed) bool {
	return s.req.quotaStop != nil && r.quotaOf(s) != nil
}

// settleQuota settles s's attempt last with its client's quota: a retry
// that succeeded gives back what it took, a first attempt that succeeded
// adds Gain, up to the quota's tokens.
func (r *replayer) settleQuota(s *replayed, last modAttempt, q *Quota) {
	taken := s.quotaTaken
	s.quotaTaken = 0
	if !last.ok {
		return
	}
	gain := taken
	if taken == 0 {
		gain = q.Gain
	}
	r.quota[s.req.seg.Service] = min(q.Tokens, r.quotaTokens(s, q)+gain)
}

// rewait is the policy's wait before the retry with these tries after
// last, or recorded when the policy keeps the loop's own waits. A wait
// is never shorter than the Retry-After the failure asked for.
func (r *replayer) rewait(s *replayed, tries []int, last modAttempt, recorded float64) float64 {
	// The loop that retries is the innermost one past its first try: the
	// innermost loop itself, the outermost (app) one, or, three deep, a
	// middle one, whose waits the policy does not name.
	i := len(tries) - 1
	for i > 0 && tries[i] == 1 {
		i--
	}
	layer, n := 0, tries[i]-1
	var b *Backoff
	switch {
	case i == len(tries)-1:
		b = r.policy.InnerBackoff
	case i == 0:
		layer, b = 1, r.policy.AppBackoff
	}
	if b == nil || n < 1 {
		return recorded
	}
	w := b.waitMs(n, s.sleeps[layer], s.rng)
	s.sleeps[layer] = w
	return max(w, last.retryAfterMs)
}

// nextAttempt is the recorded attempt the policy makes next, or one drawn
// when the recorded ones ran out at a cap the policy raises.
func (r *replayer) nextAttempt(s *replayed, last modAttempt) (modAttempt, bool) {
	atts := s.req.attempts
	cut := cutNone
	for !s.drawn && s.next < len(atts) {
		a := atts[s.next]
		s.next++
		if !r.policy.keeps(a) {
			if cut == cutNone {
				cut = cutOuter
				if a.tries[len(a.tries)-1] > 1 {
					cut = cutInner
				}
			}
			s.changed = true
			s.spare = append(s.spare, s.next-1)
			continue
		}
		if cut != cutNone {
			// The removed attempts and the waits between them go; the
			// wait before this one stays.
			s.shift += max(0, a.latestMs-last.recEndMs)
		}
		if a.gapMs > 0 && !(a.fallback && a.tries[len(a.tries)-1] == 1) {
			// (The fallback try follows the app loop without its
			// backoff.)
			if w := r.rewait(s, a.tries, last, a.gapMs); w != a.gapMs {
				s.shift += a.gapMs - w
				s.changed = true
			}
		}
		o := s.takeSpare(a.route, a.fallback)
		if o < 0 {
			return r.recorded(s, s.next-1), true
		}
		// This attempt comes at the moment of the first one cut on its
		// route, and meets what it met; its own moment is left to the
		// attempts after it.
		s.spare = append(s.spare, s.next-1)
		return r.made(s, s.next-1, o), true
	}
	if s.drawn || cut == cutNone && (len(s.spare) > 0 || r.reopens(s)) {
		// After a drawn attempt, or one that took a cut attempt's moment
		// and so left moments of the request unused, or where the
		// recorded quota stopped the request, the loops go on as the
		// policy has them.
		cut = cutDrawn
	}
	if next, ok := r.draw(s, last, cut); ok || cut == cutNone || last.fallback {
		return next, ok
	}
	// The policy ended the primary loop failed: the fallback try comes.
	return r.fallbackAttempt(s, last)
}

// cutKind is what the policy cut where the recorded attempts run out.
type cutKind int

const (
	cutNone  cutKind = iota // nothing: the recorded request ended there
	cutInner                // a retry of the innermost loop
	cutOuter                // a retry of an outer loop
	cutDrawn                // the attempt before was drawn
)

// finish closes s: with its recorded outcome and latency when the policy
// changed nothing, else with its last attempt's outcome and its recorded
// closing time (after the final attempt) added to that attempt's end.
func (r *replayer) finish(s *replayed) {
	r.close(s)
	if l := r.loops; l.succ != nil {
		if n := l.succ[s.idx]; n >= 0 {
			// The worker's next request starts its recorded think time
			// after this one's modeled end.
			r.seq++
			at := s.startNs + int64(s.latencyMs*1e6) + int64(l.thinkMs[n]*1e6)
			heap.Push(&r.queue, endEvent{atNs: at, seq: r.seq, s: r.reps[n], start: true})
		}
	}
}

// close sets s's outcome and latency.
func (r *replayer) close(s *replayed) {
	req := s.req
	if last := s.kept[len(s.kept)-1]; last.ok && !s.drawn {
		// Attempts already running when the answer came (hedges) still
		// ran; not after a draw, which the recorded ones no longer follow.
		for ; s.next < len(req.attempts); s.next++ {
			a := req.attempts[s.next]
			if a.startMs-s.shift >= last.endMs {
				break
			}
			if r.policy.keeps(a) {
				s.kept = append(s.kept, r.recorded(s, s.next))
			}
		}
	}
	if s.next < len(req.attempts) {
		s.changed = true
	}
	if !s.changed {
		s.ok, s.latencyMs = req.ok, req.latencyMs
		return
	}
	recFinal := req.attempts[len(req.attempts)-1]
	closing := max(0, req.latencyMs-recFinal.endMs)
	if s.hedgedRun {
		// Hedged attempts overlap: the request closes after the one
		// that ended last.
		closing = req.latencyMs
		for _, a := range req.attempts {
			closing = min(closing, max(0, req.latencyMs-a.endMs))
		}
	}
	end := 0.0
	for _, a := range s.kept {
		end = max(end, a.endMs)
	}
	s.ok = false
	for _, a := range s.kept {
		s.ok = s.ok || a.ok
	}
	s.latencyMs = end + closing
	if d := ms(r.policy.Deadline); d > 0 && !s.ok {
		s.latencyMs = min(s.latencyMs, max(d, end))
	}
}

// endEvent is the end of a request's latest attempt, or, with start, the
// start of a closed-loop worker's next request, or, with admit, the start
// of a request's latest attempt under a concurrency limit.
type endEvent struct {
	atNs         int64
	seq          uint64
	s            *replayed
	start, admit bool
}

type endQueue []endEvent

func (q endQueue) Len() int { return len(q) }
func (q endQueue) Less(i, j int) bool {
	if q[i].atNs != q[j].atNs {
		return q[i].atNs < q[j].atNs
	}
	return q[i].seq < q[j].seq
}
func (q endQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *endQueue) Push(x any)   { *q = append(*q, x.(endEvent)) }
func (q *endQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// budgetState is a retry budget as it runs: tumbling windows of
// Budget.Window, each counting its successful attempts and its retries.
type budgetState struct {
	Budget
	current int64
	ok      float64
	retries float64
}

func (b *budgetState) roll(nowNs int64) {
	if w := nowNs / int64(b.Window); w != b.current {
		b.current, b.ok, b.retries = w, 0, 0
	}
}

func (b *budgetState) observe(nowNs int64, success bool) {
	b.roll(nowNs)
	if success {
		b.ok++
	}
}

func (b *budgetState) allowRetry(nowNs int64) bool {
	b.roll(nowNs)
	if b.retries >= max(b.Floor, b.Ratio*b.ok) {
		return false
	}
	b.retries++
	return true
}
