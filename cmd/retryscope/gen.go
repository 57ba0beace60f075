package main

import (
	"context"
	"fmt"

	"github.com/retryscope/retryscope/internal/sim"
)

const genExamples = `
  retryscope gen --seed 1 --requests 300 -o traces.jsonl
  retryscope gen --shapes wrapped,orphan --nested --stream \
    --faults 429=0.1,5xx=0.05 -o llm.jsonl
  retryscope gen --client-policy none --format proto -o noretry.bin \
    --truth noretry.truth.json
  retryscope gen --experiment 0.3 --counterfactual -o experiment.jsonl
`

// runGen is "retryscope gen".
func runGen(_ context.Context, e env, args []string) error {
	fs := newFlags("gen", "gen [flags] -o FILE\n\nSimulate clients retrying against servers that slow down under load, and\nwrite the traces they would export together with the truth: every logical\nrequest, its attempts, triggers and latency decomposition, as JSON.", genExamples)
	cfg := sim.DefaultConfig()
	finish := registerGen(fs, &cfg)
	format := fs.String("format", "json", "output format: json (OTLP/JSON lines) or proto (4-byte length-framed OTLP protobuf)")
	out := fs.StringP("output", "o", "", `traces file, "-" for stdout (required)`)
	truth := fs.String("truth", "", `truth file (default: FILE.truth.json; none when -o is "-")`)
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("gen", "gen takes no arguments, got %q", fs.Arg(0))
	case *out == "":
		return usageErrorf("gen", "gen needs -o FILE")
	case *format != "json" && *format != "proto":
		return usageErrorf("gen", "--format must be json or proto, not %q", *format)
	case *out == "-" && *truth == "-":
		return usageErrorf("gen", "-o and --truth cannot both be stdout")
	}
	if *truth == "" && *out != "-" {
		*truth = *out + ".truth.json"
	}
	if err := finish(); err != nil {
		return &usageError{"gen", err}
	}

	summary, err := sim.WriteFiles(cfg, *format, *out, *truth, e.stdout)
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	fmt.Fprintln(e.stderr, "gen: "+summary)
	return nil
}
