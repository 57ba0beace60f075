package whatif

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// try is one app try of a nested request: its target and its SDK
// attempts' outcomes ("" for a success, else a trigger).
type try struct {
	target   string
	outcomes []string
}

// nestedRequest builds a recorded nested request (app try, SDK attempt)
// from its app tries; each attempt takes 100 ms, SDK retries wait 50 ms,
// app retries appWaitMs and the try after the last app try lastWaitMs.
// Every attempt goes to one route. markFallback marks its fallback.
func nestedRequest(id string, startNs int64, appWaitMs, lastWaitMs float64, tries ...try) *recRequest {
	r := &recRequest{id: id, startNs: startNs, seg: Segment{"svc", "op", "route"}}
	at := 0.0
	for i, t := range tries {
		for j, o := range t.outcomes {
			a := recAttempt{tries: []int{i + 1, j + 1}, route: "route", target: t.target, ok: o == "", trigger: o}
			if len(r.attempts) > 0 {
				a.gapMs = 50
				if j == 0 {
					a.gapMs = appWaitMs
					if i == len(tries)-1 {
						a.gapMs = lastWaitMs
					}
				}
				a.latestMs = at
				at += a.gapMs
			}
			a.startMs, a.endMs, a.atNs = at, at+100, startNs+int64(at*1e6)
			at += 100
			r.attempts = append(r.attempts, a)
		}
	}
	r.latencyMs = at
	r.endNs = startNs + int64(at*1e6)
	r.ok = r.attempts[len(r.attempts)-1].ok
	markFallback(r)
	return r
}

var (
	failed3 = []string{"server_error", "server_error", "server_error"}
	primary = "127.0.0.1:34633 gpt-4o"
	second  = "127.0.0.1:35921 gpt-4o"
)

// fallbackOf lists the tries of r's attempts marked fallback.
func fallbackOf(r *recRequest) [][]int {
	var out [][]int
	for _, a := range r.attempts {
		if a.fallback {
			out = append(out, a.tries)
		}
	}
	return out
}

// TestMarkFallback: a nested request's last app try is its fallback when
// its target differs from the first app try's; not when it has the same
// target, nor in a one-loop request. A segment whose fallback tries wait
// the app loop's backoff has them as the loop's own last try: unmarked.
func TestMarkFallback(t *testing.T) {
	fb := nestedRequest("fb", 0, 300, 1, try{primary, failed3}, try{primary, failed3}, try{primary, failed3}, try{second, []string{"server_error", ""}})
	if got := fallbackOf(fb); !slices.EqualFunc(got, [][]int{{4, 1}, {4, 2}}, slices.Equal) || fb.fallbackTry() != 4 {
		t.Errorf("fallback attempts %v, try %d; want [4 1] [4 2], 4", got, fb.fallbackTry())
	}
	same := nestedRequest("same", 0, 300, 300, try{primary, failed3}, try{primary, []string{""}})
	if got := fallbackOf(same); len(got) != 0 || same.fallbackTry() != 0 {
		t.Errorf("same target: fallback attempts %v", got)
	}
	one := request("one", "", 0, "server_error", "")
	one.attempts[1].target = second
	if markFallback(one); one.fallbackTry() != 0 {
		t.Error("a one-loop request has a fallback")
	}
	unknown := nestedRequest("unknown", 0, 300, 1, try{"", failed3}, try{second, []string{""}})
	if unknown.fallbackTry() != 0 {
		t.Error("a request whose first target is unknown has a fallback")
	}

	// After the loop (1 ms against 300 ms): the fallback stands.
	reqs := []*recRequest{fb, nestedRequest("retry", 0, 300, 300, try{primary, failed3}, try{primary, []string{""}})}
	if keepLoopFallbacks(reqs); fb.fallbackTry() != 4 {
		t.Error("a fallback right after the loop was unmarked")
	}
	// In the loop (its backoff before it, as gen's): unmarked.
	inLoop := nestedRequest("in-loop", 0, 300, 300, try{primary, failed3}, try{second, []string{""}})
	if keepLoopFallbacks([]*recRequest{inLoop, reqs[1]}); inLoop.fallbackTry() != 0 {
		t.Error("a fallback after the app loop's backoff stays marked")
	}
}

// TestParseMaxAttemptsFallback: fallback=0 removes the fallback try,
// fallback=1 keeps it; other values, and ParseMaxAttempts, refuse it.
func TestParseMaxAttemptsFallback(t *testing.T) {
	for _, c := range []struct {
		in         string
		inner, app int
		drop, err  bool
	}{
		{"app=1", 0, 1, false, false},
		{"app=1,fallback=0", 0, 1, true, false},
		{"fallback=0,sdk=2", 2, 0, true, false},
		{"app=2,fallback=1", 0, 2, false, false},
		{"fallback=2", 0, 0, false, true},
		{"fallback=", 0, 0, false, true},
		{"web=1", 0, 0, false, true},
	} {
		inner, app, drop, err := ParseMaxAttemptsFallback(c.in)
		if (err != nil) != c.err || inner != c.inner || app != c.app || drop != c.drop {
			t.Errorf("ParseMaxAttemptsFallback(%q) = %d, %d, %v, %v; want %d, %d, %v, error %v", c.in, inner, app, drop, err, c.inner, c.app, c.drop, c.err)
		}
	}
	if _, _, _, err := ParseMaxAttemptsFallback("fallback=2"); err == nil || !strings.Contains(err.Error(), "fallback takes 0") {
		t.Errorf("fallback=2: %v", err)
	}
	if _, _, err := ParseMaxAttempts("app=1,fallback=0"); err == nil {
		t.Error("ParseMaxAttempts accepted fallback=0")
	}
	for p, want := range map[*Policy]string{
		{App: 1, NoFallback: true}:           "--max-attempts app=1,fallback=0",
		{NoFallback: true}:                   "--max-attempts fallback=0",
		{Inner: 2, App: 1, NoFallback: true}: "--max-attempts app=1,fallback=0,sdk=2",
		{Inner: 2}:                           "--max-attempts 2",
		{Inner: 2, App: 1}:                   "--max-attempts app=1,sdk=2",
	} {
		if got := p.String(); got != want {
			t.Errorf("%+v reads %q, want %q", *p, got, want)
		}
	}
}

