package analysis

import (
	"slices"
	"time"

	"github.com/retryscope/retryscope/model"
)

// Capacity is the load retries put on the servers (docs/report.md, "The JSON
// report"): offered load λ·S (arrival rate × mean service time, measured as
// attempt-seconds in flight per second of wall clock) with and without
// retries, attempts in flight, per time bucket, and the windows where
// amplification spiked: the storm timeline.
type Capacity struct {
	// BucketMs is the buckets' width; they start at multiples of it.
	BucketMs float64 `json:"bucket_ms"`
	// PeakAttemptsInFlight is the most client attempts open at once, at
	// PeakAt; PeakFirstAttemptsInFlight counts first attempts alone.
	PeakAttemptsInFlight      int    `json:"peak_attempts_in_flight"`
	PeakAt                    string `json:"peak_at"`
	PeakFirstAttemptsInFlight int    `json:"peak_first_attempts_in_flight"`
	// OfferedLoad is λ·S over the whole timeline; OfferedLoadFirstAttempts
	// counts first attempts alone: the load without retries.
	OfferedLoad              float64 `json:"offered_load"`
	OfferedLoadFirstAttempts float64 `json:"offered_load_first_attempts"`
	// HiddenWorkMs is server time after the client gave up on an attempt.
	HiddenWorkMs float64 `json:"hidden_work_ms"`
	// Workers is the capacity c the load is set against: --workers, or
	// else the plateau of attempts in flight (WorkersSource says which);
	// 0 without attempts.
	Workers       int    `json:"workers"`
	WorkersSource string `json:"workers_source"`
	// Utilisation is λ·S / c over the whole timeline, null without
	// workers; BucketsOverCapacity counts the buckets whose utilisation
	// is above 1.
	Utilisation         *float64 `json:"utilisation"`
	BucketsOverCapacity int      `json:"buckets_over_capacity"`
	// UnfinishedRequests never returned (outcome_detail unfinished: the
	// loop was still running at the dump's end); UnfinishedWorkMs is the
	// attempt time they held, a leak rather than a load.
	UnfinishedRequests int              `json:"unfinished_requests"`
	UnfinishedWorkMs   float64          `json:"unfinished_work_ms"`
	Buckets            []CapacityBucket `json:"buckets"`
	// Spikes are the windows whose amplification spiked.
	Spikes []Spike `json:"spikes"`
}

// CapacityBucket is one bucket of the timeline.
type CapacityBucket struct {
	Start   string `json:"start"`
	StartNs int64  `json:"start_ns"`
	// Requests counts the logical requests that started in the bucket,
	// RequestAttempts their attempts; Amplification is their ratio, null
	// without requests.
	Requests        int      `json:"requests"`
	RequestAttempts int      `json:"request_attempts"`
	Amplification   *float64 `json:"amplification"`
	// AttemptsPerS is the attempts that started in the bucket per second.
	AttemptsPerS float64 `json:"attempts_per_s"`
	// OfferedLoad is λ·S: attempt-seconds in flight in the bucket per
	// second; OfferedLoadFirstAttempts the same of first attempts.
	OfferedLoad              float64 `json:"offered_load"`
	OfferedLoadFirstAttempts float64 `json:"offered_load_first_attempts"`
	// PeakInFlight is the most attempts in flight at once in the bucket.
	PeakInFlight int `json:"peak_attempts_in_flight"`
	// Utilisation is OfferedLoad / Capacity.Workers, null without workers.
	Utilisation *float64 `json:"utilisation"`
	// HiddenWorkMs is the server time after the client gave up on the
	// attempts that started in the bucket.
	HiddenWorkMs float64 `json:"hidden_work_ms"`
}

// Spike is a run of buckets whose amplification spiked.
type Spike struct {
	Start         string  `json:"start"`
	End           string  `json:"end"`
	Requests      int     `json:"requests"`
	Amplification float64 `json:"amplification"`
	AttemptsPerS  float64 `json:"attempts_per_s"`
	// ExtraAttempts are the retries of the requests that started in it,
	// ExtraMs their time (each with the gap before it) and ExtraTokens
	// their tokens.
	ExtraAttempts int64   `json:"extra_attempts"`
	ExtraMs       float64 `json:"extra_ms"`
	ExtraTokens   int64   `json:"extra_tokens"`
}

