package segment

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/retryscope/retryscope/model"
)

// Measures are the workload measures (docs/report.md, "report") for a set of
// logical requests: the report's workload block and every segment carry the
// same keys, each meaning the same thing. The keys up to
// duplicated_output_tokens are the ones the JSON contract fixes
// (docs/report.md, "The JSON report"); the rest are added beside them.
type Measures struct {
	LogicalRequests int     `json:"logical_requests"`
	Attempts        int64   `json:"attempts"`
	Amplification   float64 `json:"amplification"` // attempts / logical requests
	RetryRate       float64 `json:"retry_rate"`    // share with more than one attempt
	// RetrySuccessRate is the share of retried requests that finally
	// succeeded; null when none was retried.
	RetrySuccessRate *float64 `json:"retry_success_rate"`
	FinalFailureRate float64  `json:"final_failure_rate"`
	LatencyMs        Split    `json:"latency_ms"`
	// TTFTMs is the time to first token of the answer used: the logical
	// request's start to the first token of its final attempt, for
	// streams that succeeded.
	TTFTMs                 Split `json:"ttft_ms"`
	DuplicatedOutputTokens int64 `json:"duplicated_output_tokens"`
	// Retried counts the requests with more than one attempt, Rescued
	// those of them that finally succeeded.
	Retried int `json:"retried_requests"`
	Rescued int `json:"rescued_requests"`
	// Failed counts the requests whose final outcome is an error.
	Failed int `json:"failed_requests"`
	// DuplicatedAttempts counts attempts beyond the one whose answer was
	// used; DuplicatedAttemptMs is the client time spent in them and
	// DuplicatedInputTokens the input they sent again.
	DuplicatedAttempts    int64   `json:"duplicated_attempts"`
	DuplicatedAttemptMs   float64 `json:"duplicated_attempt_ms"`
	DuplicatedInputTokens int64   `json:"duplicated_input_tokens"`
	// HiddenWorkMs is server time after the client gave up on an attempt,
	// HiddenOutputTokens the output generated in that time.
	HiddenWorkMs       float64 `json:"hidden_work_ms"`
	HiddenOutputTokens int64   `json:"hidden_output_tokens"`
	// ClientErrorRetries counts attempts made right after a deterministic
	// failure (trigger client_error: 400, 401, 403, 404, 422 ...), which a
	// retry cannot fix; ClientErrorRetryMs is their time, the backoff
	// before each included, and ClientErrorRetryTokens their tokens.
	ClientErrorRetries     int64   `json:"client_error_retries"`
	ClientErrorRetryMs     float64 `json:"client_error_retry_ms"`
	ClientErrorRetryTokens int64   `json:"client_error_retry_tokens"`
	// RouteRetries compares retries on the first attempt's route with
	// retries on another route.
	RouteRetries
	// Hygiene are the other retry-hygiene measures, their keys inline.
	Hygiene
	// Outcomes counts the requests by what ended them, beside ok/error
	// (the requests table's outcome_detail).
	Outcomes Outcomes `json:"outcomes"`
	// AbandonedStreams counts the streams the client stopped reading after
	// their first token and cancelled (outcome_detail cancelled, a stream);
	// AbandonedStreamTokens are the output tokens it had read and threw
	// away, AbandonedStreamMs the client time of those cancelled attempts.
	AbandonedStreams      int     `json:"abandoned_streams"`
	AbandonedStreamTokens int64   `json:"abandoned_stream_tokens"`
	AbandonedStreamMs     float64 `json:"abandoned_stream_ms"`
	// NestedRequests counts the requests made by two or more retry loops
	// one inside the other (an app loop around SDK calls), NestedAttempts
	// their attempts. AppTriesMax is the most tries of the outer loop seen
	// and SDKAttemptsMax the most attempts of the innermost loop in one
	// outer try: their product is the worst case per request they imply.
	// NestedDuplicatedMs and NestedDuplicatedTokens are the client time
	// and the input and output tokens of their duplicated attempts.
	NestedRequests         int     `json:"nested_requests"`
	NestedAttempts         int64   `json:"nested_attempts"`
	AppTriesMax            int     `json:"app_tries_max"`
	SDKAttemptsMax         int     `json:"sdk_attempts_max"`
	NestedDuplicatedMs     float64 `json:"nested_duplicated_ms"`
	NestedDuplicatedTokens int64   `json:"nested_duplicated_tokens"`
	// Tasks counts the tasks of two or more logical requests (requests
	// sharing a trace, or the task attribute Spec.TaskKey names) and
	// TaskRequests their requests; TaskCallsMax is the most requests in
	// one task and TaskAttemptsMax the most attempts; TaskWorstAttempts is
	// the worst case they imply: TaskCallsMax × the most attempts any one
	// request made (e.g. 4 calls × 3 app tries × 3 SDK attempts = 36).
	Tasks             int   `json:"tasks"`
	TaskRequests      int   `json:"task_requests"`
	TaskCallsMax      int   `json:"task_calls_max"`
	TaskAttemptsMax   int64 `json:"task_attempts_max"`
	TaskWorstAttempts int64 `json:"task_worst_attempts"`
	// AttemptPhases are the attempts' time as T = Q + C + S + G, where
	// their telemetry shows it (attempts.queue_ms ...).
	AttemptPhases AttemptPhases `json:"attempt_phases"`
	// SpendUSD is what the requests' tokens cost at the price table
	// (report --prices), DuplicatedSpendUSD what the duplicated input and
	// output tokens cost; UnpricedRequests counts requests with tokens
	// whose model the table does not price (left out of both).
	SpendUSD           float64 `json:"spend_usd"`
	DuplicatedSpendUSD float64 `json:"duplicated_spend_usd"`
	UnpricedRequests   int     `json:"unpriced_requests"`
	// FirstAttemptMs is the elapsed time of each request's first attempt.
	FirstAttemptMs Split `json:"first_attempt_ms"`
	// SecondAttemptMs is the elapsed time of the second attempt, so only
	// retried requests have one.
	SecondAttemptMs model.Summary `json:"second_attempt_ms"`
	// GenerationMs is the generation of the answer used: the first token
	// of the final attempt to that attempt's end (its streaming time), for
	// streams that succeeded. It leaves out everything before that first
	// token: earlier attempts, backoff, queueing, prefill.
	GenerationMs Split `json:"generation_ms"`
	// StreamTotalMs is total generation as the user lives it: the logical
	// request's start to its end (the end of the stream used), retries and
	// backoff included, for every streamed request.
	StreamTotalMs Split `json:"stream_total_ms"`
	// FirstTokenSeenMs is the logical request's start to the first token
	// of any of its attempts (a failed or abandoned one too): when the user
	// first saw output. Beside TTFTMs it shows how much earlier a stream
	// that was then lost had begun.
	FirstTokenSeenMs Split `json:"first_token_seen_ms"`
	// TailMovement compares retried requests' latency percentiles with
	// all requests'.
	TailMovement TailMovement `json:"tail_movement"`
	// AddedLatency is present when a baseline kind was asked for and the
	// baselines have been computed.
	AddedLatency *AddedLatency `json:"added_latency,omitempty"`
}

