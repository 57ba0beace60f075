package sim

// flightCounter is the simulation's own count of client attempts in
// flight: it follows every attempt's start and end as the simulation
// runs them, so the truth's offered load and peak do not come from the
// attempts' recorded times but from the run itself. Times are Unix ns.
type flightCounter struct {
	width       int64 // bucket width
	now         int64 // time of the last change
	all, first  int   // attempts in flight; first attempts among them
	peak, peak1 int
	buckets     map[int64]*FlightBucket // by start
	started     bool
}

func newFlightCounter(width int64) *flightCounter {
	return &flightCounter{width: width, buckets: map[int64]*FlightBucket{}}
}

// bucket returns the bucket holding t.
func (f *flightCounter) bucket(t int64) *FlightBucket {
	start := t / f.width * f.width
	if start > t {
		start -= f.width
	}
	b := f.buckets[start]
	if b == nil {
		b = &FlightBucket{StartNs: start}
		f.buckets[start] = b
	}
	return b
}

// change moves the counts by d (all attempts) and d1 (first attempts) at
// t, after adding the time since the last change to the buckets it spans.
func (f *flightCounter) change(t int64, d, d1 int) {
	if f.started && (f.all > 0 || f.first > 0) {
		for from := f.now; from < t; {
			b := f.bucket(from)
			end := min(t, b.StartNs+f.width)
			b.AttemptNs += int64(f.all) * (end - from)
			b.FirstAttemptNs += int64(f.first) * (end - from)
			if end < t && f.all > 0 {
				// The next bucket opens with these attempts in flight.
				next := f.bucket(end)
				next.PeakInFlight = max(next.PeakInFlight, f.all)
			}
			from = end
		}
	}
	f.started, f.now = true, t
	f.all += d
	f.first += d1
	b := f.bucket(t)
	b.PeakInFlight = max(b.PeakInFlight, f.all)
	f.peak, f.peak1 = max(f.peak, f.all), max(f.peak1, f.first)
}

// flight is what the counter saw, for the truth.
func (f *flightCounter) flight() *Flight {
	out := &Flight{BucketNs: f.width, PeakAttemptsInFlight: f.peak, PeakFirstAttemptsInFlight: f.peak1, Buckets: []FlightBucket{}}
	if len(f.buckets) == 0 {
		return out
	}
	lo, hi := int64(0), int64(0)
	first := true
	for s := range f.buckets {
		if first || s < lo {
			lo = s
		}
		if first || s > hi {
			hi = s
		}
		first = false
	}
	for s := lo; s <= hi; s += f.width {
		b := FlightBucket{StartNs: s}
		if got := f.buckets[s]; got != nil {
			b = *got
		}
		b.OfferedLoad = float64(b.AttemptNs) / float64(f.width)
		b.OfferedLoadFirstAttempts = float64(b.FirstAttemptNs) / float64(f.width)
		out.Buckets = append(out.Buckets, b)
	}
	return out
}

// Flight is the simulation's count of client attempts in flight (an
// attempt is in flight from its start until the client is done with it),
// recorded when Config.FlightBucket is set.
type Flight struct {
	BucketNs int64 `json:"bucket_ns"`
	// PeakAttemptsInFlight is the most attempts in flight at once;
	// PeakFirstAttemptsInFlight counts first attempts alone.
	PeakAttemptsInFlight      int            `json:"peak_attempts_in_flight"`
	PeakFirstAttemptsInFlight int            `json:"peak_first_attempts_in_flight"`
	Buckets                   []FlightBucket `json:"buckets"`
}

// FlightBucket is one bucket of Flight, starting at a multiple of its
// width (Unix ns).
type FlightBucket struct {
	StartNs int64 `json:"start_ns"`
	// AttemptNs is the attempt-nanoseconds in flight in the bucket,
	// FirstAttemptNs those of first attempts.
	AttemptNs      int64 `json:"attempt_ns"`
	FirstAttemptNs int64 `json:"first_attempt_ns"`
	// OfferedLoad is λ·S, AttemptNs per nanosecond of the bucket;
	// OfferedLoadFirstAttempts the same without retries.
	OfferedLoad              float64 `json:"offered_load"`
	OfferedLoadFirstAttempts float64 `json:"offered_load_first_attempts"`
	// PeakInFlight is the most attempts in flight at once in the bucket.
	PeakInFlight int `json:"peak_attempts_in_flight"`
}
