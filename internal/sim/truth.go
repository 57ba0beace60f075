package sim

import (
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"time"
)

// TruthSchema identifies the truth file format.
const TruthSchema = "retryscope.truth/v1"

// Truth is what the simulation knows about every logical request it
// generated. Field order is the JSON key order.
type Truth struct {
	Schema   string   `json:"schema"`
	Seed     int64    `json:"seed"`
	Params   Params   `json:"params"`
	Workload Workload `json:"workload"`
	// Incidents are the windows in which a route failed far more often.
	Incidents []Incident `json:"incidents"`
	// Flight is the simulation's count of attempts in flight, when
	// Config.FlightBucket asked for it.
	Flight   *Flight   `json:"flight,omitempty"`
	Requests []Request `json:"requests"`
}

// Incident is a window of elevated faults on one route.
type Incident struct {
	Route   string  `json:"route"`
	StartNs int64   `json:"start_ns"`
	EndNs   int64   `json:"end_ns"`
	Scale   float64 `json:"fault_scale"`
	// Kind is "outage" for a Pathologies.Lockstep outage, which fails
	// every attempt that reaches the route during it (Scale 0), and Shed
	// counts those attempts; empty for an incident.
	Kind string `json:"kind,omitempty"`
	Shed int    `json:"shed,omitempty"`
}

// incidentsOf lists the incident windows; with no faults there are none,
// since scaling a zero rate changes nothing.
func incidentsOf(routes []*route, base int64, f FaultMix) []Incident {
	out := []Incident{}
	if f.RateLimited+f.ServerError+f.Reset+f.Timeout == 0 {
		return out
	}
	for _, rt := range routes {
		for _, iv := range rt.incidents {
			out = append(out, Incident{Route: rt.host, StartNs: base + iv.start, EndNs: base + iv.end, Scale: rt.faultScale * rt.incidentScale})
		}
	}
	return out
}

// Params records the configuration a truth file was generated with.
type Params struct {
	Requests     int      `json:"requests"`
	Start        string   `json:"start"`
	Rate         float64  `json:"rate_per_s"`
	Services     int      `json:"services"`
	Shapes       []string `json:"shapes"`
	Faults       string   `json:"faults"`
	Policy       string   `json:"policy"`
	MaxAttempts  int      `json:"max_attempts"`
	AppTries     int      `json:"app_tries"`
	BaseMs       float64  `json:"base_ms"`
	CapMs        float64  `json:"cap_ms"`
	NaiveShare   float64  `json:"naive_share"`
	Budget       float64  `json:"retry_budget"`
	Quota        int      `json:"retry_quota,omitempty"`
	NoProgress   bool     `json:"no_progress,omitempty"`
	RetryLane    int      `json:"retry_concurrency,omitempty"`
	TokenCap     int      `json:"token_cap,omitempty"`
	Concurrency  int      `json:"concurrency,omitempty"`
	FirstOnly    bool     `json:"concurrency_first_only,omitempty"`
	HedgeDelayMs float64  `json:"hedge_delay_ms"`
	Nested       bool     `json:"nested"`
	StreamShare  float64  `json:"stream_share"`
	// The opt-in features, absent when off.
	Experiment     float64 `json:"experiment,omitempty"`
	Counterfactual bool    `json:"counterfactual,omitempty"`
	BigInputs      float64 `json:"big_inputs,omitempty"`
	SplitWorkers   int     `json:"split_workers,omitempty"`
	// The split workers' retry settings, when split_workers has other
	// than go-retryablehttp's defaults (4 retries, waits of 1 s to 30 s).
	SplitRetries   int     `json:"split_retries,omitempty"`
	SplitWaitMinMs float64 `json:"split_wait_min_ms,omitempty"`
	SplitWaitMaxMs float64 `json:"split_wait_max_ms,omitempty"`
	Pathologies    string  `json:"pathologies,omitempty"`
	DeadlineMs     float64 `json:"deadline_ms,omitempty"`
	AbandonStreams float64 `json:"abandon_streams,omitempty"`
	NoRetry4xx     bool    `json:"no_retry_4xx,omitempty"`
	DeadlineAdmit  bool    `json:"deadline_admit,omitempty"`
	CRN            bool    `json:"crn,omitempty"`
}

