// Command fixturegen writes the hand-built fixtures of real client
// libraries and instrumentations under testdata/fixtures (see the README
// there for what each one is based on). Run from the repository root:
//
//	go run ./internal/fixturegen
//
// Every timestamp is chosen here by hand, with a seeded jitter for ids and
// sub-millisecond noise; the expected truth is written from the same
// scenario, not inferred from the spans. Deterministic: run it again and the
// files come out byte for byte the same, which TestCommittedFixtures checks.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// t0 is 2026-11-27T14:03:11.482Z, a weekday afternoon.
const t0 = int64(1795788191482000000)

func main() {
	out := flag.String("out", filepath.Join("testdata", "fixtures"), "directory to write the fixtures to")
	flag.Parse()
	if err := build(*out); err != nil {
		fmt.Fprintln(os.Stderr, "fixturegen:", err)
		os.Exit(1)
	}
}

// build writes every fixture under out, one directory each.
func build(out string) error {
	steps := []func() error{
		func() error { return buildNode(out, "openai-node-undici-app-fallback", 11, true) },
		func() error { return buildNode(out, "openai-node-undici-app-fallback-nocapture", 12, false) },
		func() error { return buildPython(out) },
		func() error { return buildGrpcGo(out) },
		func() error { return buildBFF(out) },
		func() error { return buildGrpcJava(out) },
		func() error { return buildNodeStall(out, "openai-node-undici-stream-stall", 13, t0+ms(3_600_000)) },
		func() error { return buildRetryableHTTP(filepath.Join(out, "go-retryablehttp-otelhttp"), t0) },
		func() error {
			return buildNodeRetryAfter(out, "anthropic-node-undici-retry-after", 14, t0+ms(7_200_000))
		},
		func() error {
			return buildAWSThrottle(filepath.Join(out, "aws-sdk-go-v2-dynamodb-throttling"), t0+ms(10_800_000))
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}
