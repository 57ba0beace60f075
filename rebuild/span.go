package rebuild

import (
	"math"
	"strings"

	"github.com/retryscope/retryscope/internal/store"
)

// span is one row of rebuild_spans plus the tree links the rebuild adds.
type span struct {
	traceID, spanID, parentID string
	parentExported            bool
	name, kind, service       string
	start, end                int64
	status                    string
	route, method, url        string
	model, genAIOperation     string
	httpStatus, grpcStatus    *int64
	errorType                 string
	requestKey                string
	retryIndex                *int64
	counterKind               string
	retryAfterS               *float64
	rejected                  bool
	hasResponse               bool
	trigger                   string // the span's own failure, "" for none
	firstToken                *int64
	firstTokenOutside         bool // a first-token event outside the span, set aside
	backoffs                  []interval
	inputTokens, outputTokens *int64
	requestParams             string  // what a re-send repeats; "" when not recorded
	inputHash                 *int64  // the captured input; nil when not captured
	retryEvents               []int64 // events saying something failed or is retried
	serverEnd                 *int64
	serverModel               string
	serverOutput              *int64
	attemptMax                *int64   // the cap a counter states
	serverStart               *int64   // the callee's SERVER spans' first start
	connStart, connEnd        *int64   // the connection-setup children's first start and last end
	exhaustedReason           string   // why the span's loop gave up, as it states; "" when it does not
	deadlineMs                *float64 // the deadline the span states, ms from its start
	lengthCut                 bool     // the answer stopped at the output token cap
	statedQueueMs             *float64 // a queue time the span states (ms)
	serverQueueMs             *float64 // a queue time its SERVER children state (ms)
	factRow                   int64    // the span's row of rebuild_facts

	parent   *span
	children []*span
}

type interval struct{ start, end int64 }

func (s *span) key() string { return s.traceID + ":" + s.spanID }

// attemptLike: a CLIENT span, or a gRPC A72 Attempt span (INTERNAL).
func (s *span) attemptLike() bool {
	return s.kind == "client" || (s.kind == "internal" && strings.HasPrefix(s.name, "Attempt."))
}

// failedItself: the span's own status, codes or markers say it failed.
func (s *span) failedItself() bool { return s.trigger != "" }

// opKey says which sibling attempts are tries of the same operation: a
// shared logical id when there is one, else what was called and how.
func (s *span) opKey() string {
	if s.requestKey != "" {
		return "id\x00" + s.requestKey
	}
	return strings.Join([]string{s.service, s.kind, s.name, s.route, s.method, s.url}, "\x00")
}

// The columns of rebuild_partition and rebuild_pool that readSpan reads,
// in its order: factCols names them, and readSpan reads the chunk's
// column factTraceID and so on, wherever the query puts it.
// status_message is left: only rebuild_spans reads it, for the trigger.
const (
	factTraceID = iota
	factSpanID
	factParentID
	factParentExported
	factName
	factKind
	factService
	factStart
	factEnd
	factStatus
	factRoute
	factMethod
	factURL
	factModel
	factGenAIOperation
	factHTTPStatus
	factGRPCStatus
	factErrorType
	factRequestKey
	factRetryIndex
	factCounterKind
	factRetryAfterS
	factRejected
	factHasResponse
	factTrigger
	factFirstToken
	factBackoffAt
	factBackoffMs
	factInputTokens
	factOutputTokens
	factRequestParams
	factInputHash
	factRetryEvents
	factServerEnd
	factServerModel
	factServerOutput
	factAttemptMax
	factServerStart
	factConnStart
	factConnEnd
	factExhaustedReason
	factDeadlineMs
	factLengthCut
	factStatedQueueMs
	factServerQueueMs
	factRow
	factColumns // how many
)

var factCols = [factColumns]store.Col{
	factTraceID:         store.TextCol("trace_id"),
	factSpanID:          store.TextCol("span_id"),
	factParentID:        store.TextCol("parent_span_id"),
	factParentExported:  store.BoolCol("parent_exported"),
	factName:            store.TextCol("name"),
	factKind:            store.TextCol("kind"),
	factService:         store.TextCol("service_name"),
	factStart:           store.IntCol("start_ns"),
	factEnd:             store.IntCol("end_ns"),
	factStatus:          store.TextCol("status_code"),
	factRoute:           store.TextCol("route"),
	factMethod:          store.TextCol("method"),
	factURL:             store.TextCol("url"),
	factModel:           store.TextCol("model"),
	factGenAIOperation:  store.TextCol("gen_ai_operation"),
	factHTTPStatus:      store.IntCol("http_status"),
	factGRPCStatus:      store.IntCol("grpc_status"),
	factErrorType:       store.TextCol("error_type"),
	factRequestKey:      store.TextCol("request_key"),
	factRetryIndex:      store.IntCol("retry_index"),
	factCounterKind:     store.TextCol("counter_kind"),
	factRetryAfterS:     store.FloatCol("retry_after_s"),
	factRejected:        store.BoolCol("rejected"),
	factHasResponse:     store.BoolCol("has_response"),
	factTrigger:         store.TextCol("trigger"),
	factFirstToken:      store.IntCol("first_token_ns"),
	factBackoffAt:       store.IntListCol("backoff_at_ns"),
	factBackoffMs:       store.FloatListCol("backoff_ms"),
	factInputTokens:     store.IntCol("input_tokens"),
	factOutputTokens:    store.IntCol("output_tokens"),
	factRequestParams:   store.TextCol("request_params"),
	factInputHash:       store.IntCol("input_hash"),
	factRetryEvents:     store.IntListCol("retry_event_ns"),
	factServerEnd:       store.IntCol("server_end_ns"),
	factServerModel:     store.TextCol("server_model"),
	factServerOutput:    store.IntCol("server_output_tokens"),
	factAttemptMax:      store.IntCol("attempt_max"),
	factServerStart:     store.IntCol("server_start_ns"),
	factConnStart:       store.IntCol("conn_start_ns"),
	factConnEnd:         store.IntCol("conn_end_ns"),
	factExhaustedReason: store.TextCol("exhausted_reason"),
	factDeadlineMs:      store.FloatCol("deadline_ms"),
	factLengthCut:       store.BoolCol("length_cut"),
	factStatedQueueMs:   store.FloatCol("stated_queue_ms"),
	factServerQueueMs:   store.FloatCol("server_queue_ms"),
	factRow:             store.IntCol("fact_row"),
}

