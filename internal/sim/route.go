package sim

import (
	"container/heap"
	"math/rand/v2"
)

// route is one server (provider) that attempts go to. Its service time grows
// with the attempts it is already serving, so retries slow everyone down:
// service = base + perInflight*inflight + exponential jitter (+ generation
// for LLM routes).
type route struct {
	host        string // server.address
	port        int64
	callee      string // service.name of the callee's SERVER spans
	llm         bool
	baseMs      float64
	perInflight float64 // ms added per attempt already in flight
	jitterMs    float64 // mean of the exponential jitter
	netMs       float64 // one-way network time, scaled by U(0.5, 1.5)
	timeoutMs   float64 // the client gives up on an attempt after this long
	capacity    int     // at or above this many in flight, 429s become likely
	faultScale  float64 // multiplies the per-attempt fault rates
	perTokenMs  float64 // LLM: generation time per output token
	// Incidents: windows covering about incidentShare of the run, each
	// about incidentMs long, during which fault rates are incidentScale
	// times higher.
	incidentShare float64
	incidentMs    float64
	incidentScale float64
	incidents     []interval
	outage        *outage // Pathologies.Lockstep

	busyUntil endTimes // server ends of the attempts it has accepted
}

// newRoutes builds the fixed set of servers every run uses. The fallback LLM
// provider is healthier than the primary so that falling sideways can help.
func newRoutes() []*route {
	return []*route{
		{host: "inventory", port: 8080, callee: "inventory", baseMs: 12, perInflight: 1.5, jitterMs: 20, netMs: 1, timeoutMs: 400, capacity: 30, faultScale: 1,
			incidentShare: 0.05, incidentMs: 1000, incidentScale: 6},
		{host: "quote-svc", port: 8080, callee: "quote-svc", baseMs: 25, perInflight: 2, jitterMs: 25, netMs: 1, timeoutMs: 500, capacity: 30, faultScale: 1},
		{host: "ingest.internal", port: 443, callee: "ingest", baseMs: 30, perInflight: 3, jitterMs: 25, netMs: 2, timeoutMs: 800, capacity: 20, faultScale: 1},
		{host: "sqs.us-east-1.amazonaws.com", port: 443, callee: "sqs", baseMs: 20, perInflight: 1, jitterMs: 15, netMs: 4, timeoutMs: 1000, capacity: 40, faultScale: 1},
		{host: "api.openai.com", port: 443, callee: "llm-gateway", llm: true, baseMs: 150, perInflight: 12, jitterMs: 80, netMs: 12, timeoutMs: 10000, capacity: 40, faultScale: 1, perTokenMs: 9,
			incidentShare: 0.1, incidentMs: 6000, incidentScale: 12},
		{host: "api.anthropic.com", port: 443, callee: "llm-gateway", llm: true, baseMs: 200, perInflight: 10, jitterMs: 90, netMs: 14, timeoutMs: 10000, capacity: 40, faultScale: 0.4, perTokenMs: 11},
		{host: "bedrock-runtime.us-east-1.amazonaws.com", port: 443, callee: "llm-gateway", llm: true, baseMs: 180, perInflight: 8, jitterMs: 80, netMs: 10, timeoutMs: 10000, capacity: 40, faultScale: 1, perTokenMs: 10},
	}
}

// planIncidents places one incident at a random offset in each period of
// incidentMs/incidentShare, over horizon nanoseconds (the expected length
// of the run).
func planIncidents(routes []*route, horizon int64, rng *rand.Rand) {
	for _, r := range routes {
		if r.incidentShare <= 0 {
			continue
		}
		period := ns(r.incidentMs / r.incidentShare)
		for t := int64(0); t < horizon; t += period {
			length := ns(r.incidentMs * (0.5 + rng.Float64()))
			// A short run still gets its incident, inside the run.
			start := t + rng.Int64N(max(1, min(period, horizon-t)-length))
			r.incidents = append(r.incidents, interval{start, start + length})
		}
	}
}

// faultScaleAt is how much more often than the base mix the route fails at t.
func (r *route) faultScaleAt(t int64) float64 {
	for _, iv := range r.incidents {
		if iv.start <= t && t < iv.end {
			return r.faultScale * r.incidentScale
		}
	}
	return r.faultScale
}

// inflight counts the attempts the server is still working on at now.
// Callers ask in nondecreasing time order, so finished work can be dropped.
func (r *route) inflight(now int64) int {
	for len(r.busyUntil) > 0 && r.busyUntil[0] <= now {
		heap.Pop(&r.busyUntil)
	}
	return len(r.busyUntil)
}

// accept records that the server will be busy with one more attempt until end.
func (r *route) accept(end int64) { heap.Push(&r.busyUntil, end) }

// endTimes is a min-heap of nanosecond timestamps.
type endTimes []int64

func (h endTimes) Len() int           { return len(h) }
func (h endTimes) Less(i, j int) bool { return h[i] < h[j] }
func (h endTimes) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endTimes) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *endTimes) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}
