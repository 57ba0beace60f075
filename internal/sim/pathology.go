package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Pathologies plant retry-hygiene problems in chosen clients or routes, so
// that each finding about them has a known truth to be checked against.
// Each is off when empty, and then leaves the output unchanged.
type Pathologies struct {
	// Retry4xx names a client service that retries client errors (4xx)
	// like transient ones; Retry4xxShare of its requests are bad (404,
	// 400 or 422) besides those Faults.ClientError makes bad.
	Retry4xx string
	// IgnoreRetryAfter names a client service that retries a 429 when
	// its own policy says, however long the Retry-After.
	IgnoreRetryAfter string
	// Lockstep names a route (server.address) with one outage of
	// OutageShare of its client timeout, starting at 40% of the run: the
	// server holds every attempt that arrives during it and answers them
	// all with 503 when it ends, so their retries leave together.
	Lockstep string
}

// Retry4xxShare is the share of a Pathologies.Retry4xx service's requests
// that are bad; OutageShare is a lockstep outage's length as a share of
// the route's client timeout, short enough that no held attempt times out.
const (
	Retry4xxShare = 0.15
	OutageShare   = 0.8
)

// String renders p in the syntax ParsePathologies reads; "none" when off.
func (p Pathologies) String() string {
	var parts []string
	for _, kv := range [][2]string{{"retry-4xx", p.Retry4xx}, {"ignore-retry-after", p.IgnoreRetryAfter}, {"lockstep", p.Lockstep}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// ParsePathologies reads "retry-4xx=checkout,ignore-retry-after=support-bot,
// lockstep=api.openai.com"; "" or "none" is none.
func ParsePathologies(s string) (Pathologies, error) {
	var p Pathologies
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return p, nil
	}
	for _, item := range strings.Split(s, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || value == "" {
			return p, fmt.Errorf("pathology %q: want kind=service or lockstep=route", item)
		}
		switch key {
		case "retry-4xx":
			p.Retry4xx = value
		case "ignore-retry-after":
			p.IgnoreRetryAfter = value
		case "lockstep":
			p.Lockstep = value
		default:
			return p, fmt.Errorf("pathology %q: unknown kind (want retry-4xx, ignore-retry-after, lockstep)", key)
		}
	}
	return p, nil
}

// planPathologies marks a request of a pathological client. Its draws come
// from a stream of their own, so the other requests stay as they were.
func (p *planner) planPathologies(r *simRequest) {
	pa := p.cfg.Pathologies
	if pa.Retry4xx != "" && r.service == pa.Retry4xx {
		r.retry4xx = true
		rng := rand.New(rand.NewPCG(uint64(p.cfg.Seed), 0x94d049bb133111eb^uint64(r.idx)))
		if r.clientErrorStatus == 0 && rng.Float64() < Retry4xxShare {
			r.clientErrorStatus = pick(rng, []int{404, 404, 400, 422})
		}
	}
	if pa.IgnoreRetryAfter != "" && r.service == pa.IgnoreRetryAfter {
		r.ignoreRetryAfter = true
	}
}

// outage is a lockstep outage on a route and what it did.
type outage struct {
	interval
	shed int // attempts it held and failed at its end
}

// planOutage places the lockstep outage on its route, if any.
func planOutage(routes []*route, name string, horizon int64) error {
	if name == "" {
		return nil
	}
	for _, rt := range routes {
		if rt.host == name {
			start := horizon * 4 / 10
			rt.outage = &outage{interval: interval{start, start + ns(rt.timeoutMs*OutageShare)}}
			return nil
		}
	}
	return fmt.Errorf("lockstep: no route %q", name)
}

// holdInOutage makes a the victim of its route's outage if it arrives
// during one: held until the outage ends, then a 503 with no Retry-After.
func (rt *route) holdInOutage(a *attempt) bool {
	o := rt.outage
	if o == nil || a.serverStart < o.start || a.serverStart >= o.end {
		return false
	}
	o.shed++
	a.fault, a.httpStatus, a.retryAfterS = faultServerError, 503, 0
	a.serverEnd, a.serverOut, a.outTokens, a.firstToken = o.end, 0, 0, 0
	return true
}

// outagesOf lists the lockstep outages in the truth's incidents.
func outagesOf(routes []*route, base int64) []Incident {
	var out []Incident
	for _, rt := range routes {
		if o := rt.outage; o != nil {
			out = append(out, Incident{Route: rt.host, StartNs: base + o.start, EndNs: base + o.end, Kind: "outage", Shed: o.shed})
		}
	}
	return out
}
