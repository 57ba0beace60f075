package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Shape names one way a trace shows a logical request and its attempts.
type Shape string

// The shapes the generator emits; the package comment describes each one.
const (
	ShapeExplicit Shape = "explicit"
	ShapeResend   Shape = "resend"
	ShapeGRPC     Shape = "grpc"
	ShapeWrapped  Shape = "wrapped"
	ShapeSplit    Shape = "split"
	ShapeOrphan   Shape = "orphan"
	ShapeHedge    Shape = "hedge"
	// The opt-in shapes, never part of the default mix: they must be named.
	ShapeAppLoop Shape = "apploop"
	ShapeAgent   Shape = "agent"
)

// AllShapes returns every shape, in the order the package comment lists them.
func AllShapes() []Shape {
	return []Shape{ShapeExplicit, ShapeResend, ShapeGRPC, ShapeWrapped, ShapeSplit, ShapeOrphan, ShapeHedge}
}

// OptInShapes returns the shapes that are used only when named.
func OptInShapes() []Shape { return []Shape{ShapeAppLoop, ShapeAgent} }

// ParseShapes reads a comma-separated shape list such as "explicit,grpc".
// An empty string or "all" selects every default shape (AllShapes); the
// opt-in shapes are used only when named.
func ParseShapes(s string) ([]Shape, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return AllShapes(), nil
	}
	var shapes []Shape
	seen := make(map[Shape]bool)
	for _, name := range strings.Split(s, ",") {
		shape := Shape(strings.TrimSpace(name))
		if !knownShape(shape) {
			return nil, fmt.Errorf("unknown shape %q (want one of %s)", name, shapeList())
		}
		if !seen[shape] {
			seen[shape] = true
			shapes = append(shapes, shape)
		}
	}
	return shapes, nil
}

func knownShape(s Shape) bool {
	for _, known := range append(AllShapes(), OptInShapes()...) {
		if s == known {
			return true
		}
	}
	return false
}

func shapeList() string {
	names := make([]string, 0, len(AllShapes())+len(OptInShapes()))
	for _, s := range append(AllShapes(), OptInShapes()...) {
		names = append(names, string(s))
	}
	return strings.Join(names, ",")
}

// FaultMix sets how often attempts fail and how. The first four are
// independent per-attempt probabilities (their sum must not exceed 1);
// ClientError is drawn once per logical request, because a bad request fails
// the same way on every attempt; Reject applies only to evaluator variants.
// The zero FaultMix injects no faults (timeouts can still come from load).
type FaultMix struct {
	RateLimited float64 // 429 with a Retry-After header
	ServerError float64 // 500, 502 or 503
	Reset       float64 // connection reset: no response
	Timeout     float64 // the server stalls past the client's timeout
	ClientError float64 // share of logical requests that are bad (400/401/404)
	Reject      float64 // evaluator variants: chance a good generation is rejected
}

// DefaultFaults is the mix `retryscope gen` uses when --faults is not given.
func DefaultFaults() FaultMix {
	return FaultMix{RateLimited: 0.04, ServerError: 0.04, Reset: 0.015, Timeout: 0.02, ClientError: 0.01, Reject: 0.3}
}

// Scale multiplies every rate by k, capping each at 1.
func (f FaultMix) Scale(k float64) FaultMix {
	c := func(v float64) float64 { return min(1, v*k) }
	return FaultMix{c(f.RateLimited), c(f.ServerError), c(f.Reset), c(f.Timeout), c(f.ClientError), c(f.Reject)}
}

// String renders the mix in the syntax ParseFaults reads.
func (f FaultMix) String() string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return "429=" + g(f.RateLimited) + ",5xx=" + g(f.ServerError) + ",reset=" + g(f.Reset) +
		",timeout=" + g(f.Timeout) + ",4xx=" + g(f.ClientError) + ",reject=" + g(f.Reject)
}

