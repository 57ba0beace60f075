package whatif

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// RecordedQuota is a retry quota the recorded clients of a service had:
// some of their requests failed because it ran out, in the AWS SDKs'
// words (whatif_quota_stops). Unless the policy gives a quota or the
// replay is told not to (Options.NoRecordedQuota), the replay gives the
// service this quota, full at the first request replayed.
type RecordedQuota struct {
	Service string `json:"service"`
	Quota   `json:"quota"`
	// Stopped counts the requests the quota stopped.
	Stopped int `json:"requests_stopped"`
	// Retries counts the SDK retries the service made before the first
	// stop, from which Estimated is read.
	Retries int `json:"retries_before_first_stop"`
	// Estimated is the initial tokens the recorded retries, refunds and
	// stops imply (the median over the stops, each read from what the
	// quota had left then), 0 when no error said how many were left;
	// Spread is half the range of the middle half of those readings.
	Estimated float64 `json:"estimated_tokens"`
	Spread    float64 `json:"estimated_tokens_spread"`
	// Standard: the estimate is within noise of the AWS SDKs' standard
	// retryer's (DefaultQuota), which Quota then is.
	Standard bool `json:"aws_standard"`
	// atNs and left are the recorded tokens over time under Quota: left[i]
	// from atNs[i] on, read from the recorded retries and refunds.
	atNs []int64
	left []float64
}

// leftAt is what the recorded quota had just before nowNs, read from the
// recorded retries and refunds.
func (q *RecordedQuota) leftAt(nowNs int64) float64 {
	i, _ := slices.BinarySearch(q.atNs, nowNs)
	if i == 0 {
		return q.Tokens
	}
	return q.left[i-1]
}

// timeline sets the recorded tokens over time under Quota.
func (q *RecordedQuota) timeline(events []quotaEvent) {
	t := q.Tokens
	for _, e := range events {
		switch {
		case e.take > 0:
			t -= e.take
		case e.success && e.refund > 0:
			t = min(q.Tokens, t+e.refund)
		case e.success:
			t = min(q.Tokens, t+q.Gain)
		default:
			continue
		}
		q.atNs, q.left = append(q.atNs, e.atNs), append(q.left, t)
	}
}

// quotaNoise is how far, as a share of the standard's tokens, an
// estimate may be from the AWS SDKs' standard and still be taken for it:
// the spans' order of ends need not be the order in which a client's
// goroutines settled with its quota.
const quotaNoise = 0.15

// maxQuotaReadings bounds the stops whose tokens left the estimate reads.
const maxQuotaReadings = 20

// inferQuotas is the retry quota of each service whose recorded requests
// its running out stopped, in service order.
func inferQuotas(reqs []*recRequest) []RecordedQuota {
	byService := map[string][]*recRequest{}
	stopped := map[string]bool{}
	for _, r := range reqs {
		byService[r.seg.Service] = append(byService[r.seg.Service], r)
		if r.quotaStop != nil {
			stopped[r.seg.Service] = true
		}
	}
	var out []RecordedQuota
	for service := range stopped {
		out = append(out, inferQuota(service, byService[service]))
	}
	slices.SortFunc(out, func(a, b RecordedQuota) int { return cmp.Compare(a.Service, b.Service) })
	return out
}

// quotaEvent is a moment the recorded requests of a service met its
// quota: an SDK retry taking its cost, an attempt ending in success
// (a refund, or the gain) or a stop, which reads what was left.
type quotaEvent struct {
	atNs    int64
	take    float64 // tokens a retry took
	success bool    // an attempt succeeded
	refund  float64 // what its retry had taken, 0 for a first attempt's success
	stop    *quotaStop
}

// inferQuota reads the quota of service from its requests (some stopped
// by it): the costs from what the stops said a retry would have cost, the
// initial tokens by replaying the recorded retries and refunds up to each
// stop and finding the tokens that leave what the stop said was left.
func inferQuota(service string, reqs []*recRequest) RecordedQuota {
	q := RecordedQuota{Service: service, Quota: DefaultQuota}
	var plain, timeout []float64
	for _, r := range reqs {
		if st := r.quotaStop; st != nil {
			q.Stopped++
			if st.requested > 0 {
				if r.attempts[len(r.attempts)-1].trigger == "timeout" {
					timeout = append(timeout, st.requested)
				} else {
					plain = append(plain, st.requested)
				}
			}
		}
	}
	if len(plain) > 0 {
		q.Cost = mode(plain)
		q.TimeoutCost = q.Cost * DefaultQuota.TimeoutCost / DefaultQuota.Cost
	}
	if len(timeout) > 0 {
		q.TimeoutCost = mode(timeout)
	}
	events := quotaEvents(reqs, q.Quota)
	first := slices.IndexFunc(events, func(e quotaEvent) bool { return e.stop != nil })
	for _, e := range events[:first] {
		if e.take > 0 {
			q.Retries++
		}
	}
	var readings []float64
	for i, e := range events {
		if e.stop != nil && e.stop.available >= 0 && len(readings) < maxQuotaReadings {
			readings = append(readings, initialTokens(events[:i], e.stop.available, q.Quota))
		}
	}
	if len(readings) == 0 {
		q.timeline(events)
		return q
	}
	slices.Sort(readings)
	n := len(readings)
	q.Estimated = readings[n/2]
	q.Spread = (readings[(3*n)/4] - readings[n/4]) / 2
	noise := max(q.Spread, quotaNoise*DefaultQuota.Tokens)
	q.Standard = q.Cost == DefaultQuota.Cost && q.TimeoutCost == DefaultQuota.TimeoutCost &&
		math.Abs(q.Estimated-DefaultQuota.Tokens) <= noise
	if !q.Standard {
		q.Tokens = math.Min(MaxQuotaTokens, math.Max(q.Cost, q.Estimated))
	}
	q.timeline(events)
	return q
}

