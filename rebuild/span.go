package rebuild

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
)

// span is one row of rebuild_spans plus the tree links the rebuild adds.
type span struct {
	traceID, spanID, parentID string
	parentExported            bool
	name, kind, service       string
	start, end                int64
	status, statusMessage     string
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
	backoffs                  []interval
	inputTokens, outputTokens *int64
	requestParams             string  // what a re-send repeats; "" when not recorded
	inputHash                 *int64  // the captured input; nil when not captured
	retryEvents               []int64 // events saying something failed or is retried
	serverEnd                 *int64
	serverModel               string
	serverOutput              *int64
	attemptMax                *int64 // the cap a counter states

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

func scanSpan(rows *sql.Rows) (*span, error) {
	var s span
	var parent, name, kind, service, status, msg, route, method, url, model, op, errType, reqKey, counter, trig, srvModel sql.NullString
	var httpStatus, grpcStatus, retryIndex, firstToken, inTok, outTok, inHash, srvEnd, srvOut, attemptMax sql.NullInt64
	var retryAfter sql.NullFloat64
	var params sql.NullString
	var backoffAt, backoffMs, retryEvents any
	err := rows.Scan(&s.traceID, &s.spanID, &parent, &s.parentExported, &name, &kind, &service, &s.start, &s.end,
		&status, &msg, &route, &method, &url, &model, &op, &httpStatus, &grpcStatus, &errType, &reqKey, &retryIndex,
		&counter, &retryAfter, &s.rejected, &s.hasResponse, &trig, &firstToken, &backoffAt, &backoffMs,
		&inTok, &outTok, &params, &inHash, &retryEvents, &srvEnd, &srvModel, &srvOut, &attemptMax)
	if err != nil {
		return nil, fmt.Errorf("read span: %w", err)
	}
	s.parentID, s.name, s.kind, s.service = parent.String, name.String, kind.String, service.String
	s.status, s.statusMessage, s.route, s.method, s.url = status.String, msg.String, route.String, method.String, url.String
	s.model, s.genAIOperation, s.errorType, s.requestKey = model.String, op.String, errType.String, reqKey.String
	s.counterKind, s.trigger, s.serverModel = counter.String, trig.String, srvModel.String
	s.httpStatus, s.grpcStatus, s.retryIndex = ptrInt(httpStatus), ptrInt(grpcStatus), ptrInt(retryIndex)
	s.firstToken, s.inputTokens, s.outputTokens, s.serverEnd = ptrInt(firstToken), ptrInt(inTok), ptrInt(outTok), ptrInt(srvEnd)
	s.serverOutput, s.inputHash, s.requestParams, s.attemptMax = ptrInt(srvOut), ptrInt(inHash), params.String, ptrInt(attemptMax)
	if times, ok := retryEvents.([]any); ok {
		for _, t := range times {
			if v, ok := t.(int64); ok {
				s.retryEvents = append(s.retryEvents, v)
			}
		}
	}
	if retryAfter.Valid {
		s.retryAfterS = &retryAfter.Float64
	}
	s.backoffs = backoffIntervals(backoffAt, backoffMs)
	return &s, nil
}

func ptrInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// backoffIntervals pairs the retry.backoff events' times with their lengths.
func backoffIntervals(at, ms any) []interval {
	ats, _ := at.([]any)
	mss, _ := ms.([]any)
	var out []interval
	for i := range min(len(ats), len(mss)) {
		t, ok1 := ats[i].(int64)
		d, ok2 := mss[i].(float64)
		if !ok1 || !ok2 || d < 0 {
			continue
		}
		out = append(out, interval{t, t + int64(math.Round(d*1e6))})
	}
	return out
}