// ParseFaults reads "429=0.05,5xx=0.05,reset=0.02,timeout=0.03,4xx=0.01,reject=0.3".
// Keys left out are zero; "none" is the zero mix.
func ParseFaults(s string) (FaultMix, error) {
	var f FaultMix
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return f, nil
	}
	for _, item := range strings.Split(s, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return f, fmt.Errorf("fault %q: want key=rate", item)
		}
		rate, err := strconv.ParseFloat(value, 64)
		if err != nil || !(rate >= 0 && rate <= 1) {
			return f, fmt.Errorf("fault %q: rate must be a number from 0 to 1", item)
		}
		switch key {
		case "429":
			f.RateLimited = rate
		case "5xx":
			f.ServerError = rate
		case "reset":
			f.Reset = rate
		case "timeout":
			f.Timeout = rate
		case "4xx":
			f.ClientError = rate
		case "reject":
			f.Reject = rate
		default:
			return f, fmt.Errorf("fault %q: unknown key (want 429, 5xx, reset, timeout, 4xx, reject)", key)
		}
	}
	return f, f.validate()
}

func (f FaultMix) validate() error {
	for _, v := range []float64{f.RateLimited, f.ServerError, f.Reset, f.Timeout, f.ClientError, f.Reject} {
		if !isShare(v) {
			return fmt.Errorf("fault rates must be from 0 to 1")
		}
	}
	if f.RateLimited+f.ServerError+f.Reset+f.Timeout > 1 {
		return fmt.Errorf("per-attempt fault rates (429, 5xx, reset, timeout) add up to more than 1")
	}
	return nil
}

// PolicyKind is a backoff strategy.
type PolicyKind string

// The retry policies. PolicyNone means one attempt in every shape: no
// retries, no application loop, no hedge.
const (
	PolicyNone         PolicyKind = "none"
	PolicyFixed        PolicyKind = "fixed"
	PolicyFull         PolicyKind = "full"         // full jitter: U(0, min(cap, base*2^(n-1)))
	PolicyDecorrelated PolicyKind = "decorrelated" // min(cap, U(base, 3*previous sleep))
	// policyExponential is go-retryablehttp's DefaultBackoff, base*2^(n-1)
	// up to cap with no jitter, or exactly a 429's Retry-After; only the
	// retryablehttp split variant uses it.
	policyExponential PolicyKind = "exponential"
)

// ParsePolicyKind checks a policy name.
func ParsePolicyKind(s string) (PolicyKind, error) {
	switch k := PolicyKind(s); k {
	case PolicyNone, PolicyFixed, PolicyFull, PolicyDecorrelated:
		return k, nil
	}
	return "", fmt.Errorf("unknown policy %q (want none, fixed, full or decorrelated)", s)
}

// Policy is the clients' retry behaviour.
type Policy struct {
	Kind        PolicyKind
	MaxAttempts int           // attempts per call at the retrying layer, the first included (default 3)
	AppTries    int           // tries of the application loop in nested wrapped requests (default 3)
	Base        time.Duration // first backoff, or every backoff for fixed (default 200ms; the app loop uses 4x)
	Cap         time.Duration // longest backoff (default 8s)
	// NaiveShare is the share of logical requests whose client retries 4xx
	// and ignores Retry-After.
	NaiveShare float64
	// Budget, when > 0, allows retries up to Budget per successful attempt in
	// each 10 s window (at least 5 per window), shared by all clients.
	Budget float64
	// Quota, when > 0, gives each client service a retry quota of that
	// many tokens, as the AWS SDKs' standard retryer has (500 there): an
	// SDK retry takes 5 tokens, 10 after a timeout, and is not made when
	// too few are left; a retry that succeeds gives its tokens back, a
	// first attempt that succeeds adds 1, up to the initial tokens.
	Quota int
	// NoProgress stops an SDK call's retries once two attempts in a row
	// failed the same way (the same trigger): a retry that meets what the
	// last one met is taken for no progress.
	NoProgress bool
	// RetryLane, when > 0, gives each client service a lane of that many
	// retries in flight at once, apart from its first attempts: an SDK
	// retry that finds the lane full is not made (no_capacity).
	RetryLane int
	// TokenCap, when > 0, caps each logical request's tokens: a retry (of
	// any loop) is not made once the input and output tokens of the
	// request's attempts so far, as their spans record them, reach it
	// (token_cap). The check comes after each attempt, so the cap is
	// passed by at most one attempt.
	TokenCap int
	// Concurrency, when > 0, caps each client service's attempts in
	// flight, first attempts and retries alike: an attempt that finds
	// them all taken waits, first come first served, for one to end, and
	// its span starts once it holds a slot (a semaphore around each
	// attempt, as seed 004's lane has it, without its wait timeout).
	// Hedges are not held to it. With ConcurrencyFirst only requests'
	// first attempts are (a first-attempt lane; retries go by RetryLane).
	Concurrency      int
	ConcurrencyFirst bool
	HedgeDelay       time.Duration // hedge shape: wait before the second attempt (default 120ms)
	// NoRetry4xx, when set, stops every client, naive ones included, from
	// retrying a client error (4xx); the rest of a naive client stays
	// naive (it still ignores Retry-After).
	NoRetry4xx bool
	// DeadlineAdmit, with Config.Deadline, makes clients deadline-aware: a
	// retry is not started when it would end past the deadline, were it
	// to take as long as the median of its latest served attempts on the
	// route (AdmitWindow of them, of its service and model) did.
	DeadlineAdmit bool
}

