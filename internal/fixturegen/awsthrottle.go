package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Fixture aws-sdk-go-v2-dynamodb-throttling: a Go batch job (ledger-writer)
// whose twelve workers write items with the AWS SDK for Go v2's DynamoDB
// client, traced by otelaws (one CLIENT span per operation, retries
// included) over an HTTP client wrapped in otelhttp (one CLIENT span per
// attempt, the otelaws span's child). For six seconds the table is
// throttled: DynamoDB answers most writes with HTTP 400 and the error code
// ThrottlingException (or ProvisionedThroughputExceededException); the
// SDK's standard retryer retries them after a jittered backoff until its
// client-wide retry quota runs out, and from then on fails a throttled
// write at its first attempt, below its cap of three attempts. A few writes
// are malformed (ValidationException, also HTTP 400): the SDK does not
// retry them.
//
// Simulated here, seeded: which write is malformed, what each attempt
// meets, the backoff draws, the quota. The truth is what the simulation
// did (its exhausted field: attempt_cap, retry_budget for the quota's
// refusals, not_retryable for the malformed writes), not what the spans
// show.
//
// Based on the public documentation and source of:
//   - the AWS SDKs' standard retry mode (AWS SDKs and Tools reference
//     guide, "Retry behavior"; aws-sdk-go-v2 aws/retry): at most 3
//     attempts; throttling error codes (Throttling, ThrottlingException,
//     ProvisionedThroughputExceededException, RequestLimitExceeded,
//     TooManyRequestsException, SlowDown, ...) and 5xx are retried, other
//     4xx such as ValidationException are not; the delay before retry n is
//     a uniform draw from [0, min(20 s, 2^n s)); a retry quota of 500
//     tokens, 5 taken per retry (10 after a timeout), given back when the
//     retried operation succeeds, and 1 added for every operation that
//     succeeds at its first attempt; a retry the quota cannot pay for is not
//     made, and the operation fails with "failed to get rate limit token,
//     retry quota exceeded, N available, 5 requested";
//   - otelaws: span "DynamoDB.PutItem", kind CLIENT, rpc.system aws-api,
//     rpc.service, rpc.method, aws.region; on failure the error recorded as
//     an exception event and the status ERROR with its text
//     ("operation error DynamoDB: PutItem, ...");
//   - otelhttp's Transport, as in go-retryablehttp-otelhttp: "HTTP POST",
//     http.response.status_code, error.type = the status for >= 400 and
//     status ERROR with no description.

// awsQuota is the standard retryer's quota and what it costs.
const (
	awsQuotaTokens   = 500
	awsRetryCost     = 5
	awsNoRetryGain   = 1
	awsMaxAttempts   = 3
	awsMaxBackoffSec = 20.0
)

const awsHost = "dynamodb.us-east-1.amazonaws.com"

var otelaws = scope{"go.opentelemetry.io/contrib/instrumentation/github.com/aws/aws-sdk-go-v2/otelaws", "0.63.0"}

// awsSim is the batch job and the table.
type awsSim struct {
	g        ids
	r        *pyRandom
	t0       int64
	spans    []*span
	expected []object
	quota    int
	// throttle is the window in which the table throttles most writes.
	throttle [2]int64
	stops    map[string]int // exhausted reason -> requests
}

func newAWSSim(seed uint32, t0 int64) *awsSim {
	return &awsSim{g: newIDs(seed), r: newPyRandom(seed + 1), t0: t0, quota: awsQuotaTokens,
		throttle: [2]int64{t0 + ms(1500), t0 + ms(6000)}, stops: map[string]int{}}
}

// throttled draws whether the table throttles an attempt starting at t.
func (s *awsSim) throttled(t int64) bool {
	p := 0.01
	if s.throttle[0] <= t && t < s.throttle[1] {
		p = 0.95
	}
	return s.r.random() < p
}

// run has the workers take the writes in order, each going to whichever
// worker is free first; a worker pauses briefly between writes.
func (s *awsSim) run(workers, calls int) {
	free := make([]int64, workers)
	for i := range free {
		free[i] = s.t0 + ms(s.r.uniform(0, 30))
	}
	malformed := s.r.sampleSet(calls, 12)
	for n := range calls {
		w := 0
		for i := range free {
			if free[i] < free[w] {
				w = i
			}
		}
		free[w] = s.call(free[w], malformed[n])
		free[w] += ms(s.r.expovariate(1/250.0)) + ms(0.2)
	}
}