// A bucket spikes when at least spikeMinRequests started in it and their
// amplification is at least spikeMinAmplification and spikeFactor times
// the median bucket's: a storm stands out from the workload's own level.
const (
	spikeMinRequests      = 20
	spikeMinAmplification = 1.5
	spikeFactor           = 1.5
	// maxBuckets is the most buckets a timeline gets.
	maxBuckets = 60
	// plateauPercentile is the percentile of the buckets' peak attempts in
	// flight the estimated workers are.
	plateauPercentile = 95
)

// The sources of Capacity.Workers.
const (
	WorkersFlag      = "flag"
	WorkersEstimated = "estimated: plateau of attempts in flight"
)

// niceSteps are the bucket widths the timelines pick from.
var niceSteps = []time.Duration{time.Second, 5 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 24 * time.Hour}

// CapacityStep is the bucket width that fits the requests' starts in at
// most maxBuckets buckets.
func CapacityStep(reqs []*Request) time.Duration {
	if len(reqs) == 0 {
		return time.Second
	}
	lo, hi := reqs[0].startNs, reqs[0].startNs
	for _, r := range reqs {
		lo, hi = min(lo, r.startNs), max(hi, r.startNs)
	}
	for _, s := range niceSteps {
		if hi/int64(s)-lo/int64(s) < maxBuckets {
			return s
		}
	}
	return niceSteps[len(niceSteps)-1]
}

// flightEdges are the instants attempts start and end, each list sorted
// on its own ([1] those of first attempts, [0] the rest's), read merged
// in time order, ends before starts at the same instant: an attempt is
// in flight over [start, end). Which of two edges of the same kind at the
// same instant comes first changes no figure. Sorting four lists of
// integers instead of the edges as structs halves MeasureCapacity's time
// and takes a third of its memory (BenchmarkMeasureCapacity).
type flightEdges struct {
	starts, ends [2][]int64
	si, ei       [2]int
}

// newFlightEdges gathers and sorts the edges of reqs' attempts.
func newFlightEdges(reqs []*Request) *flightEdges {
	var f flightEdges
	firsts, rest := 0, 0
	for _, r := range reqs {
		if len(r.at) > 0 {
			firsts, rest = firsts+1, rest+len(r.at)-1
		}
	}
	for k, n := range [2]int{rest, firsts} {
		f.starts[k], f.ends[k] = make([]int64, 0, n), make([]int64, 0, n)
	}
	for _, r := range reqs {
		for k, a := range r.at {
			i := 0
			if k == 0 {
				i = 1
			}
			f.starts[i] = append(f.starts[i], a.startNs)
			f.ends[i] = append(f.ends[i], a.endNs)
		}
	}
	for k := range 2 {
		slices.Sort(f.starts[k])
		slices.Sort(f.ends[k])
	}
	return &f
}

// bounds are the first and the last edge's instants; ok is false without
// edges.
func (f *flightEdges) bounds() (lo, hi int64, ok bool) {
	for _, l := range [][]int64{f.starts[0], f.starts[1], f.ends[0], f.ends[1]} {
		if len(l) == 0 {
			continue
		}
		if !ok {
			lo, hi, ok = l[0], l[len(l)-1], true
		}
		lo, hi = min(lo, l[0]), max(hi, l[len(l)-1])
	}
	return lo, hi, ok
}

// head is the index of the list of two whose next instant is earlier,
// -1 when both are read.
func head(l *[2][]int64, i *[2]int) int {
	h := -1
	for k := range 2 {
		if i[k] < len(l[k]) && (h < 0 || l[k][i[k]] < l[h][i[h]]) {
			h = k
		}
	}
	return h
}

