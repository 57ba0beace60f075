package rebuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/internal/flagval"
	"github.com/retryscope/retryscope/model"
)

// MaxSplitWindow is the longest --split-window: no client waits a day
// before it retries.
const MaxSplitWindow = 24 * time.Hour

// Flags are the command-line flags that name what the rebuild cannot
// guess (see Keys), shared by the commands that rebuild.
type Flags struct {
	keys        Keys
	splitWindow time.Duration
	config      string
	fs          *pflag.FlagSet
}

// Register adds the flags to fs.
func (r *Flags) Register(fs *pflag.FlagSet) {
	r.fs = fs
	fs.StringSliceVar(&r.keys.RequestID, "id-key", nil, "attribute with a logical request id shared by its attempts, tried before retryscope.request.id (repeatable)")
	fs.StringSliceVar(&r.keys.Attempt, "attempt-key", nil, "attribute with the attempt number (1 = first), tried before retryscope.attempt (repeatable)")
	fs.StringSliceVar(&r.keys.FirstToken, "first-token-event", nil, "span event marking a stream's first token, beside gen_ai.first_token (repeatable)")
	fs.StringSliceVar(&r.keys.Route, "route-key", nil, "attribute naming where an attempt went, tried before server.address (repeatable)")
	fs.StringSliceVar(&r.keys.Model, "model-key", nil, "attribute naming the requested model, tried before gen_ai.request.model (repeatable)")
	fs.Var(flagval.NewDuration(&r.splitWindow, DefaultSplitWindow, time.Millisecond, MaxSplitWindow), "split-window", "longest gap after a failed attempt for a call in another trace to count as its retry")
	fs.StringVar(&r.config, "config", "", "JSON file with request_id_keys, attempt_keys, first_token_events, route_keys, model_keys, split_window (flags add to it)")
}

// config is the --config file.
type config struct {
	Keys
	SplitWindow string `json:"split_window,omitempty"`
}

// Options merges the config file (if any) with the flags; flags come
// first, and --split-window given wins over the file's.
func (r *Flags) Options() (Options, error) {
	opt := Options{Keys: r.keys, SplitWindow: r.splitWindow}
	if r.config == "" {
		return opt, nil
	}
	raw, err := os.ReadFile(r.config)
	if err != nil {
		return opt, fmt.Errorf("read --config: %w", err)
	}
	var cfg config
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
	if cfg.SplitWindow != "" && !r.fs.Changed("split-window") {
		if opt.SplitWindow, err = model.ParseDuration(cfg.SplitWindow); err != nil || opt.SplitWindow < time.Millisecond || opt.SplitWindow > MaxSplitWindow {
			return opt, fmt.Errorf("--config %s: split_window %q is not a duration from 1ms to %s such as 20s", r.config, cfg.SplitWindow, model.FormatDuration(MaxSplitWindow))
		}
	}
	return opt, nil
}
