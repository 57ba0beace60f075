package whatif

import (
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
)

// quotaStorm is a workload of one client service with the AWS SDKs'
// standard retry quota (500 tokens, 5 a retry, 10 after a timeout, 1 back
// for a first attempt's success) whose server fails so many attempts that
// the quota runs out: after that, most failures are not retried.
func quotaStorm(change func(*sim.Policy)) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Requests, cfg.Shapes, cfg.Services, cfg.CRN = 1200, []sim.Shape{sim.ShapeExplicit}, 1, true
	cfg.Faults = sim.FaultMix{RateLimited: 0.15, ServerError: 0.15, Reset: 0.04, Timeout: 0.03, ClientError: 0.01}
	cfg.Policy.Quota, cfg.Policy.NaiveShare = 500, 0
	change(&cfg.Policy)
	return cfg
}

// TestRecordedQuotaPredictsRaisedCap: gen's clients with the AWS
// standard quota, whose traces show it running out (the SDK's "retry
// quota exceeded"), replayed with the cap raised from 3 to 5 attempts and
// no --retry-quota, against gen's re-run with the cap raised and the same
// quota and common random numbers: the replay infers the quota and
// predicts amplification and final failure within 10% (or 0.005) and
// p99 within 10%; replayed without it (--retry-quota off) it misses.
func TestRecordedQuotaPredictsRaisedCap(t *testing.T) {
	recorded, truth := workload.Rebuilt(t, quotaStorm(func(*sim.Policy) {}))
	stops := 0
	for _, r := range truth.Requests {
		if r.Exhausted == "quota" {
			stops++
		}
	}
	rerun, _ := workload.Rebuilt(t, quotaStorm(func(p *sim.Policy) { p.MaxAttempts = 5 }))
	want := replayOf(t, rerun, Policy{}).Overall.Recorded

	res := replayOf(t, recorded, Policy{Inner: 5})
	if len(res.RecordedQuotas) != 1 {
		t.Fatalf("recorded quotas %+v, want one, svc-01's", res.RecordedQuotas)
	}
	q := res.RecordedQuotas[0]
	t.Logf("inferred %+v; the truth's quota stops %d", q, stops)
	if q.Service != "svc-01" || q.Quota != DefaultQuota || !q.Standard || q.Stopped != stops {
		t.Errorf("inferred %+v, want svc-01 with the AWS standard quota, %d requests stopped", q, stops)
	}
	checkPrediction(t, "cap 3→5, recorded quota", res.Overall.Modeled, want, 0.10, 0.005, 0.10)

	// A quota of 200 tokens, read from the traces as such.
	small, _ := workload.Rebuilt(t, quotaStorm(func(p *sim.Policy) { p.Quota = 200 }))
	smallRerun, _ := workload.Rebuilt(t, quotaStorm(func(p *sim.Policy) { p.Quota, p.MaxAttempts = 200, 5 }))
	checkPrediction(t, "quota 200, cap 3→5, recorded quota", replayOf(t, small, Policy{Inner: 5}).Overall.Modeled,
		replayOf(t, smallRerun, Policy{}).Overall.Recorded, 0.10, 0.005, 0.10)

	off, err := Replay(context.Background(), recorded, Policy{Inner: 5}, Options{Seed: 1, NoRecordedQuota: true})
	if err != nil {
		t.Fatal(err)
	}
	m := off.Overall.Modeled
	t.Logf("cap 3→5, no recorded quota: amplification %.4f, final failure %.4f, p99 %.0f ms; re-run %.4f, %.4f, %.0f ms",
		m.Amplification, m.FinalFailureRate, deref(m.P99), want.Amplification, want.FinalFailureRate, deref(want.P99))
	if len(off.RecordedQuotas) != 0 {
		t.Errorf("recorded quotas %+v with NoRecordedQuota", off.RecordedQuotas)
	}
	if near(m.Amplification, want.Amplification, 0.10, 0.005) && near(m.FinalFailureRate, want.FinalFailureRate, 0.10, 0.005) &&
		near(deref(m.P99), deref(want.P99), 0.10, 0) {
		t.Error("without the recorded quota the prediction is as close: the test cannot tell the quota's effect")
	}
}