// next is the next edge: its instant, +1 for a start or -1 for an end,
// and whether it is a first attempt's; ok is false once all are read.
func (f *flightEdges) next() (at int64, delta int, first, ok bool) {
	e, s := head(&f.ends, &f.ei), head(&f.starts, &f.si)
	switch {
	case e >= 0 && (s < 0 || f.ends[e][f.ei[e]] <= f.starts[s][f.si[s]]):
		at = f.ends[e][f.ei[e]]
		f.ei[e]++
		return at, -1, e == 1, true
	case s >= 0:
		at = f.starts[s][f.si[s]]
		f.si[s]++
		return at, 1, s == 1, true
	}
	return 0, 0, false, false
}

// MeasureCapacity measures the timeline of reqs in buckets of step.
func MeasureCapacity(reqs []*Request, step time.Duration, hiddenMs float64) *Capacity {
	w := int64(step)
	c := &Capacity{BucketMs: float64(w) / 1e6, HiddenWorkMs: hiddenMs, Buckets: []CapacityBucket{}, Spikes: []Spike{}}
	edges := newFlightEdges(reqs)
	lo, hi, ok := edges.bounds()
	if !ok {
		return c
	}
	first := floorTo(lo, w)
	n := int((floorTo(hi, w)-first)/w) + 1
	busy, busyFirst := make([]int64, n), make([]int64, n)
	peak := make([]int, n)
	inFlight, inFirst := 0, 0
	prev := lo
	var peakAt int64
	for {
		at, delta, isFirst, ok := edges.next()
		if !ok {
			break
		}
		spread(busy, first, w, prev, at, int64(inFlight))
		spread(busyFirst, first, w, prev, at, int64(inFirst))
		// A bucket entered with attempts in flight peaks at least there.
		for b := int((prev-first)/w) + 1; first+int64(b)*w < at && inFlight > 0; b++ {
			peak[b] = max(peak[b], inFlight)
		}
		prev = at
		inFlight += delta
		if isFirst {
			inFirst += delta
		}
		b := int((at - first) / w)
		peak[b] = max(peak[b], inFlight)
		if inFlight > c.PeakAttemptsInFlight {
			c.PeakAttemptsInFlight, peakAt = inFlight, at
		}
		c.PeakFirstAttemptsInFlight = max(c.PeakFirstAttemptsInFlight, inFirst)
	}
	c.PeakAt = stamp(peakAt)
	reqsIn, attsOf, started := make([]int, n), make([]int, n), make([]int, n)
	hidden := make([]float64, n)
	for _, r := range reqs {
		b := int((r.startNs - first) / w)
		if b >= 0 && b < n {
			reqsIn[b]++
			attsOf[b] += r.attempts
		}
		if r.unfinished {
			c.UnfinishedRequests++
		}
		for _, a := range r.at {
			started[int((a.startNs-first)/w)]++
			hidden[int((a.startNs-first)/w)] += a.hiddenMs
			if r.unfinished {
				c.UnfinishedWorkMs += float64(max(a.endNs-a.startNs, 0)) / 1e6
			}
		}
	}
	var total, totalFirst int64
	for b := range n {
		start := first + int64(b)*w
		bk := CapacityBucket{Start: stamp(start), StartNs: start, Requests: reqsIn[b], RequestAttempts: attsOf[b],
			AttemptsPerS: float64(started[b]) / step.Seconds(), OfferedLoad: float64(busy[b]) / float64(w),
			OfferedLoadFirstAttempts: float64(busyFirst[b]) / float64(w), PeakInFlight: peak[b], HiddenWorkMs: hidden[b]}
		if reqsIn[b] > 0 {
			a := float64(attsOf[b]) / float64(reqsIn[b])
			bk.Amplification = &a
		}
		total, totalFirst = total+busy[b], totalFirst+busyFirst[b]
		c.Buckets = append(c.Buckets, bk)
	}
	span := float64(int64(n) * w)
	c.OfferedLoad, c.OfferedLoadFirstAttempts = float64(total)/span, float64(totalFirst)/span
	c.Spikes = spikes(c.Buckets, reqs, w)
	return c
}

