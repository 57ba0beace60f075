package report

import (
	"fmt"
	"time"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/internal/texttab"
)

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
func quiet(b analysis.CapacityBucket) bool {
	return b.Requests == 0 && b.AttemptsPerS == 0 && b.HiddenWorkMs == 0
}

// quietRun is how many buckets at the head of bs are quiet.
func quietRun(bs []analysis.CapacityBucket) int {
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
func foldedRow(run []analysis.CapacityBucket, width time.Duration, workers int) []texttab.Cell {
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
func workersNote(c *analysis.Capacity) string {
	if c.Workers == 0 || c.Utilisation == nil {
		return ""
	}
	src := "--workers"
	if c.WorkersSource == analysis.WorkersEstimated {
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
