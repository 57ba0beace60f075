package whatif

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// MaxPolicyFile bounds a policy file: it is read whole.
const MaxPolicyFile = 64 << 10

// PolicyKeys are the settings a policy file may hold: the policy's
// command-line flags, without their dashes.
var PolicyKeys = []string{"max-attempts", "retry-budget", "retry-quota", "retry-concurrency", "token-cap", "concurrency", "no-progress", "hedge-delay", "per-task-budget", "task-key", "deadline", "no-retry-on", "backoff", "feedback"}

// Setting is one line of a policy file: the setting's name and value, the
// key it sets (the name, or for a backoff "backoff LAYER", so that each
// layer's is set once), and its line number.
type Setting struct {
	Name, Value, Key string
	Line             int
}

// ReadPolicyFile reads the "name: value" lines of a policy file from r
// (# starts a comment; a byte-order mark and CRLF line ends are read as an
// editor wrote them), checking each value as its flag would. An error
// names the file as name and the line.
func ReadPolicyFile(r io.Reader, name string) ([]Setting, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPolicyFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxPolicyFile {
		return nil, fmt.Errorf("%s: over %d bytes; a policy file holds a few lines (at most %d bytes)", name, MaxPolicyFile, MaxPolicyFile)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a byte-order mark some editors write
	var out []Setting
	seen := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		at := fmt.Sprintf("%s:%d", name, i+1)
		key, value, ok := strings.Cut(line, ":")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case !ok:
			return nil, fmt.Errorf("%s: want name: value, e.g. max-attempts: 2", at)
		case !slices.Contains(PolicyKeys, key):
			return nil, fmt.Errorf("%s: unknown setting %q (want one of %s)", at, key, strings.Join(PolicyKeys, ", "))
		case value == "":
			return nil, fmt.Errorf("%s: %s has no value", at, key)
		}
		var check Settings
		sets, err := check.Set(key, value)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", at, key, err)
		}
		if prev, ok := seen[sets]; ok {
			return nil, fmt.Errorf("%s: %s is set again (first on line %d)", at, sets, prev)
		}
		seen[sets] = i + 1
		out = append(out, Setting{Name: key, Value: value, Key: sets, Line: i + 1})
	}
	return out, nil
}

// Settings are what a replay is asked for, as a policy file's lines or
// the command line's flags give it: the policy, and the options that a
// policy file may set too.
type Settings struct {
	Policy   Policy
	Feedback bool
	TaskKey  string
	// NoRecordedQuota: retry-quota off (Options.NoRecordedQuota).
	NoRecordedQuota bool
}

// Set parses value as the setting name, one of PolicyKeys, and applies
// it, a later value of a setting replacing an earlier one. It returns the
// key it set: the name, or for a backoff "backoff LAYER" (each layer's is
// its own).
func (s *Settings) Set(name, value string) (key string, err error) {
	p := &s.Policy
	switch name {
	case "max-attempts":
		p.Inner, p.App, p.NoFallback, err = ParseMaxAttemptsFallback(value)
	case "retry-budget":
		p.Budget, err = ParseBudget(value)
	case "retry-quota":
		p.Quota, s.NoRecordedQuota, err = ParseQuotaSetting(value)
	case "retry-concurrency":
		p.RetryLane, err = ParseRetryLane(value)
	case "concurrency":
		p.Concurrency, p.ConcurrencyFirst, err = ParseConcurrency(value)
	case "token-cap":
		p.TokenCap, err = ParseTokenCap(value)
	case "per-task-budget":
		p.PerTaskBudget, err = ParsePerTaskBudget(value)
	case "task-key":
		s.TaskKey = value
	case "deadline":
		p.Deadline, err = ParseDeadline(value)
	case "hedge-delay":
		p.HedgeDelay, p.NoHedge, err = ParseHedgeDelay(value)
	case "no-retry-on":
		p.NoRetryOn, err = ParseTriggers(value)
	case "feedback":
		s.Feedback, err = strconv.ParseBool(value)
	case "no-progress":
		p.NoProgress, err = strconv.ParseBool(value)
	case "backoff":
		layer, b, err := ParseBackoff(value)
		if err != nil {
			return name, err
		}
		if layer == "app" {
			p.AppBackoff = b
		} else {
			p.InnerBackoff = b
		}
		return name + " " + layer, nil
	default:
		return name, fmt.Errorf("unknown setting %q (want one of %s)", name, strings.Join(PolicyKeys, ", "))
	}
	return name, err
}
