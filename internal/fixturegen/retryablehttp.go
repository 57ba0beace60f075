package main

import (
	"fmt"
	"slices"
	"strings"
)

// Fixture go-retryablehttp-otelhttp: go-retryablehttp behind otelhttp's
// Transport, with no span in the request's context: every attempt is the
// root CLIENT span of its own trace. Four worker goroutines of one Go batch
// job (partner-sync) pull calls from a queue and make them through one
// retryablehttp.Client; each call is a GET of one of three internal APIs,
// each instrumented with otelhttp's Handler (its SERVER span is the child
// of the attempt that reached it).
//
// Simulated here, seeded: which target, what each attempt meets (a 503
// outage window on stock-api with Retry-After on some answers, scattered
// 500/502, a few 409 Conflict, connection refused while stock-api
// restarts), the library's policy and the pauses between calls. The truth
// is what the simulation did, not what the spans show.
//
// Based on:
//   - hashicorp/go-retryablehttp client.go: RetryMax 4 (5 attempts),
//     RetryWaitMin 1 s, RetryWaitMax 30 s; DefaultRetryPolicy retries
//     connection errors, 429 and 5xx other than 501 (a 4xx such as 409 is
//     returned as is); DefaultBackoff sleeps min*2^attemptNum capped at max,
//     or the Retry-After of a 429/503; the body of a response that will be
//     retried is drained and closed before the sleep; after the last attempt
//     the default ErrorHandler-less client returns an error "giving up after 5
//     attempt(s)".
//   - open-telemetry/opentelemetry-go-contrib instrumentation/net/http/otelhttp
//     transport.go: span name "HTTP " + method (defaultTransportFormatter),
//     kind CLIENT, started from the request's context (none here: a new trace);
//     attributes from semconv.HTTPClient.RequestTraceAttrs (http.request.method,
//     url.full, server.address, server.port only when not the scheme's default,
//     network.protocol.version); on a response http.response.status_code, and
//     for >= 400 error.type = the code and status ERROR with no description;
//     on a transport error error.type when it is a known type, else an
//     exception event, and status ERROR with err.Error(); the span ends when
//     the response body is read to EOF or closed.

type target struct{ callee, host, path string }

var targets = []target{
	{"orders-api", "orders-api.internal", "/v1/orders/pending"},
	{"stock-api", "stock-api.internal", "/v2/levels"},
	{"prices-api", "prices-api.internal", "/v1/quotes/today"},
}

// The policy: retryablehttp's defaults.
const (
	retryMax  = 4
	waitMinMS = 1000.0
	waitMaxMS = 30000.0
)

func retryableResource(name, version, host string) []attr {
	return []attr{
		{"host.name", host},
		{"os.type", "linux"},
		{"process.runtime.name", "go"},
		{"process.runtime.version", "go1.24.6"},
		{"service.name", name},
		{"service.version", version},
		{"telemetry.sdk.language", "go"},
		{"telemetry.sdk.name", "opentelemetry"},
		{"telemetry.sdk.version", "1.38.0"},
	}
}

// batchJob is the batch job and its callees. g draws the ids, r the fates and
// timings.
type batchJob struct {
	g         ids
	r         *pyRandom
	t0        int64
	spans     []*span
	expected  []object
	resources map[string][]attr
	// stock-api: an outage of 503s (some with Retry-After: 2), then a
	// restart during which connections are refused.
	outage, restart [2]int64
}

func newSim(seed uint32, t0 int64) *batchJob {
	s := &batchJob{
		g:         newIDs(seed),
		r:         newPyRandom(seed + 1),
		t0:        t0,
		resources: map[string][]attr{"partner-sync": retryableResource("partner-sync", "0.9.3", "partner-sync-7c9f5b8d6-2xkqp")},
		outage:    [2]int64{ms(30000), ms(45000)},
		restart:   [2]int64{ms(45000), ms(47500)},
	}
	for _, tg := range targets {
		s.resources[tg.callee] = retryableResource(tg.callee, "2.4.1", tg.callee+"-5b7d9c6f8-"+tg.host[:3]+"9z")
	}
	return s
}

// fate is what one attempt meets: a status (0 for none), an error text,
// and a Retry-After in seconds (0 for none).
func (s *batchJob) fate(tg int, at int64) (status int, err string, retryAfter int) {
	rel := at - s.t0
	u := s.r.random()
	if tg == 1 && s.restart[0] <= rel && rel < s.restart[1] {
		return 0, "dial tcp 10.40.7.19:443: connect: connection refused", 0
	}
	if tg == 1 && s.outage[0] <= rel && rel < s.outage[1] {
		if u < 0.7 {
			if s.r.random() < 0.3 {
				return 503, "", 2
			}
			return 503, "", 0
		}
		return 200, "", 0
	}
	if u < 0.045 {
		return []int{500, 502, 503}[s.r.below(3)], "", 0
	}
	return 200, "", 0
}

// run has the workers take the calls from the queue in order, each call
// going to whichever worker is free first.
func (s *batchJob) run(workers, calls int) {
	free := make([]int64, workers)
	for i := range free {
		free[i] = s.t0 + ms(s.r.uniform(0, 40))
	}
	conflict := s.r.sampleSet(calls, 4)
	for n := range calls {
		w := 0
		for i := range free {
			if free[i] < free[w] {
				w = i
			}
		}
		free[w] = s.call(free[w], s.r.below(3), conflict[n])
		free[w] += ms(s.r.expovariate(1/600.0)) + ms(0.3)
	}
}

