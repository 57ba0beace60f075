package rebuild

import "github.com/retryscope/retryscope/model"

// retryableClientErrors takes back the client_error trigger (a 4xx no
// retry fixes) from the 4xx attempts the request's own spans show were
// retryable after all. AWS services answer throttling with HTTP 400 and an
// error code, which the SDKs retry after a backoff; the HTTP attempt spans
// under the SDK's span carry only the status, so the evidence is around
// them:
//
//   - the span they ran under (the SDK's, else the request's anchor) failed
//     rate-limited (a throttling code in its error, say): its last attempt,
//     and the attempts before with that attempt's status, were throttled;
//   - that span says its retry quota or budget ran out (exhausted reason
//     retry_budget): its loop would have retried the last failure, so the
//     attempts with the last attempt's status were throttled (rate_limited);
//   - a 400 was followed, on the same route, by an attempt that succeeded:
//     the same request passed on a later try, so the 400 was not
//     deterministic (rate_limited, the AWS meaning of such a 400).
//
// triggers are the attempts' triggers (attemptTriggers); it changes them
// in place.
func retryableClientErrors(g *group, triggers []string) {
	for i, s := range g.attempts {
		if triggers[i] != string(model.TriggerClientError) || s.httpStatus == nil {
			continue
		}
		if t := ownerTrigger(g, i); t != "" {
			triggers[i] = t
			continue
		}
		if *s.httpStatus == 400 && succeededLater(g, triggers, i) {
			triggers[i] = string(model.TriggerRateLimited)
		}
	}
}

// ownerTrigger is the trigger attempt i takes from the span it ran under,
// "" when that span says nothing of it.
func ownerTrigger(g *group, i int) string {
	owner := g.owners[i]
	if owner == nil {
		owner = g.anchor
	}
	if owner == nil || owner == g.attempts[i] {
		return ""
	}
	last := lastUnder(g, owner, i)
	if last.httpStatus == nil || *last.httpStatus != *g.attempts[i].httpStatus {
		return ""
	}
	switch {
	case owner.trigger == string(model.TriggerRateLimited):
		return owner.trigger
	case owner.exhaustedReason == "retry_budget":
		return string(model.TriggerRateLimited)
	}
	return ""
}

// lastUnder is the last attempt of g that ran under the same owner as
// attempt i (owner is g.anchor when attempts have no owner of their own).
func lastUnder(g *group, owner *span, i int) *span {
	last := g.attempts[i]
	for j := i + 1; j < len(g.attempts); j++ {
		if o := g.owners[j]; o == owner || (o == nil && owner == g.anchor) {
			last = g.attempts[j]
		}
	}
	return last
}

// succeededLater: an attempt after i on the same route succeeded.
func succeededLater(g *group, triggers []string, i int) bool {
	s := g.attempts[i]
	for j := i + 1; j < len(g.attempts); j++ {
		if o := g.attempts[j]; triggers[j] == "" && o.start >= s.end && o.route == s.route && o.status != "error" {
			return true
		}
	}
	return false
}
