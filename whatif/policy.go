package whatif

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retryscope/retryscope/model"
)

// Policy is the retry policy a replay applies. Its zero value changes
// nothing: every recorded attempt stands.
type Policy struct {
	// Inner and App cap the attempts of the innermost retry loop (the SDK
	// or transport; the only loop of most requests) and of the loop
	// around it (the application's, in nested requests), the first
	// attempt included; 0 leaves the recorded cap.
	Inner, App int
	// NoFallback removes the fallback try: in nested requests, a last app
	// try to another target (endpoint or model) than the first, made
	// after the app loop (--max-attempts fallback=0). App caps the app
	// loop's tries before the fallback; the fallback stands unless
	// NoFallback, its own retries under Inner.
	NoFallback bool
	// NoRetryOn lists triggers (docs/recognition.md, "How retries are
	// recognised": client_error, rate_limited, server_error, connection,
	// timeout, ...) that are never retried.
	NoRetryOn []string
	// Budget, when set, allows retries only up to Budget.Ratio per
	// successful attempt in tumbling windows.
	Budget *Budget
	// Quota, when set, gives each client service a retry quota (a token
	// bucket, as the AWS SDKs' standard retryer has): an SDK retry takes
	// Cost tokens (TimeoutCost after a timeout) and is not made when too
	// few are left; a retry that succeeds gives its tokens back, a first
	// attempt that succeeds adds Gain, up to Tokens.
	Quota *Quota
	// RetryLane, when above 0, gives each client service a lane of that
	// many SDK retries in flight at once, apart from its first attempts: a
	// retry that finds the lane full is not made (no_capacity).
	RetryLane int
	// Concurrency, when above 0, caps each client service's attempts in
	// flight, first attempts and retries alike: an attempt that finds
	// them all taken waits, first come first served, for one to end, and
	// starts then (a semaphore around each attempt; the wait adds to the
	// request's latency). With ConcurrencyFirst only requests' first
	// attempts are held to it (a first-attempt lane, beside RetryLane's).
	Concurrency      int
	ConcurrencyFirst bool
	// TokenCap, when above 0, caps each request's tokens: no retry (of
	// any loop, the fallback try included) is made once the input and
	// output tokens of the request's attempts so far reach it
	// (token_cap). The cap is checked before each retry, so a request
	// passes it by at most its last attempt.
	TokenCap int64
	// NoProgress stops a loop's retries once two attempts of one call in a
	// row failed the same way (the same trigger): no progress.
	NoProgress bool
	// PerTaskBudget, when above 0, allows each task (the requests of one
	// trace, or of one --task-key value) that many retries in all.
	PerTaskBudget int
	// Deadline, when above 0, is every request's deadline from its start:
	// a retry that would end past it, taking as long as the segment's
	// median served attempt on its route, is not started, and an attempt
	// still running at the deadline is cut there.
	Deadline time.Duration
	// InnerBackoff and AppBackoff, when set, replace the waits before the
	// retries of the innermost loop and of the loop around it.
	InnerBackoff, AppBackoff *Backoff
	// HedgeDelay, when above 0, is the wait after a request's first
	// attempt starts before a hedging client starts a second if the first
	// is still running; NoHedge removes the hedges. Either applies to the
	// requests of the segments whose recorded requests hedge.
	HedgeDelay time.Duration
	NoHedge    bool
}

// Backoff is a retry loop's wait before retry n (n from 1).
type Backoff struct {
	Kind      string // fixed, full-jitter or decorrelated
	Base, Cap time.Duration
}

// BackoffKinds are the strategies a Backoff names.
var BackoffKinds = []string{"fixed", "full-jitter", "decorrelated"}

