package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/internal/flagval"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/report"
	"github.com/retryscope/retryscope/whatif"
)

// whatifSynopsis is `retryscope whatif --help`'s usage line and description.
const whatifSynopsis = `whatif [--db FILE] [--policy FILE]
       [--max-attempts N|app=N,sdk=M] [--retry-budget RATIO[,WINDOW,FLOOR]]
       [--per-task-budget N] [--deadline D] [--no-retry-on TRIGGER,...]
       [--retry-quota TOKENS[,COST,TIMEOUT_COST,GAIN]|off] [--no-progress]
       [--retry-concurrency N] [--hedge-delay D|off] [--token-cap N]
       [--concurrency [first=]N]
       [--backoff [LAYER=]KIND,BASE,CAP] [--feedback] [--format table|json]

Replay the recorded logical requests under another retry policy and print
the figures it would have produced beside the recorded ones.`

// whatifExamples are `retryscope whatif --help`'s.
const whatifExamples = `
  retryscope whatif --max-attempts 1
  retryscope whatif --max-attempts app=1,sdk=1
  retryscope whatif --max-attempts app=1,fallback=0
  retryscope whatif --retry-budget 0.1 --format json
  retryscope whatif --retry-quota 500
  retryscope whatif --max-attempts 5 --retry-quota off
  retryscope whatif --no-retry-on client_error
  retryscope whatif --hedge-delay 100ms
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

// whatifFlags are the command line of a replay: the policy and the format.
type whatifFlags struct {
	maxAttempts, budget, quota, lane, noRetryOn, format string
	perTask, deadline, taskKey, policyFile, hedgeDelay  string
	backoff                                             []string
	seed                                                int64
	feedback, noProgress                                bool
	// noRecordedQuota: --retry-quota off.
	noRecordedQuota bool
	workers         int
	policy          whatif.Policy
	tokenCap        string
	concurrency     string
	// prices price the replay's spend: --prices over the built-in list
	// prices (whatif sets them; a report's --whatif takes the report's).
	prices model.Prices
	fs     *pflag.FlagSet
}

// register adds the flags to fs.
func (f *whatifFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.maxAttempts, "max-attempts", "", `attempts per call, the first included: N (the innermost loop), or per loop "sdk=N", "app=N,sdk=M"; app=N counts the app's tries before its fallback try, which stays unless fallback=0 (default: as recorded)`)
	fs.StringVar(&f.budget, "retry-budget", "", "retries allowed per successful attempt: RATIO[,WINDOW,FLOOR], e.g. 0.1 or 0.1,10s,5 (default window 10s, floor 5; default: no budget)")
	fs.StringVar(&f.quota, "retry-quota", "", "a retry quota per client service, as the AWS SDKs' standard retryer: TOKENS[,COST,TIMEOUT_COST,GAIN], e.g. 500 (a retry takes 5 tokens, 10 after a timeout; a successful retry gives them back, a first-attempt success adds 1), or off (no quota at all; default: the quota a service's traces show, where its requests failed on \"retry quota exceeded\", else none)")
	fs.StringVar(&f.lane, "retry-concurrency", "", "SDK retries in flight at once per client service, apart from first attempts, e.g. 10: a retry that finds them all taken is not made (no_capacity; default: no limit)")
	fs.StringVar(&f.tokenCap, "token-cap", "", "tokens per request, e.g. 4000: no retry once the input and output tokens of its attempts so far reach it (token_cap; default: no cap)")
	fs.StringVar(&f.concurrency, "concurrency", "", "attempts in flight at once per client service, first attempts and retries, e.g. 16, or first=N for first attempts only (a first-attempt lane beside --retry-concurrency's): an attempt that finds them all taken waits for one to end (a semaphore around each attempt; default: no limit)")
	fs.StringVar(&f.hedgeDelay, "hedge-delay", "", "in the segments whose recorded requests hedged (a second attempt while the first ran), start the hedge once the first attempt has run D, e.g. 100ms, or off (no hedges; default: as recorded)")
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