// AttemptPhases summarise each phase of the attempts of a set of requests.
type AttemptPhases struct {
	Queue    Phase `json:"queue"`
	Connect  Phase `json:"connect"`
	Serve    Phase `json:"serve"`
	Generate Phase `json:"generate"`
}

// Phase is one phase of attempts: how many attempts show it and its mean
// over them (null when none does).
type Phase struct {
	N      int64    `json:"n"`
	MeanMs *float64 `json:"mean_ms"`
	sum    float64
}

func (p *Phase) add(sumMs float64, n int64) {
	p.N += n
	p.sum += sumMs
	if p.N > 0 {
		v := p.sum / float64(p.N)
		p.MeanMs = &v
	}
}

// Outcomes counts requests by outcome_detail (rebuild/outcome.go defines
// each).
type Outcomes struct {
	AttemptCap int `json:"attempt_cap"`
	Deadline   int `json:"deadline"`
	NoCapacity int `json:"no_capacity"`
	TokenCap   int `json:"token_cap"`
	Cancelled  int `json:"cancelled"`
	Unfinished int `json:"unfinished"`
	NoProgress int `json:"no_progress"`
	// RetryBudget counts the requests a retry budget or quota stopped
	// below their cap, NotRetryable those that stopped on a failure no
	// retry fixes.
	RetryBudget  int `json:"retry_budget"`
	NotRetryable int `json:"not_retryable"`
	// DeadlineAttempts and DeadlineMs are the attempts and the latency of
	// the requests the deadline ended.
	DeadlineAttempts int64   `json:"deadline_attempts"`
	DeadlineMs       float64 `json:"deadline_ms"`
}