// Workload holds the whole-run figures, derived from Requests.
type Workload struct {
	LogicalRequests        int     `json:"logical_requests"`
	Attempts               int     `json:"attempts"`
	Amplification          float64 `json:"amplification"`
	RetryRate              float64 `json:"retry_rate"`
	RetrySuccessRate       float64 `json:"retry_success_rate"`
	FinalFailureRate       float64 `json:"final_failure_rate"`
	DuplicatedOutputTokens int     `json:"duplicated_output_tokens"`
}

// Request is the truth about one logical request. The package comment
// defines every field.
type Request struct {
	Key                    string    `json:"key"`
	Shape                  Shape     `json:"shape"`
	Variant                string    `json:"variant"`
	Service                string    `json:"service"`
	Operation              string    `json:"operation"`
	Model                  string    `json:"model"`
	FinalModel             string    `json:"final_model"`
	Route                  string    `json:"route"`
	FinalRoute             string    `json:"final_route"`
	Stream                 bool      `json:"stream"`
	Naive                  bool      `json:"naive"`
	Arm                    string    `json:"arm,omitempty"`
	Big                    bool      `json:"big,omitempty"`
	Attempts               int       `json:"attempts"`
	Layers                 []float64 `json:"layers"`
	LayerCounts            []int     `json:"layer_counts"`
	InnerTries             []int     `json:"inner_tries,omitempty"`
	Outcome                string    `json:"outcome"`
	Exhausted              string    `json:"exhausted,omitempty"`
	StartNs                int64     `json:"start_ns"`
	EndNs                  int64     `json:"end_ns"`
	LatencyMs              float64   `json:"latency_ms"`
	CounterfactualMs       *float64  `json:"counterfactual_ms,omitempty"`
	TTFTMs                 *float64  `json:"ttft_ms"`
	TFailedMs              float64   `json:"t_failed_ms"`
	BackoffMs              float64   `json:"backoff_ms"`
	OverheadMs             float64   `json:"overhead_ms"`
	TFinalMs               float64   `json:"t_final_ms"`
	GapSplit               bool      `json:"gap_split"`
	Triggers               []string  `json:"triggers"`
	DuplicatedOutputTokens int       `json:"duplicated_output_tokens"`
	InputTokens            int       `json:"input_tokens"`
	OutputTokens           int       `json:"output_tokens"`
	HiddenWorkMs           float64   `json:"hidden_work_ms"`
	HiddenOutputTokens     int       `json:"hidden_output_tokens"`
	// RetryAfterIgnored counts the retries sent sooner than the
	// Retry-After of the response before them, RetryAfterEarlyMs by how
	// much in all.
	// ClientErrorStatus is the status every attempt of a bad request
	// gets (400, 401, 404 ...); absent for a good one.
	ClientErrorStatus int       `json:"client_error_status,omitempty"`
	RetryAfterIgnored int       `json:"retry_after_ignored,omitempty"`
	RetryAfterEarlyMs float64   `json:"retry_after_early_ms,omitempty"`
	AttemptList       []Attempt `json:"attempt_list"`
}

// Attempt is the truth about one physical attempt.
type Attempt struct {
	Span         string `json:"span"` // trace_id:span_id of the attempt span
	Try          []int  `json:"try"`  // try number per layer, outermost first
	StartNs      int64  `json:"start_ns"`
	EndNs        int64  `json:"end_ns"`
	Route        string `json:"route"`
	Trigger      string `json:"trigger"` // "" for the attempt whose answer was used
	RetryAfterS  int    `json:"retry_after_s,omitempty"`
	OutputTokens int    `json:"output_tokens"`
	ServerEndNs  int64  `json:"server_end_ns,omitempty"` // 0: no SERVER span
}

// WriteTruth writes t as indented JSON.
func WriteTruth(w io.Writer, t Truth) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}

