package main

import (
	"fmt"
	"path/filepath"
)

// retryAfterTry is one try of the Anthropic SDK's own retry loop in the
// retry-after fixture: the undici POST's duration and status, the
// Retry-After its response carried (0: none), and the gap before it.
type retryAfterTry struct {
	durMs      float64
	status     int
	retryAfter int
	gapMs      float64
}

// sdkRetries is one 'answer' request whose single app try calls the
// Anthropic SDK (maxRetries 2), which retries the POSTs of tries itself.
// Each POST captures the response's Retry-After, as undici's
// headersToSpanAttributes.responseHeaders ['retry-after'] records it: the
// header's value as a string.
func (b *nodeBot) sdkRetries(t int64, ticket, desc string, tries []retryAfterTry, u usage, respID string) {
	tid := b.g.trace()
	appStart := t + ms(1.7+b.j(0, 0.3))
	llm := b.llmAnthropic(tid, "", appStart+ms(0.32+b.j(0, 0.1)), 0, true, &u, respID)
	var atts []*span
	prevEnd := llm.start + ms(0.66)
	var triggers []string
	var backoffMs float64
	split := len(tries) > 1
	for k, try := range tries {
		a := b.post(tid, llm.spanID, "anthropic", prevEnd+ms(try.gapMs), try.durMs, k, try.status, nil)
		if try.retryAfter > 0 {
			a.attrs = append(a.attrs, attr{"http.response.header.retry-after", fmt.Sprint(try.retryAfter)})
		}
		if k+1 < len(tries) {
			triggers = append(triggers, map[int]string{429: "rate_limited", 529: "server_error"}[try.status])
			// The SDK sleeps exactly a Retry-After under 60 s; without one
			// its own jittered backoff, which no span records.
			if try.retryAfter == 0 {
				split = false
			}
			backoffMs += float64(try.retryAfter) * 1000
		}
		atts = append(atts, a)
		prevEnd = a.end
	}
	llm.end = prevEnd + ms(1.02+b.j(0, 0.2))
	app := b.appSpan(tid, "", appStart, llm.end+ms(0.5+b.j(0, 0.2)), ticket, "", 0)
	llm.parent = app.spanID
	srv := b.server(tid, t, app.end+ms(2.0+b.j(0, 0.4)), 200)
	app.parent = srv.spanID
	var backoff any // null: telemetry does not split the gap
	if split {
		backoff = backoffMs
	}
	if len(tries) == 1 {
		backoff = 0.0
	}
	b.expected = append(b.expected, request(
		app, atts, layers(1, len(tries)), "ok", triggers, "api.anthropic.com", "api.anthropic.com",
		latency{app}, []*span{srv, llm},
		object{{"desc", desc}, {"split_backoff_ms", backoff}}))
}

// buildNodeRetryAfter writes the retry-after fixture: the support-bot
// service calling Anthropic, with undici capturing the response header
// retry-after and no request header.
func buildNodeRetryAfter(out, name string, seed uint32, start int64) error {
	b := newNodeBot(seed, false)
	ok := func(d float64) []retryAfterTry { return []retryAfterTry{{durMs: d, status: 200}} }
	b.sdkRetries(start, "T-51002", "plain success", ok(1402.318), usage{122, 58}, "msg_01HqN4pQeZt7aWv2Xc9LbR3s")
	b.sdkRetries(start+ms(2310.4), "T-51007", "429 with retry-after: 2, the SDK sleeps 2 s, then 200",
		[]retryAfterTry{{88.204, 429, 2, 0}, {1288.561, 200, 0, 2000 + 0.92 + 0.57}}, usage{131, 64}, "msg_01JvR8sKdW3mZp6YtQ0nHc5e")
	b.sdkRetries(start+ms(7105.9), "T-51013", "429 (retry-after: 1) twice, then 200; the SDK sleeps 1 s each time",
		[]retryAfterTry{{91.377, 429, 1, 0}, {85.902, 429, 1, 1000 + 0.81 + 0.64}, {1350.447, 200, 0, 1000 + 0.88 + 0.59}},
		usage{140, 71}, "msg_01Kc2TnYb6Vq9sLx4Ew7HdPg")
	b.sdkRetries(start+ms(12840.2), "T-51020", "529 overloaded (no retry-after): the SDK's own jittered backoff, then 200",
		[]retryAfterTry{{312.655, 529, 0, 0}, {1297.031, 200, 0, 431.286}}, usage{118, 52}, "msg_01Lq7WmZc4Xp2Rb8Ty5NsKdF")
	b.sdkRetries(start+ms(16422.7), "T-51024", "plain success", ok(1188.905), usage{127, 49}, "msg_01MdS3xVf9Qw6Lc1Zr8PjTnH")
	batches := exportBatches(b.spans, b.resources, exportOptions{firstTick: map[string]int64{b.res: start - ms(1412.0)}})
	notes := "Node 22 app 'support-bot': POST /api/answer (instrumentation-http, old HTTP semconv) -> " +
		"'answer' INTERNAL app span (one try) -> OpenLLMetry-JS LLM span 'chat claude-3-5-haiku-20241022' " +
		"(CLIENT) -> undici 'POST' CLIENT spans, one per physical attempt of @anthropic-ai/sdk's own " +
		"retry loop (maxRetries 2). The undici instrumentation is configured with " +
		"headersToSpanAttributes.responseHeaders ['retry-after'], so each 429 POST carries " +
		"http.response.header.retry-after as a string of seconds; no request header is captured. " +
		"The SDK sleeps exactly a Retry-After under 60 s, else its own jittered backoff (0.5 s doubling, " +
		"up to 8 s). split_backoff_ms is the backoff the telemetry separates from overhead (the " +
		"Retry-After waits), null where a gap followed a response without Retry-After."
	return writeFixture(filepath.Join(out, name), batches, object{{"notes", notes}, {"requests", b.expected}})
}