// add counts one request's outcome_detail.
func (o *Outcomes) add(detail string) {
	switch detail {
	case "attempt_cap":
		o.AttemptCap++
	case "deadline":
		o.Deadline++
	case "no_capacity":
		o.NoCapacity++
	case "token_cap":
		o.TokenCap++
	case "cancelled":
		o.Cancelled++
	case "unfinished":
		o.Unfinished++
	case "no_progress":
		o.NoProgress++
	case "retry_budget":
		o.RetryBudget++
	case "not_retryable":
		o.NotRetryable++
	}
}

// outcomesAndWaste adds what ended r, an abandoned stream's waste, nesting
// and spend to m.
func (s *stats) outcomesAndWaste(m *Measures, r *reqRow) {
	detail := s.names.text(r.detail)
	m.Outcomes.add(detail)
	for i, p := range []*Phase{&m.AttemptPhases.Queue, &m.AttemptPhases.Connect, &m.AttemptPhases.Serve, &m.AttemptPhases.Generate} {
		p.add(r.phaseMs[i], int64(r.phaseN[i]))
	}
	if detail == "deadline" {
		m.Outcomes.DeadlineAttempts += int64(r.attempts)
		m.Outcomes.DeadlineMs += r.latency
	}
	if detail == "cancelled" && r.stream {
		m.AbandonedStreams++
		m.AbandonedStreamTokens += r.finalTokens
		m.AbandonedStreamMs += r.finalMs
	}
	if r.loops >= 2 {
		m.NestedRequests++
		m.NestedAttempts += int64(r.attempts)
		m.AppTriesMax = max(m.AppTriesMax, int(r.appTries))
		m.SDKAttemptsMax = max(m.SDKAttemptsMax, int(r.sdkMax))
		m.NestedDuplicatedMs += r.more.dupMs
		m.NestedDuplicatedTokens += r.more.dupInput + r.more.dup
	}
	if r.input == 0 && r.output == 0 {
		return
	}
	p, ok := s.prices.Lookup(s.names.text(r.model))
	if !ok {
		m.UnpricedRequests++
		return
	}
	m.SpendUSD += p.Cost(r.input, r.output)
	m.DuplicatedSpendUSD += p.Cost(r.more.dupInput, r.more.dup)
}

// measureTasks groups rows[idx] by task: the tasks of several requests,
// their largest and the worst case it implies.
func measureTasks(m *Measures, rows []reqRow, idx []int32) {
	type task struct {
		calls    int
		attempts int64
	}
	// Sized for the segment's requests and indexing a slice, the map is
	// built once and holds no pointers: the workload's segment has a task
	// for most of its requests.
	index := make(map[int64]int32, len(idx))
	var tasks []task
	var perRequest int64
	for _, i := range idx {
		r := &rows[i]
		k, ok := index[r.task]
		if !ok {
			k = int32(len(tasks))
			index[r.task] = k
			tasks = append(tasks, task{})
		}
		t := &tasks[k]
		t.calls++
		t.attempts += int64(r.attempts)
		perRequest = max(perRequest, int64(r.attempts))
	}
	for _, t := range tasks {
		if t.calls < 2 {
			continue
		}
		m.Tasks++
		m.TaskRequests += t.calls
		m.TaskCallsMax = max(m.TaskCallsMax, t.calls)
		m.TaskAttemptsMax = max(m.TaskAttemptsMax, t.attempts)
	}
	m.TaskWorstAttempts = int64(m.TaskCallsMax) * perRequest
}

