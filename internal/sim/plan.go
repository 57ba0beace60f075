package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Variants within a shape. Each changes the conventions the trace uses, not
// the simulation.
const (
	variantAttrsHTTP  = "attrs-http"    // explicit: retryscope.* attributes on okhttp attempts
	variantAttrsLLM   = "attrs-llm"     // explicit: retryscope.* attributes on gen_ai attempt spans
	variantEvaluator  = "evaluator"     // explicit: gen_ai attempts retried when a check rejects them
	variantStainless  = "stainless"     // explicit: x-stainless-retry-count header only
	variantAWS        = "aws"           // explicit: amz-sdk-invocation-id + amz-sdk-request headers
	variantEnvoy      = "envoy"         // explicit: x-envoy-attempt-count; resend: retry.count
	variantJava       = "java"          // resend: http.request.resend_count
	variantGRPC       = "a72"           // grpc
	variantOpenAI     = "openai"        // wrapped: one SDK call, python httpx transport
	variantAnthropic  = "anthropic"     // wrapped: one SDK call, node undici transport
	variantNested     = "nested"        // wrapped: app loop around SDK calls, fallback provider
	variantNestedEval = "nested-eval"   // wrapped: nested, the app loop also rejects outputs
	variantPlain      = "plain"         // split: nothing links the attempts but time and operation
	variantAWSID      = "aws-id"        // split: a shared amz-sdk-invocation-id
	variantDropped    = "dropped-llm"   // orphan
	variantHedged     = "hedged"        // hedge
	variantRetryable  = "retryablehttp" // split: concurrent go-retryablehttp workers, Config.SplitWorkers
)

// layerSpec is one retry loop. Requests have one layer, or two (app loop
// around SDK) for nested wrapped requests.
type layerSpec struct {
	maxTries int
	kind     PolicyKind
	baseMs   float64
	capMs    float64
	retryOn  map[faultKind]bool
}

// planner decides, per logical request, everything that does not depend on
// the simulation: shape, variant, client, routes, sizes, which faults apply.
type planner struct {
	cfg    Config
	routes map[string]*route // by host
}

// requestRNG gives each logical request its own stream, so one request's
// draws never shift another's.
func requestRNG(seed int64, idx int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15^uint64(idx)))
}

// attemptRNG is attempt n's own stream under Config.CRN.
func attemptRNG(seed int64, idx, n int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^0x85ebca6b0b1d2f3f*uint64(n), 0x9e3779b97f4a7c15^uint64(idx)))
}

func (p *planner) plan(idx int, arrival int64) *simRequest {
	rng := requestRNG(p.cfg.Seed, idx)
	r := &simRequest{idx: idx, rng: rng, arrival: arrival}
	r.shape = p.cfg.Shapes[rng.IntN(len(p.cfg.Shapes))]
	r.naive = rng.Float64() < p.cfg.Policy.NaiveShare
	r.backoffEvents = rng.Float64() < 0.5
	if rng.Float64() < p.cfg.Faults.ClientError {
		r.clientErrorStatus = pick(rng, []int{400, 401, 404})
	}
	r.inputTokens = 150 + rng.IntN(2350)
	r.outputTokens = 20 + rng.IntN(330)
	p.planOptIns(r)
	p.planShape(r)
	if p.cfg.Services > 0 {
		r.service = fmt.Sprintf("svc-%02d", 1+rng.IntN(p.cfg.Services))
	}
	p.planPathologies(r)
	r.stream = r.genAI && rng.Float64() < p.cfg.StreamShare
	if r.shape == ShapeAppLoop {
		r.stream = true // a chat UI's answers stream
	}
	r.layers = p.layers(r)
	if r.arm == ArmNoRetry {
		for i := range r.layers {
			r.layers[i].maxTries = 1
		}
	}
	if r.evaluator && p.cfg.Faults.Reject > 0 {
		r.rejectProb = p.cfg.Faults.Reject
		if rng.Float64() < 0.1 {
			r.rejectProb = 1 // an unsatisfiable check: every output is rejected
		}
	}
	return r
}

// planOptIns draws the experiment arm and the big-input mark from a stream
// of their own, so that turning them on leaves every other draw, and with
// them off the output, unchanged.
func (p *planner) planOptIns(r *simRequest) {
	if p.cfg.Experiment <= 0 && p.cfg.BigInputs <= 0 {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(p.cfg.Seed), 0xda3e39cb94b95bdb^uint64(r.idx)))
	if p.cfg.Experiment > 0 {
		r.arm = ArmRetry
		if rng.Float64() < p.cfg.Experiment {
			r.arm = ArmNoRetry
		}
	}
	if rng.Float64() < p.cfg.BigInputs {
		r.big = true
		r.inputTokens *= BigInputFactor
		r.outputTokens *= BigOutputFactor
	}
}

