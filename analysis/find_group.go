package analysis

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/texttab"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/segment"
)

// SegmentFinding is one of the segments a finding was found in: the
// figures there and what the problem costs there.
type SegmentFinding struct {
	Segment  map[string]string `json:"segment"`
	Problem  string            `json:"problem"`
	Evidence []Evidence        `json:"evidence"`
	Cost     Cost              `json:"cost"`
}

// groupFindings makes the findings of one kind (and, for kinds whose
// advice differs from one finding to the next, one group: a lockstep
// wave, a ceiling) one finding over the segments they were found in,
// most costly segment first. One policy problem in ten segments is one
// thing to fix, and its cost is the sum of theirs. A finding of one
// segment lists that segment.
func groupFindings(fs []Finding) []Finding {
	type key struct{ kind, group string }
	var keys []key
	groups := map[key][]Finding{}
	for _, f := range fs {
		k := key{f.Kind, f.group}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], f)
	}
	out := make([]Finding, 0, len(keys))
	for _, k := range keys {
		members := groups[k]
		slices.SortStableFunc(members, func(a, b Finding) int {
			return cmp.Or(byCost(a.Cost, b.Cost), cmp.Compare(SegmentName(a.Segment), SegmentName(b.Segment)))
		})
		g := members[0]
		for _, f := range members {
			g.Segments = append(g.Segments, SegmentFinding{Segment: f.Segment, Problem: f.Problem, Evidence: f.Evidence, Cost: f.Cost})
		}
		if len(members) > 1 {
			g.Segment = commonSegment(members)
			g.Cost = Cost{}
			for _, f := range members {
				g.Cost.Attempts += f.Cost.Attempts
				g.Cost.TimeMs += f.Cost.TimeMs
				g.Cost.Tokens += f.Cost.Tokens
			}
			merge := mergers[g.Kind]
			if merge == nil {
				merge = mergeFirst
			}
			g.Problem, g.Evidence, g.Change = merge(members, whereText(g.Segment, len(members)))
			g.Evidence = append([]Evidence{counted("segments", float64(len(members)))}, g.Evidence...)
		}
		out = append(out, g)
	}
	return out
}

// byCost orders costs most costly first: time, then attempts, then tokens.
func byCost(a, b Cost) int {
	return cmp.Or(cmp.Compare(b.TimeMs, a.TimeMs), cmp.Compare(b.Attempts, a.Attempts), cmp.Compare(b.Tokens, a.Tokens))
}

// commonSegment is the dimension values every one of fs shares.
func commonSegment(fs []Finding) map[string]string {
	out := maps.Clone(fs[0].Segment)
	for _, f := range fs[1:] {
		for k, v := range out {
			if f.Segment[k] != v {
				delete(out, k)
			}
		}
	}
	if out == nil {
		out = map[string]string{}
	}
	return out
}

// whereText names n segments that share common: "service=a (3
// segments)", or "5 segments" when they share nothing.
func whereText(common map[string]string, n int) string {
	if len(common) == 0 {
		return fmt.Sprintf("%d segments", n)
	}
	return fmt.Sprintf("%s (%d segments)", SegmentName(common), n)
}

// A merger words a finding of several segments from theirs (most
// costly first), where naming them: its problem, evidence and change.
type merger func(fs []Finding, where string) (problem string, ev []Evidence, change string)

// mergers are the kinds' mergers; a kind without one says its most
// costly segment's problem and how many more segments have it.
var mergers = map[string]merger{
	"retry_on_client_error": mergeClientError,
	"ignores_retry_after":   mergeRetryAfter,
	"no_jitter":             mergeNoJitter,
	"retry_lockstep":        mergeLockstep,
	"deadline_exhausted":    mergeDeadline,
	"abandoned_streams":     mergeAbandoned,
	"nested_retry_loops":    mergeNested,
	"cap_attempts":          mergeCap,
	"prefer_fallback":       mergeFallback,
}

// sameChange is the most costly segment's change, said of where.
func sameChange(fs []Finding, where string) string {
	return strings.Replace(fs[0].Change, SegmentName(fs[0].Segment), where, 1)
}

func mergeFirst(fs []Finding, where string) (string, []Evidence, string) {
	return fmt.Sprintf("%s (the most costly of %d segments)", fs[0].Problem, len(fs)), fs[0].Evidence, sameChange(fs, where)
}