// readSpan reads row i of a chunk of rebuild_partition, read as factCols.
// The texts spans repeat come through t, one copy each.
func readSpan(c *store.Chunk, i int, t texts) *span {
	r := c.Row(i)
	s := &span{
		traceID: r.Text(factTraceID), spanID: r.Text(factSpanID), parentID: r.Text(factParentID),
		parentExported: r.Bool(factParentExported),
		name:           t.of(r, factName), kind: t.of(r, factKind), service: t.of(r, factService),
		start: r.Int(factStart), end: r.Int(factEnd),
		status: t.of(r, factStatus), route: t.of(r, factRoute), method: t.of(r, factMethod), url: t.of(r, factURL),
		model: t.of(r, factModel), genAIOperation: t.of(r, factGenAIOperation),
		httpStatus: r.IntPtr(factHTTPStatus), grpcStatus: r.IntPtr(factGRPCStatus), errorType: t.of(r, factErrorType),
		requestKey: r.Text(factRequestKey), retryIndex: r.IntPtr(factRetryIndex), counterKind: t.of(r, factCounterKind),
		retryAfterS: r.FloatPtr(factRetryAfterS),
		rejected:    r.Bool(factRejected), hasResponse: r.Bool(factHasResponse), trigger: t.of(r, factTrigger),
		firstToken:  r.IntPtr(factFirstToken),
		inputTokens: r.IntPtr(factInputTokens), outputTokens: r.IntPtr(factOutputTokens),
		requestParams: t.of(r, factRequestParams), inputHash: r.IntPtr(factInputHash),
		retryEvents: r.Ints(factRetryEvents),
		serverEnd:   r.IntPtr(factServerEnd), serverModel: t.of(r, factServerModel), serverOutput: r.IntPtr(factServerOutput),
		attemptMax:  r.IntPtr(factAttemptMax),
		serverStart: r.IntPtr(factServerStart), connStart: r.IntPtr(factConnStart), connEnd: r.IntPtr(factConnEnd),
		exhaustedReason: t.of(r, factExhaustedReason), deadlineMs: r.FloatPtr(factDeadlineMs), lengthCut: r.Bool(factLengthCut),
		statedQueueMs: r.FloatPtr(factStatedQueueMs), serverQueueMs: r.FloatPtr(factServerQueueMs),
		factRow: r.Int(factRow),
	}
	s.backoffs = backoffIntervals(c, i, factBackoffAt, factBackoffMs)
	// A first token before the span began or after it ended is a bad
	// timestamp or another clock: set aside, never a negative TTFT.
	if ft := s.firstToken; ft != nil && (*ft < s.start || *ft > s.end) {
		s.firstToken, s.firstTokenOutside = nil, true
	}
	return s
}

// texts keeps one copy of each text that many spans repeat (names, kinds,
// services, routes, models, statuses, request parameters): a span refers
// to it instead of holding a copy of its own. At ten million spans the
// attempts set aside for the cross-trace join held a quarter of their
// memory in such copies. A reader fills its own; it stops taking new
// texts at maxTexts, so texts that do not repeat cannot grow it without
// bound.
type texts map[string]string

const maxTexts = 1 << 16

// of is a KindText column's value, "" for NULL.
func (t texts) of(r store.Row, col int) string {
	b := r.TextBytes(col)
	if s, ok := t[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(t) < maxTexts {
		t[s] = s
	}
	return s
}

// backoffIntervals pairs the retry.backoff events' times (column at)
// with their lengths (column ms).
func backoffIntervals(c *store.Chunk, i, at, ms int) []interval {
	atFrom, atTo := c.List(at, i)
	msFrom, msTo := c.List(ms, i)
	var out []interval
	for k := range min(atTo-atFrom, msTo-msFrom) {
		t, ok1 := c.IntElem(at, atFrom+k)
		d, ok2 := c.FloatElem(ms, msFrom+k)
		if !ok1 || !ok2 || d < 0 {
			continue
		}
		out = append(out, interval{t, t + int64(math.Round(d*1e6))})
	}
	return out
}
