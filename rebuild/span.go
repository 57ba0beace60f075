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

// factKinds are the columns of rebuild_partition, as readSpan reads them.
var factKinds = []store.Kind{
	store.KindText, store.KindText, store.KindText, store.KindBool, // trace_id, span_id, parent_span_id, parent_exported
	store.KindText, store.KindText, store.KindText, store.KindInt, store.KindInt, // name, kind, service_name, start_ns, end_ns
	store.KindText, store.KindText, // status_code, status_message
	store.KindText, store.KindText, store.KindText, store.KindText, store.KindText, // route, method, url, model, gen_ai_operation
	store.KindInt, store.KindInt, store.KindText, // http_status, grpc_status, error_type
	store.KindText, store.KindInt, store.KindText, store.KindFloat, // request_key, retry_index, counter_kind, retry_after_s
	store.KindBool, store.KindBool, store.KindText, store.KindInt, // rejected, has_response, trigger, first_token_ns
	store.KindIntList, store.KindFloatList, // backoff_at_ns, backoff_ms
	store.KindInt, store.KindInt, store.KindText, store.KindInt, store.KindIntList, // input_tokens, output_tokens, request_params, input_hash, retry_event_ns
	store.KindInt, store.KindText, store.KindInt, store.KindInt, // server_end_ns, server_model, server_output_tokens, attempt_max
	store.KindInt, store.KindInt, store.KindInt, // server_start_ns, conn_start_ns, conn_end_ns
	store.KindText, store.KindFloat, store.KindBool, // exhausted_reason, deadline_ms, length_cut
	store.KindFloat, store.KindFloat, // stated_queue_ms, server_queue_ms
	store.KindInt, // fact_row
}

// readSpan reads row i of a chunk of rebuild_partition. Column 10,
// status_message, is left: only rebuild_spans reads it, for the trigger.
// The texts spans repeat come through t, one copy each.
func readSpan(c *store.Chunk, i int, t texts) *span {
	r := c.Row(i)
	s := &span{
		traceID: r.Text(0), spanID: r.Text(1), parentID: r.Text(2), parentExported: r.Bool(3),
		name: t.of(r, 4), kind: t.of(r, 5), service: t.of(r, 6), start: r.Int(7), end: r.Int(8),
		status: t.of(r, 9), route: t.of(r, 11), method: t.of(r, 12), url: t.of(r, 13), model: t.of(r, 14),
		genAIOperation: t.of(r, 15), httpStatus: r.IntPtr(16), grpcStatus: r.IntPtr(17), errorType: t.of(r, 18),
		requestKey: r.Text(19), retryIndex: r.IntPtr(20), counterKind: t.of(r, 21), retryAfterS: r.FloatPtr(22),
		rejected: r.Bool(23), hasResponse: r.Bool(24), trigger: t.of(r, 25), firstToken: r.IntPtr(26),
		inputTokens: r.IntPtr(29), outputTokens: r.IntPtr(30), requestParams: t.of(r, 31), inputHash: r.IntPtr(32),
		retryEvents: r.Ints(33),
		serverEnd:   r.IntPtr(34), serverModel: t.of(r, 35), serverOutput: r.IntPtr(36), attemptMax: r.IntPtr(37),
		serverStart: r.IntPtr(38), connStart: r.IntPtr(39), connEnd: r.IntPtr(40),
		exhaustedReason: t.of(r, 41), deadlineMs: r.FloatPtr(42), lengthCut: r.Bool(43),
		statedQueueMs: r.FloatPtr(44), serverQueueMs: r.FloatPtr(45),
		factRow: r.Int(46),
	}
	s.backoffs = backoffIntervals(c, i, 27, 28)
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
