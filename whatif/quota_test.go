package whatif

import (
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/gen"
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
		cfg      func(func(*gen.Policy)) gen.Config
		tokens   int
		rel      float64
		feedback bool
	}{
		{"calm, quota 500", calm, 500, 0.05, false},
		{"calm, quota 40", calm, 40, 0.05, false},
		{"storm, quota 60", storm, 60, 0.10, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			recorded, _ := workload.Rebuilt(t, c.cfg(func(*gen.Policy) {}))
			rerun, _ := workload.Rebuilt(t, c.cfg(func(p *gen.Policy) { p.Quota = c.tokens }))
			want := replayOf(t, rerun, Policy{}).Overall.Recorded
			q := DefaultQuota
			q.Tokens = float64(c.tokens)
			p := Policy{Quota: &q}
			pred := replayOf(t, recorded, p).Overall.Modeled
			if c.feedback {
				pred = replayFeedback(t, recorded, p).Overall.Modeled
			}
			without := replayOf(t, recorded, Policy{}).Overall.Modeled
			t.Logf("%s: recorded without a quota: amplification %.4f, final failure %.4f", c.name, without.Amplification, without.FinalFailureRate)
			checkPrediction(t, c.name, pred, want, c.rel, 0.005, 0.10)
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
