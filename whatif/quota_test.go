package whatif

import (
	"context"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// TestPredictsRetryQuota: a client-side retry quota (the AWS SDKs'
// standard retryer's token bucket), replayed on a workload recorded
// without one, against gen's re-run with the quota and common random
// numbers: in the calm workload amplification and final failure within 5%
// (or 0.005) and p99 within 10%; in the storm, where the quota runs out,
// within 10% (or 0.005), with feedback, p99 within 10%.
func TestPredictsRetryQuota(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      func(func(*sim.Policy)) sim.Config
		tokens   int
		rel      float64
		feedback bool
	}{
		{"calm, quota 500", calm, 500, 0.05, false},
		{"calm, quota 40", calm, 40, 0.05, false},
		{"storm, quota 60", storm, 60, 0.10, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := DefaultQuota
			q.Tokens = float64(c.tokens)
			predictRerun(t, c.name, c.cfg, func(p *sim.Policy) { p.Quota = c.tokens }, Policy{Quota: &q}, c.rel, c.feedback)
		})
	}
}

func TestParseQuota(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Quota
		err  string
	}{
		{"500", DefaultQuota, ""},
		{"100,5,10,1", Quota{100, 5, 10, 1}, ""},
		{"100,2,4,0", Quota{100, 2, 4, 0}, ""},
		{"0", Quota{}, "TOKENS"},
		{"100,0,10,1", Quota{}, "COST"},
		{"100,5", Quota{}, "want TOKENS"},
		{"abc", Quota{}, "TOKENS"},
		{"NaN", Quota{}, "TOKENS"},
		{"100,5,10,-1", Quota{}, "GAIN"},
	} {
		q, err := ParseQuota(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseQuota(%q) = %v, %v; want an error naming %s", c.in, q, err, c.err)
		case c.err == "" && (err != nil || *q != c.want):
			t.Errorf("ParseQuota(%q) = %v, %v; want %v", c.in, q, err, c.want)
		}
	}
	if got := (Policy{Quota: &Quota{100, 5, 10, 1}}).String(); got != "--retry-quota 100,5,10,1" {
		t.Errorf("String() = %q", got)
	}
}

// TestPredictsNoProgress: stopping a call's retries once two attempts in
// a row failed the same way, replayed on a workload recorded without it,
// against gen's re-run with the same stop and common random numbers:
// calm within 5% (or 0.005), nested and storm within 10%, p99 within 10%.
func TestPredictsNoProgress(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      func(func(*sim.Policy)) sim.Config
		rel      float64
		feedback bool
	}{
		{"calm", calm, 0.05, false},
		{"nested", nested, 0.10, false},
		{"storm", storm, 0.10, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			predictRerun(t, c.name+", no progress", c.cfg, func(p *sim.Policy) { p.NoProgress = true }, Policy{NoProgress: true}, c.rel, c.feedback)
		})
	}
}

// TestFailedByAndPeak: the modeled failures are typed by why the policy
// stopped, and the count of each matches gen's re-run (its truth records
// why each request gave up): the quota's and no-progress stops within 10%
// (or 5 requests). A replay of the recorded policy types its failures as
// recorded and has the recorded peak of attempts in flight.
func TestFailedByAndPeak(t *testing.T) {
	for _, c := range []struct {
		name   string
		stop   string
		exh    string
		change func(*sim.Policy)
		policy Policy
	}{
		{"quota", StopRetryQuota, "quota", func(p *sim.Policy) { p.Quota = 60 }, Policy{Quota: &Quota{60, 5, 10, 1}}},
		{"no progress", StopNoProgress, "no_progress", func(p *sim.Policy) { p.NoProgress = true }, Policy{NoProgress: true}},
		{"retry lane", StopNoCapacity, "no_capacity", func(p *sim.Policy) { p.RetryLane = 3 }, Policy{RetryLane: 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			recorded, _ := workload.Rebuilt(t, storm(func(*sim.Policy) {}))
			_, truth := workload.Rebuilt(t, storm(c.change))
			want := 0
			for _, r := range truth.Requests {
				if r.Exhausted == c.exh {
					want++
				}
			}
			got := replayFeedback(t, recorded, c.policy).Overall.Modeled.FailedBy[c.stop]
			t.Logf("%s: %d requests stopped, re-run %d", c.name, got, want)
			if want == 0 || math.Abs(float64(got-want)) > max(5, 0.10*float64(want)) {
				t.Errorf("%s: %d requests stopped, re-run %d", c.name, got, want)
			}
		})
	}
	st, _ := workload.Rebuilt(t, storm(func(*sim.Policy) {}))
	res := replayOf(t, st, Policy{})
	rec, mod := res.Overall.Recorded, res.Overall.Modeled
	if !maps.Equal(rec.FailedBy, mod.FailedBy) || rec.PeakInFlight != mod.PeakInFlight || rec.PeakInFlight < 2 {
		t.Errorf("identity: recorded failed by %v, peak %d; modeled %v, peak %d", rec.FailedBy, rec.PeakInFlight, mod.FailedBy, mod.PeakInFlight)
	}
	t.Logf("recorded failed by %v, peak %d", rec.FailedBy, rec.PeakInFlight)
}

