package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/internal/gen"
)

const genUsage = `Usage: retryscope gen [flags] -o FILE

Simulate clients retrying against servers that slow down under load, and
write the traces they would export together with the truth: every logical
request, its attempts, triggers and latency decomposition, as JSON.

Examples:
  retryscope gen --seed 1 --requests 300 -o traces.jsonl
  retryscope gen --shapes wrapped,orphan --nested --stream --faults 429=0.1,5xx=0.05 -o llm.jsonl
  retryscope gen --policy none --format proto -o noretry.bin --truth noretry.truth.json
  retryscope gen --experiment 0.3 --counterfactual -o experiment.jsonl

Flags:
`

// runGen implements "retryscope gen". It returns the process exit code.
func runGen(args []string, stdout, stderr io.Writer) int {
	cfg, opts, err := parseGenFlags(args, stdout)
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "retryscope: %v\nTry: retryscope gen --help\n", err)
		return 2
	}
	res, err := gen.Generate(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "retryscope: gen: %v\n", err)
		return 1
	}
	write := gen.WriteJSONLines
	if opts.format == "proto" {
		write = gen.WriteProtoFramed
	}
	if err := writeTo(opts.out, stdout, func(w io.Writer) error { return write(w, res.Traces) }); err != nil {
		fmt.Fprintf(stderr, "retryscope: gen: write %s: %v\n", opts.out, err)
		return 1
	}
	if opts.truth != "" {
		if err := writeTo(opts.truth, stdout, func(w io.Writer) error { return gen.WriteTruth(w, res.Truth) }); err != nil {
			fmt.Fprintf(stderr, "retryscope: gen: write %s: %v\n", opts.truth, err)
			return 1
		}
	}
	spans := 0
	for _, td := range res.Traces {
		spans += td.SpanCount()
	}
	w := res.Truth.Workload
	fmt.Fprintf(stderr, "gen: %d logical requests, %d attempts (amplification %.3f), %d spans -> %s",
		w.LogicalRequests, w.Attempts, w.Amplification, spans, opts.out)
	if opts.truth != "" {
		fmt.Fprintf(stderr, ", truth -> %s", opts.truth)
	}
	fmt.Fprintln(stderr)
	return 0
}

type genOutputs struct {
	out, truth, format string
}

