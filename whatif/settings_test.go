package whatif

import (
	"github.com/retryscope/retryscope/model"
	"math"
	"testing"
	"time"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// request builds a recorded request of one loop from its attempts'
// outcomes ("" for a success, else a trigger), each 100 ms long with 50 ms
// between them.
func request(id, task string, startNs int64, outcomes ...string) *recRequest {
	r := &recRequest{id: id, task: task, startNs: startNs, seg: Segment{"svc", "op", "route"}}
	at := 0.0
	for i, o := range outcomes {
		a := recAttempt{tries: []int{i + 1}, startMs: at, endMs: at + 100, route: "route", ok: o == "", trigger: o, atNs: startNs + int64(at*1e6)}
		if i > 0 {
			a.gapMs, a.latestMs = 50, at-50
		}
		r.attempts = append(r.attempts, a)
		at += 150
	}
	r.latencyMs = at - 50
	r.endNs = startNs + int64(r.latencyMs*1e6)
	r.ok = outcomes[len(outcomes)-1] == ""
	return r
}

// TestPerTaskBudget: task a's three requests each need one retry, task b's
// one needs two. With two retries per task, a's third request (the last
// to fail) is not retried and fails; b's makes both.
func TestPerTaskBudget(t *testing.T) {
	s := int64(time.Second)
	reqs := []*recRequest{
		request("a1", "a", 1*s, "server_error", ""),
		request("b1", "b", 2*s, "timeout", "timeout", ""),
		request("a2", "a", 3*s, "rate_limited", ""),
		request("a3", "a", 4*s, "server_error", ""),
	}
	res := replay(reqs, Policy{PerTaskBudget: 2}, Options{Seed: 1})
	if m := res.Overall.Modeled; m.Attempts != 8 || m.FinalFailureRate != 0.25 {
		t.Errorf("modeled %d attempts, final failure %.2f; want 8 and 0.25", m.Attempts, m.FinalFailureRate)
	}
	if res := replay(reqs, Policy{PerTaskBudget: 3}, Options{Seed: 1}); res.Overall.Modeled.Attempts != 9 {
		t.Errorf("with 3 retries a task, %d attempts; want all 9", res.Overall.Modeled.Attempts)
	}
}

// TestDeadlineCutsAndAdmits: with a 260 ms deadline, a retry starting at
// 150 ms that takes the segment's median served attempt (100 ms) ends in
// time and is made; one at 300 ms is past it and is not. An attempt
// running at the deadline is cut there.
func TestDeadlineCutsAndAdmits(t *testing.T) {
	reqs := []*recRequest{
		request("ok-on-retry", "", 0, "server_error", ""),
		request("late", "", int64(time.Second), "server_error", "server_error", ""),
	}
	res := replay(reqs, Policy{Deadline: 260 * time.Millisecond}, Options{Seed: 1})
	if m := res.Overall.Modeled; m.Attempts != 4 || m.FinalFailureRate != 0.5 {
		t.Errorf("modeled %d attempts, final failure %.2f; want 4 and 0.5", m.Attempts, m.FinalFailureRate)
	}
	for _, s := range runPass(reqs, Policy{Deadline: 50 * time.Millisecond}, Options{Seed: 1}, newPools(reqs), nil) {
		if len(s.kept) != 1 || s.ok || s.latencyMs != 50 || s.kept[0].trigger != "timeout" {
			t.Errorf("50 ms deadline, request %s: %d attempts, ok %v, %v ms, trigger %q; want 1 timeout at 50 ms",
				s.req.id, len(s.kept), s.ok, s.latencyMs, s.kept[0].trigger)
		}
	}
}

// TestBackoffRewaits: a fixed 10 ms backoff replaces the recorded 50 ms
// waits, so a request of three attempts ends 80 ms earlier.
func TestBackoffRewaits(t *testing.T) {
	reqs := []*recRequest{request("r", "", 0, "server_error", "server_error", "")}
	s := runPass(reqs, Policy{InnerBackoff: &Backoff{"fixed", 10 * time.Millisecond, time.Second}}, Options{Seed: 1}, newPools(reqs), nil)[0]
	if len(s.kept) != 3 || !s.ok || s.latencyMs != 320 {
		t.Errorf("modeled %d attempts, ok %v, latency %v ms; want 3, true and 320", len(s.kept), s.ok, s.latencyMs)
	}
}

// explicitCalm is a calm workload of explicit-shape requests (the shape
// gen gives a deadline) with common random numbers.
func explicitCalm(change func(*sim.Config)) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes, cfg.CRN = 3000, []sim.Shape{sim.ShapeExplicit}, true
	cfg.Faults.ClientError, cfg.Policy.NaiveShare = 0.03, 0.3
	change(&cfg)
	return cfg
}

