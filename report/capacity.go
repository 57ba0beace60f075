package report

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/retryscope/retryscope/internal/texttab"
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

// capacityStep is the bucket width that fits the requests' starts in at
// most maxBuckets buckets.
func capacityStep(reqs []*yieldRequest) time.Duration {
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

// flightEdge is an attempt starting (+1) or ending (−1).
type flightEdge struct {
	at    int64
	delta int
	first bool
}

// capacity measures the timeline of reqs in buckets of step.
func capacity(reqs []*yieldRequest, step time.Duration, hiddenMs float64) *Capacity {
	w := int64(step)
	c := &Capacity{BucketMs: float64(w) / 1e6, HiddenWorkMs: hiddenMs, Buckets: []CapacityBucket{}, Spikes: []Spike{}}
	n := 0
	for _, r := range reqs {
		n += 2 * len(r.at)
	}
	edges := make([]flightEdge, 0, n)
	for _, r := range reqs {
		for k, a := range r.at {
			edges = append(edges, flightEdge{a.startNs, 1, k == 0}, flightEdge{a.endNs, -1, k == 0})
		}
	}
	if len(edges) == 0 {
		return c
	}
	// Ends before starts at the same instant: an attempt is in flight over
	// [start, end).
	slices.SortFunc(edges, func(a, b flightEdge) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.delta, b.delta)) })
	first := floorTo(edges[0].at, w)
	n = int((floorTo(edges[len(edges)-1].at, w)-first)/w) + 1
	busy, busyFirst := make([]int64, n), make([]int64, n)
	peak := make([]int, n)
	inFlight, inFirst := 0, 0
	prev := edges[0].at
	var peakAt int64
	for _, e := range edges {
		spread(busy, first, w, prev, e.at, int64(inFlight))
		spread(busyFirst, first, w, prev, e.at, int64(inFirst))
		// A bucket entered with attempts in flight peaks at least there.
		for b := int((prev-first)/w) + 1; first+int64(b)*w < e.at && inFlight > 0; b++ {
			peak[b] = max(peak[b], inFlight)
		}
		prev = e.at
		inFlight += e.delta
		if e.first {
			inFirst += e.delta
		}
		b := int((e.at - first) / w)
		peak[b] = max(peak[b], inFlight)
		if inFlight > c.PeakAttemptsInFlight {
			c.PeakAttemptsInFlight, peakAt = inFlight, e.at
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

// againstWorkers sets the load against workers (0: the estimate,
// plateauWorkers): the utilisation overall and per bucket, and the
// buckets over capacity.
func (c *Capacity) againstWorkers(workers int) {
	c.Workers, c.WorkersSource = workers, WorkersFlag
	if workers == 0 {
		c.Workers, c.WorkersSource = plateauWorkers(c.Buckets), WorkersEstimated
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

// plateauWorkers estimates the workers from the peaks of attempts in
// flight: the 95th percentile (nearest rank) of the buckets' peaks, those
// with attempts in flight. Servers that saturate hold their peaks at the
// workers they have; the top 5% are taken for bursts queued elsewhere.
// Never saturated, the estimate is the most they were seen to hold.
func plateauWorkers(buckets []CapacityBucket) int {
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
func spikes(buckets []CapacityBucket, reqs []*yieldRequest, w int64) []Spike {
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

func spikeOf(run []CapacityBucket, reqs []*yieldRequest, w int64) Spike {
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

// capacityTable lays out the timeline; the spikes and the peaks follow
// as notes.
func (rep *Report) capacityTable() texttab.Table {
	c := rep.Capacity
	t := texttab.Table{Title: fmt.Sprintf("Capacity: offered load λ·S per %s", time.Duration(c.BucketMs*1e6)), Labels: 1,
		Columns: []texttab.Column{{Key: "start", Head: "bucket start"}, {Key: "requests", Head: "requests"}, {Key: "amplification", Head: "amp"},
			{Key: "attempts_per_s", Head: "attempts/s"}, {Key: "offered_load", Head: "λ·S"}, {Key: "offered_load_first_attempts", Head: "no retry"},
			{Key: "peak_attempts_in_flight", Head: "peak"}, {Key: "utilisation", Head: "util"}, {Key: "hidden_work_ms", Head: "hidden"}}}
	width := time.Duration(c.BucketMs * 1e6)
	folded := false
	for i := 0; i < len(c.Buckets); {
		b := c.Buckets[i]
		if n := quietRun(c.Buckets[i:]); n >= 2 {
			t.Rows = append(t.Rows, foldedRow(c.Buckets[i:i+n], width, c.Workers))
			i += n
			folded = true
			continue
		}
		t.Rows = append(t.Rows, []texttab.Cell{texttab.Label(b.Start), texttab.Int(b.Requests), texttab.Maybe(texttab.Times, b.Amplification),
			texttab.Value(texttab.Decimal, b.AttemptsPerS), texttab.Value(texttab.Decimal, b.OfferedLoad), texttab.Value(texttab.Decimal, b.OfferedLoadFirstAttempts),
			texttab.Int(b.PeakInFlight), texttab.Maybe(texttab.Share, b.Utilisation), texttab.Value(texttab.Ms, b.HiddenWorkMs)})
		i++
	}
	t.Notes = []string{
		"λ·S: attempt-seconds in flight per second (arrival rate × mean service time, client side); no retry: λ·S of first attempts alone; " +
			"peak: most attempts in flight at once; amp: attempts per request of the requests started in the bucket; " +
			"util: λ·S over the workers; hidden: server time after the client gave up on the attempts started in it.",
		fmt.Sprintf("Whole timeline: λ·S %s with retries, %s without; peak %d attempts in flight at %s (%d first attempts at most); hidden work %s.",
			texttab.Format(texttab.Decimal, c.OfferedLoad), texttab.Format(texttab.Decimal, c.OfferedLoadFirstAttempts), c.PeakAttemptsInFlight, c.PeakAt,
			c.PeakFirstAttemptsInFlight, texttab.FormatMs(c.HiddenWorkMs)),
	}
	if n := workersNote(c); n != "" {
		t.Notes = append(t.Notes, n)
	}
	if folded {
		t.Notes = append(t.Notes, "… "+quietLabel("N", width)+" …: a run of buckets in which no request or attempt started and no server work was hidden, "+
			"as one row (JSON lists each bucket): λ·S and no retry are the run's mean, peak its most.")
	}
	if len(c.Spikes) == 0 {
		t.Notes = append(t.Notes, "No amplification spike.")
	}
	for _, s := range c.Spikes {
		t.Notes = append(t.Notes, fmt.Sprintf("Spike %s to %s: amplification %s over %d requests, %s attempts/s, %d extra attempts.",
			s.Start, s.End, texttab.Format(texttab.Times, s.Amplification), s.Requests, texttab.Format(texttab.Decimal, s.AttemptsPerS), s.ExtraAttempts))
	}
	return t
}

// quiet says nothing started in b: no request, no attempt, no hidden
// work; what it shows is attempts still in flight from before.
func quiet(b CapacityBucket) bool {
	return b.Requests == 0 && b.AttemptsPerS == 0 && b.HiddenWorkMs == 0
}

// quietRun is how many buckets at the head of bs are quiet.
func quietRun(bs []CapacityBucket) int {
	n := 0
	for n < len(bs) && quiet(bs[n]) {
		n++
	}
	return n
}

// quietLabel names a folded run of n buckets: "7 quiet seconds" when
// they are one second wide, else "7 × 5s quiet", short enough for the
// bucket start column.
func quietLabel(n string, width time.Duration) string {
	if width == time.Second {
		return n + " quiet seconds"
	}
	return n + " × " + width.String() + " quiet"
}

// foldedRow is one row for a run of quiet buckets: the load still in
// flight, as the mean over the run, and its peak.
func foldedRow(run []CapacityBucket, width time.Duration, workers int) []texttab.Cell {
	var load, first float64
	peak := 0
	for _, b := range run {
		load += b.OfferedLoad
		first += b.OfferedLoadFirstAttempts
		peak = max(peak, b.PeakInFlight)
	}
	n := float64(len(run))
	var util *float64
	if workers > 0 {
		u := load / n / float64(workers)
		util = &u
	}
	return []texttab.Cell{texttab.Label("… " + quietLabel(fmt.Sprint(len(run)), width) + " …"), texttab.Int(0), texttab.Maybe(texttab.Times, nil),
		texttab.Value(texttab.Decimal, 0), texttab.Value(texttab.Decimal, load/n), texttab.Value(texttab.Decimal, first/n), texttab.Int(peak), texttab.Maybe(texttab.Share, util), texttab.Value(texttab.Ms, 0)}
}

// workersNote is the load against the workers in one line: how many and
// whence, the utilisation, the buckets over capacity, and the requests
// that never returned with the worker time they held; "" without
// attempts.
func workersNote(c *Capacity) string {
	if c.Workers == 0 || c.Utilisation == nil {
		return ""
	}
	src := "--workers"
	if c.WorkersSource == WorkersEstimated {
		src = "estimated from the plateau of attempts in flight"
	}
	s := fmt.Sprintf("Workers %d (%s): utilisation %s, %d of %d buckets over capacity",
		c.Workers, src, texttab.Format(texttab.Share, *c.Utilisation), c.BucketsOverCapacity, len(c.Buckets))
	if c.UnfinishedRequests > 0 {
		s += fmt.Sprintf("; %d unfinished requests held %s of worker time (a leak, not a load)",
			c.UnfinishedRequests, texttab.FormatMs(c.UnfinishedWorkMs))
	}
	return s + "."
}