// Split describes a quantity over all requests and over retried ones.
type Split struct {
	All     model.Summary `json:"all"`
	Retried model.Summary `json:"retried"`
}

// TailMovement is how far retried requests' tail sits from the whole
// workload's, at p95 and p99; a side is null when either percentile is.
type TailMovement = model.Tail[Movement]

// Movement is retried pX − all pX in ms, and retried pX / all pX.
type Movement struct {
	Ms    float64 `json:"ms"`
	Ratio float64 `json:"ratio"`
}

// AddedLatency is L_retry − L0 against one baseline kind
// (docs/recognition.md, "Baselines"), over retried requests that have a
// baseline.
type AddedLatency struct {
	Kind string `json:"kind"`
	// Provenance lists the provenances of the baselines used (measured,
	// experiment, modeled), sorted.
	Provenance []string `json:"provenance"`
	// Missing counts retried requests without a baseline of this kind.
	Missing int `json:"missing"`
	// Ms is latency_ms − l0_ms; Ratio is latency_ms / l0_ms (a ratio below
	// 1 asks for the baseline to be reviewed, it is not a win).
	Ms    model.Summary `json:"ms"`
	Ratio model.Summary `json:"ratio"`
	// PerRequestMs is retry rate × mean added latency: the expected added
	// latency per logical request. Null without a mean.
	PerRequestMs *float64 `json:"per_request_ms"`
}

// stats holds the statistical settings Compute passes down.
type stats struct {
	rule      model.Rule
	ci        bool
	seed      uint64
	resamples int
	baseline  string // "" when added latency is not measured
	prices    model.Prices
	names     *names // the texts the rows' numbers stand for
}

