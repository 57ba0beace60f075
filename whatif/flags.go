package whatif

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/rebuild"
)

// Synopsis is `retryscope whatif --help`'s usage line and description.
const Synopsis = `whatif [--db FILE] [--max-attempts N|app=N,sdk=M] [--retry-budget RATIO[,WINDOW,FLOOR]] [--no-retry-on TRIGGER,...] [--feedback] [--format table|json]

Replay the recorded logical requests under another retry policy and print
the figures it would have produced beside the recorded ones.`

// Examples are `retryscope whatif --help`'s.
const Examples = `
  retryscope whatif --max-attempts 1
  retryscope whatif --max-attempts app=1,sdk=1
  retryscope whatif --retry-budget 0.1 --format json
  retryscope whatif --no-retry-on client_error
  retryscope whatif --max-attempts 1 --feedback

Every modeled figure is a replay of the recorded requests: without
--feedback, recorded attempts keep their outcome and duration; with it,
they answer the load the policy offers. The assumptions are printed with
the figures.
`

// Flags are the command line of a replay: the policy and the format.
type Flags struct {
	maxAttempts, budget, noRetryOn, format string
	seed                                   int64
	feedback                               bool
	policy                                 Policy
	rebuild                                rebuild.Flags
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.maxAttempts, "max-attempts", "", `attempts per call, the first included: N (the innermost loop), or per loop "sdk=N", "app=N,sdk=M" (default: as recorded)`)
	fs.StringVar(&f.budget, "retry-budget", "", "retries allowed per successful attempt: RATIO[,WINDOW,FLOOR], e.g. 0.1 or 0.1,10s,5 (default window 10s, floor 5; default: no budget)")
	fs.StringVar(&f.noRetryOn, "no-retry-on", "", "triggers never retried, e.g. client_error,rate_limited (default: as recorded)")
	fs.BoolVar(&f.feedback, "feedback", false, "let the servers answer the load the policy offers: per route, attempt latency and 429/timeout failures follow their recorded relation to the attempts in flight")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the draws for attempts the recorded requests did not make")
	fs.StringVar(&f.format, "format", "table", "output format: table or json")
	f.rebuild.Register(fs)
}

// Check reads the flags into the policy and returns the options the
// logical requests are rebuilt with, if they must be; args must be empty.
func (f *Flags) Check(args []string) (rebuild.Options, error) {
	switch {
	case len(args) > 0:
		return rebuild.Options{}, fmt.Errorf("whatif takes no arguments (got %q); name the database with --db", args[0])
	case f.format != "table" && f.format != "json":
		return rebuild.Options{}, fmt.Errorf("--format must be table or json, not %q", f.format)
	}
	if err := f.checkPolicy(); err != nil {
		return rebuild.Options{}, err
	}
	return f.rebuild.Options()
}

func (f *Flags) checkPolicy() error {
	var err error
	if f.maxAttempts != "" {
		if f.policy.Inner, f.policy.App, err = ParseMaxAttempts(f.maxAttempts); err != nil {
			return fmt.Errorf("--max-attempts: %w", err)
		}
	}
	if f.budget != "" {
		if f.policy.Budget, err = ParseBudget(f.budget); err != nil {
			return fmt.Errorf("--retry-budget: %w", err)
		}
	}
	if f.noRetryOn != "" {
		if f.policy.NoRetryOn, err = ParseTriggers(f.noRetryOn); err != nil {
			return fmt.Errorf("--no-retry-on: %w", err)
		}
	}
	return nil
}

// Run replays the requests of st under the policy and writes the result.
func (f *Flags) Run(ctx context.Context, st *store.Store, w io.Writer) error {
	res, err := Replay(ctx, st, f.policy, Options{Seed: f.seed, Feedback: f.feedback})
	if err != nil {
		return err
	}
	if f.format == "json" {
		return WriteJSON(w, res)
	}
	return WriteText(w, res)
}