// TestPredictsBackoffAndRaisedCap: the replay predicts the re-run with
// another backoff (the waits the policy draws, the outcomes recorded) and
// with a raised cap (the attempts past it drawn from the segment's near
// in time).
func TestPredictsBackoffAndRaisedCap(t *testing.T) {
	recorded, _ := workload.Rebuilt(t, explicitCalm(func(*sim.Config) {}))
	for _, c := range []struct {
		name    string
		policy  Policy
		rerun   func(*sim.Config)
		failRel float64
	}{
		{"fixed backoff", Policy{InnerBackoff: &Backoff{"fixed", 200 * time.Millisecond, 8 * time.Second}},
			func(c *sim.Config) { c.Policy.Kind = sim.PolicyFixed }, 0.05},
		{"decorrelated backoff", Policy{InnerBackoff: &Backoff{"decorrelated", 200 * time.Millisecond, 8 * time.Second}},
			func(c *sim.Config) { c.Policy.Kind = sim.PolicyDecorrelated }, 0.05},
		// Past the recorded cap the draws come from requests that failed
		// twice already, a harder lot than the re-run's: 10%.
		{"cap 3→5", Policy{Inner: 5}, func(c *sim.Config) { c.Policy.MaxAttempts = 5 }, 0.10},
	} {
		t.Run(c.name, func(t *testing.T) {
			rerun, _ := workload.Rebuilt(t, explicitCalm(c.rerun))
			want := replayOf(t, rerun, Policy{}).Overall.Recorded
			checkPrediction(t, c.name, replayOf(t, recorded, c.policy).Overall.Modeled, want, c.failRel, 0.005, 0.10)
		})
	}
}