// measure computes the measures of rows[idx]. label seeds the bootstrap so
// that a segment's intervals do not depend on which other segments exist.
// Sums run in the rows' order (request_id), so a figure does not depend on
// how the requests were stored.
func (s *stats) measure(rows []reqRow, idx []int32, label string) Measures {
	var m Measures
	var hyg hygieneSums
	var (
		missing    int
		provenance = []string{}
		routes     routeSums
	)
	for _, i := range idx {
		r := &rows[i]
		retried := r.retried()
		m.LogicalRequests++
		m.Attempts += int64(r.attempts)
		m.DuplicatedAttempts += int64(r.attempts - 1)
		x := r.more
		m.DuplicatedOutputTokens += x.dup
		m.DuplicatedInputTokens += x.dupInput
		m.DuplicatedAttemptMs += x.dupMs
		m.HiddenWorkMs += x.hiddenMs
		m.HiddenOutputTokens += x.hiddenTokens
		m.ClientErrorRetries += x.ceRetries
		m.ClientErrorRetryMs += x.ceMs
		m.ClientErrorRetryTokens += x.ceTokens
		routes.add(&x.route)
		hyg.add(r)
		s.outcomesAndWaste(&m, r)
		if !r.ok {
			m.Failed++
		}
		if !retried {
			continue
		}
		m.Retried++
		if r.ok {
			m.Rescued++
		}
		if s.baseline == "" {
			continue
		}
		if math.IsNaN(r.l0) {
			missing++
			continue
		}
		if p := s.names.text(r.provenance); p != "" && !slices.Contains(provenance, p) {
			provenance = append(provenance, p)
		}
	}
	if m.LogicalRequests > 0 {
		n := float64(m.LogicalRequests)
		m.Amplification = float64(m.Attempts) / n
		m.RetryRate = float64(m.Retried) / n
		m.FinalFailureRate = float64(m.Failed) / n
	}
	if m.Retried > 0 {
		v := float64(m.Rescued) / float64(m.Retried)
		m.RetrySuccessRate = &v
	}
	m.RouteRetries = routes.measures()
	m.Hygiene = hyg.measures()
	measureTasks(&m, rows, idx)
	// Each distribution is gathered and summarised in turn into one pair
	// of lists sized once: at 10M spans the six lists grown side by side,
	// in two segments measured at once, were 1.3 GB of the 3.5 GB the
	// measuring allocated, and kept Go's heap 0.15 GB higher.
	buf := split{all: make([]float64, 0, len(idx)), retried: make([]float64, 0, m.Retried)}
	gather := func(streams bool, value func(r *reqRow) float64) split {
		buf.all, buf.retried = buf.all[:0], buf.retried[:0]
		for _, i := range idx {
			if r := &rows[i]; !streams || r.stream {
				buf.add(value(r), r.retried())
			}
		}
		return buf
	}
	m.LatencyMs = s.split(gather(false, func(r *reqRow) float64 { return r.latency }), label+"/latency")
	m.FirstAttemptMs = s.split(gather(false, func(r *reqRow) float64 { return r.first }), "")
	m.TTFTMs = s.split(gather(true, func(r *reqRow) float64 { return r.ttft }), "")
	m.GenerationMs = s.split(gather(true, func(r *reqRow) float64 { return r.generation }), "")
	m.StreamTotalMs = s.split(gather(true, func(r *reqRow) float64 { return r.latency }), "")
	m.FirstTokenSeenMs = s.split(gather(true, func(r *reqRow) float64 { return r.firstTokenSeen }), "")
	// The retried requests' own: their second attempts, and against the
	// baseline the latency added and its ratio, in buf's retried list.
	retriedOnly := func(value func(r *reqRow) (float64, bool)) []float64 {
		out := buf.retried[:0]
		for _, i := range idx {
			if r := &rows[i]; r.retried() {
				if v, ok := value(r); ok {
					out = append(out, v)
				}
			}
		}
		return out
	}
	m.SecondAttemptMs = s.dist(retriedOnly(func(r *reqRow) (float64, bool) { return r.more.second, true }), "")
	m.TailMovement = TailMovement{
		P95: movement(m.LatencyMs.All.P95, m.LatencyMs.Retried.P95),
		P99: movement(m.LatencyMs.All.P99, m.LatencyMs.Retried.P99),
	}
	if s.baseline != "" {
		slices.Sort(provenance)
		a := &AddedLatency{
			Kind:       s.baseline,
			Provenance: provenance,
			Missing:    missing,
			Ms: s.dist(retriedOnly(func(r *reqRow) (float64, bool) {
				return r.latency - r.l0, !math.IsNaN(r.l0)
			}), label+"/added"),
			Ratio: s.dist(retriedOnly(func(r *reqRow) (float64, bool) {
				return r.latency / r.l0, !math.IsNaN(r.l0) && r.l0 > 0
			}), ""),
		}
		if a.Ms.Mean != nil {
			v := m.RetryRate * *a.Ms.Mean
			a.PerRequestMs = &v
		}
		m.AddedLatency = a
	}
	return m
}

// split collects a quantity over all requests and over retried ones.
type split struct{ all, retried []float64 }

func (v *split) add(x float64, retried bool) {
	v.all = append(v.all, x)
	if retried {
		v.retried = append(v.retried, x)
	}
}

// split summarises v; ciLabel (when not empty) seeds the bootstraps of
// both sides.
func (s *stats) split(v split, ciLabel string) Split {
	retriedLabel := ""
	if ciLabel != "" {
		retriedLabel = ciLabel + "/retried"
	}
	return Split{s.dist(v.all, ciLabel), s.dist(v.retried, retriedLabel)}
}

func movement(all, retried *float64) *Movement {
	if all == nil || retried == nil {
		return nil
	}
	mv := Movement{Ms: *retried - *all}
	if *all != 0 {
		mv.Ratio = *retried / *all
	}
	return &mv
}

// dist summarises values, NaN (unknown) left out, and, when CIs are on and
// ciLabel is not empty, bootstraps its tail.
func (s *stats) dist(values []float64, ciLabel string) model.Summary {
	known := values[:0]
	for _, v := range values {
		if !math.IsNaN(v) {
			known = append(known, v)
		}
	}
	slices.Sort(known)
	d := s.rule.SummarizeSorted(known)
	if s.ci && ciLabel != "" && (d.P95 != nil || d.P99 != nil) {
		d.CI95 = bootstrapTail(known, s.rule, s.resamples, rngFor(s.seed, ciLabel))
	}
	return d
}

