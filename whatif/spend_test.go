package whatif

import (
	"context"
	"testing"

	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit/workload"
	"github.com/retryscope/retryscope/model"
)

// spendPrices price gen's models, the fallback's dearer than the primary's.
var spendPrices = model.Prices{
	"gpt-4o-mini":      {InputPerMTok: 0.15, OutputPerMTok: 0.6},
	"gpt-4o":           {InputPerMTok: 2.5, OutputPerMTok: 10},
	"claude-3-5-haiku": {InputPerMTok: 0.8, OutputPerMTok: 4},
	"claude-sonnet-4":  {InputPerMTok: 3, OutputPerMTok: 15},
}

// TestSpend: the replay prices the attempts' tokens by model. Replaying
// the recorded policy gives the recorded spend exactly; cutting the app's
// cap of nested requests (whose last app try goes to a fallback model),
// and the SDK's with it, predicts the spend of a re-run with common random
// numbers within 10%, as it predicts the tokens; without prices there is
// no spend.
func TestSpend(t *testing.T) {
	ctx := context.Background()
	recorded, _ := workload.Rebuilt(t, nested(func(*sim.Policy) {}))
	replay := func(p Policy, prices model.Prices) *Result {
		t.Helper()
		res, err := Replay(ctx, recorded, p, Options{Seed: 1, Prices: prices})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	id := replay(Policy{}, spendPrices)
	for _, row := range append([]Row{id.Overall}, id.Segments...) {
		rec, mod := row.Recorded.SpendUSD, row.Modeled.SpendUSD
		if rec == nil || mod == nil || *rec <= 0 || !near(*mod, *rec, 1e-9, 0) {
			t.Errorf("identity, segment %v: modeled spend %v, recorded %v", row.Segment, deref(mod), deref(rec))
		}
	}
	if f := replay(Policy{}, nil).Overall; f.Recorded.SpendUSD != nil || f.Modeled.SpendUSD != nil {
		t.Errorf("spend without prices: %v, %v", deref(f.Recorded.SpendUSD), deref(f.Modeled.SpendUSD))
	}
	for _, c := range []struct {
		name   string
		policy Policy
		rerun  func(*sim.Policy)
	}{
		{"app 3→1", Policy{App: 1}, func(p *sim.Policy) { p.AppTries = 1 }},
		{"app 3→1, sdk 3→1", Policy{Inner: 1, App: 1}, func(p *sim.Policy) { p.MaxAttempts, p.AppTries = 1, 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			rerunDB, _ := workload.Rebuilt(t, nested(c.rerun))
			res, err := Replay(ctx, rerunDB, Policy{}, Options{Seed: 1, Prices: spendPrices})
			if err != nil {
				t.Fatal(err)
			}
			want := res.Overall.Recorded
			pred := replay(c.policy, spendPrices)
			got, base := pred.Overall.Modeled, pred.Overall.Recorded
			t.Logf("%s: spend $%.4f predicted, $%.4f re-run, $%.4f recorded; tokens %d, %d, %d", c.name,
				deref(got.SpendUSD), deref(want.SpendUSD), deref(base.SpendUSD), got.Tokens, want.Tokens, base.Tokens)
			if got.SpendUSD == nil || want.SpendUSD == nil || !near(*got.SpendUSD, *want.SpendUSD, 0.10, 0) {
				t.Errorf("%s: predicted spend %v, the re-run's %v", c.name, deref(got.SpendUSD), deref(want.SpendUSD))
			}
			if near(*base.SpendUSD, *want.SpendUSD, 0.05, 0) {
				t.Errorf("%s: the re-run's spend %v is the recorded %v: the case tells nothing", c.name, *want.SpendUSD, *base.SpendUSD)
			}
		})
	}
}
