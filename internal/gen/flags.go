package gen

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// RegisterFlags adds to fs a flag for each of c's knobs, defaulting to c's
// values, as `retryscope gen` offers them. Call the returned func after
// fs.Parse: it reads the flags that need parsing into c and refuses
// impossible values.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) (finish func() error) {
	fs.Int64Var(&c.Seed, "seed", c.Seed, "random seed; the same seed gives byte-identical output")
	fs.IntVar(&c.Requests, "requests", c.Requests, "logical requests to simulate")
	fs.Float64Var(&c.Rate, "rate", c.Rate, "mean logical requests started per second")
	start := fs.String("start", c.Start.Format(time.RFC3339), "time of the run's start (RFC 3339)")
	shapes := fs.String("shapes", "all", "comma-separated trace shapes: explicit,resend,grpc,wrapped,split,orphan,hedge (all), and the opt-in apploop,agent")
	fs.IntVar(&c.Services, "services", 0, "name client services svc-01..svc-N (0: per-shape names such as checkout)")
	faults := fs.String("faults", c.Faults.String(), `fault rates: 429, 5xx, reset, timeout per attempt; 4xx per request; reject per evaluated output; "none" for no faults`)
	policy := fs.String("policy", string(c.Policy.Kind), "retry policy: none, fixed, full (full jitter) or decorrelated")
	fs.IntVar(&c.Policy.MaxAttempts, "max-attempts", c.Policy.MaxAttempts, "attempts per call, the first included")
	fs.IntVar(&c.Policy.AppTries, "app-tries", c.Policy.AppTries, "tries of the application loop around SDK calls (nested wrapped requests)")
	fs.DurationVar(&c.Policy.Base, "base", c.Policy.Base, "first backoff (every backoff for fixed)")
	fs.DurationVar(&c.Policy.Cap, "cap", c.Policy.Cap, "longest backoff")
	fs.Float64Var(&c.Policy.NaiveShare, "naive-share", c.Policy.NaiveShare, "share of requests whose client retries 4xx and ignores Retry-After")
	naive := fs.Bool("naive", false, "make every client naive (same as --naive-share 1)")
	fs.Float64Var(&c.Policy.Budget, "retry-budget", 0, "retries allowed per success in each 10 s window, at least 5 (0: no budget)")
	fs.DurationVar(&c.Policy.HedgeDelay, "hedge-delay", c.Policy.HedgeDelay, "hedge shape: wait before the second attempt")
	fs.BoolVar(&c.Nested, "nested", false, "make every wrapped request an app loop around SDK calls (default: about 40%)")
	fs.Float64Var(&c.StreamShare, "stream-share", c.StreamShare, "share of LLM calls that stream")
	stream := fs.Bool("stream", false, "make every LLM call stream (--stream=false: none)")
	fs.Float64Var(&c.Experiment, "experiment", 0, "share of requests in the no-retry arm of a policy experiment; every anchor span then carries "+ArmAttribute+" (0: no experiment)")
	fs.BoolVar(&c.Counterfactual, "counterfactual", false, "record in the truth each request's latency had its first attempt met no fault (counterfactual_ms)")
	fs.Float64Var(&c.BigInputs, "big-inputs", 0, fmt.Sprintf("share of requests with %dx the prompt and %dx the output tokens that fail %dx as often (0: none)",
		BigInputFactor, BigOutputFactor, BigFaultScale))
	fs.IntVar(&c.SplitWorkers, "split-workers", 0, "split shape: that many concurrent go-retryablehttp workers on four paths of three hosts, each attempt a trace of its own (0: one sequential worker per shard)")
	fs.DurationVar(&c.FlightBucket, "flight-bucket", 0, "record in the truth the attempts in flight: the peak, and offered load per bucket of this width, e.g. 1s (0: none)")
	pathologies := fs.String("pathology", c.Pathologies.String(), `retry-hygiene problems to plant: retry-4xx=SERVICE (its client retries 4xx; `+
		fmt.Sprint(Retry4xxShare*100)+`% of its requests are bad), ignore-retry-after=SERVICE, lockstep=ROUTE (an outage that fails every attempt at once); "none" for none`)
	fs.DurationVar(&c.Deadline, "deadline", 0, "explicit shape: an overall deadline per request, stated as "+DeadlineAttribute+" (0: none)")
	fs.Float64Var(&c.AbandonStreams, "abandon-streams", 0, "share of streamed requests whose client stops reading part-way and cancels (0: none)")
	fs.BoolVar(&c.Policy.NoRetry4xx, "no-retry-4xx", false, "no client retries a client error (4xx), naive ones included")
	fs.BoolVar(&c.Policy.DeadlineAdmit, "deadline-admit", false, "with --deadline: no retry starts that would end past the deadline, taking the median of the route's latest served attempts")
	fs.BoolVar(&c.CRN, "crn", false, "common random numbers: attempt n of request i draws from a stream of its own, so the same seed under another policy meets the same faults")
	fs.IntVar(&c.BatchSpans, "batch-spans", c.BatchSpans, "spans per exported batch (one JSON line or proto message)")

	return func() error {
		var err error
		if c.Start, err = time.Parse(time.RFC3339Nano, *start); err != nil {
			return fmt.Errorf("--start: %v", err)
		}
		if c.Shapes, err = ParseShapes(*shapes); err != nil {
			return fmt.Errorf("--shapes: %v", err)
		}
		if c.Faults, err = ParseFaults(*faults); err != nil {
			return fmt.Errorf("--faults: %v", err)
		}
		if c.Policy.Kind, err = ParsePolicyKind(*policy); err != nil {
			return fmt.Errorf("--policy: %v", err)
		}
		if c.Pathologies, err = ParsePathologies(*pathologies); err != nil {
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
			return fmt.Errorf("--requests, --max-attempts, --app-tries and --batch-spans must be at least 1")
		case c.Rate <= 0:
			return fmt.Errorf("--rate must be above 0")
		}
		// The rest is what Generate itself refuses, checked before any file
		// is written.
		_, err = c.normalized()
		return err
	}
}