// TestUtilisationAgainstWorkers: with Options.Workers the recorded and
// modeled utilisation are the offered load over the workers, overall and
// per segment; without, there is none.
func TestUtilisationAgainstWorkers(t *testing.T) {
	st, _ := workload.Rebuilt(t, calm(func(*sim.Policy) {}))
	res, err := Replay(context.Background(), st, Policy{Inner: 1}, Options{Seed: 1, Workers: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range append([]Row{res.Overall}, res.Segments...) {
		for _, f := range []Figures{row.Recorded, row.Modeled} {
			if f.Utilisation == nil || math.Abs(*f.Utilisation-f.OfferedLoad/7) > 1e-12 {
				t.Fatalf("utilisation %v, offered load %.4f over 7 workers", f.Utilisation, f.OfferedLoad)
			}
		}
	}
	if res.Overall.Modeled.OfferedLoad >= res.Overall.Recorded.OfferedLoad || *res.Overall.Modeled.Utilisation <= 0 {
		t.Errorf("one attempt per call: offered load %.3f, recorded %.3f", res.Overall.Modeled.OfferedLoad, res.Overall.Recorded.OfferedLoad)
	}
	if replayOf(t, st, Policy{Inner: 1}).Overall.Modeled.Utilisation != nil {
		t.Error("utilisation without workers")
	}
}

// TestPredictsRetryLane: a lane of SDK retries in flight per client
// service, replayed on a workload recorded without one, against gen's
// re-run with the lane and common random numbers: calm within 5% (or
// 0.005), storm within 10% with feedback, p99 within 10%.
func TestPredictsRetryLane(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      func(func(*sim.Policy)) sim.Config
		lane     int
		rel      float64
		feedback bool
	}{
		{"calm, 2 retries", calm, 2, 0.05, false},
		{"storm, 3 retries", storm, 3, 0.10, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			predictRerun(t, c.name, c.cfg, func(p *sim.Policy) { p.RetryLane = c.lane }, Policy{RetryLane: c.lane}, c.rel, c.feedback)
		})
	}
}

// TestStopAsRecorded: a request the policy changed (here its waits) but
// that still ends where the recording ended keeps its recorded reason; one
// the policy cut is typed by the policy.
func TestStopAsRecorded(t *testing.T) {
	gaveUp := request("gave-up", "", 0, "server_error", "client_error")
	gaveUp.detail = "not_retryable"
	cut := request("cut", "", 1e9, "server_error", "server_error", "")
	reqs := []*recRequest{gaveUp, cut}
	res := replay(reqs, Policy{Inner: 2, InnerBackoff: &Backoff{Kind: "fixed", Base: 10 * time.Millisecond, Cap: 10 * time.Millisecond}}, Options{Seed: 1})
	got := res.Overall.Modeled.FailedBy
	if got["not_retryable"] != 1 || got[StopAttemptCap] != 1 || len(got) != 2 {
		t.Errorf("failed by %v, want not_retryable 1 (as recorded) and attempt_cap 1 (cut)", got)
	}
	if rec := res.Overall.Recorded.FailedBy; rec["not_retryable"] != 1 || len(rec) != 1 {
		t.Errorf("recorded failed by %v", rec)
	}
}

// predictRerun replays the workload cfg makes under policy (with feedback
// when asked) and holds it to gen's re-run of the same workload with
// change and common random numbers: amplification and final failure
// within rel (or 0.005), p99 within 10%.
func predictRerun(t *testing.T, name string, cfg func(func(*sim.Policy)) sim.Config, change func(*sim.Policy), policy Policy, rel float64, feedback bool) {
	t.Helper()
	recorded, _ := workload.Rebuilt(t, cfg(func(*sim.Policy) {}))
	rerun, _ := workload.Rebuilt(t, cfg(change))
	want := replayOf(t, rerun, Policy{}).Overall.Recorded
	pred := replayOf(t, recorded, policy).Overall.Modeled
	if feedback {
		pred = replayFeedback(t, recorded, policy).Overall.Modeled
	}
	without := replayOf(t, recorded, Policy{}).Overall.Modeled
	t.Logf("%s: as recorded: amplification %.4f, final failure %.4f", name, without.Amplification, without.FinalFailureRate)
	checkPrediction(t, name, pred, want, rel, 0.005, 0.10)
}