// call is one PutItem through the SDK's retry loop.
func (s *awsSim) call(start int64, malformed bool) int64 {
	op := &span{res: "ledger-writer", scope: otelaws, traceID: s.g.trace(), spanID: s.g.span(), name: "DynamoDB.PutItem",
		kind: kindClient, start: start, attrs: []attr{{"rpc.system", "aws-api"}, {"rpc.service", "DynamoDB"},
			{"rpc.method", "PutItem"}, {"aws.region", "us-east-1"}}}
	s.spans = append(s.spans, op)
	var attempts []*span
	triggers := []string{}
	t := start + ms(s.r.uniform(0.05, 0.3))
	outcome, exhausted, errText := "ok", "", ""
	retried := false
	for n := 1; ; n++ {
		code := ""
		switch {
		case malformed:
			code = "ValidationException"
		case s.throttled(t):
			code = "ThrottlingException"
			if s.r.random() < 0.3 {
				code = "ProvisionedThroughputExceededException"
			}
		}
		a := s.attempt(op, t, code)
		attempts = append(attempts, a)
		if code == "" {
			if retried {
				s.quota = min(awsQuotaTokens, s.quota+awsRetryCost)
			} else {
				s.quota = min(awsQuotaTokens, s.quota+awsNoRetryGain)
			}
			break
		}
		reqID := strings.ToUpper(s.g.r.hex(4))[:26]
		if code == "ValidationException" {
			triggers = append(triggers, "client_error")
			outcome, exhausted = "error", "not_retryable"
			errText = fmt.Sprintf("operation error DynamoDB: PutItem, https response error StatusCode: 400, RequestID: %s, "+
				"api error ValidationException: One or more parameter values were invalid: Missing the key pk in the item", reqID)
			break
		}
		triggers = append(triggers, "rate_limited")
		if n == awsMaxAttempts {
			outcome, exhausted = "error", "attempt_cap"
			errText = fmt.Sprintf("operation error DynamoDB: PutItem, exceeded maximum number of attempts, 3, https response error "+
				"StatusCode: 400, RequestID: %s, api error %s: Rate of requests exceeds the allowed throughput.", reqID, code)
			break
		}
		if s.quota < awsRetryCost {
			outcome, exhausted = "error", "retry_budget"
			errText = fmt.Sprintf("operation error DynamoDB: PutItem, failed to get rate limit token, retry quota exceeded, "+
				"%d available, %d requested", s.quota, awsRetryCost)
			break
		}
		s.quota -= awsRetryCost
		retried = true
		delay := s.r.random() * math.Min(awsMaxBackoffSec, math.Pow(2, float64(n))) * 1000
		t = a.end + ms(delay+s.r.uniform(0.1, 0.6))
	}
	last := attempts[len(attempts)-1]
	op.end = last.end + ms(s.r.uniform(0.05, 0.4))
	if outcome == "error" {
		s.stops[exhausted]++
		op.status, op.statusMsg = statusError, errText
		op.events = []event{{op.end, "exception", []attr{{"exception.type", "*smithy.OperationError"}, {"exception.message", errText}}}}
	}
	extra := object{{"desc", fmt.Sprintf("PutItem, %d attempt(s), %s", len(attempts), outcome)}}
	if exhausted != "" {
		extra = append(extra, field{"exhausted", exhausted})
	}
	s.expected = append(s.expected, request(op, attempts, layers(len(attempts)), outcome, triggers, awsHost, awsHost,
		latency{anchor: op}, nil, extra))
	return op.end
}

// attempt is one HTTP POST to DynamoDB, answered 200 or 400 with code.
func (s *awsSim) attempt(op *span, start int64, code string) *span {
	work := s.r.uniform(3, 14)
	if code != "" {
		work = s.r.uniform(1, 4)
	}
	end := start + ms(work+s.r.uniform(0.4, 1.5))
	status := 200
	if code != "" {
		status = 400
	}
	attrs := []attr{{"http.request.method", "POST"}, {"url.full", "https://" + awsHost + "/"}, {"server.address", awsHost},
		{"network.protocol.version", "1.1"}, {"http.response.status_code", status}}
	st := statusUnset
	if status >= 400 {
		attrs = append(attrs, attr{"error.type", "400"})
		st = statusError
	}
	sp := &span{res: "ledger-writer", scope: otelhttp, traceID: op.traceID, spanID: s.g.span(), parent: op.spanID,
		name: "HTTP POST", kind: kindClient, start: start, end: end, attrs: attrs, status: st}
	s.spans = append(s.spans, sp)
	return sp
}

const awsNotes = "AWS SDK for Go v2 DynamoDB client (standard retryer: 3 attempts, jittered exponential backoff, " +
	"a 500-token retry quota, 5 per retry, refunded on success, +1 per first-try success) traced by otelaws " +
	"(DynamoDB.PutItem CLIENT span) over otelhttp (HTTP POST CLIENT span per attempt). The table throttles most " +
	"writes for six seconds with HTTP 400 and ThrottlingException / ProvisionedThroughputExceededException, " +
	"which the SDK retries; the quota runs out and later throttled writes fail at their first attempt " +
	"(\"retry quota exceeded\", exhausted retry_budget). Malformed writes fail with HTTP 400 ValidationException " +
	"and are not retried (exhausted not_retryable). The attempt spans carry only the status 400: the code is on " +
	"the otelaws span's error, when the operation failed. exhausted (failed requests): what ended the loop."

func buildAWSThrottle(dir string, t0 int64) error {
	s := newAWSSim(71, t0)
	s.run(64, 1000)
	slices.SortStableFunc(s.expected, func(a, b object) int {
		return strings.Compare(a.get("key").(string), b.get("key").(string))
	})
	requests := make([]any, len(s.expected))
	for i, e := range s.expected {
		requests[i] = e
	}
	resources := map[string][]attr{"ledger-writer": retryableResource("ledger-writer", "1.4.0", "ledger-writer-6d8f7c9b5-q2xwz")}
	batches := exportBatches(s.spans, resources, exportOptions{})
	return writeFixture(dir, batches, object{{"notes", awsNotes}, {"requests", requests}})
}
