package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/retryscope/retryscope/ingest"
)

const shardExamples = `
  retryscope shard --shards 4 -o shards/ dumps/2026-12-02/
  retryscope shard --shards 16 -o /mnt/shards day1.pb.zst day2.jsonl.gz

Then run each shard where you like, e.g. for shard 1 of 4:
  run --db s1.duckdb --parquet pq/s1 --full shards/shard-1-of-4
and report the day over the union of the shards' Parquet:
  report --dataset pq/s1 --dataset pq/s2 --dataset pq/s3 --dataset pq/s4

A trace goes to the shard its trace id hashes to; a trace whose root is a
CLIENT span (an attempt that is a trace of its own) to the shard its client
service hashes to, with every other such trace of that service, so that the
attempts joined across traces meet in one shard. A shard that gets no spans
gets its folder alone: run it all the same. The inputs are read twice.
See docs/sharding.md.
`

// runShard is "retryscope shard".
func runShard(ctx context.Context, e env, args []string) error {
	fs := newFlags("shard", "shard --shards N -o DIR PATH...", shardExamples)
	n := fs.Int("shards", 0, fmt.Sprintf("how many shards, from 2 to %d (required)", ingest.MaxShards))
	dir := fs.StringP("output", "o", "", "directory to write shard-K-of-N/traces.jsonl.zst under (required)")
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return err
	}
	switch {
	case *n < 2 || *n > ingest.MaxShards:
		return usageErrorf("shard", "--shards %d: want a number from 2 to %d", *n, ingest.MaxShards)
	case *dir == "":
		return usageErrorf("shard", "shard needs -o DIR")
	case fs.NArg() == 0:
		return usageErrorf("shard", "shard needs the trace exports to split (files or directories)")
	}
	sum, err := ingest.Shard(ctx, fs.Args(), ingest.ShardOptions{N: *n, Dir: *dir, Log: e.stderr})
	if err != nil {
		return err
	}
	var total int64
	counts := make([]string, len(sum.Spans))
	for k, c := range sum.Spans {
		total += c
		counts[k] = fmt.Sprint(c)
	}
	fmt.Fprintf(e.stderr, "shard: %d files, %d spans into %d shards under %s (%s spans)\n", sum.Files, total, *n, *dir, strings.Join(counts, ", "))
	if empty := emptyShards(sum.Spans); empty != "" && total > 0 {
		why := ""
		if sum.ClientRooted > 0 {
			services := fmt.Sprintf("%d services", sum.ClientServices)
			if sum.ClientServices == 1 {
				services = "one service"
			}
			why = fmt.Sprintf(" (%d traces here are rooted in a CLIENT span and go with their client service: %s)", sum.ClientRooted, services)
		}
		fmt.Fprintf(e.stderr, "shard: %s got no spans%s: run them all the same, and report --dataset takes their datasets as shards of no requests\n", empty, why)
	}
	if len(sum.Rejected) > 0 {
		var parts []string
		for _, r := range ingest.SortedReasons(sum.Rejected) {
			parts = append(parts, fmt.Sprintf("%d %s", sum.Rejected[r], r))
		}
		fmt.Fprintf(e.stderr, "shard: left out %s\n", strings.Join(parts, ", "))
		return errRejected
	}
	return nil
}

// emptyShards names the shards (from 1) that got no spans, "" when none.
func emptyShards(spans []int64) string {
	var names []string
	for k, c := range spans {
		if c == 0 {
			names = append(names, fmt.Sprint(k+1))
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return "shard " + names[0]
	}
	return "shards " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
