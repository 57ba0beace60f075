package segment

// routeRetries are one request's retry attempts (ordinal > 1) on the
// route of its first attempt and on another route.
type routeRetries struct {
	// n, ok and ms are the retries, those that succeeded and their time
	// (the gap before each included): [sameRoute] on the first attempt's
	// route, [altRoute] on another.
	n, ok [2]int64
	ms    [2]float64
	// failedMs and failedTokens are the time and tokens of same-route
	// retries that failed.
	failedMs     float64
	failedTokens int64
}

const (
	sameRoute = iota
	altRoute
)

// RouteRetries compares retries that stayed on the route of the request's
// first attempt with retries that went to another route (docs/report.md,
// "report"): per retry attempt, how often it succeeded and the client time it
// added, its gap before it included.
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
	for k := range s.n {
		s.n[k], s.ok[k], s.ms[k] = s.n[k]+r.n[k], s.ok[k]+r.ok[k], s.ms[k]+r.ms[k]
	}
	s.failedMs, s.failedTokens = s.failedMs+r.failedMs, s.failedTokens+r.failedTokens
}

func (s *routeSums) measures() RouteRetries {
	out := RouteRetries{SameRouteRetries: s.n[sameRoute], SameRouteFailedMs: s.failedMs, SameRouteFailedTokens: s.failedTokens,
		AlternateRouteRetries: s.n[altRoute]}
	ratio := func(a, b float64) *float64 {
		if b == 0 {
			return nil
		}
		v := a / b
		return &v
	}
	out.SameRouteRetrySuccessRate = ratio(float64(s.ok[sameRoute]), float64(s.n[sameRoute]))
	out.SameRouteRetryAddedMs = ratio(s.ms[sameRoute], float64(s.n[sameRoute]))
	out.AlternateRouteRetrySuccessRate = ratio(float64(s.ok[altRoute]), float64(s.n[altRoute]))
	out.AlternateRouteRetryAddedMs = ratio(s.ms[altRoute], float64(s.n[altRoute]))
	return out
}