// AdmitWindow is how many of a route's latest successful attempts a
// deadline-aware client takes the median of.
const AdmitWindow = 200

// DefaultPolicy is full jitter with three attempts per call.
func DefaultPolicy() Policy {
	return Policy{Kind: PolicyFull, MaxAttempts: 3, AppTries: 3, Base: 200 * time.Millisecond,
		Cap: 8 * time.Second, NaiveShare: 0.1, HedgeDelay: 120 * time.Millisecond}
}

// DefaultStart is where simulated time begins unless Config.Start says
// otherwise.
var DefaultStart = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// Config parameterises one generated workload.
type Config struct {
	Seed     int64
	Requests int       // logical requests to simulate
	Start    time.Time // zero: DefaultStart
	Rate     float64   // mean logical requests started per second (default 20)
	// Services, when > 0, names client services svc-01..svc-NN instead of
	// the per-shape defaults (checkout, support-bot, ...).
	Services int
	Shapes   []Shape // empty: all, in equal shares
	Faults   FaultMix
	Policy   Policy
	// Nested makes every wrapped request an application loop around SDK
	// calls; otherwise about 40% of them are.
	Nested      bool
	StreamShare float64 // share of LLM calls that stream (0..1)
	BatchSpans  int     // spans per ptrace.Traces batch (default 500)

	// The fields below are off by default and leave the output unchanged
	// when off.

	// Experiment, when > 0, runs a randomized policy experiment: each
	// logical request is assigned, independently and with this
	// probability, to the control arm, whose client makes one attempt
	// (no retries, no app loop, no hedge); the others keep Policy. The
	// anchor span of every request carries ArmAttribute = ArmNoRetry or
	// ArmRetry, and so does the truth (arm).
	Experiment float64
	// Counterfactual records in the truth, for every request, the latency
	// it would have had had its first attempt met no fault
	// (counterfactual_ms).
	Counterfactual bool
	// BigInputs, when > 0, is the share of logical requests that are big:
	// BigInputFactor times the prompt tokens and BigOutputFactor times the
	// output tokens (slower on LLM routes) and BigFaultScale times the
	// per-attempt fault rates on every route, so retried requests are
	// intrinsically slower than the rest (selection bias). The truth marks
	// them (big).
	BigInputs float64
	// SplitWorkers, when > 0, makes the split shape a pool of that many
	// concurrent go-retryablehttp workers behind otelhttp (variant
	// retryablehttp): each worker takes the next call as soon as it is
	// done with the last, to one of four targets (three hosts), so requests on a target
	// interleave and their attempts, each a trace of its own, are linked
	// by nothing but time. Config.Rate stays the overall rate.
	SplitWorkers int
	// SplitRetry is the retryablehttp workers' policy: RetryMax retries
	// after the first attempt, waits of WaitMin doubling to at most
	// WaitMax (the library's defaults: 4, 1 s, 30 s).
	SplitRetry RetryableSettings
	// SDKAttributes gives the spans the attribute load of real
	// OpenTelemetry SDKs, which the speed checks are judged on: every
	// resource the attributes an SDK and its detectors add (service.version,
	// service.instance.id, telemetry.sdk.*, host.*, os.type, process.*,
	// k8s.*: 13 beside service.name), every HTTP span the protocol, user
	// agent and body sizes (client) or peer (server) its instrumentation
	// records; without it a resource carries service.name alone.
	SDKAttributes bool
	// FlightBucket, when > 0, has the simulation count client attempts in
	// flight as it runs them and record in the truth (flight) the peak and,
	// per bucket of this width, the offered load λ·S with and without
	// retries.
	FlightBucket time.Duration
	// Pathologies plant retry-hygiene problems (retries of 4xx, Retry-After
	// ignored, retries in lockstep after an outage); the truth counts them.
	Pathologies Pathologies
	// Deadline, when > 0, gives every explicit-shape request an overall
	// deadline from its start, stated on its logical span
	// (DeadlineAttribute): the attempt in flight is cut there, and a retry
	// that would start after it is not made; the truth says exhausted
	// "deadline".
	Deadline time.Duration
	// AbandonStreams is the share of streamed requests whose client stops
	// reading part-way (20-80% of the stream) and cancels the call, keeping
	// the tokens read so far; the server generates the rest in vain. The
	// truth says exhausted "cancelled".
	AbandonStreams float64
	// CRN (common random numbers) draws each attempt's fault and timing
	// from a stream of its own, keyed by (Seed, request, attempt number),
	// so that the same seed run under another retry policy gives the same
	// arrivals, the same requests and the same draw for attempt n of
	// request i; only the load the attempts create (queueing, shedding)
	// can change an outcome. Off, the request's draws come from one
	// stream in turn, as they always have.
	CRN bool
}

