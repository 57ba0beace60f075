// Package sim simulates retrying clients, their servers and the
// OpenTelemetry traces they export, together with the truth about every
// request, so that retryscope's rebuild and reports can be tested against
// known numbers. The gen command writes its output.
//
// # Simulation
//
// Logical requests arrive as a Poisson process (Config.Rate per second).
// Each one uses one trace shape and goes to a route (a server). A route's
// service time is base + k*inflight + exponential jitter (+ per-token
// generation for LLM routes), where inflight counts the attempts the server
// is still working on, including ones the client already abandoned; so
// retries slow everyone down. Every attempt independently meets a fault from
// Config.Faults (429, 5xx, reset, timeout-by-stall), scaled up inside
// incident windows (listed in the truth); an overloaded route also sheds
// load with 429s; a bad request (4xx) fails the same way on every attempt;
// load alone can push an attempt past the client's timeout. Retries follow
// Config.Policy: none, fixed, full jitter or decorrelated jitter, a cap on
// attempts per loop, Retry-After honoured except by "naive" clients (which
// also retry 4xx), and an optional retry budget. Events are processed in
// time order; every random draw comes from PCG streams seeded by
// Config.Seed and the request's index, so the same Config always yields the
// same bytes. With Config.CRN each attempt draws from a stream of its own,
// keyed also by its number, so a run of the same seed under another retry
// policy meets the same faults on the same attempts (common random
// numbers), but where the load it creates turns them.
//
// # Conventions common to all shapes
//
// Resources carry only service.name, or with Config.SDKAttributes also the 13 attributes a real SDK adds (service.version, service.instance.id, telemetry.sdk.*, host.*, os.type, process.*, k8s.*). Trace ids are 16 random bytes, span ids
// 8, never zero. Times are Config.Start (default 2026-11-29T00:00:00Z) plus
// simulated nanoseconds. Spans are exported in order of their end time, in
// batches of about Config.BatchSpans, grouped by service and then scope, so
// children often precede their parents.
//
// An HTTP attempt is a CLIENT span named after its method, with
// http.request.method, url.full, server.address, server.port and, when a
// response arrived, http.response.status_code (int). Failures:
//
//   - 429, 500/502/503, 400/401/404: error.type "429" etc., status ERROR
//     "429 Too Many Requests"; a 429 also has
//     http.response.header.retry-after = ["1"] (string slice, seconds; 1-3 on
//     LLM routes).
//   - connection reset (no response): status ERROR "Connection reset",
//     an "exception" event, and error.type by client library, server reached
//     / not reached: okhttp and java-http-client java.net.SocketException /
//     java.net.ConnectException; httpx httpx.RemoteProtocolError /
//     httpx.ConnectError; undici UND_ERR_SOCKET / ECONNREFUSED; envoy
//     connection_termination / connection_failure.
//   - timeout (no response): status ERROR "Read timed out", an "exception"
//     event and error.type java.net.SocketTimeoutException (okhttp),
//     java.net.http.HttpTimeoutException (java-http-client),
//     httpx.ReadTimeout (httpx), timeout (undici, envoy). On half of the
//     timed-out attempts that are followed by another attempt, nothing at
//     all: status UNSET, no error.type, no status code.
//   - cancelled (the hedge loser): error.type "cancelled", status ERROR
//     "cancelled" or UNSET.
//
// A GenAI span is a CLIENT span "chat <model>" with gen_ai.system and
// gen_ai.provider.name (openai, anthropic), gen_ai.operation.name "chat",
// gen_ai.request.model, server.address, server.port and, when it returned
// output, gen_ai.response.model, gen_ai.usage.input_tokens and
// gen_ai.usage.output_tokens. A failed one has error.type
// "<provider>.<Class>" (RateLimitError, InternalServerError,
// BadRequestError, AuthenticationError, NotFoundError, APIConnectionError,
// APITimeoutError) and status ERROR. Token usage sits on exactly one client
// span per generation; failed streamed attempts that are GenAI spans
// themselves may carry partial output.
//
// The logical INTERNAL spans (explicit, answer_question, get_quote) of
// failed requests have status ERROR and error.type = the last trigger.
// When the client's retry quota (--client-retry-quota, the AWS SDKs'
// standard retryer's) stopped the request, the status message says so in
// the AWS SDK for Go v2's words: "operation error <service>: <span name>,
// failed to get rate limit token, retry quota exceeded, N available, C
// requested", which the rebuild reads as exhausted retry_budget.
//
// A streamed attempt has an event "gen_ai.first_token" at the first token,
// on the physical attempt span. An output rejected by an evaluator carries
// retryscope.rejected_output = true, or (other requests) an event
// "evaluation.rejected" at its end. In about half of the requests every
// backoff wait is recorded as an event "retry.backoff" with
// retry.backoff_ms (double) at the start of the wait, on the span of the
// loop that waited (listed per shape); in the rest there is none.
//
// Every attempt that reached its server has a SERVER child span from the
// callee's service (inventory, quote-svc, ingest, sqs, llm-gateway) named
// "<METHOD> <http.route>", from server start to server end: after a timeout
// or cancellation it ends after the client gave up (hidden work) with status
// code 200. llm-gateway spans carry gen_ai.request.model and the usage the
// server generated. SERVER spans are never attempts.
//
// # Shapes
//
// explicit: a logical INTERNAL span with CLIENT attempt children. Variants:
// attrs-http (service checkout, "retry.loop", okhttp GET
// http://inventory:8080/v1/stock/<sku>) and attrs-llm (support-bot,
// "retry.loop", GenAI attempt spans) carry retryscope.request.id (string,
// same on all attempts) and retryscope.attempt (int, from 1); evaluator
// ("generate_summary") is attrs-llm with rejected outputs retried;
// stainless ("summarize_ticket", httpx POST to api.openai.com or
// api.anthropic.com) carries http.request.header.x-stainless-retry-count
// ["0"], ["1"], ...; aws ("classify_document", service doc-router,
// java-http-client POST to bedrock-runtime.us-east-1.amazonaws.com) carries
// http.request.header.amz-sdk-invocation-id [uuid] and
// http.request.header.amz-sdk-request ["attempt=N; max=M"]; envoy
// ("reserve_stock", okhttp POST http://inventory:8080/v1/reserve) carries
// http.request.header.x-envoy-attempt-count ["1"], ["2"], .... Backoff
// events: on the logical span.
//
// resend: siblings under the caller's SERVER span. java: service checkout,
// "GET /orders/{id}" with okhttp "GET" children; the second and later carry
// http.request.resend_count = 1, 2, .... envoy: service checkout-envoy,
// scope envoy, "POST /v1/reserve" with CLIENT children "router inventory
// egress" (upstream_cluster = inventory) carrying retry.count = 1, 2, ...
// from the second on. The parent reports 200, or 502 with status ERROR.
// Backoff events: on the parent.
//
// grpc (gRFC A72, service cart, scope grpc-go): CLIENT
// "Sent.inventory.v1.InventoryService.Reserve" (under an app SERVER span
// "POST /cart/checkout" in half of the traces) with rpc.system, rpc.service,
// rpc.method, server.address, server.port and the final
// rpc.grpc.status_code; one INTERNAL "Attempt.inventory.v1.InventoryService.Reserve"
// child per attempt with previous-rpc-attempts (int, from 0),
// transparent-retry (bool), rpc.grpc.status_code, events "Delayed LB pick
// complete" (sometimes), "Outbound message" and, on success, "Inbound
// message" (sequence-number, message-size); failed attempts have status
// ERROR "<CODE>: <trigger>". The callee's SERVER span
// "Recv.inventory.v1.InventoryService.Reserve" (scope grpc-java) is the
// attempt's child. RESOURCE_EXHAUSTED (8, rate_limited) and UNAVAILABLE
// (14, server_error or connection) are retried; DEADLINE_EXCEEDED (4,
// timeout) ends the call; INVALID_ARGUMENT, UNAUTHENTICATED, NOT_FOUND
// (client_error) are retried only by naive clients. A reset before the
// server saw the RPC gets one immediate transparent retry
// (transparent-retry = true, no backoff, outside the attempt cap). No
// Retry-After. Backoff events: on the Sent span.
//
// wrapped (service support-bot): a GenAI span over the SDK's HTTP attempts,
// each POST with x-stainless-retry-count from "0". openai: "chat gpt-4o" or
// "chat gpt-4o-mini", scope opentelemetry.instrumentation.openai, httpx.
// anthropic: "chat claude-sonnet-4", scope
// @traceloop/instrumentation-anthropic, undici. nested and nested-eval
// (about 40% of wrapped requests, all with Config.Nested): an INTERNAL
// "answer_question" span whose children are one GenAI span per app try, each
// over its own httpx attempts (the retry count restarts at 0); the app
// loop's last try goes to api.anthropic.com, "chat claude-sonnet-4", scope
// opentelemetry.instrumentation.anthropic; nested-eval rejects some outputs,
// marking the GenAI span. Usage is on the GenAI span whose call returned
// output (rejected ones included). Backoff events: app waits on
// answer_question, SDK waits on the GenAI span of that call.
//
// split (service batch-worker, java-http-client): no trace was open, so each
// attempt is a root CLIENT span in a trace of its own. plain: "PUT"
// https://ingest.internal/v1/batch/<shard>; aws-id: "POST"
// https://sqs.us-east-1.amazonaws.com/123456789012/jobs-<shard> with a shared
// amz-sdk-invocation-id and amz-sdk-request. Each shard is one worker making
// calls one after another with the same method and url.full: the next call
// starts 5-80 ms after a success and 30-60 s after a final failure, so an
// attempt following a failed attempt of its worker within the backoff range
// is a retry and one following a success is a new logical request. Backoff
// events: on the failed attempt span (so after its end).
//
// With Config.SplitWorkers = N > 0 the split shape is instead variant
// retryablehttp (service partner-sync): a pool of N concurrent workers of
// one hashicorp/go-retryablehttp client behind otelhttp's Transport with no
// span in the context. Each worker takes its next call after an
// exponential pause (mean N/Config.Rate s, so Rate stays the overall rate)
// whatever became of the last one; each call is a GET of one of four
// targets (https://orders.partner.example/v1/orders,
// https://stock.partner.example/v2/levels and /v2/movements,
// https://prices.partner.example/v1/quotes; each host its own route with
// outage windows listed as incidents). Every attempt is the root CLIENT span
// "HTTP GET" of its own trace (scope
// go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp) with
// http.request.method, url.full, server.address,
// network.protocol.version and, with a response,
// http.response.status_code; for a status >= 400, error.type = the code
// and status ERROR without a message; a transport error is an "exception"
// event, error.type (*net.OpError, *url.Error) and status ERROR with the
// Go error text. The policy is the library's default: up to 5 attempts;
// 429, 5xx, resets and per-attempt timeouts retried after 1 s, 2 s, 4 s,
// 8 s (no jitter; the Retry-After of a 429, or of 30% of 503s, instead,
// which no span records); a bad request is a 409 Conflict, not retried. No backoff events. Requests on one target interleave, so
// nothing but time links an attempt to the request it retries.
//
// orphan (service answer-api): a root SERVER span "POST /v1/answer" (scope
// opentelemetry.instrumentation.fastapi; 200, or 500 with status ERROR) over
// the wrapped/openai structure, except that the GenAI span is exported only
// when the call succeeded: when it threw, the httpx attempts' parentSpanId
// names a span that is not in the output. Backoff events: on the GenAI span,
// so never when it was dropped.
//
// hedge (service pricing-web): INTERNAL "get_quote" with okhttp "GET"
// http://quote-svc:8080/v1/quote?sku=<n> attempts. If the first attempt is
// still running after Policy.HedgeDelay a second starts; the first success
// wins and the other is cancelled at that instant while its server span runs
// on. Errors are not retried. Hedging reacts to slowness, so it happens even
// with no faults; PolicyNone turns it off.
//
// Most requests of every shape succeed on their first attempt.
//
// Two shapes are used only when named (--shapes apploop,agent), so the
// default mix stays as it was:
//
// apploop (service support-bot-node; openai-node under OTel undici and
// OpenLLMetry-JS): an INTERNAL "answer" span whose application loop makes
// up to Policy.AppTries SDK calls, the last to api.anthropic.com
// ("chat claude-3-5-haiku", whose tokenizer counts 1.1x the input tokens);
// each call is a "chat gpt-4o-mini" CLIENT span with
// gen_ai.request.temperature (and max_tokens, which only Anthropic
// requires, on the fallback) and, for half of the requests, the prompt
// (gen_ai.input.messages; Anthropic's with the system prompt apart, in
// gen_ai.system_instructions) over undici POST
// attempts (variant openai-node captures x-stainless-retry-count, from
// "0" in each call; openai-node-nocapture does not). Every answer streams.
// The instrumentation ends a call's span only when the call returns: the
// span of a call that threw is never exported, and its attempts point at a
// missing parent. A streamed attempt that would have succeeded may stall
// (4x the mix's timeout rate, scaled in incidents): HTTP 200, part of the
// answer received, then nothing until the app's idle watchdog gives up
// 2-4 s later; in half of the requests its call span is exported with
// status unset, finish reasons ["stop"] and usage, like a success, in the
// other half it is never ended (its HTTP 200 attempt is orphaned); the app
// loop re-sends the same request (trigger abandoned). The SDK retries 429, 5xx, resets and
// timeouts; the app loop retries what the SDK gave up on and stalls. Half
// of the requests record an "exception" event (StreamIdleTimeoutError, the
// span's status left unset) on the answer span when the app gives up on a
// try. Backoff events: app waits on answer, SDK waits on the call span when
// it was exported.
//
// agent (service research-agent): agent tasks of 2 to 5 steps under an
// INTERNAL "agent.run" span; each step is an OpenLLMetry "chat gpt-4o"
// CLIENT span (ended with ERROR when the call throws) over httpx POST
// attempts, the same model and parameters every step, with a
// "tool.web_search" INTERNAL span between steps; half of the tasks capture
// each step's prompt (gen_ai.input.messages). Each step's prompt holds
// the previous prompt, answer and a tool result, so the input grows: the
// steps are separate logical requests, not retries. A failed step ends the
// task; the steps after it never run. When a task ran one step only, its
// agent.run span stands for that request (layers [1, attempts]).
//
// # Truth
//
// WriteTruth writes {"schema":"retryscope.truth/v1", "seed", "params",
// "workload", "incidents", "requests"}. "workload" holds logical_requests,
// attempts, amplification, retry_rate, retry_success_rate,
// final_failure_rate and duplicated_output_tokens, derived from "requests".
// "params" echoes the Config; "incidents" lists each window of elevated
// faults as {route, start_ns, end_ns, fault_scale}. Requests are ordered by
// start. Each has:
//
//   - key: "<trace_id>:<span_id>" of the anchor, the outermost exported span
//     that stands for the logical request: the logical span, the resend
//     parent, the Sent span, the GenAI span (wrapped, orphan when exported),
//     answer_question; for split and dropped orphans, the first attempt.
//   - shape, variant, service (client), operation (the anchor's name).
//   - model, final_model: the requested model of the first and last attempt
//     on LLM routes (also when only the llm-gateway SERVER span names it);
//     route, final_route: server.address of the first and last attempt.
//   - stream, naive (the client retries 4xx and ignores Retry-After).
//   - attempts: physical attempts, at the lowest layer (HTTP spans under
//     GenAI spans, Attempt spans in gRPC), hedges and transparent retries
//     included. layers: tries per layer as multipliers, outermost first, whose
//     product is attempts ([n] for one loop; [app tries, attempts/app tries]
//     for nested); layer_counts: tries per layer as counts; inner_tries
//     (nested only): attempts in each app try.
//   - outcome "ok" or "error"; exhausted (failures only): attempt_cap,
//     not_retryable, budget, quota, no_progress, no_capacity, token_cap
//     (--client-token-cap: no retry once the request's attempts' input and
//     output tokens reached the cap), and, with the pathologies below,
//     deadline or cancelled.
//   - start_ns, end_ns (Unix ns), latency_ms: the anchor's span; without a
//     logical span, first attempt start to final attempt end.
//   - ttft_ms: start to the first token of the attempt whose answer was used,
//     for successful streams; otherwise null.
//   - t_failed_ms + backoff_ms + overhead_ms + t_final_ms = latency_ms. With
//     F the final attempt (the answer used, or the last to fail): t_final_ms
//     is F's whole span; t_failed_ms the time before F started covered by
//     other attempts; backoff_ms the intentional waits before F started that
//     no attempt covers; overhead_ms the rest (before the first attempt,
//     between attempts, after F). gap_split: telemetry separates backoff
//     from overhead, that is, every wait has a retry.backoff event, or every
//     attempt but the first followed a 429 whose Retry-After the client
//     waited exactly (true for single-attempt requests); when false, only
//     backoff_ms + overhead_ms is observable. Clients that honour
//     Retry-After wait exactly what it says.
//   - triggers: one per failed attempt, in start order (every attempt but
//     the final one, and the final one too when the outcome is error):
//     timeout, connection, rate_limited, server_error, client_error,
//     cancelled, rejected_output, abandoned (apploop: a stalled stream).
//   - input_tokens, output_tokens: usage recorded on client spans (input
//     counted once per span that has usage); duplicated_output_tokens: output
//     of every attempt but the final one.
//   - hidden_work_ms: server time after the client abandoned attempts (sum
//     over attempts of server end minus client end, where positive);
//     hidden_output_tokens: tokens generated in that time.
//   - client_error_status (absent for a good request): the status every
//     attempt of a bad request gets.
//   - retry_after_ignored (absent when 0): retries sent sooner after a
//     response than its Retry-After said (naive clients, and
//     Pathologies.IgnoreRetryAfter); retry_after_early_ms: how much sooner,
//     summed over them.
//   - attempt_list: per attempt, span key, try (per layer, from 1), start_ns,
//     end_ns, route, trigger ("" for the answer used), retry_after_s,
//     output_tokens, server_end_ns (absent when no SERVER span).
//
// # Independence from what it checks
//
// The truth is the oracle the rebuild, the baselines and the reports are
// tested against, so gen shares no code with them: it imports no retryscope
// package but atomicfile, and where it needs the same arithmetic it has its
// own copy, written from SPEC.md rather than from the rebuild. The copies
// are clip and unionLength in truth.go (the rebuild's are in
// rebuild/measure.go, behind the same four-way latency decomposition), and
// workloadOf's retry and failure rates (the report's come from model's
// summaries). Keep them apart on purpose: a fix in one is
// checked against the other by the truth tests, never by making one call
// the other.
//
// # Opt-in features
//
// Off by default, and absent from the output when off (params gains
// experiment, counterfactual, big_inputs, split_workers when set):
//
//   - Config.Experiment: a randomized policy experiment. Each request is in
//     the control arm with that probability and then makes exactly one
//     attempt; the anchor span carries retryscope.policy.arm = "no_retry"
//     or "retry", and the truth "arm".
//   - Config.Counterfactual: counterfactual_ms in the truth, for every
//     request: its latency had the first attempt met no fault, i.e. the
//     time before the first attempt, plus network and server time of a
//     success at the load the first attempt met (not cut at the client's
//     timeout), plus the time after the final attempt. For a request that
//     succeeded on its only attempt it equals latency_ms.
//   - Config.BigInputs: that share of requests is big (truth "big"): 8x
//     the prompt and 2x the output tokens, so slower on LLM routes, and 3x
//     the per-attempt fault rates on every route, so retried requests are
//     intrinsically slower than the rest.
//   - Config.SplitWorkers: the retryablehttp split variant above.
//   - Config.FlightBucket: the truth gains "flight", the simulation's own
//     count of client attempts in flight (an attempt is in flight from its
//     start until the client is done with it: its response, failure,
//     timeout or cancellation), kept as the run goes rather than derived
//     from attempt_list: bucket_ns, peak_attempts_in_flight,
//     peak_first_attempts_in_flight and, per bucket of that width starting
//     at a multiple of it (Unix ns), start_ns, attempt_ns and
//     first_attempt_ns (attempt-nanoseconds in flight), offered_load and
//     offered_load_first_attempts (those over the bucket's width: λ·S with
//     and without retries) and peak_attempts_in_flight. It changes nothing
//     else.
//   - Config.Pathologies (params "pathologies"): retry-hygiene problems
//     planted on purpose. retry-4xx=SERVICE: that service's client retries
//     client errors like transient faults, and 15% of its requests are bad
//     (404, 400 or 422). ignore-retry-after=SERVICE: that service's client
//     retries a 429 when its policy says, not when Retry-After says.
//     lockstep=ROUTE: one outage of 0.8 times the route's client timeout,
//     starting at 40% of the run, during which the server holds every
//     attempt and answers all of them with 503 (no Retry-After) when it
//     ends; with a fixed backoff their retries then leave together. The
//     outage is listed in "incidents" with kind "outage", fault_scale 0 and
//     shed, the attempts it held.
//   - Config.Deadline: explicit-shape requests get an overall deadline,
//     stated on the logical span as retryscope.deadline_ms (double, ms
//     from its start). The attempt in flight at the deadline is cut there
//     (a timeout); a retry that would start after it is not made, its
//     backoff cut at the deadline. Exhausted "deadline"; the request ends
//     at or just after the deadline.
//   - Config.AbandonStreams: that share of streamed requests whose usage
//     sits on the attempt spans: the client stops reading the stream that
//     would have succeeded 20-80% of the way through and cancels the call
//     (error.type "cancelled", status ERROR or UNSET, usage with the tokens
//     read); the server generates the rest (hidden work). Outcome error,
//     trigger and exhausted "cancelled"; never retried.
//   - Nested loops (--nested with the default --app-tries 3 and
//     --client-max-attempts 3): every wrapped request is an app loop of 3 tries
//     around SDK calls of 3 attempts, up to 9 attempts per request.
//
// The arm, big and pathology draws come from a random stream of their own, so turning
// the features on changes nothing else a request draws before its attempts.
package sim