func (s *batchJob) call(start int64, tg int, conflict bool) int64 {
	callee, host, path := targets[tg].callee, targets[tg].host, targets[tg].path
	url := "https://" + host + path
	var attempts []*span
	triggers := []string{}
	t := start
	outcome := "ok"
	for attemptNum := 0; attemptNum <= retryMax; attemptNum++ {
		status, err, retryAfter := s.fate(tg, t)
		if conflict {
			status, err, retryAfter = 409, "", 0
		}
		sp := s.attempt(t, callee, host, url, path, status, err, retryAfter)
		attempts = append(attempts, sp)
		retryable := err != "" || status == 429 || (status >= 500 && status != 501)
		if !retryable {
			if status >= 400 {
				outcome = "error"
				triggers = append(triggers, "client_error")
			}
			break
		}
		if err != "" {
			triggers = append(triggers, "connection")
		} else {
			triggers = append(triggers, "server_error")
		}
		if attemptNum == retryMax {
			outcome = "error"
			break
		}
		wait := waitMinMS * float64(int(1)<<attemptNum)
		if retryAfter != 0 && (status == 429 || status == 503) {
			wait = float64(retryAfter) * 1000.0
		}
		t = sp.end + ms(min(wait, waitMaxMS)+s.r.uniform(0.05, 0.4))
	}
	// Each attempt is in a trace of its own: name them by trace and span.
	keys := make([]any, len(attempts))
	for i, a := range attempts {
		keys[i] = a.key()
	}
	s.expected = append(s.expected, request(attempts[0], attempts, layers(len(attempts)), outcome, triggers, host, host,
		latency{}, nil, object{
			{"desc", fmt.Sprintf("%s, %d attempt(s), %s", callee, len(attempts), outcome)},
			{"attempt_span_ids", keys},
		}))
	return attempts[len(attempts)-1].end + ms(s.r.uniform(0.1, 2))
}

func (s *batchJob) attempt(start int64, callee, host, url, path string, status int, err string, retryAfter int) *span {
	tid := s.g.trace()
	attrs := []attr{{"http.request.method", "GET"}, {"url.full", url}, {"server.address", host},
		{"network.protocol.version", "1.1"}}
	if err != "" {
		end := start + ms(s.r.uniform(0.6, 2.5))
		sp := &span{res: "partner-sync", scope: otelhttp, traceID: tid, spanID: s.g.span(), name: "HTTP GET",
			kind: kindClient, start: start, end: end, attrs: attrs,
			events: []event{{end, "exception", []attr{{"exception.type", "*net.OpError"}, {"exception.message", err}}}},
			status: statusError, statusMsg: err}
		s.spans = append(s.spans, sp)
		return sp
	}
	var work float64
	if status == 200 {
		work = s.r.uniform(8, 40)
	} else {
		work = s.r.uniform(1, 6)
	}
	srvStart := start + ms(s.r.uniform(0.4, 1.2))
	srvEnd := srvStart + ms(work)
	end := srvEnd + ms(s.r.uniform(0.3, 1.1))
	attrs = append(attrs, attr{"http.response.status_code", status})
	st := statusUnset
	if status >= 400 {
		attrs = append(attrs, attr{"error.type", fmt.Sprint(status)})
		st = statusError
	}
	sp := &span{res: "partner-sync", scope: otelhttp, traceID: tid, spanID: s.g.span(), name: "HTTP GET",
		kind: kindClient, start: start, end: end, attrs: attrs, status: st}
	s.spans = append(s.spans, sp)
	srvAttrs := []attr{{"http.request.method", "GET"}, {"url.scheme", "https"}, {"server.address", host},
		{"network.peer.address", "10.40.3.22"}, {"user_agent.original", "Go-http-client/1.1"},
		{"url.path", path}, {"network.protocol.version", "1.1"}, {"http.route", path},
		{"http.response.status_code", status}}
	if retryAfter != 0 {
		srvAttrs = append(srvAttrs, attr{"http.response.header.retry-after", []string{fmt.Sprint(retryAfter)}})
	}
	srvStatus := statusUnset
	if status >= 500 {
		srvStatus = statusError
	}
	s.spans = append(s.spans, &span{res: callee, scope: otelhttp, traceID: tid, spanID: s.g.span(), parent: sp.spanID,
		name: "GET " + path, kind: kindServer, start: srvStart, end: srvEnd, attrs: srvAttrs, status: srvStatus})
	return sp
}

const retryableNotes = "go-retryablehttp (RetryMax 4, DefaultRetryPolicy, DefaultBackoff 1 s doubling to 30 s, " +
	"Retry-After honoured on 429/503) over otelhttp's Transport with no span in the request context: " +
	"each attempt is the root 'HTTP GET' CLIENT span of its own trace, and four workers interleave " +
	"on three targets, so nothing but time links a retry to its request. The callees' otelhttp " +
	"SERVER spans are the attempts' children. Retry-After is seen only on the callee's SERVER span " +
	"(otelhttp records no response headers on the client side). Under this concurrency the grouping " +
	"is ambiguous: a rebuild is judged by the workload figures (logical requests within 2%, retry " +
	"and final failure rates within 0.01) and by its plausible ranges holding these figures, not by " +
	"each request. Latency is first attempt start to last attempt end."

func buildRetryableHTTP(dir string, t0 int64) error {
	s := newSim(61, t0)
	s.run(4, 400)
	slices.SortStableFunc(s.expected, func(a, b object) int {
		return strings.Compare(a.get("key").(string), b.get("key").(string))
	})
	requests := make([]any, len(s.expected))
	for i, e := range s.expected {
		requests[i] = e
	}
	batches := exportBatches(s.spans, s.resources, exportOptions{})
	return writeFixture(dir, batches, object{
		{"notes", retryableNotes},
		{"ambiguous", object{{"logical_requests_pct", 2}, {"retry_rate", 0.01}, {"final_failure_rate", 0.01}}},
		{"requests", requests},
	})
}