// TestRecordedQuotaIdentity: with nothing changed, the replay with the
// inferred quota is the recording: the modeled quota stops the requests
// the recorded one stopped, where it stopped them, and they keep their
// recorded reason.
func TestRecordedQuotaIdentity(t *testing.T) {
	recorded, _ := workload.Rebuilt(t, quotaStorm(func(*sim.Policy) {}))
	res := replayOf(t, recorded, Policy{})
	rec, mod := res.Overall.Recorded, res.Overall.Modeled
	if len(res.RecordedQuotas) != 1 || mod.Attempts != rec.Attempts || mod.FinalFailureRate != rec.FinalFailureRate ||
		deref(mod.P99) != deref(rec.P99) || !maps.Equal(mod.FailedBy, rec.FailedBy) {
		t.Errorf("nothing changed: modeled %+v; recorded %+v", mod, rec)
	}
}

// TestRecordedQuotaFixture: the real AWS SDK for Go v2 fixture, whose
// DynamoDB client has the standard retryer's quota (500 tokens, 5 a
// retry, 1 back for a first attempt's success), infers it for its
// service; traces whose quota never ran out infer none.
func TestRecordedQuotaFixture(t *testing.T) {
	reqs := tracesRequests(t, filepath.Join("..", "testdata", "fixtures", "aws-sdk-go-v2-dynamodb-throttling", "traces.jsonl"))
	qs := inferQuotas(reqs)
	if len(qs) != 1 {
		t.Fatalf("inferred %+v, want ledger-writer's quota", qs)
	}
	q := qs[0]
	t.Logf("inferred %+v", q)
	if q.Service != "ledger-writer" || q.Quota != DefaultQuota || !q.Standard || q.Estimated == 0 {
		t.Errorf("inferred %+v, want ledger-writer with 500 tokens, 5 a retry, 10 after a timeout, 1 back, estimated near 500", q)
	}
	// Its simulation settled each call's tokens when the call started, not
	// in time order; read against the recording, the quota still stops
	// only the requests it stopped when nothing changes.
	id := replay(reqs, Policy{}, Options{Seed: 1})
	rec, mod := id.Overall.Recorded, id.Overall.Modeled
	if len(id.RecordedQuotas) != 1 || mod.Attempts != rec.Attempts || mod.FinalFailureRate != rec.FinalFailureRate || !maps.Equal(mod.FailedBy, rec.FailedBy) {
		t.Errorf("nothing changed: modeled %+v; recorded %+v", mod, rec)
	}
	calm, _ := workload.Rebuilt(t, calm(func(*sim.Policy) {}))
	if res := replayOf(t, calm, Policy{Inner: 5}); len(res.RecordedQuotas) != 0 {
		t.Errorf("calm workload without a quota: inferred %+v", res.RecordedQuotas)
	}
}

// TestRecordedQuotaEstimate: gen's clients with a quota of 200 tokens (the
// standard's costs) are read as having 200, not the standard's 500, and
// the text output names the quota the replay used.
func TestRecordedQuotaEstimate(t *testing.T) {
	st, _ := workload.Rebuilt(t, quotaStorm(func(p *sim.Policy) { p.Quota = 200 }))
	res := replayOf(t, st, Policy{Inner: 5})
	if len(res.RecordedQuotas) != 1 {
		t.Fatalf("recorded quotas %+v, want svc-01's", res.RecordedQuotas)
	}
	q := res.RecordedQuotas[0]
	t.Logf("inferred %+v", q)
	if want := (Quota{200, 5, 10, 1}); q.Quota != want || q.Standard || q.Estimated != 200 {
		t.Errorf("inferred %+v, want %v read from the traces", q, want)
	}
	var b strings.Builder
	if err := WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	if line := "Recorded retry quota of svc-01: --retry-quota 200,5,10,1 (inferred from"; !strings.Contains(b.String(), line) {
		t.Errorf("the text says nothing of the recorded quota (%q):\n%s", line, b.String())
	}
}