// Policy-experiment arms, the values of ArmAttribute.
const (
	ArmAttribute = "retryscope.policy.arm"
	ArmNoRetry   = "no_retry"
	ArmRetry     = "retry"
)

// How much bigger and more fragile Config.BigInputs requests are.
const (
	BigInputFactor  = 8
	BigOutputFactor = 2
	BigFaultScale   = 3
)

// RetryableSettings are a go-retryablehttp client's retry settings: at
// most RetryMax retries, the nth after a wait of WaitMin·2^(n-1) capped at
// WaitMax, or the Retry-After of a 429 or 503.
type RetryableSettings struct {
	RetryMax         int
	WaitMin, WaitMax time.Duration
}

// DefaultRetryable is go-retryablehttp's NewClient: 4 retries, 1 s to 30 s.
func DefaultRetryable() RetryableSettings {
	return RetryableSettings{RetryMax: 4, WaitMin: time.Second, WaitMax: 30 * time.Second}
}

// DefaultConfig is what `retryscope gen` runs with no flags but -o.
func DefaultConfig() Config {
	return Config{Seed: 1, Requests: 1000, Start: DefaultStart, Rate: 20,
		Faults: DefaultFaults(), Policy: DefaultPolicy(), StreamShare: 0.5, BatchSpans: 500, SplitRetry: DefaultRetryable()}
}

// isShare reports whether v is a share, from 0 to 1 (NaN is not).
// isShare is false for NaN too.
func isShare(v float64) bool { return v >= 0 && v <= 1 }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// The largest values gen's flags take. A run holds every trace in memory
// before it writes them, about a kilobyte per span: ten million requests
// are some 30 million spans, as big a run as a machine that ingests them
// should generate at once.
const (
	MaxRequests     = 10_000_000
	MinRate         = 0.001
	MaxRate         = 1_000_000
	MaxServices     = 99
	MaxAttempts     = 100
	MaxBudget       = 1000
	MaxQuota        = 1_000_000
	MaxRetryLane    = 1_000_000
	MaxTokenCap     = 1_000_000_000
	MaxConcurrency  = 1_000_000
	MaxSplitWorkers = 1000
	MaxBatchSpans   = 1_000_000
	// MaxWait bounds every duration: backoffs, hedge delays, deadlines
	// and flight buckets are at most a day.
	MaxWait = 24 * time.Hour
	// MaxRunDays is the longest run --requests/--rate may ask for, so
	// that every start time stays a nanosecond count.
	MaxRunDays = 366
	// MaxFlightBuckets is the most --flight-bucket buckets one run may
	// count; the run's length over the bucket width must stay under it.
	MaxFlightBuckets = 1_000_000
)

// normalized fills unset fields with defaults and rejects impossible values.
// Validate refuses what Generate would refuse, before anything is
// generated.
func (c Config) Validate() error {
	_, err := c.normalized()
	return err
}