func paramsOf(cfg Config) Params {
	shapes := make([]string, len(cfg.Shapes))
	for i, s := range cfg.Shapes {
		shapes[i] = string(s)
	}
	p := cfg.Policy
	params := Params{Requests: cfg.Requests, Start: cfg.Start.UTC().Format(time.RFC3339Nano), Rate: cfg.Rate, Services: cfg.Services,
		Shapes: shapes, Faults: cfg.Faults.String(), Policy: string(p.Kind), MaxAttempts: p.MaxAttempts, AppTries: p.AppTries,
		BaseMs: msOf(p.Base), CapMs: msOf(p.Cap), NaiveShare: p.NaiveShare, Budget: p.Budget, Quota: p.Quota, NoProgress: p.NoProgress, RetryLane: p.RetryLane, TokenCap: p.TokenCap, Concurrency: p.Concurrency, FirstOnly: p.ConcurrencyFirst, HedgeDelayMs: msOf(p.HedgeDelay),
		Nested: cfg.Nested, StreamShare: cfg.StreamShare,
		Experiment: cfg.Experiment, Counterfactual: cfg.Counterfactual, BigInputs: cfg.BigInputs, SplitWorkers: cfg.SplitWorkers,
		DeadlineMs: msOf(cfg.Deadline), AbandonStreams: cfg.AbandonStreams, NoRetry4xx: p.NoRetry4xx, DeadlineAdmit: p.DeadlineAdmit, CRN: cfg.CRN}
	if pa := cfg.Pathologies.String(); pa != "none" {
		params.Pathologies = pa
	}
	if r := cfg.SplitRetry; cfg.SplitWorkers > 0 && r != (RetryableSettings{}) && r != DefaultRetryable() {
		params.SplitRetries, params.SplitWaitMinMs, params.SplitWaitMaxMs = r.RetryMax, msOf(r.WaitMin), msOf(r.WaitMax)
	}
	return params
}

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

func nsToMs(v int64) float64 { return float64(v) / 1e6 }

// truth describes r as emitted. base is Config.Start in Unix nanoseconds.
func (r *simRequest) truth(out emitted, base int64) Request {
	start, end := out.anchor.start, out.anchor.end
	if out.anchor == out.attempts[0] {
		// No logical span: the request is what its attempts show.
		end = r.final.end
	}
	failed, backoff, overhead, final := r.decompose(start, end)
	t := Request{
		Key: out.anchor.key(), Shape: r.shape, Variant: r.variant, Service: r.service, Operation: out.anchor.name,
		Route: r.attempts[0].route.host, FinalRoute: r.final.route.host, Stream: r.stream, Naive: r.naive,
		Attempts: len(r.attempts), Outcome: "ok", Exhausted: r.exhausted,
		StartNs: base + start, EndNs: base + end, LatencyMs: nsToMs(end - start),
		TFailedMs: nsToMs(failed), BackoffMs: nsToMs(backoff), OverheadMs: nsToMs(overhead), TFinalMs: nsToMs(final),
		GapSplit: out.gapSplit, Triggers: []string{}, Arm: r.arm, Big: r.big,
		ClientErrorStatus: r.clientErrorStatus, RetryAfterIgnored: r.retryAfterIgnored, RetryAfterEarlyMs: nsToMs(r.retryAfterEarlyNs),
	}
	if r.primary.llm {
		t.Model, t.FinalModel = r.model, r.modelOn(r.final.route)
	}
	if !r.ok {
		t.Outcome = "error"
	}
	if r.stream && r.ok && r.final.firstToken > 0 {
		ttft := nsToMs(r.final.firstToken - start)
		t.TTFTMs = &ttft
	}
	t.Layers, t.LayerCounts, t.InnerTries = r.layerFigures()
	var hidden int64
	for i, a := range r.attempts {
		at := Attempt{Span: out.attempts[i].key(), Try: a.try, StartNs: base + a.start, EndNs: base + a.end,
			Route: a.route.host, RetryAfterS: a.retryAfterS}
		if a != r.final || !r.ok {
			at.Trigger = a.fault.trigger()
			t.Triggers = append(t.Triggers, at.Trigger)
		}
		if a.reached {
			at.ServerEndNs = base + a.serverEnd
		}
		if r.genAI && !r.usageLost(a) {
			at.OutputTokens = a.outTokens
			t.OutputTokens += a.outTokens
			if a.outTokens > 0 {
				t.InputTokens += r.inputTokensOn(a.route)
			}
			if a != r.final {
				t.DuplicatedOutputTokens += a.outTokens
			}
		}
		if h := a.hiddenNs(); h > 0 {
			hidden += h
			if a.route.llm {
				t.HiddenOutputTokens += max(0, a.serverOut-a.outTokens)
			}
		}
		t.AttemptList = append(t.AttemptList, at)
	}
	t.HiddenWorkMs = nsToMs(hidden)
	return t
}

