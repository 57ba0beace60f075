package whatif

import (
	"bytes"
	"context"
	"fmt"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/report"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/internal/flagval"

	"github.com/retryscope/retryscope/internal/store"
)

// Synopsis is `retryscope whatif --help`'s usage line and description.
const Synopsis = `whatif [--db FILE] [--policy FILE]
       [--max-attempts N|app=N,sdk=M] [--retry-budget RATIO[,WINDOW,FLOOR]]
       [--per-task-budget N] [--deadline D] [--no-retry-on TRIGGER,...]
       [--retry-quota TOKENS[,COST,TIMEOUT_COST,GAIN]] [--no-progress]
       [--retry-concurrency N]
       [--backoff [LAYER=]KIND,BASE,CAP] [--feedback] [--format table|json]

Replay the recorded logical requests under another retry policy and print
the figures it would have produced beside the recorded ones.`

// Examples are `retryscope whatif --help`'s.
const Examples = `
  retryscope whatif --max-attempts 1
  retryscope whatif --max-attempts app=1,sdk=1
  retryscope whatif --max-attempts app=1,fallback=0
  retryscope whatif --retry-budget 0.1 --format json
  retryscope whatif --retry-quota 500
  retryscope whatif --no-retry-on client_error
  retryscope whatif --max-attempts 1 --feedback
  retryscope whatif --deadline 5s --backoff full-jitter,200ms,8s
  retryscope whatif --per-task-budget 3 --task-key session.id
  retryscope whatif --policy policy.txt --feedback

A policy file holds the same settings, one "name: value" a line (the flag
names without their dashes; # starts a comment), e.g.

  max-attempts: app=2,sdk=3
  retry-budget: 0.1,10s,5
  backoff: full-jitter,200ms,8s

Flags given on the command line override the file.

Every modeled figure is a replay of the recorded requests: without
--feedback, recorded attempts keep their outcome and duration; with it,
they answer the load the policy offers. The assumptions are printed with
the figures.
`

// Flags are the command line of a replay: the policy and the format.
type Flags struct {
	maxAttempts, budget, quota, lane, noRetryOn, format string
	perTask, deadline, taskKey, policyFile              string
	backoff                                             []string
	seed                                                int64
	feedback, noProgress                                bool
	workers                                             int
	policy                                              Policy
	fs                                                  *pflag.FlagSet
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.maxAttempts, "max-attempts", "", `attempts per call, the first included: N (the innermost loop), or per loop "sdk=N", "app=N,sdk=M"; app=N counts the app's tries before its fallback try, which stays unless fallback=0 (default: as recorded)`)
	fs.StringVar(&f.budget, "retry-budget", "", "retries allowed per successful attempt: RATIO[,WINDOW,FLOOR], e.g. 0.1 or 0.1,10s,5 (default window 10s, floor 5; default: no budget)")
	fs.StringVar(&f.quota, "retry-quota", "", "a retry quota per client service, as the AWS SDKs' standard retryer: TOKENS[,COST,TIMEOUT_COST,GAIN], e.g. 500 (a retry takes 5 tokens, 10 after a timeout; a successful retry gives them back, a first-attempt success adds 1; default: no quota)")
	fs.StringVar(&f.lane, "retry-concurrency", "", "SDK retries in flight at once per client service, apart from first attempts, e.g. 10: a retry that finds them all taken is not made (no_capacity; default: no limit)")
	fs.BoolVar(&f.noProgress, "no-progress", false, "stop a call's retries once two of its attempts in a row failed the same way (the same trigger)")
	fs.StringVar(&f.noRetryOn, "no-retry-on", "", "triggers never retried, e.g. client_error,rate_limited (default: as recorded)")
	fs.StringVar(&f.perTask, "per-task-budget", "", "retries each task may make in all, e.g. 3 (a task: a trace, or one --task-key value; default: no limit)")
	fs.StringVar(&f.taskKey, "task-key", "", "anchor-span attribute naming the task a request belongs to, for --per-task-budget (default: its trace)")
	fs.StringVar(&f.deadline, "deadline", "", "each request's deadline from its start, e.g. 5s: no retry starts that would end past it, taking the segment's median served attempt, and an attempt running at the deadline is cut (default: none)")
	fs.StringArrayVar(&f.backoff, "backoff", nil, "waits before retries: [LAYER=]KIND,BASE,CAP with KIND fixed, full-jitter or decorrelated and LAYER sdk (the default) or app, e.g. full-jitter,200ms,8s; repeat for both layers (default: as recorded)")
	fs.StringVar(&f.policyFile, "policy", "", `file of policy settings, one "name: value" a line (see Examples); flags override it`)
	fs.BoolVar(&f.feedback, "feedback", false, "let the servers answer the load the policy offers: per route, attempt latency and 429/timeout failures follow their recorded relation to the attempts in flight")
	fs.Var(flagval.NewInt(&f.workers, 0, 1, report.MaxWorkers).OrZero("none"), "workers", "servers' concurrent workers the offered load λ·S is set against, recorded and modeled: utilisation λ·S/N (default: none)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the draws for attempts the recorded requests did not make")
	fs.StringVar(&f.format, "format", "table", "output format: table or json")
	f.fs = fs
}

// maxPolicyFile bounds a policy file: it is read whole.
const maxPolicyFile = 64 << 10

// policyKeys are the settings a policy file may hold: the policy's flags.
var policyKeys = []string{"max-attempts", "retry-budget", "retry-quota", "retry-concurrency", "no-progress", "per-task-budget", "task-key", "deadline", "no-retry-on", "backoff", "feedback"}