func (p *planner) planShape(r *simRequest) {
	rng := r.rng
	openai, anthropic := p.routes["api.openai.com"], p.routes["api.anthropic.com"]
	switch r.shape {
	case ShapeExplicit:
		r.variant = weighted(rng, []string{variantAttrsHTTP, variantAttrsLLM, variantEvaluator, variantStainless, variantAWS, variantEnvoy},
			[]int{30, 15, 15, 15, 10, 15})
		switch r.variant {
		case variantAttrsHTTP, variantEnvoy:
			r.service, r.primary = "checkout", p.routes["inventory"]
		case variantAttrsLLM, variantEvaluator:
			r.service, r.primary, r.genAI, r.tokensOnAttempts = "support-bot", openai, true, true
			r.model = pick(rng, []string{"gpt-4o-mini", "gpt-4o"})
			r.evaluator = r.variant == variantEvaluator
		case variantStainless:
			r.service, r.primary, r.model = "support-bot", openai, "gpt-4o-mini"
			if rng.Float64() < 0.5 {
				r.primary, r.model = anthropic, "claude-sonnet-4"
			}
		case variantAWS:
			r.service, r.primary, r.model = "doc-router", p.routes["bedrock-runtime.us-east-1.amazonaws.com"], "anthropic.claude-3-haiku"
		}
	case ShapeResend:
		r.variant = weighted(rng, []string{variantJava, variantEnvoy}, []int{70, 30})
		r.service, r.primary = "checkout", p.routes["inventory"]
		if r.variant == variantEnvoy {
			r.service = "checkout-envoy"
		}
	case ShapeGRPC:
		r.variant, r.service, r.primary = variantGRPC, "cart", p.routes["inventory"]
	case ShapeWrapped:
		r.service, r.genAI = "support-bot", true
		switch {
		case p.cfg.Nested || rng.Float64() < 0.4:
			r.variant = weighted(rng, []string{variantNested, variantNestedEval}, []int{2, 1})
			r.primary, r.fallback, r.model, r.fallbackModel = openai, anthropic, "gpt-4o", "claude-sonnet-4"
			r.evaluator = r.variant == variantNestedEval
		case rng.Float64() < 0.6:
			r.variant, r.primary, r.model = variantOpenAI, openai, pick(rng, []string{"gpt-4o", "gpt-4o-mini"})
		default:
			r.variant, r.primary, r.model = variantAnthropic, anthropic, "claude-sonnet-4"
		}
	case ShapeSplit:
		// The worker pass (assignSplitWorkers) sets the variant, client and route.
		r.service = "batch-worker"
	case ShapeOrphan:
		r.variant, r.service, r.primary, r.model, r.genAI = variantDropped, "answer-api", openai, "gpt-4o", true
	case ShapeHedge:
		r.variant, r.service, r.primary = variantHedged, "pricing-web", p.routes["quote-svc"]
	case ShapeAppLoop:
		p.planAppLoop(r)
	case ShapeAgent:
		p.planAgent(r)
	}
}

// layers returns the retry loops of a request, outermost first.
func (p *planner) layers(r *simRequest) []layerSpec {
	pol := p.cfg.Policy
	transient := map[faultKind]bool{faultRateLimited: true, faultServerError: true, faultReset: true, faultTimeout: true}
	if (r.naive || r.retry4xx) && !pol.NoRetry4xx {
		transient[faultClientError] = true
	}
	call := layerSpec{maxTries: pol.MaxAttempts, kind: pol.Kind, baseMs: msOf(pol.Base), capMs: msOf(pol.Cap), retryOn: transient}
	switch {
	case r.shape == ShapeHedge:
		tries := 2
		if pol.Kind == PolicyNone {
			tries = 1
		}
		return []layerSpec{{maxTries: tries, kind: PolicyNone, retryOn: map[faultKind]bool{}}}
	case r.shape == ShapeGRPC:
		// A deadline covers the whole call, so gRPC never retries DEADLINE_EXCEEDED.
		grpc := make(map[faultKind]bool, len(transient))
		for k, v := range transient {
			grpc[k] = v && k != faultTimeout
		}
		call.retryOn = grpc
		return []layerSpec{call}
	case r.nested():
		// The app loop also retries a rejected output or a stalled stream;
		// the SDK retries neither.
		app := layerSpec{maxTries: pol.AppTries, kind: pol.Kind, baseMs: 4 * msOf(pol.Base), capMs: msOf(pol.Cap),
			retryOn: copyWith(copyWith(transient, faultRejected), faultStalled)}
		return []layerSpec{app, call}
	case r.evaluator:
		call.retryOn = copyWith(transient, faultRejected)
		return []layerSpec{call}
	}
	return []layerSpec{call}
}

func copyWith(m map[faultKind]bool, k faultKind) map[faultKind]bool {
	out := make(map[faultKind]bool, len(m)+1)
	for key, v := range m {
		out[key] = v
	}
	out[k] = true
	return out
}

// splitWorker is one batch client issuing calls of one operation one after
// another; its logical requests are linked only by time.
type splitWorker struct {
	variant string
	service string
	route   *route
	shard   int
}