// fallbackSegment: "own" fails its three primary tries and succeeds on
// its fallback try (app try 4); "none" succeeds on its second primary
// try.
func fallbackSegment() []*recRequest {
	s := int64(time.Second)
	reqs := []*recRequest{
		nestedRequest("own", 1*s, 300, 1, try{primary, failed3}, try{primary, failed3}, try{primary, failed3}, try{second, []string{""}}),
		nestedRequest("none", 2*s, 300, 300, try{primary, failed3}, try{primary, []string{""}}),
	}
	keepLoopFallbacks(reqs)
	return reqs
}

func triesOf(s *replayed) [][]int {
	var out [][]int
	for _, a := range s.kept {
		out = append(out, a.tries)
	}
	return out
}

// TestReplayFallback: with one primary try, "own" makes its own fallback
// try right after it, and "none", whose primary loop the policy ends
// failed, makes one drawn from the segment's (own's, 1 ms after its last
// attempt): both succeed. With fallback=0 neither makes it, and both
// fail. With one SDK attempt per call, own's fallback takes its own
// outcome, not the moment of a primary attempt the policy cut on the same
// route.
func TestReplayFallback(t *testing.T) {
	reqs := fallbackSegment()
	pl := newPools(reqs)
	if got := pl.recordedCaps(reqs[0].seg, 2); !slices.Equal(got, []int{3, 3}) || pl.fallbackTry(reqs[0].seg) != 4 {
		t.Errorf("recorded caps %v, fallback try %d; want [3 3] and 4", got, pl.fallbackTry(reqs[0].seg))
	}
	want := [][]int{{1, 1}, {1, 2}, {1, 3}, {4, 1}}
	for _, s := range runPass(reqs, Policy{App: 1}, Options{Seed: 1}, pl, nil) {
		last := s.kept[len(s.kept)-1]
		if got := triesOf(s); !slices.EqualFunc(got, want, slices.Equal) || !s.ok || !last.fallback {
			t.Errorf("app=1, %s: tries %v, ok %v, fallback %v; want %v, ok, fallback", s.req.id, got, s.ok, last.fallback, want)
		}
		if prev := s.kept[len(s.kept)-2]; last.startMs != prev.endMs+1 {
			t.Errorf("app=1, %s: the fallback starts at %v ms, its try before ends at %v; want 1 ms after", s.req.id, last.startMs, prev.endMs)
		}
	}
	if m := replay(reqs, Policy{App: 1}, Options{Seed: 1}).Overall.Modeled; m.Attempts != 8 || m.FinalFailureRate != 0 {
		t.Errorf("app=1: %d attempts, final failure %.2f; want 8 and 0", m.Attempts, m.FinalFailureRate)
	}
	for _, s := range runPass(reqs, Policy{App: 1, NoFallback: true}, Options{Seed: 1}, pl, nil) {
		if got := triesOf(s); len(got) != 3 || s.ok {
			t.Errorf("app=1,fallback=0, %s: tries %v, ok %v; want the 3 of try 1, failed", s.req.id, got, s.ok)
		}
	}
	if m := replay(reqs, Policy{NoFallback: true}, Options{Seed: 1}).Overall.Modeled; m.FinalFailureRate != 0.5 || m.Attempts != 13 {
		t.Errorf("fallback=0: %d attempts, final failure %.2f; want 13 and 0.5", m.Attempts, m.FinalFailureRate)
	}
	if res := replay(reqs, Policy{}, Options{Seed: 1}); res.Overall.Modeled.Attempts != res.Overall.Recorded.Attempts ||
		res.Overall.Modeled.FinalFailureRate != res.Overall.Recorded.FinalFailureRate {
		t.Errorf("the recorded policy changes the figures: %+v vs %+v", res.Overall.Modeled, res.Overall.Recorded)
	}

	own := runPass(reqs, Policy{Inner: 1}, Options{Seed: 1}, pl, nil)[0]
	last := own.kept[len(own.kept)-1]
	if got := triesOf(own); !slices.EqualFunc(got, [][]int{{1, 1}, {2, 1}, {3, 1}, {4, 1}}, slices.Equal) || !own.ok || !last.fallback ||
		last.rec != len(reqs[0].attempts)-1 {
		t.Errorf("sdk=1: tries %v, ok %v, the fallback recorded attempt %d; want 4 tries of 1, ok, its own (%d)", got, own.ok, last.rec, len(reqs[0].attempts)-1)
	}
}

// TestFallbackFlag: --max-attempts and a policy file read fallback=0 into
// the policy; a bad value is an error naming the flag, or the file and
// line.
