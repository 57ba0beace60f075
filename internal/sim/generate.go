package sim

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Result is a generated workload: the traces, in export batches, and the
// truth the simulation recorded.
type Result struct {
	Traces []ptrace.Traces
	Truth  Truth
}

// Generate simulates cfg.Requests logical requests and renders their traces.
// The same Config always yields the same Result.
func Generate(cfg Config) (*Result, error) {
	cfg, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	routes := newRoutes()
	if cfg.SplitWorkers > 0 {
		routes = append(routes, retryableRoutes()...)
	}
	p := &planner{cfg: cfg, routes: make(map[string]*route, len(routes))}
	for _, rt := range routes {
		p.routes[rt.host] = rt
	}
	horizon := ns(float64(cfg.Requests) / cfg.Rate * 1000 * 1.5)
	planIncidents(routes, horizon, rand.New(rand.NewPCG(uint64(cfg.Seed), 0x2545f4914f6cdd1d)))
	if err := planOutage(routes, cfg.Pathologies.Lockstep, horizon); err != nil {
		return nil, err
	}
	arrivals := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5851f42d4c957f2d))
	requests := make([]*simRequest, cfg.Requests)
	var t int64
	for i := range requests {
		t += ns(arrivals.ExpFloat64() / cfg.Rate * 1000)
		requests[i] = p.plan(i, t)
		p.planOutcomePathologies(requests[i])
	}
	p.assignSplitWorkers(requests)
	p.assignAgentRuns(requests)

	sim := &simulation{cfg: cfg}
	if cfg.Policy.Budget > 0 {
		sim.budget = &retryBudget{ratio: cfg.Policy.Budget, window: int64(10 * time.Second), floor: 5}
	}
	if cfg.Policy.Quota > 0 {
		sim.quota = retryQuotas{}
	}
	if cfg.FlightBucket > 0 {
		sim.flight = newFlightCounter(int64(cfg.FlightBucket))
	}
	sim.run(requests)

	// An agent task stops at a failed step: the steps after it never ran.
	requests = slices.DeleteFunc(requests, func(r *simRequest) bool { return !r.done })
	slices.SortStableFunc(requests, func(a, b *simRequest) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.idx, b.idx))
	})
	var e emitter
	truth := Truth{Schema: TruthSchema, Seed: cfg.Seed, Params: paramsOf(cfg), Requests: make([]Request, 0, len(requests))}
	base := cfg.Start.UnixNano()
	for _, r := range requests {
		out := e.emit(r)
		if r.arm != "" {
			out.anchor.set(ArmAttribute, r.arm)
		}
		r.markDeadline(out.anchor)
		t := r.truth(out, base)
		if cfg.Counterfactual {
			cf := r.counterfactualMs(out)
			t.CounterfactualMs = &cf
		}
		truth.Requests = append(truth.Requests, t)
	}
	truth.Workload = workloadOf(truth.Requests)
	truth.Incidents = append(incidentsOf(routes, base, cfg.Faults), outagesOf(routes, base)...)
	if sim.flight != nil {
		truth.Flight = sim.flight.flight()
	}
	return &Result{Traces: toBatches(e.spans, cfg.Start, cfg.BatchSpans, cfg.SDKAttributes), Truth: truth}, nil
}
