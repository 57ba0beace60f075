package main

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/internal/flagval"
	"github.com/retryscope/retryscope/rebuild"
)

// rebuildFlags are the flags that name what the rebuild cannot guess (see
// rebuild.Keys), shared by the commands that rebuild.
type rebuildFlags struct {
	keys        rebuild.Keys
	splitWindow time.Duration
	config      string
	fs          *pflag.FlagSet
}

// register adds the flags to fs.
func (r *rebuildFlags) register(fs *pflag.FlagSet) {
	r.fs = fs
	fs.StringSliceVar(&r.keys.RequestID, "id-key", nil, "attribute with a logical request id shared by its attempts, tried before retryscope.request.id (repeatable)")
	fs.StringSliceVar(&r.keys.Attempt, "attempt-key", nil, "attribute with the attempt number (1 = first), tried before retryscope.attempt (repeatable)")
	fs.StringSliceVar(&r.keys.FirstToken, "first-token-event", nil, "span event marking a stream's first token, beside gen_ai.first_token (repeatable)")
	fs.StringSliceVar(&r.keys.Route, "route-key", nil, "attribute naming where an attempt went, tried before server.address (repeatable)")
	fs.StringSliceVar(&r.keys.Model, "model-key", nil, "attribute naming the requested model, tried before gen_ai.request.model (repeatable)")
	fs.Var(flagval.NewDuration(&r.splitWindow, rebuild.DefaultSplitWindow, time.Millisecond, rebuild.MaxSplitWindow), "split-window", "longest gap after a failed attempt for a call in another trace to count as its retry")
	fs.StringVar(&r.config, "config", "", "JSON file with request_id_keys, attempt_keys, first_token_events, route_keys, model_keys, split_window (flags add to it)")
}

// options merges the --config file (if any) with the flags; flags come
// first, and --split-window given wins over the file's.
func (r *rebuildFlags) options() (rebuild.Options, error) {
	opt := rebuild.Options{Keys: r.keys, SplitWindow: r.splitWindow}
	if r.config == "" {
		return opt, nil
	}
	raw, err := os.ReadFile(r.config)
	if err != nil {
		return opt, fmt.Errorf("read --config: %w", err)
	}
	if err := opt.MergeConfig(bytes.NewReader(raw), r.fs.Changed("split-window")); err != nil {
		return opt, fmt.Errorf("--config %s: %w", r.config, err)
	}
	return opt, nil
}
