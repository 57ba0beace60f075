package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/whatif"
)

// checkFlags parses args, with file as a policy file when not empty, and
// checks them.
func checkFlags(t *testing.T, args []string, file string) (*whatifFlags, error) {
	t.Helper()
	f := &whatifFlags{}
	fs := pflag.NewFlagSet("whatif", pflag.ContinueOnError)
	f.register(fs)
	if file != "" {
		path := filepath.Join(t.TempDir(), "policy.txt")
		if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--policy", path)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f, f.check(nil)
}

func TestFallbackFlag(t *testing.T) {
	check := func(args []string, file string) (*whatifFlags, error) { return checkFlags(t, args, file) }
	f, err := check([]string{"--max-attempts", "app=1,fallback=0"}, "")
	if err != nil || f.policy.App != 1 || !f.policy.NoFallback {
		t.Errorf("--max-attempts app=1,fallback=0: policy %+v, error %v", f.policy, err)
	}
	if _, err := check([]string{"--max-attempts", "fallback=3"}, ""); err == nil || !strings.HasPrefix(err.Error(), "--max-attempts: ") {
		t.Errorf("--max-attempts fallback=3: error %v", err)
	}
	f, err = check(nil, "# no fallback\nmax-attempts: app=1,fallback=0\n")
	if err != nil || f.policy.App != 1 || !f.policy.NoFallback {
		t.Errorf("policy file max-attempts: app=1,fallback=0: policy %+v, error %v", f.policy, err)
	}
	if _, err := check(nil, "deadline: 5s\nmax-attempts: fallback=2\n"); err == nil || !strings.Contains(err.Error(), "policy.txt:2: max-attempts: ") {
		t.Errorf("policy file max-attempts: fallback=2: error %v", err)
	}
}

// TestQuotaAndNoProgressFlags: both policies read from the command line
// and from a policy file, a bad value naming the file and line.
func TestQuotaAndNoProgressFlags(t *testing.T) {
	check := func(args []string, file string) (*whatifFlags, error) { return checkFlags(t, args, file) }
	f, err := check([]string{"--retry-quota", "100", "--no-progress"}, "")
	if err != nil || f.policy.Quota == nil || f.policy.Quota.Tokens != 100 || !f.policy.NoProgress ||
		f.policy.String() != "--retry-quota 100,5,10,1 --no-progress" {
		t.Errorf("flags: policy %+v (%s), error %v", f.policy, f.policy.String(), err)
	}
	f, err = check(nil, "retry-quota: 50,5,10,1\nno-progress: true\n")
	if err != nil || f.policy.Quota == nil || f.policy.Quota.Tokens != 50 || !f.policy.NoProgress {
		t.Errorf("policy file: policy %+v, error %v", f.policy, err)
	}
	if _, err := check(nil, "no-progress: true\nretry-quota: 0\n"); err == nil || !strings.Contains(err.Error(), "policy.txt:2: retry-quota: ") {
		t.Errorf("policy file retry-quota: 0: error %v", err)
	}
	if _, err := check([]string{"--retry-quota", "5,1"}, ""); err == nil || !strings.HasPrefix(err.Error(), "--retry-quota: ") {
		t.Errorf("--retry-quota 5,1: error %v", err)
	}
	for _, off := range []string{"off", "none"} {
		f, err = check([]string{"--retry-quota", off}, "")
		if err != nil || f.policy.Quota != nil || !f.options().NoRecordedQuota || f.policy.String() != "recorded" {
			t.Errorf("--retry-quota %s: policy %+v, options %+v, error %v", off, f.policy, f.options(), err)
		}
	}
	if f, err = check(nil, "# the traces' quota aside\nretry-quota: off\n"); err != nil || !f.options().NoRecordedQuota {
		t.Errorf("policy file retry-quota: off: options %+v, error %v", f.options(), err)
	}
	if f, err = check([]string{"--retry-quota", "100"}, "retry-quota: off\n"); err != nil || f.options().NoRecordedQuota || f.policy.Quota == nil {
		t.Errorf("--retry-quota 100 over the file's off: policy %+v, options %+v, error %v", f.policy, f.options(), err)
	}
	if _, err := check(nil, "\nretry-quota: of\n"); err == nil || !strings.Contains(err.Error(), "policy.txt:2: retry-quota: ") {
		t.Errorf("policy file retry-quota: of: error %v", err)
	}
	f, err = check([]string{"--retry-concurrency", "4"}, "")
	if err != nil || f.policy.RetryLane != 4 || f.policy.String() != "--retry-concurrency 4" {
		t.Errorf("--retry-concurrency 4: policy %+v, error %v", f.policy, err)
	}
	if f, err = check(nil, "retry-concurrency: 2\n"); err != nil || f.policy.RetryLane != 2 {
		t.Errorf("policy file retry-concurrency: 2: policy %+v, error %v", f.policy, err)
	}
	if _, err := check(nil, "# lanes\nretry-concurrency: 0\n"); err == nil || !strings.Contains(err.Error(), "policy.txt:2: retry-concurrency: ") {
		t.Errorf("policy file retry-concurrency: 0: error %v", err)
	}
	f, err = check([]string{"--token-cap", "4000"}, "")
	if err != nil || f.policy.TokenCap != 4000 || f.policy.String() != "--token-cap 4000" {
		t.Errorf("--token-cap 4000: policy %+v, error %v", f.policy, err)
	}
	if f, err = check([]string{"--token-cap", "3000"}, "token-cap: 2000\n"); err != nil || f.policy.TokenCap != 3000 {
		t.Errorf("--token-cap 3000 over the file's 2000: policy %+v, error %v", f.policy, err)
	}
	if _, err := check(nil, "# tokens\ntoken-cap: 0\n"); err == nil || !strings.Contains(err.Error(), "policy.txt:2: token-cap: ") {
		t.Errorf("policy file token-cap: 0: error %v", err)
	}
	f, err = check([]string{"--concurrency", "16"}, "")
	if err != nil || f.policy.Concurrency != 16 || f.policy.String() != "--concurrency 16" {
		t.Errorf("--concurrency 16: policy %+v, error %v", f.policy, err)
	}
	if f, err = check(nil, "concurrency: first=8\n"); err != nil || f.policy.Concurrency != 8 || !f.policy.ConcurrencyFirst {
		t.Errorf("policy file concurrency: first=8: policy %+v, error %v", f.policy, err)
	}
	if f, err = check([]string{"--concurrency", "first=12", "--retry-concurrency", "2"}, ""); err != nil || f.policy.String() != "--retry-concurrency 2 --concurrency first=12" {
		t.Errorf("--concurrency first=12 --retry-concurrency 2: policy %q, error %v", f.policy, err)
	}
	if _, err := check(nil, "\n\nconcurrency: none\n"); err == nil || !strings.Contains(err.Error(), "policy.txt:3: concurrency: ") {
		t.Errorf("policy file concurrency: none: error %v", err)
	}
}

// TestPolicyFileEdges: a byte-order mark and CRLF line ends are read as
// an editor wrote them; a file too large to be a policy is refused.
func TestPolicyFileEdges(t *testing.T) {
	dir := t.TempDir()
	read := func(name string, data []byte) (*whatifFlags, error) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f := &whatifFlags{}
		f.register(pflag.NewFlagSet("whatif", pflag.ContinueOnError))
		f.policyFile = path
		return f, f.checkPolicy()
	}
	f, err := read("bom.txt", []byte("\xef\xbb\xbfmax-attempts: 2\r\nfeedback: true\r\n"))
	if err != nil || f.policy.Inner != 2 || !f.feedback {
		t.Errorf("BOM and CRLF: policy %+v, feedback %v, error %v", f.policy, f.feedback, err)
	}
	if _, err := read("big.txt", bytes.Repeat([]byte("# padding\n"), whatif.MaxPolicyFile/10+1)); err == nil || !strings.Contains(err.Error(), "a policy file holds a few lines") {
		t.Errorf("a file over %d bytes: error %v", whatif.MaxPolicyFile, err)
	}
}