// counterfactualMs is the latency the request would have had had its first
// attempt met no fault: the time before the first attempt, the first
// attempt's healthy duration at the load it met, and the time after the
// final attempt (closing the logical span). A healthy attempt may well be
// longer than the client's timeout; it is not cut.
func (r *simRequest) counterfactualMs(out emitted) float64 {
	if out.anchor == out.attempts[0] {
		return nsToMs(r.healthyNs)
	}
	head := r.attempts[0].start - out.anchor.start
	tail := out.anchor.end - r.final.end
	return nsToMs(head + r.healthyNs + tail)
}

// layerFigures returns tries per layer as multipliers (their product is the
// attempt count), as counts, and, for two layers, the inner tries per outer try.
func (r *simRequest) layerFigures() (multipliers []float64, counts []int, inner []int) {
	n := len(r.attempts)
	if r.agent != nil && r.agent.solo {
		return []float64{1, float64(n)}, []int{1, n}, []int{n}
	}
	if !r.nested() {
		return []float64{float64(n)}, []int{n}, nil
	}
	inner = make([]int, len(r.calls))
	for _, a := range r.attempts {
		inner[a.try[0]-1]++
	}
	outer := len(r.calls)
	return []float64{float64(outer), float64(n) / float64(outer)}, []int{outer, n}, inner
}

// decompose splits [start, end) into time in failed attempts before the
// final attempt started, intentional backoff, everything else (overhead),
// and the final attempt. The four add up to end-start exactly, also when
// attempts overlap.
func (r *simRequest) decompose(start, end int64) (failed, backoff, overhead, final int64) {
	f := r.final
	final = f.end - f.start
	var busy, waiting []interval
	for _, a := range r.attempts {
		if a != f {
			busy = append(busy, clip(interval{a.start, a.end}, start, f.start))
		}
	}
	for _, w := range r.waits {
		waiting = append(waiting, clip(w.interval, start, f.start))
	}
	failed = unionLength(busy)
	backoff = unionLength(append(busy, waiting...)) - failed
	overhead = (end - start) - failed - backoff - final
	return failed, backoff, overhead, final
}

// clip and unionLength are copies kept apart from the rebuild's on purpose;
// see "Independence from what it checks" in doc.go.
func clip(iv interval, lo, hi int64) interval {
	iv.start, iv.end = max(iv.start, lo), min(iv.end, hi)
	if iv.end < iv.start {
		iv.end = iv.start
	}
	return iv
}

// unionLength is the total length covered by the intervals.
func unionLength(ivs []interval) int64 {
	sorted := slices.SortedFunc(slices.Values(ivs), func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	var total, reach int64
	first := true
	for _, iv := range sorted {
		if iv.end <= iv.start {
			continue
		}
		switch {
		case first || iv.start >= reach:
			total += iv.end - iv.start
			reach, first = iv.end, false
		case iv.end > reach:
			total += iv.end - reach
			reach = iv.end
		}
	}
	return total
}

func workloadOf(requests []Request) Workload {
	w := Workload{LogicalRequests: len(requests)}
	retried, retriedOK, failed := 0, 0, 0
	for _, r := range requests {
		w.Attempts += r.Attempts
		w.DuplicatedOutputTokens += r.DuplicatedOutputTokens
		if r.Outcome != "ok" {
			failed++
		}
		if r.Attempts > 1 {
			retried++
			if r.Outcome == "ok" {
				retriedOK++
			}
		}
	}
	if n := float64(len(requests)); n > 0 {
		w.Amplification = float64(w.Attempts) / n
		w.RetryRate = float64(retried) / n
		w.FinalFailureRate = float64(failed) / n
	}
	if retried > 0 {
		w.RetrySuccessRate = float64(retriedOK) / float64(retried)
	}
	return w
}
