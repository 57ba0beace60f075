package model

// Trigger is why an attempt failed (docs/recognition.md, "How retries are
// recognised"). The empty Trigger means the attempt did not fail.
type Trigger string

// The triggers docs/recognition.md, "How retries are recognised" names.
const (
	TriggerTimeout        Trigger = "timeout"
	TriggerConnection     Trigger = "connection"
	TriggerRateLimited    Trigger = "rate_limited"
	TriggerServerError    Trigger = "server_error"
	TriggerClientError    Trigger = "client_error" // 4xx other than 408/429: deterministic
	TriggerCancelled      Trigger = "cancelled"
	TriggerRejectedOutput Trigger = "rejected_output" // an evaluator turned a good answer down
	// TriggerAbandoned: the caller gave up on an answer it was receiving
	// (a stalled stream) and sent the same request again.
	TriggerAbandoned Trigger = "abandoned"
	TriggerUnknown   Trigger = "unknown"
)

// Linkage names the rule that grouped a logical request's attempts, so a
// user can see why a trace was grouped as it was.
type Linkage string

// The linkage rules, strongest evidence first.
const (
	// LinkGRPC: a gRFC A72 Sent.<method> call span over Attempt.<method> spans.
	LinkGRPC Linkage = "grpc"
	// LinkOrphan: attempts whose parent span was never exported, grouped as
	// siblings under the missing parent.
	LinkOrphan Linkage = "orphan"
	// LinkSplitInferred: attempts in traces of their own, joined by service,
	// operation, a failed predecessor and a gap within the backoff window
	// (or a shared amz-sdk-invocation-id).
	LinkSplitInferred Linkage = "split_inferred"
	// LinkWrapped: an SDK or GenAI CLIENT span over transport attempts,
	// possibly inside an application retry loop.
	LinkWrapped Linkage = "wrapped"
	// LinkExplicit: retryscope.request.id / retryscope.attempt attributes.
	LinkExplicit Linkage = "explicit"
	// LinkHeader: ids and counters captured from SDK or proxy headers
	// (x-stainless-retry-count, amz-sdk-*, x-envoy-attempt-count).
	LinkHeader Linkage = "header"
	// LinkResend: http.request.resend_count or Envoy's retry.count.
	LinkResend Linkage = "resend"
	// LinkParent: a logical span over sibling attempts of one operation
	// with no counter, e.g. a hedging or retry helper's span.
	LinkParent Linkage = "parent"
	// LinkSingle: one attempt with no logical span around it.
	LinkSingle Linkage = "single"
)

// Outcome of an attempt or a logical request.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
)

// Attempt is one physical try, at the lowest layer (a transport span, a
// gRPC Attempt span). Times are Unix nanoseconds; nil pointers are unknown.
type Attempt struct {
	RequestID    string
	TraceID      string
	SpanID       string
	Ordinal      int   // 1-based, in start order within the request
	Tries        []int // try number per layer, outermost first
	Service      string
	Name         string
	Route        string // server.address
	Model        string
	Operation    string
	StartNS      int64
	EndNS        int64
	Outcome      string
	Trigger      Trigger // "" when the attempt did not fail
	Final        bool    // the attempt whose answer was used, or the last to fail
	HTTPStatus   *int64
	GRPCStatus   *int64
	ErrorType    string
	RetryAfterS  *float64
	InputTokens  *int64
	OutputTokens *int64
	TTFTMs       *float64 // attempt start to its first token
	GapBeforeMs  *float64 // start minus the latest end of earlier attempts; negative when overlapping
	OverlapMs    float64  // time this attempt ran while an earlier attempt was still running
	ServerEndNS  *int64   // end of the callee's SERVER span, when exported
	HiddenWorkMs float64  // server time after the client abandoned this attempt
	// HiddenOutputTokens: output the server generated that the client never
	// received, for an abandoned attempt.
	HiddenOutputTokens int64
	// The attempt's time as T = Q + C + S + G (queue, connection setup,
	// serving, generation) where its telemetry shows each; nil where not.
	QueueMs, ConnectMs, ServeMs, GenerateMs *float64
	// ClockSkewMs is how far the callee's SERVER span starts outside the
	// attempt (before it sent, or after it ended): the two clocks disagree,
	// and Q, S (and G without a first token) are left nil. 0 when they
	// agree. Not stored: the rebuild counts it.
	ClockSkewMs float64
	// FirstTokenOutside says the attempt's first-token event lies outside
	// its span, so it was set aside and TTFTMs is nil. Not stored: the
	// rebuild counts it.
	FirstTokenOutside bool
}

// ElapsedMs is the attempt's own duration in milliseconds.
func (a *Attempt) ElapsedMs() float64 { return float64(a.EndNS-a.StartNS) / 1e6 }

// Request is one logical request: what the caller asked for once, however
// many attempts it took. Its latency decomposes (docs/recognition.md,
// "Latency decomposition") as
// LatencyMs = TFailedMs + BackoffMs + OverheadMs + TFinalMs + ResidualMs;
// when telemetry does not say which part of a gap was intentional backoff,
// BackoffMs and OverheadMs are nil and only GapMs is known.
type Request struct {
	ID         string // "<trace_id>:<span_id>" of the anchor span
	TraceID    string
	SpanID     string
	Linkage    Linkage
	Inferred   bool // joined on circumstantial evidence (split across traces)
	Service    string
	Operation  string
	Route      string
	FinalRoute string
	Model      string
	FinalModel string
	Stream     bool
	StartNS    int64
	EndNS      int64
	LatencyMs  float64
	Attempts   int
	// Layers are the tries per retry layer as multipliers, outermost first;
	// their product is Attempts. LayerCounts are the same as counts.
	Layers       []float64
	LayerCounts  []int
	Outcome      string
	FinalTrigger Trigger  // the final attempt's trigger when the request failed
	Triggers     []string // one per failed attempt, in start order
	TFailedMs    float64
	BackoffMs    *float64
	OverheadMs   *float64
	GapMs        float64 // BackoffMs + OverheadMs, always known
	GapSplit     bool
	TFinalMs     float64
	ResidualMs   float64
	TTFTMs       *float64
	GenerationMs *float64 // first token to the end of the final attempt (streams)
	InputTokens  int64
	OutputTokens int64
	// DuplicatedOutputTokens is the output of every attempt but the final one.
	DuplicatedOutputTokens int64
	HiddenWorkMs           float64
	HiddenOutputTokens     int64
	AttachedTo             string // orphans: the trace root they were attached to
	// OutcomeDetail says what ended the request, beside Outcome, where the
	// spans let it be inferred or state it; "" otherwise.
	OutcomeDetail string
}