// summed adds up the evidence keep picks, by name, in the order the
// names first appear; the values are whole-nanosecond exact for ms.
func summed(fs []Finding, keep func(Evidence) bool) []Evidence {
	var out []Evidence
	at := map[string]int{}
	for _, f := range fs {
		for _, e := range f.Evidence {
			if !keep(e) {
				continue
			}
			i, ok := at[e.Name]
			if !ok {
				i = len(out)
				at[e.Name] = i
				out = append(out, Evidence{Name: e.Name, Unit: e.Unit})
			}
			out[i].Value += e.Value
		}
	}
	return out
}

// named picks evidence by name.
func named(names ...string) func(Evidence) bool {
	return func(e Evidence) bool { return slices.Contains(names, e.Name) }
}

// valueOf is the named evidence of f, NaN without it.
func valueOf(f Finding, name string) float64 {
	for _, e := range f.Evidence {
		if e.Name == name {
			return e.Value
		}
	}
	return math.NaN()
}

// total is the sum of the named evidence over fs.
func total(fs []Finding, name string) float64 {
	var v float64
	for _, f := range fs {
		if x := valueOf(f, name); !math.IsNaN(x) {
			v += x
		}
	}
	return v
}

func mergeClientError(fs []Finding, where string) (string, []Evidence, string) {
	n := total(fs, "retries after a client error")
	ev := summed(fs, func(e Evidence) bool {
		return strings.HasPrefix(e.Name, "retries after ") && !strings.Contains(e.Name, "left out")
	})
	return fmt.Sprintf("%.0f retries in %d segments followed a client error (4xx such as 400, 404 or 422, or a parse or schema error) that a retry does not fix",
		n, len(fs)), ev, sameChange(fs, where)
}

func mergeRetryAfter(fs []Finding, where string) (string, []Evidence, string) {
	n := total(fs, "retries before Retry-After")
	ev := summed(fs, named("retries before Retry-After", "time early in all"))
	ev = append(ev, inMs("time early per retry", total(fs, "time early in all")/n))
	return fmt.Sprintf("%.0f retries in %d segments came back sooner than the Retry-After the server had sent", n, len(fs)),
		ev, sameChange(fs, where)
}

func mergeNoJitter(fs []Finding, where string) (string, []Evidence, string) {
	n := total(fs, "retries timed by the client")
	var values []float64
	for _, f := range fs {
		for _, e := range f.Evidence {
			if strings.HasPrefix(e.Name, "gap value ") && !slices.ContainsFunc(values, func(v float64) bool {
				return math.Abs(v-e.Value) <= 0.02*v
			}) {
				values = append(values, e.Value)
			}
		}
	}
	slices.Sort(values)
	var texts []string
	for _, v := range values {
		texts = append(texts, texttab.Value(texttab.Ms, v).String())
	}
	return fmt.Sprintf("%.0f retries in %d segments waited one of a few exact values (%s): the backoff has no jitter",
		n, len(fs), strings.Join(texts, ", ")), summed(fs, named("retries timed by the client")), sameChange(fs, where)
}

func mergeLockstep(fs []Finding, where string) (string, []Evidence, string) {
	n := total(fs, "retries in the wave")
	from, to := fs[0].wave[0], fs[0].wave[1]
	for _, f := range fs {
		from, to = min(from, f.wave[0]), max(to, f.wave[1])
	}
	spread := float64(to-from) / 1e6
	ev := []Evidence{counted("retries in the wave", n), inMs("wave start (Unix ms)", float64(from)/1e6), inMs("spread", spread)}
	return fmt.Sprintf("%.0f retries in %d segments started within %s of each other at %s", n, len(fs), texttab.Value(texttab.Ms, spread),
		time.Unix(0, from).UTC().Format(time.RFC3339Nano)), ev, sameChange(fs, where)
}

func mergeDeadline(fs []Finding, where string) (string, []Evidence, string) {
	ev := summed(fs, named("requests ended by the deadline", "their attempts", "their latency"))
	return fmt.Sprintf("%.0f requests in %d segments ran out of their deadline and failed, after %.0f attempts in all",
		total(fs, "requests ended by the deadline"), len(fs), total(fs, "their attempts")), ev, sameChange(fs, where)
}