// TestPredictsDeadline: gen's deadline-aware clients (--deadline-admit)
// skip a retry that their latest served attempts say cannot finish in
// time; the replay with --deadline and feedback (the load the skipped
// retries no longer offer makes the attempts left faster) predicts them.
// gen's clients learn their routes from their first answers, so the
// requests of the first minute are left out of the comparison.
func TestPredictsDeadline(t *testing.T) {
	recorded, _ := workload.Rebuilt(t, explicitCalm(func(*sim.Config) {}))
	reqs, err := load(t.Context(), recorded, "", model.Window{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := reqs[0].startNs + int64(time.Minute)
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		st, _ := workload.Rebuilt(t, explicitCalm(func(c *sim.Config) { c.Deadline, c.Policy.DeadlineAdmit = d, true }))
		rerun, err := load(t.Context(), st, "", model.Window{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want []outcome
		for _, r := range rerun {
			if r.startNs >= from {
				want = append(want, recordedOutcome(r))
			}
		}
		pl := newPools(reqs)
		out := runPass(reqs, Policy{Deadline: d}, Options{Seed: 1}, pl, nil)
		fb := fitFeedback(reqs)
		for range feedbackPasses {
			fb.modeled = modeledLoads(out)
			out = runPass(reqs, Policy{Deadline: d}, Options{Seed: 1}, pl, fb)
		}
		var pred []outcome
		for _, s := range out {
			if s.req.startNs >= from {
				pred = append(pred, modeledOutcome(s, 0, false))
			}
		}
		checkPrediction(t, "deadline "+d.String(), figures(pred, 1), figures(want, 1), 0.10, 0.005, 0.10)
	}
}

// TestPerTaskBudgetByKey: gen's agent tasks are traces of several steps.
// One retry per task allows one per trace; naming the requested model as
// the task (--task-key) makes a handful of tasks, and so allows fewer.
func TestPerTaskBudgetByKey(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes = 600, []sim.Shape{sim.ShapeAgent}
	st, _ := workload.Rebuilt(t, cfg)
	retries := map[string]int{}
	for _, key := range []string{"", "gen_ai.request.model"} {
		reqs, err := load(t.Context(), st, key, model.Window{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tasks, recorded := map[string]bool{}, 0
		for _, r := range reqs {
			tasks[r.task] = true
			recorded += len(r.attempts) - 1
		}
		res, err := Replay(t.Context(), st, Policy{PerTaskBudget: 1}, Options{Seed: 1, TaskKey: key})
		if err != nil {
			t.Fatal(err)
		}
		m := res.Overall.Modeled
		retries[key] = m.Attempts - m.Requests
		if retries[key] > len(tasks) || retries[key] >= recorded {
			t.Errorf("task key %q: %d retries of %d recorded, with %d tasks allowed one each", key, retries[key], recorded, len(tasks))
		}
		t.Logf("task key %q: %d tasks of %d requests; %d retries recorded, %d under one a task", key, len(tasks), len(reqs), recorded, retries[key])
	}
	if retries["gen_ai.request.model"] >= retries[""] {
		t.Errorf("one retry per model allows %d retries, one per trace %d: the task key changed nothing", retries["gen_ai.request.model"], retries[""])
	}
}

// TestReplayWindow: a window replays the requests starting in it alone.
func TestReplayWindow(t *testing.T) {
	st, _ := workload.Rebuilt(t, explicitCalm(func(*sim.Config) {}))
	all, err := load(t.Context(), st, "", model.Window{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mid := all[len(all)/2].startNs
	res, err := Replay(t.Context(), st, Policy{}, Options{Seed: 1, Window: model.Window{Since: mid}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Overall.Recorded.Requests, len(all)-len(all)/2; got != want {
		t.Errorf("from the middle request on: %d requests replayed, want %d", got, want)
	}
}

// TestUnchangedBookkeeping: for every request the policy leaves alone, the
// end of its last kept attempt plus its recorded closing time is its
// recorded latency, so the shortcut that copies it hides no slip in the
// replay's times.
func TestUnchangedBookkeeping(t *testing.T) {
	st, _ := workload.Rebuilt(t, nested(func(*sim.Policy) {}))
	reqs, err := load(t.Context(), st, "", model.Window{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Policy{{}, {Inner: 3}, {Deadline: time.Hour}, {Budget: &Budget{Ratio: 1000, Window: time.Second, Floor: 1000}}} {
		n := 0
		for _, s := range runPass(reqs, p, Options{Seed: 1}, newPools(reqs), nil) {
			if s.changed {
				continue
			}
			n++
			end := 0.0
			for _, a := range s.kept {
				end = max(end, a.endMs)
			}
			final := s.req.attempts[len(s.req.attempts)-1]
			if got := end + s.req.latencyMs - final.endMs; math.Abs(got-s.req.latencyMs) > 1e-6 || len(s.kept) != len(s.req.attempts) {
				t.Errorf("%s, request %s: %d attempts ending at %.3f ms, latency %.3f; recorded %d, %.3f ms", p, s.req.id,
					len(s.kept), end, got, len(s.req.attempts), s.req.latencyMs)
			}
		}
		if n < len(reqs)*9/10 {
			t.Errorf("%s: only %d of %d requests unchanged", p, n, len(reqs))
		}
	}
}
