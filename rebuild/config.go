package rebuild

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/retryscope/retryscope/model"
)

// MaxSplitWindow is the longest split window: no client waits a day
// before it retries.
const MaxSplitWindow = 24 * time.Hour

// config is the rebuild's configuration file: the keys, and the split
// window as a duration such as "20s".
type config struct {
	Keys
	SplitWindow string `json:"split_window,omitempty"`
}

// MergeConfig adds the keys of the JSON configuration read from r
// (request_id_keys, attempt_keys, first_token_events, route_keys,
// model_keys, split_window) after those opt holds, and takes its
// split_window unless keepWindow. Unknown fields are an error.
func (opt *Options) MergeConfig(r io.Reader, keepWindow bool) error {
	var cfg config
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return err
	}
	k := &opt.Keys
	k.RequestID = append(k.RequestID, cfg.RequestID...)
	k.Attempt = append(k.Attempt, cfg.Attempt...)
	k.FirstToken = append(k.FirstToken, cfg.FirstToken...)
	k.Route = append(k.Route, cfg.Route...)
	k.Model = append(k.Model, cfg.Model...)
	if cfg.SplitWindow != "" && !keepWindow {
		w, err := model.ParseDuration(cfg.SplitWindow)
		if err != nil || w < time.Millisecond || w > MaxSplitWindow {
			return fmt.Errorf("split_window %q is not a duration from 1ms to %s such as 20s", cfg.SplitWindow, model.FormatDuration(MaxSplitWindow))
		}
		opt.SplitWindow = w
	}
	return nil
}