// readPolicyFile sets, from the policy file, every policy flag not given
// on the command line.
func (f *Flags) readPolicyFile() error {
	fi, err := os.Stat(f.policyFile)
	if err != nil {
		return err
	}
	if fi.Size() > maxPolicyFile {
		return fmt.Errorf("%s: %d bytes; a policy file holds a few lines (at most %d bytes)", f.policyFile, fi.Size(), maxPolicyFile)
	}
	data, err := os.ReadFile(f.policyFile)
	if err != nil {
		return err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a byte-order mark some editors write
	given := map[string]bool{}
	for _, k := range policyKeys {
		given[k] = f.fs != nil && f.fs.Changed(k)
	}
	// A --backoff on the command line replaces the file's for its layer
	// only.
	for _, v := range f.backoff {
		if layer, _, err := ParseBackoff(v); err == nil {
			given["backoff "+layer] = true
		}
	}
	seen := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		at := fmt.Sprintf("%s:%d", f.policyFile, i+1)
		name, value, ok := strings.Cut(line, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok:
			return fmt.Errorf("%s: want name: value, e.g. max-attempts: 2", at)
		case !slices.Contains(policyKeys, name):
			return fmt.Errorf("%s: unknown setting %q (want one of %s)", at, name, strings.Join(policyKeys, ", "))
		case value == "":
			return fmt.Errorf("%s: %s has no value", at, name)
		}
		key, err := checkSetting(name, value)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", at, name, err)
		}
		if prev, ok := seen[key]; ok {
			return fmt.Errorf("%s: %s is set again (first on line %d)", at, key, prev)
		}
		seen[key] = i + 1
		if given[key] {
			continue
		}
		if err := f.fs.Set(name, value); err != nil {
			return fmt.Errorf("%s: %s: %w", at, name, err)
		}
	}
	return nil
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
		_, err = ParseQuota(value)
	case "retry-concurrency":
		_, err = ParseRetryLane(value)
	case "per-task-budget":
		_, err = ParsePerTaskBudget(value)
	case "deadline":
		_, err = ParseDeadline(value)
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

// Check reads the flags into the policy; args must be empty.
func (f *Flags) Check(args []string) error {
	switch {
	case len(args) > 0:
		return fmt.Errorf("whatif takes no arguments (got %q); name the database with --db", args[0])
	case f.format != "table" && f.format != "json":
		return fmt.Errorf("--format must be table or json, not %q", f.format)
	}
	return f.checkPolicy()
}

func (f *Flags) checkPolicy() error {
	var err error
	if f.policyFile != "" {
		if err := f.readPolicyFile(); err != nil {
			return fmt.Errorf("--policy: %w", err)
		}
	}
	if f.maxAttempts != "" {
		if f.policy.Inner, f.policy.App, f.policy.NoFallback, err = ParseMaxAttemptsFallback(f.maxAttempts); err != nil {
			return fmt.Errorf("--max-attempts: %w", err)
		}
	}
	if f.budget != "" {
		if f.policy.Budget, err = ParseBudget(f.budget); err != nil {
			return fmt.Errorf("--retry-budget: %w", err)
		}
	}
	f.policy.NoProgress = f.noProgress
	if f.lane != "" {
		if f.policy.RetryLane, err = ParseRetryLane(f.lane); err != nil {
			return fmt.Errorf("--retry-concurrency: %w", err)
		}
	}
	if f.quota != "" {
		if f.policy.Quota, err = ParseQuota(f.quota); err != nil {
			return fmt.Errorf("--retry-quota: %w", err)
		}
	}
	if f.noRetryOn != "" {
		if f.policy.NoRetryOn, err = ParseTriggers(f.noRetryOn); err != nil {
			return fmt.Errorf("--no-retry-on: %w", err)
		}
	}
	if f.perTask != "" {
		if f.policy.PerTaskBudget, err = ParsePerTaskBudget(f.perTask); err != nil {
			return fmt.Errorf("--per-task-budget: %w", err)
		}
	}
	if f.deadline != "" {
		if f.policy.Deadline, err = ParseDeadline(f.deadline); err != nil {
			return fmt.Errorf("--deadline: %w", err)
		}
	}
	for _, s := range f.backoff {
		layer, b, err := ParseBackoff(s)
		if err != nil {
			return fmt.Errorf("--backoff: %w", err)
		}
		if layer == "app" {
			f.policy.AppBackoff = b
		} else {
			f.policy.InnerBackoff = b
		}
	}
	return nil
}

// Run replays the requests of st under the policy and writes the result.
func (f *Flags) Run(ctx context.Context, st *store.Store, w io.Writer) error {
	res, err := Replay(ctx, st, f.policy, Options{Seed: f.seed, Feedback: f.feedback, TaskKey: f.taskKey, Workers: f.workers})
	if err != nil {
		return err
	}
	if f.format == "json" {
		return WriteJSON(w, res)
	}
	return WriteText(w, res)
}

// ReportBlock reads the policy file path (as --policy reads it) and returns
// what adds a replay under it to a report: report.Options.Whatif. The
// report's window bounds the requests replayed, and its --task-key names
// their tasks unless the file does.
func ReportBlock(path string) (func(context.Context, *store.Store, model.Window, string) (any, []report.Table, error), error) {
	f := &Flags{}
	f.Register(pflag.NewFlagSet("whatif", pflag.ContinueOnError))
	f.policyFile = path
	if err := f.checkPolicy(); err != nil {
		return nil, err
	}
	return func(ctx context.Context, st *store.Store, window model.Window, taskKey string) (any, []report.Table, error) {
		if f.taskKey != "" {
			taskKey = f.taskKey
		}
		res, err := Replay(ctx, st, f.policy, Options{Seed: f.seed, Feedback: f.feedback, TaskKey: taskKey, Window: window, Workers: f.workers})
		if err != nil {
			return nil, nil, err
		}
		return res, res.Tables(), nil
	}, nil
}