// TestHedgeDelayFlag: --hedge-delay from the command line and from a
// policy file, off and 0 removing the hedges, a bad value naming the file
// and line.
func TestHedgeDelayFlag(t *testing.T) {
	check := func(args []string, file string) (*whatifFlags, error) { return checkFlags(t, args, file) }
	f, err := check([]string{"--hedge-delay", "100ms"}, "")
	if err != nil || f.policy.HedgeDelay != 100*time.Millisecond || f.policy.String() != "--hedge-delay 100ms" {
		t.Errorf("--hedge-delay 100ms: policy %+v, error %v", f.policy, err)
	}
	for _, off := range []string{"off", "0"} {
		if f, err = check([]string{"--hedge-delay", off}, ""); err != nil || !f.policy.NoHedge || f.policy.String() != "--hedge-delay off" {
			t.Errorf("--hedge-delay %s: policy %+v, error %v", off, f.policy, err)
		}
	}
	if f, err = check(nil, "hedge-delay: 50ms\n"); err != nil || f.policy.HedgeDelay != 50*time.Millisecond {
		t.Errorf("policy file hedge-delay: 50ms: policy %+v, error %v", f.policy, err)
	}
	if _, err := check(nil, "# hedging\nhedge-delay: soon\n"); err == nil || !strings.Contains(err.Error(), "policy.txt:2: hedge-delay: ") {
		t.Errorf("policy file hedge-delay: soon: error %v", err)
	}
	if _, err := check([]string{"--hedge-delay", "-5ms"}, ""); err == nil || !strings.HasPrefix(err.Error(), "--hedge-delay: ") {
		t.Errorf("--hedge-delay -5ms: error %v", err)
	}
}
