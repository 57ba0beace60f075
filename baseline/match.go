package baseline

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/retryscope/retryscope/internal/store"
)

// The matched baseline pairs each retried request with the k nearest
// requests that succeeded on their first and only attempt and share its
// operation, model, route, stream and region (cloud.region), by the distance
//
//	d = sqrt( (ln(1+in_r) - ln(1+in_c))² / s²
//	        + (ln(1+out_r) - ln(1+out_c))² / s²
//	        + ((start_r - start_c) / tau)² )
//
// with s = Options.TokenScale (ln 2: a doubling of tokens counts 1) and
// tau = Options.TimeScale. A token count missing on both sides adds 0, on
// one side 1; a failed request has no output, so only its prompt size and
// start are matched. Matches farther than Options.MaxDistance are not used:
// a request with none is left unmatched rather than forced onto a poor
// match. L0 is the mean latency of the matches, match_distance their mean
// distance. Modeled.

// matchRow is one request of baseline_match_input. Missing token counts
// are NaN.
type matchRow struct {
	id      string
	start   int64
	latency float64
	inLog   float64
	outLog  float64
}

// neighbour is a candidate match and its distance.
type neighbour struct {
	row      *matchRow
	distance float64
}

// matcher finds nearest neighbours with the options' distance.
type matcher struct {
	k           int
	maxDistance float64
	tokenScale  float64
	timeScale   float64 // ns
}

func tokenTerm(a, b, scale float64) float64 {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a) || math.IsNaN(b):
		return 1
	}
	d := (a - b) / scale
	return d * d
}

func (m *matcher) distance(r, c *matchRow) float64 {
	d2 := tokenTerm(r.inLog, c.inLog, m.tokenScale)
	if !math.IsNaN(r.outLog) {
		d2 += tokenTerm(r.outLog, c.outLog, m.tokenScale)
	}
	dt := float64(r.start-c.start) / m.timeScale
	return math.Sqrt(d2 + dt*dt)
}

// nearest returns up to k candidates within the maximum distance, nearest
// first (ties by request id). candidates are sorted by start. The scan
// walks outwards in time from r's start and stops on a side once the time
// apart alone exceeds the maximum distance or the k-th distance found.
func (m *matcher) nearest(r *matchRow, candidates []*matchRow) []neighbour {
	pos := sort.Search(len(candidates), func(i int) bool { return candidates[i].start >= r.start })
	left, right := pos-1, pos
	var best []neighbour
	timeApart := func(i int) float64 {
		return math.Abs(float64(r.start-candidates[i].start)) / m.timeScale
	}
	for left >= 0 || right < len(candidates) {
		i := right
		if right >= len(candidates) || (left >= 0 && timeApart(left) <= timeApart(right)) {
			i = left
		}
		bound := m.maxDistance
		if len(best) == m.k {
			bound = min(bound, best[m.k-1].distance)
		}
		if timeApart(i) > bound {
			break // the nearer side is already too far, so is the other
		}
		if i == left {
			left--
		} else {
			right++
		}
		d := m.distance(r, candidates[i])
		if d > m.maxDistance {
			continue
		}
		best = insertNeighbour(best, neighbour{candidates[i], d}, m.k)
	}
	return best
}

func insertNeighbour(best []neighbour, n neighbour, k int) []neighbour {
	at, _ := slices.BinarySearchFunc(best, n, func(a, b neighbour) int {
		return cmp.Or(cmp.Compare(a.distance, b.distance), cmp.Compare(a.row.id, b.row.id))
	})
	if at >= k {
		return best
	}
	best = slices.Insert(best, at, n)
	if len(best) > k {
		best = best[:k]
	}
	return best
}

// The columns of baseline_match_input that computeMatched reads, by name.
const (
	miRequestID = iota
	miGroup
	miStart
	miLatency
	miInLog
	miOutLog
	miRetried
	matchInputColumns
)

var matchInputCols = [matchInputColumns]store.Col{
	miRequestID: store.TextCol("request_id"),
	miGroup:     store.TextCol("match_group"),
	miStart:     store.IntCol("start_ns"),
	miLatency:   store.FloatCol("latency_ms"),
	miInLog:     store.FloatCol("in_log"),
	miOutLog:    store.FloatCol("out_log"),
	miRetried:   store.BoolCol("retried"),
}

// computeMatched reads baseline_match_input one group at a time and
// appends a matched row to baselines for every retried request. Only the
// retried requests' ids are copied out of DuckDB: a candidate is known by
// its latency and distance terms.
func computeMatched(ctx context.Context, st *store.Store, opt Options, method string) error {
	m := &matcher{k: opt.K, maxDistance: opt.MaxDistance, tokenScale: opt.TokenScale, timeScale: float64(opt.TimeScale)}
	var retried, candidates []*matchRow
	var results []matchResult
	flush := func() {
		for _, r := range retried {
			res := matchResult{id: r.id, latency: r.latency}
			// The means are taken now, so the matches (and the
			// candidates they point to) need not be kept.
			if best := m.nearest(r, candidates); len(best) > 0 {
				var sumMs, sumD float64
				for _, n := range best {
					sumMs += n.row.latency
					sumD += n.distance
				}
				k := float64(len(best))
				res.matches, res.meanMs, res.meanDistance = int32(len(best)), sumMs/k, sumD/k
			}
			results = append(results, res)
		}
		retried, candidates = retried[:0], candidates[:0]
	}
	group, first := "", true
	err := st.StreamChunks(ctx, store.QueryFile("baseline_match_input"), nil, matchInputCols[:], func(c *store.Chunk) error {
		for i := range c.Len() {
			row := c.Row(i)
			if first || !row.TextIs(miGroup, group) {
				flush()
				group, first = row.Text(miGroup), false
			}
			r := &matchRow{start: row.Int(miStart), latency: row.Float(miLatency),
				inLog: row.FloatOr(miInLog, math.NaN()), outLog: row.FloatOr(miOutLog, math.NaN())}
			if row.Bool(miRetried) {
				r.id = row.Text(miRequestID)
				retried = append(retried, r)
			} else {
				candidates = append(candidates, r)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	flush()
	return appendMatched(st, results, method)
}

// matchResult is a retried request and what its matches give: how many
// were found, their mean latency and their mean distance.
type matchResult struct {
	id                   string
	latency              float64
	matches              int32
	meanMs, meanDistance float64
}

// matchedColumns are the baselines columns appendMatched gives, in the
// order of its values.
var matchedColumns = []string{"request_id", "kind", "latency_ms", "l0_ms", "added_ms", "ratio",
	"provenance", "method", "cohort_size", "match_distance", "reason"}

func appendMatched(st *store.Store, results []matchResult, method string) error {
	app, err := st.NewAppender("", "baselines", matchedColumns)
	if err != nil {
		return fmt.Errorf("open appender: %w", err)
	}
	for _, res := range results {
		var l0, added, ratio, distance, reason any
		if res.matches == 0 {
			reason = "no first-attempt success within the maximum distance"
		} else {
			mean := res.meanMs
			l0, distance, added = mean, res.meanDistance, res.latency-mean
			if mean > 0 {
				ratio = res.latency / mean
			}
		}
		err := app.AppendRow(res.id, KindMatched, res.latency, l0, added, ratio,
			ProvenanceModeled, method, res.matches, distance, reason)
		if err != nil {
			app.Close()
			return err
		}
	}
	return app.Close()
}