// AgainstWorkers sets the load against workers (0: the estimate,
// PlateauWorkers): the utilisation overall and per bucket, and the
// buckets over capacity.
func (c *Capacity) AgainstWorkers(workers int) {
	c.Workers, c.WorkersSource = workers, WorkersFlag
	if workers == 0 {
		c.Workers, c.WorkersSource = PlateauWorkers(c.Buckets), WorkersEstimated
	}
	c.Utilisation, c.BucketsOverCapacity = nil, 0
	if c.Workers == 0 {
		return
	}
	n := float64(c.Workers)
	u := c.OfferedLoad / n
	c.Utilisation = &u
	for i := range c.Buckets {
		b := &c.Buckets[i]
		u := b.OfferedLoad / n
		b.Utilisation = &u
		if u > 1 {
			c.BucketsOverCapacity++
		}
	}
}

// PlateauWorkers estimates the workers from the peaks of attempts in
// flight: the 95th percentile (nearest rank) of the buckets' peaks, those
// with attempts in flight. Servers that saturate hold their peaks at the
// workers they have; the top 5% are taken for bursts queued elsewhere.
// Never saturated, the estimate is the most they were seen to hold.
func PlateauWorkers(buckets []CapacityBucket) int {
	var peaks []int
	for _, b := range buckets {
		if b.PeakInFlight > 0 {
			peaks = append(peaks, b.PeakInFlight)
		}
	}
	if len(peaks) == 0 {
		return 0
	}
	slices.Sort(peaks)
	// The nearest rank, whatever the sample's size: an estimate, not a
	// reported percentile.
	rank, _ := model.PercentileRank(len(peaks), plateauPercentile)
	return peaks[rank-1]
}

// spread adds count·(overlap with each bucket) of [from, to) to busy.
func spread(busy []int64, first, w, from, to, count int64) {
	if count == 0 || to <= from {
		return
	}
	for t := from; t < to; {
		b := (t - first) / w
		end := min(to, first+(b+1)*w)
		busy[b] += count * (end - t)
		t = end
	}
}

// floorTo rounds t down to a multiple of w.
func floorTo(t, w int64) int64 {
	f := t / w * w
	if f > t {
		f -= w
	}
	return f
}

func stamp(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// spikes finds the runs of buckets whose amplification spiked.
func spikes(buckets []CapacityBucket, reqs []*Request, w int64) []Spike {
	var amps []float64
	for _, b := range buckets {
		if b.Amplification != nil && b.Requests >= spikeMinRequests {
			amps = append(amps, *b.Amplification)
		}
	}
	if len(amps) == 0 {
		return []Spike{}
	}
	slices.Sort(amps)
	level := max(spikeMinAmplification, spikeFactor*amps[(len(amps)-1)/2])
	hot := func(b CapacityBucket) bool {
		return b.Amplification != nil && b.Requests >= spikeMinRequests && *b.Amplification >= level
	}
	out := []Spike{}
	for i := 0; i < len(buckets); i++ {
		if !hot(buckets[i]) {
			continue
		}
		j := i
		for j+1 < len(buckets) && hot(buckets[j+1]) {
			j++
		}
		out = append(out, spikeOf(buckets[i:j+1], reqs, w))
		i = j
	}
	return out
}

func spikeOf(run []CapacityBucket, reqs []*Request, w int64) Spike {
	from, to := run[0].StartNs, run[len(run)-1].StartNs+w
	s := Spike{Start: stamp(from), End: stamp(to)}
	var atts int
	var started float64
	for _, b := range run {
		s.Requests += b.Requests
		atts += b.RequestAttempts
		started += b.AttemptsPerS * float64(w) / 1e9
	}
	s.Amplification = float64(atts) / float64(s.Requests)
	s.AttemptsPerS = started / (float64(to-from) / 1e9)
	for _, r := range reqs {
		if r.startNs < from || r.startNs >= to {
			continue
		}
		for k := 1; k < r.attempts; k++ {
			s.ExtraAttempts++
			s.ExtraMs += r.at[k].costMs
			s.ExtraTokens += r.at[k].tokens
		}
	}
	return s
}
