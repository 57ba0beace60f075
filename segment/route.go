package segment

// routeRetries are one request's retry attempts (ordinal > 1) on the
// route of its first attempt and on another route.
type routeRetries struct {
	same, sameOK, alt, altOK int64
	sameMs, sameFailedMs     float64
	sameFailedTokens         int64
	altMs                    float64
}

// dest are the scan targets of segment_rows.sql's route columns, in order.
func (r *routeRetries) dest() []any {
	return []any{&r.same, &r.sameOK, &r.sameMs, &r.sameFailedMs, &r.sameFailedTokens, &r.alt, &r.altOK, &r.altMs}
}

// RouteRetries compares retries that stayed on the route of the request's
// first attempt with retries that went to another route (SPEC §8): per
// retry attempt, how often it succeeded and the client time it added, its
// gap before it included.
type RouteRetries struct {
	SameRouteRetries          int64    `json:"same_route_retries"`
	SameRouteRetrySuccessRate *float64 `json:"same_route_retry_success_rate"`
	// SameRouteRetryAddedMs is the mean time a same-route retry added.
	SameRouteRetryAddedMs *float64 `json:"same_route_retry_added_ms"`
	// SameRouteFailedMs and SameRouteFailedTokens are the time and tokens
	// of same-route retries that failed.
	SameRouteFailedMs              float64  `json:"same_route_failed_ms"`
	SameRouteFailedTokens          int64    `json:"same_route_failed_tokens"`
	AlternateRouteRetries          int64    `json:"alternate_route_retries"`
	AlternateRouteRetrySuccessRate *float64 `json:"alternate_route_retry_success_rate"`
	AlternateRouteRetryAddedMs     *float64 `json:"alternate_route_retry_added_ms"`
}

// routeSums adds up the route retries of requests.
type routeSums struct{ routeRetries }

func (s *routeSums) add(r *routeRetries) {
	s.same += r.same
	s.sameOK += r.sameOK
	s.sameMs += r.sameMs
	s.sameFailedMs += r.sameFailedMs
	s.sameFailedTokens += r.sameFailedTokens
	s.alt += r.alt
	s.altOK += r.altOK
	s.altMs += r.altMs
}

func (s *routeSums) measures() RouteRetries {
	out := RouteRetries{SameRouteRetries: s.same, SameRouteFailedMs: s.sameFailedMs, SameRouteFailedTokens: s.sameFailedTokens,
		AlternateRouteRetries: s.alt}
	ratio := func(a, b float64) *float64 {
		if b == 0 {
			return nil
		}
		v := a / b
		return &v
	}
	out.SameRouteRetrySuccessRate = ratio(float64(s.sameOK), float64(s.same))
	out.SameRouteRetryAddedMs = ratio(s.sameMs, float64(s.same))
	out.AlternateRouteRetrySuccessRate = ratio(float64(s.altOK), float64(s.alt))
	out.AlternateRouteRetryAddedMs = ratio(s.altMs, float64(s.alt))
	return out
}
