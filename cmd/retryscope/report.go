package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/internal/pipeline"
	"github.com/retryscope/retryscope/rebuild"
	"github.com/retryscope/retryscope/report"
)

const reportExamples = `
  retryscope report
  retryscope report --db traces.duckdb --explain
  retryscope report --baseline all --by model,route
  retryscope report --by trigger,time:1h --since 2026-11-29T00:00:00Z --ci
  retryscope report --by attr:cloud.region --where outcome=error -o report.md
  retryscope report -o report.html
  retryscope report --format json -o report.json
  retryscope report --id-key app.request_id --attempt-key app.try --first-token-event stream.first_chunk

Dimensions for --by and --where: service, operation, model, route,
retry_route, trigger, region, environment, input_tokens, output_tokens,
stream, cache, outcome, time (time:15m), attr:NAME (anchor span attribute),
resource:NAME (resource attribute). --where, --since and --until narrow the
segment table; the workload block always covers every request.

The report rebuilds logical requests and baselines first when they are
missing or older than the last ingest.
`

func runReport(ctx context.Context, e env, args []string) error {
	fs := newFlags("report", "report [--db FILE] [--baseline KIND] [--by DIM,...] [--format table|markdown|csv|json|html] [-o FILE]", reportExamples)
	var db dbFlags
	db.register(fs)
	var out report.Flags
	out.Register(fs, "output")
	explain := fs.Bool("explain", false, "also show how many logical requests each rebuild rule built")
	var rb rebuildFlags
	rb.register(fs)
	if err := parseFlags(fs, args, e.stdout); err != nil {
		return err
	}
	if err := out.Check(); err != nil {
		return &usageError{"report", err}
	}
	rb.splitSet = fs.Changed("split-window")
	rbOpt, err := rb.options()
	if err != nil {
		return &usageError{"report", err}
	}
	if fs.NArg() > 0 {
		return usageErrorf("report", "report takes no arguments (got %q); name the database with --db", fs.Arg(0))
	}
	st, err := pipeline.OpenDerived(ctx, db.path, db.open, rbOpt, e.stderr)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer st.Close()
	if err := out.Write(ctx, st, e.stdout, db.path, *explain); err != nil {
		return fmt.Errorf("report %s: %w", db.path, err)
	}
	return nil
}

// rebuildFlags name what the rebuild cannot guess; see rebuild.Keys.
type rebuildFlags struct {
	keys        rebuild.Keys
	splitWindow time.Duration
	splitSet    bool // --split-window was given, so it wins over --config
	config      string
}

func (r *rebuildFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&r.keys.RequestID, "id-key", nil, "attribute with a logical request id shared by its attempts, tried before retryscope.request.id (repeatable)")
	fs.StringSliceVar(&r.keys.Attempt, "attempt-key", nil, "attribute with the attempt number (1 = first), tried before retryscope.attempt (repeatable)")
	fs.StringSliceVar(&r.keys.FirstToken, "first-token-event", nil, "span event marking a stream's first token, beside gen_ai.first_token (repeatable)")
	fs.StringSliceVar(&r.keys.Route, "route-key", nil, "attribute naming where an attempt went, tried before server.address (repeatable)")
	fs.StringSliceVar(&r.keys.Model, "model-key", nil, "attribute naming the requested model, tried before gen_ai.request.model (repeatable)")
	fs.DurationVar(&r.splitWindow, "split-window", rebuild.DefaultSplitWindow, "longest gap after a failed attempt for a call in another trace to count as its retry")
	fs.StringVar(&r.config, "config", "", "JSON file with request_id_keys, attempt_keys, first_token_events, route_keys, model_keys, split_window (flags add to it)")
}

// rebuildConfig is the --config file.
type rebuildConfig struct {
	rebuild.Keys
	SplitWindow string `json:"split_window,omitempty"`
}

// options merges the config file (if any) with the flags; flags come first.
func (r *rebuildFlags) options() (rebuild.Options, error) {
	opt := rebuild.Options{Keys: r.keys, SplitWindow: r.splitWindow}
	if r.config == "" {
		return opt, nil
	}
	raw, err := os.ReadFile(r.config)
	if err != nil {
		return opt, fmt.Errorf("read --config: %w", err)
	}
	var cfg rebuildConfig
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return opt, fmt.Errorf("--config %s: %w", r.config, err)
	}
	k := &opt.Keys
	k.RequestID = append(k.RequestID, cfg.RequestID...)
	k.Attempt = append(k.Attempt, cfg.Attempt...)
	k.FirstToken = append(k.FirstToken, cfg.FirstToken...)
	k.Route = append(k.Route, cfg.Route...)
	k.Model = append(k.Model, cfg.Model...)
	if cfg.SplitWindow != "" && !r.splitSet {
		if opt.SplitWindow, err = time.ParseDuration(cfg.SplitWindow); err != nil || opt.SplitWindow <= 0 {
			return opt, fmt.Errorf("--config %s: split_window %q is not a positive duration such as 20s", r.config, cfg.SplitWindow)
		}
	}
	return opt, nil
}
