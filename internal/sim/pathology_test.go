package sim

import (
	"testing"
)

func TestParsePathologies(t *testing.T) {
	p, err := ParsePathologies("retry-4xx=checkout, ignore-retry-after=support-bot,lockstep=api.openai.com")
	if err != nil {
		t.Fatal(err)
	}
	want := Pathologies{Retry4xx: "checkout", IgnoreRetryAfter: "support-bot", Lockstep: "api.openai.com"}
	if p != want {
		t.Errorf("got %+v, want %+v", p, want)
	}
	if back, err := ParsePathologies(p.String()); err != nil || back != p {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	for _, bad := range []string{"retry-4xx", "retry-500=checkout", "lockstep="} {
		if _, err := ParsePathologies(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := Generate(Config{Requests: 10, Pathologies: Pathologies{Lockstep: "nowhere"}}); err == nil {
		t.Error("lockstep on an unknown route: no error")
	}
}

// TestPathologiesTruth: each pathology shows in the truth where it was
// planted and nowhere else, when no client is naive.
func TestPathologiesTruth(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Requests, cfg.Seed = 1500, 3
	cfg.Policy.NaiveShare = 0
	cfg.Faults.RateLimited = 0.1
	cfg.Pathologies = Pathologies{Retry4xx: "checkout", IgnoreRetryAfter: "support-bot", Lockstep: "api.openai.com"}
	res, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ceRetries, ignored int
	for _, r := range res.Truth.Requests {
		for i := 1; i < len(r.AttemptList); i++ {
			prev, a := r.AttemptList[i-1], r.AttemptList[i]
			if prev.Trigger == "client_error" {
				ceRetries++
				if r.Service != "checkout" {
					t.Errorf("%s (%s) retried a client error", r.Key, r.Service)
				}
			}
			if ra := int64(prev.RetryAfterS) * 1e9; a.StartNs >= prev.EndNs && a.StartNs-prev.EndNs < ra && r.Service != "support-bot" {
				t.Errorf("%s (%s) retried before Retry-After", r.Key, r.Service)
			}
		}
		if r.RetryAfterIgnored > 0 && r.Service != "support-bot" {
			t.Errorf("%s (%s): truth counts %d Retry-Afters ignored", r.Key, r.Service, r.RetryAfterIgnored)
		}
		ignored += r.RetryAfterIgnored
	}
	var outage *Incident
	for i, in := range res.Truth.Incidents {
		if in.Kind == "outage" {
			outage = &res.Truth.Incidents[i]
		}
	}
	if ceRetries == 0 || ignored == 0 || outage == nil || outage.Shed == 0 || outage.Route != "api.openai.com" {
		t.Fatalf("%d client-error retries, %d Retry-Afters ignored, outage %+v", ceRetries, ignored, outage)
	}
	if res.Truth.Params.Pathologies != cfg.Pathologies.String() {
		t.Errorf("params pathologies %q", res.Truth.Params.Pathologies)
	}
}
