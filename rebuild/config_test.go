package rebuild

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMergeConfig: a configuration adds its keys after the flags' and
// sets the split window unless the flag was given; an unknown field or a
// window out of range is an error naming it.
func TestMergeConfig(t *testing.T) {
	const file = `{"request_id_keys": ["app.req"], "route_keys": ["peer.service"], "split_window": "45s"}`
	opt := Options{Keys: Keys{RequestID: []string{"flag.req"}}, SplitWindow: DefaultSplitWindow}
	if err := opt.MergeConfig(strings.NewReader(file), false); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(opt.Keys.RequestID, []string{"flag.req", "app.req"}) || !slices.Equal(opt.Keys.Route, []string{"peer.service"}) || opt.SplitWindow != 45*time.Second {
		t.Errorf("merged %+v", opt)
	}
	kept := Options{SplitWindow: time.Minute}
	if err := kept.MergeConfig(strings.NewReader(file), true); err != nil || kept.SplitWindow != time.Minute {
		t.Errorf("--split-window given: window %s, error %v", kept.SplitWindow, err)
	}
	for in, want := range map[string]string{
		`{"request_keys": ["x"]}`:  "request_keys",
		`{"split_window": "25h"}`:  "split_window",
		`{"split_window": "fast"}`: "split_window",
	} {
		var o Options
		if err := o.MergeConfig(strings.NewReader(in), false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one naming %s", in, err, want)
		}
	}
}