// waitMs draws the wait before retry n of a loop whose previous wait was
// prevMs (0 before the first): fixed waits Base; full jitter
// U(0, min(Cap, Base·2^(n-1))); decorrelated min(Cap, U(Base, 3·previous))
// with the previous at least Base.
func (b *Backoff) waitMs(n int, prevMs float64, rng *rand.Rand) float64 {
	base, capMs := ms(b.Base), ms(b.Cap)
	switch b.Kind {
	case "fixed":
		return min(base, capMs)
	case "full-jitter":
		return rng.Float64() * min(capMs, base*math.Pow(2, float64(n-1)))
	default:
		prev := max(prevMs, base)
		return min(capMs, base+rng.Float64()*(3*prev-base))
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func (b *Backoff) String() string { return fmt.Sprintf("%s,%s,%s", b.Kind, b.Base, b.Cap) }

// ParseBackoff reads --backoff [LAYER=]KIND,BASE,CAP, e.g.
// "full-jitter,200ms,8s" (the innermost loop) or "app=fixed,1s,1s"; it
// returns the layer, sdk or app.
func ParseBackoff(s string) (layer string, b *Backoff, err error) {
	layer, spec, named := strings.Cut(s, "=")
	if !named {
		layer, spec = "sdk", s
	}
	if layer != "sdk" && layer != "app" {
		return "", nil, fmt.Errorf("backoff %q: unknown layer %q (want sdk or app)", s, layer)
	}
	parts := strings.Split(spec, ",")
	if len(parts) != 3 {
		return "", nil, fmt.Errorf("backoff %q: want [LAYER=]KIND,BASE,CAP, e.g. full-jitter,200ms,8s", s)
	}
	b = &Backoff{Kind: parts[0]}
	if !slices.Contains(BackoffKinds, b.Kind) {
		return "", nil, fmt.Errorf("backoff %q: unknown kind %q (want %s)", s, b.Kind, strings.Join(BackoffKinds, ", "))
	}
	if b.Base, err = model.ParseDuration(parts[1]); err != nil || b.Base < 0 || b.Base > MaxWait {
		return "", nil, fmt.Errorf("backoff %q: the base must be a duration of at least 0 and at most %s, e.g. 200ms", s, model.FormatDuration(MaxWait))
	}
	if b.Cap, err = model.ParseDuration(parts[2]); err != nil || b.Cap < b.Base || b.Cap > MaxWait {
		return "", nil, fmt.Errorf("backoff %q: the cap must be a duration of at least the base and at most %s, e.g. 8s", s, model.FormatDuration(MaxWait))
	}
	return layer, b, nil
}

// Quota is a client's retry quota (Policy.Quota).
type Quota struct {
	Tokens      float64 `json:"tokens"`
	Cost        float64 `json:"cost"`
	TimeoutCost float64 `json:"timeout_cost"`
	Gain        float64 `json:"gain"`
}

// DefaultQuota is the AWS SDKs' standard retryer's: 500 tokens, 5 a
// retry, 10 a retry after a timeout, 1 back for a success without one.
var DefaultQuota = Quota{Tokens: 500, Cost: 5, TimeoutCost: 10, Gain: 1}

// MaxQuotaTokens bounds --retry-quota's numbers.
const MaxQuotaTokens = 1_000_000_000

// ParseQuota reads --retry-quota TOKENS[,COST,TIMEOUT_COST,GAIN], e.g.
// "500" (the other three as the AWS SDKs have them) or "100,5,10,1".
func ParseQuota(s string) (*Quota, error) {
	q := DefaultQuota
	parts := strings.Split(s, ",")
	if len(parts) != 1 && len(parts) != 4 {
		return nil, fmt.Errorf("retry quota %q: want TOKENS or TOKENS,COST,TIMEOUT_COST,GAIN, e.g. 500 or 500,5,10,1", s)
	}
	fields := []*float64{&q.Tokens, &q.Cost, &q.TimeoutCost, &q.Gain}
	names := []string{"TOKENS", "COST", "TIMEOUT_COST", "GAIN"}
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		// The tokens and the costs are above 0; a quota may give nothing back.
		if err != nil || !finite(v) || v < 0 || v > MaxQuotaTokens || i < 3 && v == 0 {
			return nil, fmt.Errorf("retry quota %q: %s %q is not a number of tokens above 0 (GAIN: 0 or more) and at most %d", s, names[i], p, MaxQuotaTokens)
		}
		*fields[i] = v
	}
	return &q, nil
}

// QuotaOff is the --retry-quota value that replays without the retry
// quotas the recorded clients showed (Options.NoRecordedQuota); "none"
// says the same.
const QuotaOff = "off"

// ParseQuotaSetting reads --retry-quota: a quota (ParseQuota), or off
// (QuotaOff or "none"): no quota, not even the recorded one.
func ParseQuotaSetting(s string) (q *Quota, off bool, err error) {
	if v := strings.TrimSpace(s); v == QuotaOff || v == "none" {
		return nil, true, nil
	}
	q, err = ParseQuota(s)
	if err != nil {
		err = fmt.Errorf("%w, or off", err)
	}
	return q, false, err
}

// MaxRetryLane bounds --retry-concurrency.
const MaxRetryLane = 1_000_000

// ParseRetryLane reads --retry-concurrency N.
func ParseRetryLane(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxRetryLane {
		return 0, fmt.Errorf("retry concurrency %q: want a whole number of retries in flight from 1 to %d", s, MaxRetryLane)
	}
	return n, nil
}

// MaxConcurrency bounds --concurrency.
const MaxConcurrency = 1_000_000

// ParseConcurrency reads --concurrency N (every attempt) or first=N (a
// request's first attempt only).
func ParseConcurrency(s string) (n int, first bool, err error) {
	v := strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(v, "first="); ok {
		v, first = rest, true
	}
	n, err = strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxConcurrency {
		return 0, false, fmt.Errorf("concurrency %q: want N or first=N, a whole number of attempts in flight from 1 to %d", s, MaxConcurrency)
	}
	return n, first, nil
}

// MaxTokenCap bounds --token-cap.
const MaxTokenCap = 1_000_000_000

// ParseTokenCap reads --token-cap N.
func ParseTokenCap(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 1 || n > MaxTokenCap {
		return 0, fmt.Errorf("token cap %q: want a whole number of tokens per request from 1 to %d", s, MaxTokenCap)
	}
	return n, nil
}

// ParsePerTaskBudget reads --per-task-budget N.
func ParsePerTaskBudget(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxPerTaskBudget {
		return 0, fmt.Errorf("per-task budget %q: want a whole number of retries from 1 to %d (for none, --max-attempts 1)", s, MaxPerTaskBudget)
	}
	return n, nil
}

// ParseDeadline reads --deadline D, e.g. "5s".
func ParseDeadline(s string) (time.Duration, error) {
	d, err := model.ParseDuration(s)
	if err != nil || d <= 0 || d > MaxWait {
		return 0, fmt.Errorf("deadline %q: want a duration above 0, at most %s, e.g. 5s", s, model.FormatDuration(MaxWait))
	}
	return d, nil
}

// Budget is a retry budget shared by all clients: in each window, retries
// up to Ratio times the successful attempts so far, and at least Floor.
type Budget struct {
	Ratio  float64
	Window time.Duration
	Floor  float64
}

// DefaultBudget is the window and floor a budget has when only its ratio is
// given (the same as gen's --retry-budget).
var DefaultBudget = Budget{Window: 10 * time.Second, Floor: 5}

// The largest values the policy's flags take: beyond them a value is a
// typo. No deadline, backoff or budget window is longer than a day.
const (
	MaxWait          = 24 * time.Hour
	MaxPerTaskBudget = 1_000_000
	MaxBudgetRatio   = 1000
	MaxBudgetFloor   = 1_000_000_000
)

// MaxAttemptsLimit is the highest cap a replay takes: every request may
// draw that many attempts, and no client retries a call a hundred times.
const MaxAttemptsLimit = 100

// ParseMaxAttempts reads --max-attempts: "N" caps the innermost loop;
// "sdk=N", "app=N" or "app=2,sdk=3" name the loops. A fallback setting
// (ParseMaxAttemptsFallback) is an error here.
func ParseMaxAttempts(s string) (inner, app int, err error) {
	inner, app, _, fallbackSet, err := parseMaxAttempts(s)
	if err == nil && fallbackSet {
		return 0, 0, fmt.Errorf("max attempts %q: the fallback layer is read by ParseMaxAttemptsFallback", s)
	}
	return inner, app, err
}

// ParseMaxAttemptsFallback reads --max-attempts as ParseMaxAttempts does,
// and also "fallback=0" (no fallback try) or "fallback=1" (the fallback
// try as recorded), e.g. "app=1,fallback=0".
func ParseMaxAttemptsFallback(s string) (inner, app int, dropFallback bool, err error) {
	inner, app, dropFallback, _, err = parseMaxAttempts(s)
	return inner, app, dropFallback, err
}

func parseMaxAttempts(s string) (inner, app int, dropFallback, fallbackSet bool, err error) {
	for _, item := range strings.Split(s, ",") {
		name, value, named := strings.Cut(strings.TrimSpace(item), "=")
		if !named {
			name, value = "sdk", name
		}
		if name == "fallback" {
			if value != "0" && value != "1" {
				return 0, 0, false, false, fmt.Errorf("max attempts %q: fallback takes 0 (no fallback try) or 1 (the fallback try as recorded)", item)
			}
			dropFallback, fallbackSet = value == "0", true
			continue
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > MaxAttemptsLimit {
			return 0, 0, false, false, fmt.Errorf("max attempts %q: want a whole number from 1 to %d", item, MaxAttemptsLimit)
		}
		switch name {
		case "sdk":
			inner = n
		case "app":
			app = n
		default:
			return 0, 0, false, false, fmt.Errorf("max attempts %q: unknown layer %q (want sdk, app or fallback)", item, name)
		}
	}
	return inner, app, dropFallback, fallbackSet, nil
}

// ParseBudget reads --retry-budget RATIO[,WINDOW,FLOOR], e.g. "0.1" or
// "0.1,10s,5".
func ParseBudget(s string) (*Budget, error) {
	b := DefaultBudget
	parts := strings.Split(s, ",")
	if len(parts) != 1 && len(parts) != 3 {
		return nil, fmt.Errorf("retry budget %q: want RATIO or RATIO,WINDOW,FLOOR", s)
	}
	var err error
	if b.Ratio, err = strconv.ParseFloat(parts[0], 64); err != nil || !finite(b.Ratio) || b.Ratio < 0 || b.Ratio > MaxBudgetRatio {
		return nil, fmt.Errorf("retry budget %q: the ratio must be a number from 0 to %d", s, MaxBudgetRatio)
	}
	if len(parts) == 3 {
		if b.Window, err = model.ParseDuration(parts[1]); err != nil || b.Window < time.Millisecond || b.Window > MaxWait {
			return nil, fmt.Errorf("retry budget %q: the window must be a duration from 1ms to %s, e.g. 10s", s, model.FormatDuration(MaxWait))
		}
		if b.Floor, err = strconv.ParseFloat(parts[2], 64); err != nil || !finite(b.Floor) || b.Floor < 0 || b.Floor > MaxBudgetFloor {
			return nil, fmt.Errorf("retry budget %q: the floor must be a number from 0 to %d", s, MaxBudgetFloor)
		}
	}
	return &b, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// ParseTriggers reads --no-retry-on "client_error,rate_limited".
func ParseTriggers(s string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(triggers, t) {
			return nil, fmt.Errorf("no retry on %q: unknown trigger (want one of %s)", t, strings.Join(triggers, ", "))
		}
		out = append(out, t)
	}
	return out, nil
}

// triggers are the retry triggers (docs/recognition.md, "How retries are
// recognised") a policy can refuse to retry.
var triggers = []string{string(model.TriggerRateLimited), string(model.TriggerServerError), string(model.TriggerConnection),
	string(model.TriggerTimeout), string(model.TriggerClientError), string(model.TriggerRejectedOutput),
	string(model.TriggerCancelled), string(model.TriggerAbandoned), string(model.TriggerUnknown)}

// String renders p as the flags that give it; "recorded" when it changes
// nothing.
func (p Policy) String() string {
	var parts []string
	switch {
	case p.Inner > 0 && p.App == 0 && !p.NoFallback:
		parts = append(parts, fmt.Sprintf("--max-attempts %d", p.Inner))
	case p.Inner > 0 || p.App > 0 || p.NoFallback:
		var layers []string
		if p.App > 0 {
			layers = append(layers, fmt.Sprintf("app=%d", p.App))
		}
		if p.NoFallback {
			layers = append(layers, "fallback=0")
		}
		if p.Inner > 0 {
			layers = append(layers, fmt.Sprintf("sdk=%d", p.Inner))
		}
		parts = append(parts, "--max-attempts "+strings.Join(layers, ","))
	}
	if p.Budget != nil {
		parts = append(parts, fmt.Sprintf("--retry-budget %g,%s,%g", p.Budget.Ratio, p.Budget.Window, p.Budget.Floor))
	}
	if q := p.Quota; q != nil {
		parts = append(parts, fmt.Sprintf("--retry-quota %g,%g,%g,%g", q.Tokens, q.Cost, q.TimeoutCost, q.Gain))
	}
	if p.RetryLane > 0 {
		parts = append(parts, fmt.Sprintf("--retry-concurrency %d", p.RetryLane))
	}
	if p.Concurrency > 0 {
		first := ""
		if p.ConcurrencyFirst {
			first = "first="
		}
		parts = append(parts, fmt.Sprintf("--concurrency %s%d", first, p.Concurrency))
	}
	if p.TokenCap > 0 {
		parts = append(parts, fmt.Sprintf("--token-cap %d", p.TokenCap))
	}
	if p.NoProgress {
		parts = append(parts, "--no-progress")
	}
	if len(p.NoRetryOn) > 0 {
		parts = append(parts, "--no-retry-on "+strings.Join(p.NoRetryOn, ","))
	}
	if p.PerTaskBudget > 0 {
		parts = append(parts, fmt.Sprintf("--per-task-budget %d", p.PerTaskBudget))
	}
	if p.Deadline > 0 {
		parts = append(parts, fmt.Sprintf("--deadline %s", p.Deadline))
	}
	if p.InnerBackoff != nil {
		parts = append(parts, "--backoff "+p.InnerBackoff.String())
	}
	if p.AppBackoff != nil {
		parts = append(parts, "--backoff app="+p.AppBackoff.String())
	}
	switch {
	case p.NoHedge:
		parts = append(parts, "--hedge-delay off")
	case p.HedgeDelay > 0:
		parts = append(parts, "--hedge-delay "+p.HedgeDelay.String())
	}
	if len(parts) == 0 {
		return "recorded"
	}
	return strings.Join(parts, " ")
}

// assumptions are what replaying the policy's own settings takes for
// granted.
func (p Policy) assumptions() []string {
	var out []string
	if p.PerTaskBudget > 0 {
		out = append(out, "a per-task budget counts the retries of every request of a task (its trace, or its --task-key value) in the order the replay makes them")
	}
	if p.Concurrency > 0 {
		out = append(out, "a concurrency limit is a semaphore per client service around each attempt it holds (with first=, a request's first attempt only): an attempt that finds every slot taken waits, first come first served, and starts when one frees (its span would start then); it keeps its recorded outcome and duration; hedges already running when an answer came hold no slot")
	}
	if p.Deadline > 0 {
		out = append(out, "a deadline-aware client knows the segment's recorded attempts: it does not start a retry whose start plus their median served duration on its route passes the deadline, and fails at once; the first attempt always starts, and one still running at the deadline is cancelled there (its server works on)")
	}
	if p.hedging() {
		out = append(out, "the hedge delay applies to the segments whose recorded requests hedged (a second attempt while the first ran): the first attempt runs as it would have uncut (a cancelled one for its hidden work, then taken to succeed, or to time out at the segment's recorded timeout if it runs past it); past the delay a hedge starts with the recorded hedge's outcome and duration, or one drawn from the segment's recorded hedges nearest in time; the first success wins and the other is cancelled then, its server working on")
	}
	if p.InnerBackoff != nil || p.AppBackoff != nil {
		out = append(out, "the policy's backoff replaces the recorded wait before each retry of the loop it names, never shorter than the Retry-After the failure asked for; the attempt keeps its recorded outcome and duration")
	}
	return out
}

// retries reports whether the policy retries a failure with this trigger.
func (p Policy) retries(trigger string) bool { return !slices.Contains(p.NoRetryOn, trigger) }

// within reports whether an attempt with these tries (per layer,
// outermost first) is inside the policy's caps.
func (p Policy) within(tries []int) bool {
	n := len(tries)
	if n == 0 {
		return true
	}
	if p.Inner > 0 && tries[n-1] > p.Inner {
		return false
	}
	return p.App <= 0 || n < 2 || tries[0] <= p.App
}

// keeps reports whether the policy makes recorded attempt a: within its
// caps, or, for an attempt of the fallback try, which is outside the app
// loop's cap, within the innermost cap while the policy keeps the
// fallback.
func (p Policy) keeps(a recAttempt) bool {
	if a.fallback {
		n := len(a.tries)
		return !p.NoFallback && (p.Inner <= 0 || a.tries[n-1] <= p.Inner)
	}
	return p.within(a.tries)
}