func (c Config) normalized() (Config, error) {
	if c.Requests <= 0 {
		return c, fmt.Errorf("requests must be at least 1")
	}
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	if c.Rate <= 0 {
		c.Rate = 20
	}
	if !finite(c.Rate) || c.Requests > MaxRequests || float64(c.Requests)/c.Rate > MaxRunDays*86400 {
		return c, fmt.Errorf("requests must be at most %d and requests/rate (the run's length) at most %d days", MaxRequests, MaxRunDays)
	}
	if c.BatchSpans <= 0 {
		c.BatchSpans = 500
	}
	if c.Services < 0 || c.Services > 99 {
		return c, fmt.Errorf("services must be from 0 to 99")
	}
	if len(c.Shapes) == 0 {
		c.Shapes = AllShapes()
	}
	for _, s := range c.Shapes {
		if !knownShape(s) {
			return c, fmt.Errorf("unknown shape %q", s)
		}
	}
	if err := c.Faults.validate(); err != nil {
		return c, err
	}
	if !isShare(c.StreamShare) {
		return c, fmt.Errorf("stream share must be from 0 to 1")
	}
	if !isShare(c.Experiment) || !isShare(c.BigInputs) {
		return c, fmt.Errorf("experiment and big-inputs shares must be from 0 to 1")
	}
	if c.Deadline < 0 || !isShare(c.AbandonStreams) {
		return c, fmt.Errorf("deadline must be at least 0 and abandon-streams from 0 to 1")
	}
	if c.FlightBucket < 0 {
		return c, fmt.Errorf("flight bucket must be at least 0 (0: none)")
	}
	if c.FlightBucket > 0 {
		// The run lasts about requests/rate; the slowest requests add to
		// it, so twice that, and a minute, bound the buckets it fills.
		runNs := 2*float64(c.Requests)/c.Rate*1e9 + 60e9
		if runNs/float64(c.FlightBucket) > MaxFlightBuckets {
			return c, fmt.Errorf("flight bucket %s is too narrow for a run of about %s: at most %d buckets (try %s)",
				c.FlightBucket, time.Duration(runNs/2).Round(time.Second), MaxFlightBuckets, time.Duration(runNs/MaxFlightBuckets).Round(time.Millisecond)+time.Millisecond)
		}
	}
	if c.SplitWorkers < 0 || c.SplitWorkers > 1000 {
		return c, fmt.Errorf("split workers must be from 0 to 1000")
	}
	if r := c.SplitRetry; r == (RetryableSettings{}) {
		c.SplitRetry = DefaultRetryable()
	} else if r.RetryMax < 0 || r.RetryMax >= MaxAttempts || r.WaitMin <= 0 || r.WaitMax < r.WaitMin || r.WaitMax > MaxWait {
		return c, fmt.Errorf("split retry settings %d retries, waits %s to %s: want 0 to %d retries and 0 < min <= max <= %s",
			r.RetryMax, r.WaitMin, r.WaitMax, MaxAttempts-1, MaxWait)
	}
	p := &c.Policy
	if p.Kind == "" {
		p.Kind = PolicyFull
	}
	if _, err := ParsePolicyKind(string(p.Kind)); err != nil {
		return c, err
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 3
	}
	if p.AppTries <= 0 {
		p.AppTries = 3
	}
	if p.Base <= 0 {
		p.Base = 200 * time.Millisecond
	}
	if p.Cap <= 0 {
		p.Cap = 8 * time.Second
	}
	if p.HedgeDelay <= 0 {
		p.HedgeDelay = 120 * time.Millisecond
	}
	if !isShare(p.NaiveShare) || !(p.Budget >= 0 && p.Budget <= MaxBudget) {
		return c, fmt.Errorf("naive share must be from 0 to 1 and budget at least 0")
	}
	if p.RetryLane < 0 || p.RetryLane > MaxRetryLane {
		return c, fmt.Errorf("retry lane must be from 0 to %d retries in flight", MaxRetryLane)
	}
	if p.Concurrency < 0 || p.Concurrency > MaxConcurrency {
		return c, fmt.Errorf("concurrency must be from 0 to %d attempts in flight", MaxConcurrency)
	}
	if p.TokenCap < 0 || p.TokenCap > MaxTokenCap {
		return c, fmt.Errorf("token cap must be from 0 to %d tokens", MaxTokenCap)
	}
	if p.Quota < 0 || p.Quota > MaxQuota {
		return c, fmt.Errorf("retry quota must be from 0 to %d tokens", MaxQuota)
	}
	if p.Kind == PolicyNone {
		p.MaxAttempts, p.AppTries = 1, 1
	}
	return c, nil
}
