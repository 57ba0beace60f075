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
		sets, err := checkSetting(key, value)
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

// checkSetting checks a policy file's value for name and returns what it
// sets: the name, or for a backoff "backoff LAYER".
func checkSetting(name, value string) (string, error) {
	var err error
	switch name {
	case "max-attempts":
		_, _, _, err = ParseMaxAttemptsFallback(value)
	case "retry-budget":
		_, err = ParseBudget(value)
	case "retry-quota":
		_, _, err = ParseQuotaSetting(value)
	case "retry-concurrency":
		_, err = ParseRetryLane(value)
	case "concurrency":
		_, _, err = ParseConcurrency(value)
	case "token-cap":
		_, err = ParseTokenCap(value)
	case "per-task-budget":
		_, err = ParsePerTaskBudget(value)
	case "deadline":
		_, err = ParseDeadline(value)
	case "hedge-delay":
		_, _, err = ParseHedgeDelay(value)
	case "no-retry-on":
		_, err = ParseTriggers(value)
	case "feedback", "no-progress":
		_, err = strconv.ParseBool(value)
	case "backoff":
		layer, _, err := ParseBackoff(value)
		return name + " " + layer, err
	}
	return name, err
}