func parseGenFlags(args []string, stdout io.Writer) (gen.Config, genOutputs, error) {
	cfg := gen.DefaultConfig()
	var opts genOutputs
	fs := pflag.NewFlagSet("gen", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "random seed; the same seed gives byte-identical output")
	fs.IntVar(&cfg.Requests, "requests", cfg.Requests, "logical requests to simulate")
	fs.Float64Var(&cfg.Rate, "rate", cfg.Rate, "mean logical requests started per second")
	start := fs.String("start", cfg.Start.Format(time.RFC3339), "time of the run's start (RFC 3339)")
	shapes := fs.String("shapes", "all", "comma-separated trace shapes: explicit,resend,grpc,wrapped,split,orphan,hedge (all), and the opt-in apploop,agent")
	fs.IntVar(&cfg.Services, "services", 0, "name client services svc-01..svc-N (0: per-shape names such as checkout)")
	faults := fs.String("faults", cfg.Faults.String(), `fault rates: 429, 5xx, reset, timeout per attempt; 4xx per request; reject per evaluated output; "none" for no faults`)
	policy := fs.String("policy", string(cfg.Policy.Kind), "retry policy: none, fixed, full (full jitter) or decorrelated")
	fs.IntVar(&cfg.Policy.MaxAttempts, "max-attempts", cfg.Policy.MaxAttempts, "attempts per call, the first included")
	fs.IntVar(&cfg.Policy.AppTries, "app-tries", cfg.Policy.AppTries, "tries of the application loop around SDK calls (nested wrapped requests)")
	fs.DurationVar(&cfg.Policy.Base, "base", cfg.Policy.Base, "first backoff (every backoff for fixed)")
	fs.DurationVar(&cfg.Policy.Cap, "cap", cfg.Policy.Cap, "longest backoff")
	fs.Float64Var(&cfg.Policy.NaiveShare, "naive-share", cfg.Policy.NaiveShare, "share of requests whose client retries 4xx and ignores Retry-After")
	naive := fs.Bool("naive", false, "make every client naive (same as --naive-share 1)")
	fs.Float64Var(&cfg.Policy.Budget, "retry-budget", 0, "retries allowed per success in each 10 s window, at least 5 (0: no budget)")
	fs.DurationVar(&cfg.Policy.HedgeDelay, "hedge-delay", cfg.Policy.HedgeDelay, "hedge shape: wait before the second attempt")
	fs.BoolVar(&cfg.Nested, "nested", false, "make every wrapped request an app loop around SDK calls (default: about 40%)")
	fs.Float64Var(&cfg.StreamShare, "stream-share", cfg.StreamShare, "share of LLM calls that stream")
	stream := fs.Bool("stream", false, "make every LLM call stream (--stream=false: none)")
	fs.Float64Var(&cfg.Experiment, "experiment", 0, "share of requests in the no-retry arm of a policy experiment; every anchor span then carries "+gen.ArmAttribute+" (0: no experiment)")
	fs.BoolVar(&cfg.Counterfactual, "counterfactual", false, "record in the truth each request's latency had its first attempt met no fault (counterfactual_ms)")
	fs.Float64Var(&cfg.BigInputs, "big-inputs", 0, fmt.Sprintf("share of requests with %dx the prompt and %dx the output tokens that fail %dx as often (0: none)",
		gen.BigInputFactor, gen.BigOutputFactor, gen.BigFaultScale))
	fs.IntVar(&cfg.SplitWorkers, "split-workers", 0, "split shape: that many concurrent go-retryablehttp workers on three targets, each attempt a trace of its own (0: one sequential worker per shard)")
	fs.IntVar(&cfg.BatchSpans, "batch-spans", cfg.BatchSpans, "spans per exported batch (one JSON line or proto message)")
	fs.StringVar(&opts.format, "format", "json", "output format: json (OTLP/JSON lines) or proto (4-byte length-framed OTLP protobuf)")
	fs.StringVarP(&opts.out, "output", "o", "", `traces file, "-" for stdout (required)`)
	fs.StringVar(&opts.truth, "truth", "", `truth file (default: FILE.truth.json; none when -o is "-")`)

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(stdout, genUsage+fs.FlagUsages())
		}
		return cfg, opts, err
	}
	if fs.NArg() > 0 {
		return cfg, opts, fmt.Errorf("gen takes no arguments, got %q", fs.Arg(0))
	}
	if opts.out == "" {
		return cfg, opts, fmt.Errorf("gen needs -o FILE")
	}
	if opts.format != "json" && opts.format != "proto" {
		return cfg, opts, fmt.Errorf("--format must be json or proto, not %q", opts.format)
	}
	if opts.out == "-" && opts.truth == "-" {
		return cfg, opts, fmt.Errorf("-o and --truth cannot both be stdout")
	}
	if opts.truth == "" && opts.out != "-" {
		opts.truth = opts.out + ".truth.json"
	}
	var err error
	if cfg.Start, err = time.Parse(time.RFC3339Nano, *start); err != nil {
		return cfg, opts, fmt.Errorf("--start: %v", err)
	}
	if cfg.Shapes, err = gen.ParseShapes(*shapes); err != nil {
		return cfg, opts, fmt.Errorf("--shapes: %v", err)
	}
	if cfg.Faults, err = gen.ParseFaults(*faults); err != nil {
		return cfg, opts, fmt.Errorf("--faults: %v", err)
	}
	if cfg.Policy.Kind, err = gen.ParsePolicyKind(*policy); err != nil {
		return cfg, opts, fmt.Errorf("--policy: %v", err)
	}
	if *naive {
		cfg.Policy.NaiveShare = 1
	}
	if fs.Changed("stream") {
		cfg.StreamShare = 0
		if *stream {
			cfg.StreamShare = 1
		}
	}
	if cfg.Requests < 1 || cfg.Policy.MaxAttempts < 1 || cfg.Policy.AppTries < 1 || cfg.BatchSpans < 1 {
		return cfg, opts, fmt.Errorf("--requests, --max-attempts, --app-tries and --batch-spans must be at least 1")
	}
	if cfg.Rate <= 0 {
		return cfg, opts, fmt.Errorf("--rate must be above 0")
	}
	if cfg.Experiment < 0 || cfg.Experiment > 1 || cfg.BigInputs < 0 || cfg.BigInputs > 1 {
		return cfg, opts, fmt.Errorf("--experiment and --big-inputs must be from 0 to 1")
	}
	if cfg.SplitWorkers < 0 || cfg.SplitWorkers > 1000 {
		return cfg, opts, fmt.Errorf("--split-workers must be from 0 to 1000")
	}
	return cfg, opts, nil
}

// writeTo writes to path, or to stdout when path is "-".
func writeTo(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" {
		return write(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
