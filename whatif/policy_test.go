package whatif

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestParseMaxAttempts(t *testing.T) {
	for _, c := range []struct {
		in         string
		inner, app int
		err        bool
	}{
		{"1", 1, 0, false},
		{"sdk=2", 2, 0, false},
		{"app=2,sdk=3", 3, 2, false},
		{"app=1", 0, 1, false},
		{"0", 0, 0, true},
		{"web=2", 0, 0, true},
		{"x", 0, 0, true},
		{"100", 100, 0, false},
		{"101", 0, 0, true},
		{"app=1000000000", 0, 0, true},
	} {
		inner, app, err := ParseMaxAttempts(c.in)
		if (err != nil) != c.err || inner != c.inner || app != c.app {
			t.Errorf("ParseMaxAttempts(%q) = %d, %d, %v; want %d, %d, error %v", c.in, inner, app, err, c.inner, c.app, c.err)
		}
	}
}

func TestParseBudget(t *testing.T) {
	b, err := ParseBudget("0.1")
	if err != nil || *b != (Budget{Ratio: 0.1, Window: 10 * time.Second, Floor: 5}) {
		t.Errorf("ParseBudget(0.1) = %+v, %v", b, err)
	}
	b, err = ParseBudget("0.2,1m,0")
	if err != nil || *b != (Budget{Ratio: 0.2, Window: time.Minute, Floor: 0}) {
		t.Errorf("ParseBudget(0.2,1m,0) = %+v, %v", b, err)
	}
	for _, bad := range []string{"", "-1", "0.1,10s", "0.1,0s,5", "0.1,10s,-1", "NaN", "Inf", "0.1,10s,NaN"} {
		if _, err := ParseBudget(bad); err == nil {
			t.Errorf("ParseBudget(%q) accepted", bad)
		}
	}
}

func TestParseTriggers(t *testing.T) {
	got, err := ParseTriggers("client_error, rate_limited")
	if err != nil || !slices.Equal(got, []string{"client_error", "rate_limited"}) {
		t.Errorf("ParseTriggers = %v, %v", got, err)
	}
	if _, err := ParseTriggers("4xx"); err == nil {
		t.Error("ParseTriggers(4xx) accepted")
	}
}

// TestPolicyWithin: a cap names the innermost loop; app names the outer
// one, and only where there is one.
func TestPolicyWithin(t *testing.T) {
	p := Policy{Inner: 2, App: 1}
	for _, c := range []struct {
		tries []int
		want  bool
	}{
		{[]int{1}, true}, {[]int{2}, true}, {[]int{3}, false},
		{[]int{1, 2}, true}, {[]int{1, 3}, false}, {[]int{2, 1}, false},
	} {
		if got := p.within(c.tries); got != c.want {
			t.Errorf("%s: within(%v) = %v, want %v", p, c.tries, got, c.want)
		}
	}
	if s := (Policy{}).String(); s != "recorded" {
		t.Errorf("the zero policy reads %q", s)
	}
}

func TestParseBackoff(t *testing.T) {
	for _, c := range []struct {
		in, layer string
		want      Backoff
		err       bool
	}{
		{"full-jitter,200ms,8s", "sdk", Backoff{"full-jitter", 200 * time.Millisecond, 8 * time.Second}, false},
		{"app=fixed,1s,1s", "app", Backoff{"fixed", time.Second, time.Second}, false},
		{"sdk=decorrelated,100ms,2s", "sdk", Backoff{"decorrelated", 100 * time.Millisecond, 2 * time.Second}, false},
		{"web=fixed,1s,1s", "", Backoff{}, true},
		{"fixed,1s", "", Backoff{}, true},
		{"exponential,1s,2s", "", Backoff{}, true},
		{"fixed,2s,1s", "", Backoff{}, true},
		{"fixed,-1s,1s", "", Backoff{}, true},
	} {
		layer, b, err := ParseBackoff(c.in)
		if (err != nil) != c.err || layer != c.layer || (err == nil && *b != c.want) {
			t.Errorf("ParseBackoff(%q) = %q, %+v, %v; want %q, %+v, error %v", c.in, layer, b, err, c.layer, c.want, c.err)
		}
	}
}

// TestBackoffWaits: each kind waits what it says, within its bounds.
func TestBackoffWaits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fixed := Backoff{"fixed", 300 * time.Millisecond, time.Second}
	full := Backoff{"full-jitter", 100 * time.Millisecond, 500 * time.Millisecond}
	dec := Backoff{"decorrelated", 100 * time.Millisecond, 2 * time.Second}
	prev := 0.0
	for n := 1; n <= 6; n++ {
		if w := fixed.waitMs(n, 0, rng); w != 300 {
			t.Errorf("fixed retry %d: %v ms", n, w)
		}
		if w, hi := full.waitMs(n, 0, rng), min(500, 100*float64(int(1)<<(n-1))); w < 0 || w > hi {
			t.Errorf("full jitter retry %d: %v ms, want 0..%v", n, w, hi)
		}
		w := dec.waitMs(n, prev, rng)
		if w < 100 || w > min(2000, 3*max(prev, 100)) {
			t.Errorf("decorrelated retry %d after %v: %v ms", n, prev, w)
		}
		prev = w
	}
}