func mergeAbandoned(fs []Finding, where string) (string, []Evidence, string) {
	ev := summed(fs, named("abandoned streams", "output tokens read and thrown away", "client time in the abandoned streams"))
	return fmt.Sprintf("%.0f streams in %d segments were cancelled part-way by the client, which threw away the %.0f output tokens it had read",
		total(fs, "abandoned streams"), len(fs), total(fs, "output tokens read and thrown away")), ev, sameChange(fs, where)
}

func mergeNested(fs []Finding, where string) (string, []Evidence, string) {
	worst := 0.0
	for _, f := range fs {
		worst = max(worst, valueOf(f, "worst case attempts per call"))
	}
	ev := append(summed(fs, named("requests with nested loops")), counted("worst case attempts per call", worst))
	return fmt.Sprintf("app loop × SDK loop = up to %.0f attempts per call, in %d segments", worst, len(fs)), ev, sameChange(fs, where)
}

// mergeCap words one ceiling (the group) found in several segments.
func mergeCap(fs []Finding, where string) (string, []Evidence, string) {
	n, _ := capOf(fs[0])
	rescued, added := 0.0, math.Inf(1)
	for _, f := range fs {
		rescued = max(rescued, f.Evidence[1].Value)
		added = min(added, f.Evidence[2].Value)
	}
	ev := []Evidence{counted(fmt.Sprintf("requests that made attempt %d", n+1), total(fs, fmt.Sprintf("requests that made attempt %d", n+1))),
		counted(fmt.Sprintf("most rescued per 1,000 by attempt %d", n+1), rescued), inMs(fmt.Sprintf("least p99 added by attempt %d", n+1), added)}
	return fmt.Sprintf("attempt %d rescues at most %.0f per 1,000 requests and adds at least %s to their p99, in %d segments",
			n+1, rescued, texttab.FormatMs(added), len(fs)), ev,
		fmt.Sprintf("cap attempts at %d on %s because attempt %d rescues at most %.0f per 1,000 and adds at least %s of p99",
			n, where, n+1, rescued, texttab.FormatMs(added))
}

// capOf is the ceiling a cap_attempts finding advises.
func capOf(f Finding) (int, bool) {
	var n int
	_, err := fmt.Sscanf(f.Change, "cap attempts at %d ", &n)
	return n, err == nil
}

func mergeFallback(fs []Finding, where string) (string, []Evidence, string) {
	rate := func(retries, success string) float64 {
		var n, ok float64
		for _, f := range fs {
			n += valueOf(f, retries)
			ok += valueOf(f, retries) * valueOf(f, success)
		}
		return ok / n
	}
	alt := rate("alternate-route retries", "alternate-route retry success")
	same := rate("same-route retries", "same-route retry success")
	ev := []Evidence{counted("alternate-route retries", total(fs, "alternate-route retries")), shareOf("alternate-route retry success", alt),
		counted("same-route retries", total(fs, "same-route retries")), shareOf("same-route retry success", same)}
	return fmt.Sprintf("in %d segments, retries on another route succeeded %s of the time, retries on the same route %s",
			len(fs), texttab.Format(texttab.Share, alt), texttab.Format(texttab.Share, same)), ev,
		fmt.Sprintf("fail over sooner on %s: the fallback rescued %s vs %s on the same route", where, texttab.Format(texttab.Share, alt), texttab.Format(texttab.Share, same))
}

// lockstepWaves finds retry_lockstep in every segment and makes the waves
// that overlap in time (within PeakWindowNs of each other) one group:
// one outage failing a route's requests together is one wave, in however
// many segments they were.
func lockstepWaves(ctx context.Context, st *store.Store, win model.Window, all *segment.Measures, segs []segment.Segment) ([]Finding, error) {
	fs, err := perSegment(retryLockstep)(ctx, st, win, all, segs)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(fs, func(a, b Finding) int { return cmp.Compare(a.wave[0], b.wave[0]) })
	wave, end := 0, int64(math.MinInt64)
	for i := range fs {
		if fs[i].wave[0] > end+segment.PeakWindowNs {
			wave++
		}
		end = max(end, fs[i].wave[1])
		fs[i].group = fmt.Sprint(wave)
	}
	return fs, nil
}