// readPolicyFile applies to set the policy file's settings that the
// command line does not give.
func (f *whatifFlags) readPolicyFile(set *whatif.Settings) error {
	fi, err := os.Stat(f.policyFile)
	if err != nil {
		return err
	}
	if fi.Size() > whatif.MaxPolicyFile {
		return fmt.Errorf("%s: %d bytes; a policy file holds a few lines (at most %d bytes)", f.policyFile, fi.Size(), whatif.MaxPolicyFile)
	}
	file, err := os.Open(f.policyFile)
	if err != nil {
		return err
	}
	defer file.Close()
	settings, err := whatif.ReadPolicyFile(file, f.policyFile)
	if err != nil {
		return err
	}
	given := map[string]bool{}
	for _, k := range whatif.PolicyKeys {
		given[k] = f.fs != nil && f.fs.Changed(k)
	}
	// A --backoff on the command line replaces the file's for its layer
	// only.
	for _, v := range f.backoff {
		if layer, _, err := whatif.ParseBackoff(v); err == nil {
			given["backoff "+layer] = true
		}
	}
	for _, st := range settings {
		if given[st.Key] {
			continue
		}
		if _, err := set.Set(st.Name, st.Value); err != nil {
			return fmt.Errorf("%s:%d: %s: %w", f.policyFile, st.Line, st.Name, err)
		}
	}
	return nil
}

// check reads the flags into the policy; args must be empty.
func (f *whatifFlags) check(args []string) error {
	switch {
	case len(args) > 0:
		return fmt.Errorf("whatif takes no arguments (got %q); name the database with --db", args[0])
	case f.format != "table" && f.format != "json":
		return fmt.Errorf("--format must be table or json, not %q", f.format)
	}
	return f.checkPolicy()
}

// checkPolicy reads the policy file and the flags into the policy and
// the options they set, a flag given on the command line over the file's
// line (whatif.Settings parses both).
func (f *whatifFlags) checkPolicy() error {
	var set whatif.Settings
	if f.policyFile != "" {
		if err := f.readPolicyFile(&set); err != nil {
			return fmt.Errorf("--policy: %w", err)
		}
	}
	for _, k := range whatif.PolicyKeys {
		if k == "backoff" {
			for _, v := range f.backoff {
				if _, err := set.Set(k, v); err != nil {
					return fmt.Errorf("--backoff: %w", err)
				}
			}
			continue
		}
		if fl := f.fs.Lookup(k); fl != nil && fl.Changed {
			if _, err := set.Set(k, fl.Value.String()); err != nil {
				return fmt.Errorf("--%s: %w", k, err)
			}
		}
	}
	f.policy, f.feedback, f.taskKey, f.noRecordedQuota = set.Policy, set.Feedback, set.TaskKey, set.NoRecordedQuota
	return nil
}

// run replays the requests of st under the policy and writes the result.
func (f *whatifFlags) run(ctx context.Context, st *store.Store, w io.Writer) error {
	res, err := whatif.Replay(ctx, st, f.policy, f.options())
	if err != nil {
		return err
	}
	if f.format == "json" {
		return whatif.WriteJSON(w, res)
	}
	return whatif.WriteText(w, res)
}

// whatifReportBlock reads the policy file path (as --policy reads it)
// into the replay it adds to a report (report.Options.Whatif). The
// report's window bounds the requests replayed, and its --task-key names
// their tasks unless the file does.
func whatifReportBlock(path string) (*report.Replay, error) {
	f := &whatifFlags{}
	f.register(pflag.NewFlagSet("whatif", pflag.ContinueOnError))
	f.policyFile = path
	if err := f.checkPolicy(); err != nil {
		return nil, err
	}
	return &report.Replay{Policy: f.policy, Options: f.options()}, nil
}

// options are the replay's options the flags give.
func (f *whatifFlags) options() whatif.Options {
	return whatif.Options{Seed: f.seed, Feedback: f.feedback, TaskKey: f.taskKey, Workers: f.workers, NoRecordedQuota: f.noRecordedQuota,
		Prices: f.prices}
}
