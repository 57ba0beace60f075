package whatif

import (
	"reflect"
	"strings"
	"testing"
)

// TestReadPolicyFile: settings come back in file order with their lines
// and keys (a backoff's per layer); a bad line is an error naming the file
// and the line.
func TestReadPolicyFile(t *testing.T) {
	got, err := ReadPolicyFile(strings.NewReader("\xef\xbb\xbf# policy\r\nmax-attempts: 2\r\n\nbackoff: app=fixed,1s,1s\nbackoff: full-jitter,200ms,8s # sdk\n"), "p.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []Setting{{"max-attempts", "2", "max-attempts", 2}, {"backoff", "app=fixed,1s,1s", "backoff app", 4}, {"backoff", "full-jitter,200ms,8s", "backoff sdk", 5}}
	if len(got) != len(want) {
		t.Fatalf("settings %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("setting %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for in, msg := range map[string]string{
		"max-attempts 2":                     "p.txt:1: want name: value",
		"\nspeed: fast":                      `p.txt:2: unknown setting "speed"`,
		"deadline:":                          "p.txt:1: deadline has no value",
		"deadline: 5s\ndeadline: 6s":         "p.txt:2: deadline is set again (first on line 1)",
		"retry-quota: 0":                     "p.txt:1: retry-quota: ",
		strings.Repeat("#\n", MaxPolicyFile): "over 65536 bytes",
	} {
		if _, err := ReadPolicyFile(strings.NewReader(in), "p.txt"); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%.30q: error %v, want %q", in, err, msg)
		}
	}
}

// TestSettingsSetEveryKey: every policy-file key is a setting Set
// applies (a key added to PolicyKeys without its case fails here), the
// value landing in the policy or options, and another name is refused.
func TestSettingsSetEveryKey(t *testing.T) {
	values := map[string]string{
		"max-attempts": "app=2,sdk=3", "retry-budget": "0.1", "retry-quota": "500", "retry-concurrency": "4",
		"token-cap": "4000", "concurrency": "first=8", "no-progress": "true", "hedge-delay": "100ms",
		"per-task-budget": "3", "task-key": "session.id", "deadline": "5s", "no-retry-on": "client_error",
		"backoff": "app=fixed,1s,1s", "feedback": "true",
	}
	for _, k := range PolicyKeys {
		v, ok := values[k]
		if !ok {
			t.Errorf("no test value for %s", k)
			continue
		}
		var s Settings
		if _, err := s.Set(k, v); err != nil {
			t.Errorf("%s: %s: %v", k, v, err)
		}
		if reflect.DeepEqual(s, Settings{}) {
			t.Errorf("%s: %s changed nothing", k, v)
		}
	}
	var s Settings
	if _, err := s.Set("max-attempt", "2"); err == nil {
		t.Error("an unknown setting was taken")
	}
}
