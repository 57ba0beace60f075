package segment

import (
	"math"
	"slices"
)

// Hygiene are the retry-hygiene measures (docs/report.md, "The JSON report")
// of a set of requests: whether retries honour Retry-After, whether their
// waits are jittered, and whether they pile up in one moment.
type Hygiene struct {
	// RetryAfterRetries counts attempts made after a response that carried
	// Retry-After (429s, some 503s); RetryAfterIgnored those of them made
	// sooner than it said, and RetryAfterEarlyMs how much sooner in all.
	RetryAfterRetries int64   `json:"retry_after_retries"`
	RetryAfterIgnored int64   `json:"retry_after_ignored"`
	RetryAfterEarlyMs float64 `json:"retry_after_early_ms"`
	// RetryAfterIgnoredMs is the client time spent in the retries sent
	// sooner than Retry-After.
	RetryAfterIgnoredMs float64 `json:"retry_after_ignored_ms"`
	// RetryGaps counts the retries whose wait the client chose itself:
	// those after a response without Retry-After (hedges, which overlap,
	// left out). RetryGapFixedShare is the share of their gaps that lie
	// within ±2% (GapTolerance) of at most three values, RetryGapValuesMs
	// those values, the most common first; null and empty without gaps.
	// Jittered waits spread out and give a small share; a fixed or
	// unjittered exponential backoff gives a share near 1.
	RetryGaps          int64     `json:"retry_gaps"`
	RetryGapFixedShare *float64  `json:"retry_gap_fixed_share"`
	RetryGapValuesMs   []float64 `json:"retry_gap_values_ms"`
	// RetryPeak is the 100 ms in which most retries started; null
	// without retries.
	RetryPeak *RetryPeak `json:"retry_peak"`
}

// GapTolerance is how close (relative) a retry gap must be to a value to
// count as that value; GapValues is how many values are tried.
const (
	GapTolerance = 0.02
	GapValues    = 3
)

// PeakWindowNs is the window the retry peak is counted in.
const PeakWindowNs = 100e6

// RetryPeak is the PeakWindowNs window in which most retries started
// (the earliest such window when several tie).
type RetryPeak struct {
	// Retries started in the window, from StartNs (Unix ns, the first of
	// them) to SpreadMs later (the last of them).
	Retries  int64   `json:"retries"`
	StartNs  int64   `json:"start_ns"`
	SpreadMs float64 `json:"spread_ms"`
	// PerSecond is Retries as a rate: Retries × 10.
	PerSecond float64 `json:"per_s"`
	// MeanPer100ms is the requests' retries per 100 ms on average, over
	// the time from the first request's start to the last's (at least
	// one second): the peak's baseline.
	MeanPer100ms float64 `json:"mean_per_100ms"`
}

// hygieneRow is one request's share of the hygiene measures.
type hygieneRow struct {
	raRetries, raIgnored int64
	raEarlyMs, raMs      float64
	gapsMs               []float64
	retryStarts          []int64
}

// hygieneSums gathers the hygiene measures over requests.
type hygieneSums struct {
	m           Hygiene
	gapsMs      []float64
	retryStarts []int64
	firstNs     int64
	lastNs      int64
	n           int
}

func (s *hygieneSums) add(r *reqRow) {
	h := &r.more.hygiene
	s.m.RetryAfterRetries += h.raRetries
	s.m.RetryAfterIgnored += h.raIgnored
	s.m.RetryAfterEarlyMs += h.raEarlyMs
	s.m.RetryAfterIgnoredMs += h.raMs
	s.gapsMs = append(s.gapsMs, h.gapsMs...)
	s.retryStarts = append(s.retryStarts, h.retryStarts...)
	if s.n == 0 || r.startNs < s.firstNs {
		s.firstNs = r.startNs
	}
	if s.n == 0 || r.startNs > s.lastNs {
		s.lastNs = r.startNs
	}
	s.n++
}

func (s *hygieneSums) measures() Hygiene {
	m := s.m
	m.RetryGaps = int64(len(s.gapsMs))
	m.RetryGapValuesMs = []float64{}
	if len(s.gapsMs) > 0 {
		share, values := fixedGaps(s.gapsMs)
		m.RetryGapFixedShare, m.RetryGapValuesMs = &share, values
	}
	if len(s.retryStarts) > 0 {
		p := peakWindow(s.retryStarts)
		span := max(float64(s.lastNs-s.firstNs), 1e9)
		p.MeanPer100ms = float64(len(s.retryStarts)) / span * PeakWindowNs
		m.RetryPeak = &p
	}
	return m
}

// fixedGaps finds, greedily, up to GapValues gap values that each cover
// the most remaining gaps within ±GapTolerance, each value being one of
// the gaps (the smallest when several cover as many), and returns the
// share of gaps covered and the values.
func fixedGaps(gapsMs []float64) (float64, []float64) {
	rest := slices.Clone(gapsMs)
	slices.Sort(rest)
	var values []float64
	covered := 0
	for range GapValues {
		best, bestN := 0.0, 0
		lo, hi := 0, 0
		for _, v := range rest {
			for lo < len(rest) && rest[lo] < v*(1-GapTolerance) {
				lo++
			}
			for hi < len(rest) && rest[hi] <= v*(1+GapTolerance) {
				hi++
			}
			if hi-lo > bestN {
				best, bestN = v, hi-lo
			}
		}
		if bestN < 2 {
			break
		}
		values = append(values, best)
		covered += bestN
		rest = slices.DeleteFunc(rest, func(g float64) bool { return math.Abs(g-best) <= best*GapTolerance })
	}
	return float64(covered) / float64(len(gapsMs)), values
}

// peakWindow finds the PeakWindowNs window in which most of starts fall.
func peakWindow(starts []int64) RetryPeak {
	sorted := slices.Clone(starts)
	slices.Sort(sorted)
	var p RetryPeak
	lo := 0
	for hi, t := range sorted {
		for t-sorted[lo] >= PeakWindowNs {
			lo++
		}
		if n := int64(hi - lo + 1); n > p.Retries {
			p = RetryPeak{Retries: n, StartNs: sorted[lo], SpreadMs: float64(t-sorted[lo]) / 1e6}
		}
	}
	p.PerSecond = float64(p.Retries) * 1e9 / PeakWindowNs
	return p
}