// Bootstrap returns seeded bootstrap 95% intervals of the p95 and p99 of
// sorted (ascending, no NaN), as Spec.CI gives them for a segment:
// DefaultResamples resamples, drawn from seed and label.
func Bootstrap(sorted []float64, rule model.Rule, seed uint64, label string) *model.TailCI {
	return bootstrapTail(sorted, rule, DefaultResamples, rngFor(seed, label))
}

func rngFor(seed uint64, label string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(label))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// bootstrapTail returns percentile-bootstrap 95% intervals for the
// nearest-rank p95 and p99 of sorted. It draws resamples of the same size
// with replacement and records, for each, the rank in sorted of the
// resample's percentile: because sorted is sorted, a resample's k-th
// smallest value is sorted[j] for the k-th smallest drawn index j, so a
// resample costs one pass of draws counted per index and no sort. The
// interval runs from the value one rank below the 2.5th nearest-rank
// percentile of those ranks to the value one rank above their 97.5th.
// The one-rank continuity correction matters in the far tail: the plain
// percentile bootstrap cannot reach above the observed order statistics,
// and for p99 at n = 500 its interval lay below the true quantile in one
// case in eight (lognormal samples, 400 repetitions); with the correction
// coverage was 94-98% for p95 at n = 100, 400, 2,000 and p99 at n = 500,
// 2,000.
func bootstrapTail(sorted []float64, rule model.Rule, resamples int, rng *rand.Rand) *model.TailCI {
	n := len(sorted)
	pcts := []int{95, 99}
	ranks := make([]int, len(pcts))
	for i, p := range pcts {
		ranks[i], _ = rule.Rank(n, p)
	}
	// Only the top of sorted can hold the resampled percentiles: count the
	// draws that land in the top m ranks, m a margin of many standard
	// deviations above what the lowest percentile needs. A resample whose
	// top holds too few draws (odds far below 1e-12) is drawn again.
	need := n - ranks[0] + 1
	m := min(n, need+8*int(math.Sqrt(float64(need)))+16)
	base := n - m
	draws := make([][]int, len(pcts))
	counts := make([]int32, m)
	un := uint64(n)
	for done := 0; done < resamples; {
		clear(counts)
		for i := 0; i < n; i += 2 {
			// Two draws from one 64-bit number by multiply-shift: each index
			// is off uniform by at most n/2^32 (6e-5 at n = 250,000), far
			// below the bootstrap's own noise, for half the generator calls.
			r := rng.Uint64()
			if j := int((r&0xffffffff)*un>>32) - base; j >= 0 {
				counts[j]++
			}
			if j := int((r>>32)*un>>32) - base; j >= 0 && i+1 < n {
				counts[j]++
			}
		}
		// Walk down from the top: the highest rank (the last pct) is
		// reached first.
		above := 0
		next := len(pcts) - 1
		found := make([]int, len(pcts))
		for j := m - 1; j >= 0 && next >= 0; j-- {
			above += int(counts[j])
			for next >= 0 && above >= n-ranks[next]+1 {
				found[next] = base + j
				next--
			}
		}
		if next >= 0 {
			continue
		}
		for i := range pcts {
			draws[i] = append(draws[i], found[i])
		}
		done++
	}
	ci := &model.TailCI{}
	out := []**model.Interval{&ci.P95, &ci.P99}
	for i, p := range pcts {
		if rule.Percentile(sorted, p) == nil || len(draws[i]) == 0 {
			continue
		}
		slices.Sort(draws[i])
		lo := max(nearestRank(draws[i], 0.025)-1, 0)
		hi := min(nearestRank(draws[i], 0.975)+1, n-1)
		*out[i] = &model.Interval{Lo: sorted[lo], Hi: sorted[hi]}
	}
	return ci
}

// nearestRank is the q-quantile (0 < q < 1) of sorted by nearest rank.
func nearestRank[T any](sorted []T, q float64) T {
	k := int(math.Ceil(q * float64(len(sorted))))
	k = max(1, min(k, len(sorted)))
	return sorted[k-1]
}