// assignSplitWorkers groups split requests into workers of about eight
// sequential calls each. A worker starts its next call only after the
// previous one finished, so an attempt that follows a failed attempt of the
// same worker is always a retry, and one that follows a success never is.
func (p *planner) assignSplitWorkers(requests []*simRequest) {
	var split []*simRequest
	for _, r := range requests {
		if r.shape == ShapeSplit {
			split = append(split, r)
		}
	}
	if len(split) == 0 {
		return
	}
	if p.cfg.SplitWorkers > 0 {
		p.assignRetryableWorkers(split)
		return
	}
	workers := make([]*splitWorker, (len(split)+7)/8)
	last := make([]*simRequest, len(workers))
	for i, r := range split {
		w := i % len(workers)
		if workers[w] == nil {
			workers[w] = p.newSplitWorker(r, w)
		} else {
			last[w].next = r
			r.chained = true
		}
		last[w] = r
		r.worker = workers[w]
		r.variant, r.service, r.primary = workers[w].variant, workers[w].service, workers[w].route
	}
}

func (p *planner) newSplitWorker(first *simRequest, shard int) *splitWorker {
	w := &splitWorker{variant: variantPlain, service: first.service, route: p.routes["ingest.internal"], shard: shard + 1}
	if first.rng.Float64() < 0.4 {
		w.variant, w.route = variantAWSID, p.routes["sqs.us-east-1.amazonaws.com"]
	}
	return w
}

// Targets of the retryablehttp variant: four paths on three partner APIs,
// each API with its own outage windows.
var retryableTargets = []endpoint{
	{"GET", "https://orders.partner.example/v1/orders", "/v1/orders"},
	{"GET", "https://stock.partner.example/v2/levels", "/v2/levels"},
	{"GET", "https://stock.partner.example/v2/movements", "/v2/movements"},
	{"GET", "https://prices.partner.example/v1/quotes", "/v1/quotes"},
}

// retryableRoutes are the servers behind retryableTargets; they exist only
// with Config.SplitWorkers, so other runs keep their routes and incidents.
func retryableRoutes() []*route {
	var out []*route
	seen := map[string]bool{}
	for _, t := range retryableTargets {
		host := hostOf(t.url)
		if seen[host] {
			continue // several paths on one host share its server
		}
		seen[host] = true
		out = append(out, &route{host: host, port: 443, callee: strings.Split(host, ".")[0] + "-api", baseMs: 25, perInflight: 2,
			jitterMs: 30, netMs: 3, timeoutMs: 2000, capacity: 25, faultScale: 1,
			incidentShare: 0.04, incidentMs: 6000, incidentScale: 8})
	}
	return out
}

// assignRetryableWorkers hands the split requests round-robin to
// Config.SplitWorkers workers of one go-retryablehttp client (DefaultRetryPolicy
// and DefaultBackoff with Config.SplitRetry, by default up to 5 attempts,
// 1 s doubling to at most 30 s; Retry-After honoured on 429 and 503;
// connection errors, 429 and 5xx are retried, other 4xx not). Each call goes to one of four targets on
// three hosts; a bad request there is a 409 Conflict.
func (p *planner) assignRetryableWorkers(split []*simRequest) {
	workers := make([]*splitWorker, p.cfg.SplitWorkers)
	last := make([]*simRequest, len(workers))
	transient := map[faultKind]bool{faultRateLimited: true, faultServerError: true, faultReset: true, faultTimeout: true}
	for i, r := range split {
		w := i % len(workers)
		if workers[w] == nil {
			workers[w] = &splitWorker{variant: variantRetryable, service: "partner-sync", shard: w + 1}
		} else {
			last[w].next = r
			r.chained = true
		}
		last[w] = r
		target := r.rng.IntN(len(retryableTargets))
		r.worker, r.target = workers[w], retryableTargets[target]
		r.variant, r.service = variantRetryable, workers[w].service
		r.primary = p.routes[hostOf(r.target.url)]
		r.naive, r.backoffEvents = false, false
		if r.clientErrorStatus != 0 {
			r.clientErrorStatus = 409
		}
		set := p.cfg.SplitRetry
		tries := set.RetryMax + 1
		if r.arm == ArmNoRetry {
			tries = 1
		}
		r.layers = []layerSpec{{maxTries: tries, kind: policyExponential, baseMs: msOf(set.WaitMin), capMs: msOf(set.WaitMax), retryOn: transient}}
		r.thinkMeanMs = float64(p.cfg.SplitWorkers) / p.cfg.Rate * 1000
	}
}

func hostOf(url string) string {
	host, _, _ := strings.Cut(strings.TrimPrefix(url, "https://"), "/")
	return host
}

func pick[T any](rng *rand.Rand, options []T) T { return options[rng.IntN(len(options))] }

func weighted(rng *rand.Rand, options []string, weights []int) string {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := rng.IntN(total)
	for i, w := range weights {
		if n < w {
			return options[i]
		}
		n -= w
	}
	return options[len(options)-1]
}
