package model

// Counts are the workload counts the rates derive from.
type Counts struct {
	Requests, Attempts, Retried, RetriedOK, Failed int64
}

// Add counts one logical request of n attempts that succeeded or not.
func (c *Counts) Add(attempts int, ok bool) {
	c.Requests++
	c.Attempts += int64(attempts)
	if !ok {
		c.Failed++
	}
	if attempts > 1 {
		c.Retried++
		if ok {
			c.RetriedOK++
		}
	}
}

// CountShifts bound how far inferred joins across traces could move each
// count: the sums of the alternatives that lower it (Down, <= 0) and of
// those that raise it (Up, >= 0). The attempts are observed, not inferred.
type CountShifts struct {
	Down, Up Counts
}

// Range is the lowest and highest plausible value of a figure.
type Range [2]float64

// WorkloadRanges bound the workload figures that depend on inferred joins.
type WorkloadRanges struct {
	LogicalRequests  Range `json:"logical_requests"`
	Amplification    Range `json:"amplification"`
	RetryRate        Range `json:"retry_rate"`
	RetrySuccessRate Range `json:"retry_success_rate"`
	FinalFailureRate Range `json:"final_failure_rate"`
}

// Ranges bounds the figures by interval arithmetic: each count may move
// anywhere between its two shifted values, independently of the others,
// so the bounds hold whichever of the alternatives are the truth.
func (s CountShifts) Ranges(c Counts) WorkloadRanges {
	lo, hi := add(c, s.Down), add(c, s.Up)
	lo.Requests, hi.Requests = max(lo.Requests, 0), max(hi.Requests, lo.Requests)
	lo.Retried, lo.RetriedOK, lo.Failed = max(lo.Retried, 0), max(lo.RetriedOK, 0), max(lo.Failed, 0)
	ratio := func(num, den int64) float64 {
		if den <= 0 {
			return 0
		}
		return min(1, float64(num)/float64(den))
	}
	amp := func(den int64) float64 {
		if den <= 0 {
			return 0
		}
		return float64(c.Attempts) / float64(den)
	}
	return WorkloadRanges{
		LogicalRequests:  Range{float64(lo.Requests), float64(hi.Requests)},
		Amplification:    Range{amp(hi.Requests), amp(lo.Requests)},
		RetryRate:        Range{ratio(lo.Retried, hi.Requests), ratio(hi.Retried, lo.Requests)},
		RetrySuccessRate: Range{ratio(lo.RetriedOK, hi.Retried), ratio(hi.RetriedOK, lo.Retried)},
		FinalFailureRate: Range{ratio(lo.Failed, hi.Requests), ratio(hi.Failed, lo.Requests)},
	}
}

func add(c, d Counts) Counts {
	return Counts{c.Requests + d.Requests, c.Attempts, c.Retried + d.Retried, c.RetriedOK + d.RetriedOK, c.Failed + d.Failed}
}

// Wide reports whether any figure has a range wider than a point.
func (r WorkloadRanges) Wide() bool {
	for _, x := range []Range{r.LogicalRequests, r.Amplification, r.RetryRate, r.RetrySuccessRate, r.FinalFailureRate} {
		if x[0] != x[1] {
			return true
		}
	}
	return false
}
