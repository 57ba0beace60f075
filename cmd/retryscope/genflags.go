package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/internal/flagval"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/model"
)

// registerGen adds to fs a flag for each of c's knobs, defaulting to c's
// values, as `retryscope gen` offers them. Call the returned func after
// fs.Parse: it reads the flags that need parsing into c and refuses
// impossible values.
func registerGen(fs *pflag.FlagSet, c *sim.Config) (finish func() error) {
	fs.Int64Var(&c.Seed, "seed", c.Seed, "random seed; the same seed gives byte-identical output")
	fs.Var(flagval.NewInt(&c.Requests, c.Requests, 1, sim.MaxRequests), "requests", "logical requests to simulate")
	fs.Var(flagval.NewFloat(&c.Rate, c.Rate, sim.MinRate, sim.MaxRate), "rate", "mean logical requests started per second")
	start := fs.String("start", c.Start.Format(time.RFC3339), "time of the run's start (RFC 3339)")
	shapes := fs.String("shapes", "all", "comma-separated trace shapes: explicit, resend, grpc, wrapped, split, orphan, hedge (all: these seven), and the opt-in apploop, agent")
	fs.Var(flagval.NewInt(&c.Services, 0, 1, sim.MaxServices).OrZero("per-shape names"), "services", "name client services svc-01..svc-N (0: per-shape names such as checkout)")
	// The default mix is spelled out in the help with spaces, so that it
	// wraps to the width of the help like the rest of it.
	faults := fs.String("faults", "", `fault rates: 429, 5xx, reset, timeout per attempt; 4xx per request; reject per evaluated output; "none" for no faults (default: `+
		strings.ReplaceAll(c.Faults.String(), ",", ", ")+`)`)
	policy := fs.String("client-policy", string(c.Policy.Kind), "the simulated clients' retry policy: none, fixed, full (full jitter) or decorrelated")
	fs.Var(flagval.NewInt(&c.Policy.MaxAttempts, c.Policy.MaxAttempts, 1, sim.MaxAttempts), "client-max-attempts", "the simulated clients' attempts per call, the first included")
	fs.Var(flagval.NewInt(&c.Policy.AppTries, c.Policy.AppTries, 1, sim.MaxAttempts), "app-tries", "tries of the application loop around SDK calls (nested wrapped requests)")
	fs.Var(flagval.NewDuration(&c.Policy.Base, c.Policy.Base, time.Millisecond, sim.MaxWait), "base", "first backoff (every backoff for fixed)")
	fs.Var(flagval.NewDuration(&c.Policy.Cap, c.Policy.Cap, time.Millisecond, sim.MaxWait), "cap", "longest backoff")
	fs.Var(flagval.NewFloat(&c.Policy.NaiveShare, c.Policy.NaiveShare, 0, 1), "naive-share", "share of requests whose client retries 4xx and ignores Retry-After")
	naive := fs.Bool("naive", false, "make every client naive (same as --naive-share 1)")
	fs.Var(flagval.NewFloat(&c.Policy.Budget, 0, 0, sim.MaxBudget), "client-retry-budget", "the simulated clients' retries allowed per success in each 10 s window, at least 5 (0: no budget)")
	fs.Var(flagval.NewInt(&c.Policy.Quota, 0, 0, sim.MaxQuota), "client-retry-quota", "the simulated clients' retry quota per service, in tokens, as the AWS SDKs' standard retryer (500 there): a retry takes 5, 10 after a timeout; a successful retry gives them back, a first-attempt success adds 1 (0: no quota)")
	fs.Var(flagval.NewInt(&c.Policy.RetryLane, 0, 0, sim.MaxRetryLane), "client-retry-concurrency", "the simulated clients' retries in flight at once per service, apart from first attempts: a retry that finds them all taken is not made (0: no limit)")
	fs.Var(flagval.NewInt(&c.Policy.TokenCap, 0, 0, sim.MaxTokenCap), "client-token-cap", "the simulated clients' tokens per logical request: no retry once its attempts' input and output tokens reach it (token_cap; 0: no cap)")
	fs.Var(flagval.NewInt(&c.Policy.Concurrency, 0, 0, sim.MaxConcurrency), "client-concurrency", "the simulated clients' attempts in flight at once per service, first attempts and retries: an attempt that finds them all taken waits for one to end (0: no limit)")
	fs.BoolVar(&c.Policy.ConcurrencyFirst, "client-first-lane", false, "hold only requests' first attempts to --client-concurrency (a first-attempt lane; retries go by --client-retry-concurrency)")
	fs.BoolVar(&c.Policy.NoProgress, "client-no-progress", false, "the simulated clients stop an SDK call's retries once two attempts in a row failed the same way")
	fs.Var(flagval.NewDuration(&c.Policy.HedgeDelay, c.Policy.HedgeDelay, time.Millisecond, sim.MaxWait), "hedge-delay", "hedge shape: wait before the second attempt")
	fs.BoolVar(&c.SDKAttributes, "sdk-attributes", false, "the attribute load of real OpenTelemetry SDKs: 13 resource attributes beside service.name (telemetry.sdk.*, host.*, process.*, k8s.*...) and the protocol, user agent, body sizes or peer on HTTP spans")
	fs.BoolVar(&c.Nested, "nested", false, "make every wrapped request an app loop around SDK calls (default: about 40%)")
	fs.Var(flagval.NewFloat(&c.StreamShare, c.StreamShare, 0, 1), "stream-share", "share of LLM calls that stream")
	stream := fs.Bool("stream", false, "make every LLM call stream (--stream=false: none)")
	fs.Var(flagval.NewFloat(&c.Experiment, 0, 0, 1), "experiment", "share of requests in the no-retry arm of a policy experiment; every anchor span then carries "+sim.ArmAttribute+" (0: no experiment)")
	fs.BoolVar(&c.Counterfactual, "counterfactual", false, "record in the truth each request's latency had its first attempt met no fault (counterfactual_ms)")
	fs.Var(flagval.NewFloat(&c.BigInputs, 0, 0, 1), "big-inputs", fmt.Sprintf("share of requests with %dx the prompt and %dx the output tokens that fail %dx as often (0: none)",
		sim.BigInputFactor, sim.BigOutputFactor, sim.BigFaultScale))
	fs.Var(flagval.NewInt(&c.SplitWorkers, 0, 1, sim.MaxSplitWorkers).OrZero("one sequential worker per shard"), "split-workers", "split shape: that many concurrent go-retryablehttp workers on four paths of three hosts, each attempt a trace of its own (0: one sequential worker per shard)")
	fs.Var(flagval.NewInt(&c.SplitRetry.RetryMax, c.SplitRetry.RetryMax, 0, sim.MaxAttempts-1), "split-retries", "with --split-workers: the workers' RetryMax, retries after the first attempt")
	fs.Var(flagval.NewDuration(&c.SplitRetry.WaitMin, c.SplitRetry.WaitMin, time.Millisecond, sim.MaxWait), "split-wait-min", "with --split-workers: the workers' RetryWaitMin, the first retry's wait, doubled for each one after")
	fs.Var(flagval.NewDuration(&c.SplitRetry.WaitMax, c.SplitRetry.WaitMax, time.Millisecond, sim.MaxWait), "split-wait-max", "with --split-workers: the workers' RetryWaitMax, the longest wait (a Retry-After aside)")
	fs.Var(flagval.NewDuration(&c.FlightBucket, 0, time.Millisecond, sim.MaxWait).OrZero("none"), "flight-bucket", "record in the truth the attempts in flight: the peak, and offered load per bucket of this width, e.g. 1s (0: none)")
	pathologies := fs.String("pathology", c.Pathologies.String(), `retry-hygiene problems to plant: retry-4xx=SERVICE (its client retries 4xx; `+
		fmt.Sprint(sim.Retry4xxShare*100)+`% of its requests are bad), ignore-retry-after=SERVICE, lockstep=ROUTE (an outage that fails every attempt at once); "none" for none`)
	fs.Var(flagval.NewDuration(&c.Deadline, 0, time.Millisecond, sim.MaxWait).OrZero("none"), "client-deadline", "explicit shape: the simulated clients' overall deadline per request, stated as "+sim.DeadlineAttribute+" (0: none)")
	fs.Var(flagval.NewFloat(&c.AbandonStreams, 0, 0, 1), "abandon-streams", "share of streamed requests whose client stops reading part-way and cancels (0: none)")
	fs.BoolVar(&c.Policy.NoRetry4xx, "no-retry-4xx", false, "no client retries a client error (4xx), naive ones included")
	fs.BoolVar(&c.Policy.DeadlineAdmit, "deadline-admit", false, "with --client-deadline: no retry starts that would end past the deadline, taking the median of the route's latest served attempts")
	fs.BoolVar(&c.CRN, "crn", false, "common random numbers: attempt n of request i draws from a stream of its own, so the same seed under another policy meets the same faults")
	fs.Var(flagval.NewInt(&c.BatchSpans, c.BatchSpans, 1, sim.MaxBatchSpans), "batch-spans", "spans per exported batch (one JSON line or proto message)")

	return func() error {
		var err error
		if c.Start, err = time.Parse(time.RFC3339Nano, *start); err != nil {
			return fmt.Errorf("--start: %v", err)
		}
		// The run's last start must still be a nanosecond count too.
		if !model.InNanoRange(c.Start) || !model.InNanoRange(c.Start.Add(sim.MaxRunDays*24*time.Hour)) {
			return fmt.Errorf("--start %s: want a time from 1970 to %d", *start, time.Unix(0, math.MaxInt64).Year()-1)
		}
		if c.Shapes, err = sim.ParseShapes(*shapes); err != nil {
			return fmt.Errorf("--shapes: %v", err)
		}
		if fs.Changed("faults") {
			if c.Faults, err = sim.ParseFaults(*faults); err != nil {
				return fmt.Errorf("--faults: %v", err)
			}
		}
		if c.Policy.Kind, err = sim.ParsePolicyKind(*policy); err != nil {
			return fmt.Errorf("--client-policy: %v", err)
		}
		if c.Pathologies, err = sim.ParsePathologies(*pathologies); err != nil {
			return fmt.Errorf("--pathology: %v", err)
		}
		if *naive {
			c.Policy.NaiveShare = 1
		}
		if fs.Changed("stream") {
			c.StreamShare = 0
			if *stream {
				c.StreamShare = 1
			}
		}
		switch {
		case c.Requests < 1 || c.Policy.MaxAttempts < 1 || c.Policy.AppTries < 1 || c.BatchSpans < 1:
			return fmt.Errorf("--requests, --client-max-attempts, --app-tries and --batch-spans must be at least 1")
		case c.Rate <= 0:
			return fmt.Errorf("--rate must be above 0")
		case c.Policy.Cap < c.Policy.Base:
			return fmt.Errorf("--cap %s is shorter than --base %s", c.Policy.Cap, c.Policy.Base)
		}
		// The rest is what Generate itself refuses, checked before any file
		// is written.
		return c.Validate()
	}
}