// quotaEvents are the moments the requests met their client's quota q,
// in time order.
func quotaEvents(reqs []*recRequest, q Quota) []quotaEvent {
	var events []quotaEvent
	for _, r := range reqs {
		var taken float64
		for i, a := range r.attempts {
			if i > 0 && innerRetry(a.tries) {
				taken = q.Cost
				if r.attempts[i-1].trigger == "timeout" {
					taken = q.TimeoutCost
				}
				events = append(events, quotaEvent{atNs: r.startNs + int64(r.attempts[i-1].endMs*1e6), take: taken})
			} else {
				taken = 0
			}
			end := r.startNs + int64(a.endMs*1e6)
			if a.ok {
				events = append(events, quotaEvent{atNs: end, success: true, refund: taken})
			}
		}
		if r.quotaStop != nil {
			last := r.attempts[len(r.attempts)-1]
			events = append(events, quotaEvent{atNs: r.startNs + int64(last.endMs*1e6), stop: r.quotaStop})
		}
	}
	slices.SortStableFunc(events, func(a, b quotaEvent) int { return cmp.Compare(a.atNs, b.atNs) })
	return events
}

// initialTokens is the least initial number of tokens of quota q (costs
// and gain as q has them) with which the events leave at least available:
// what is left only grows with the initial tokens.
func initialTokens(events []quotaEvent, available float64, q Quota) float64 {
	left := func(initial float64) float64 {
		t := initial
		for _, e := range events {
			switch {
			case e.take > 0:
				t -= e.take
			case e.success && e.refund > 0:
				t = min(initial, t+e.refund)
			case e.success:
				t = min(initial, t+q.Gain)
			}
		}
		return t
	}
	// As many tokens as every retry took and the stop found leave at
	// least that: nothing given back makes fewer.
	most := available
	for _, e := range events {
		most += e.take
	}
	lo, hi := 0.0, math.Min(math.Ceil(most), MaxQuotaTokens)
	for lo < hi {
		mid := math.Floor((lo + hi) / 2)
		if left(mid) >= available {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// mode is the commonest value of v, the least among equals.
func mode(v []float64) float64 {
	count := map[float64]int{}
	best := v[0]
	for _, x := range v {
		count[x]++
		if c := count[x]; c > count[best] || c == count[best] && x < best {
			best = x
		}
	}
	return best
}

// assumption says what the replay took the service's recorded quota to
// be, and from what.
func (q RecordedQuota) assumption() string {
	params := fmt.Sprintf("%g tokens, %g a retry, %g after a timeout, %g back for a first attempt's success, a retry's cost back for its success",
		q.Tokens, q.Cost, q.TimeoutCost, q.Gain)
	var from string
	switch {
	case q.Estimated == 0:
		from = "no error said how many tokens were left, so the initial tokens are the AWS SDKs' standard retryer's"
	case q.Standard:
		from = fmt.Sprintf("the %d retries before the first stop and the tokens the stops said were left give %g initial tokens (spread %g), within noise of the AWS SDKs' standard retryer, whose quota this is",
			q.Retries, q.Estimated, q.Spread)
	default:
		from = fmt.Sprintf("the %d retries before the first stop and the tokens the stops said were left give %g initial tokens (spread %g)",
			q.Retries, q.Estimated, q.Spread)
	}
	return fmt.Sprintf("recorded retry quota of %s: %d of its requests failed because their client's retry quota ran out (the AWS SDKs' \"retry quota exceeded\"), so the replay gives its client that quota, full at the first request replayed: %s; %s; the modeled tokens differ from the recorded ones by what the policy changed: a retry the recorded client made is made while that difference leaves it its cost, and a request the quota stopped retries once the difference makes up what its error said was missing (--retry-quota off replays without the quota)",
		q.Service, q.Stopped, params, from)
}

// addRecordedQuotas adds the recorded quotas the replay used and their
// assumptions.
func (res *Result) addRecordedQuotas(qs []RecordedQuota) {
	res.RecordedQuotas = qs
	for _, q := range qs {
		res.Assumptions = append(res.Assumptions, q.assumption())
	}
}

// String is q as a line of a test's log: the service, the quota and what
// it was read from.
func (q RecordedQuota) String() string {
	return fmt.Sprintf("%s: %g,%g,%g,%g (%d requests stopped, %d retries before the first; estimated %g, spread %g, standard %t)",
		q.Service, q.Tokens, q.Cost, q.TimeoutCost, q.Gain, q.Stopped, q.Retries, q.Estimated, q.Spread, q.Standard)
}
