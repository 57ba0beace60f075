package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retryscope/retryscope/baseline"
)

// The largest values of the report's number options: beyond them a value
// is a typo, not a setting. A cohort of a billion requests pools
// everything; no ceiling keeps a p99 of a day or a hundred attempts per
// request.
const (
	MaxMinCohort           = 1_000_000_000
	MaxP99Budget           = 24 * time.Hour
	MaxAmplificationBudget = 100
	// MaxWorkers is the most workers Options.Workers takes.
	MaxWorkers = 10_000_000
)

// DefaultMinCohort is the least cohort the command line asks for unless
// told: 10 requests give a median (the sample rule's least for p50), so
// the retried requests of a day stand apart by their first trigger
// instead of pooling into (other).
const DefaultMinCohort = 10

// Validate refuses options Build would misread: an unknown baseline kind
// or section, a window that ends where it starts or before, and a cohort,
// budget or worker count beyond its bounds.
func (o Options) Validate() error {
	if o.Baseline != "" && o.Baseline != "all" && o.Baseline != "none" && !slices.Contains(baseline.Kinds(), o.Baseline) {
		return fmt.Errorf("unknown baseline %q (want %s, all or none)", o.Baseline, strings.Join(baseline.Kinds(), ", "))
	}
	for _, s := range o.Sections {
		if !slices.Contains(Sections, s) {
			return fmt.Errorf("unknown section %q (want %s)", s, strings.Join(Sections, ", "))
		}
	}
	if w := o.Window; w.Since != 0 && w.Until != 0 && w.Until <= w.Since {
		return fmt.Errorf("the window ends (%d) where it starts (%d) or before", w.Until, w.Since)
	}
	if c := o.Segments.MinCohort; c < 0 || c > MaxMinCohort {
		return fmt.Errorf("min cohort %d: want from 1 to %d (0: the default)", c, MaxMinCohort)
	}
	if o.Workers < 0 || o.Workers > MaxWorkers {
		return fmt.Errorf("workers %d: want from 1 to %d (0: an estimate)", o.Workers, MaxWorkers)
	}
	if p := o.YieldBudget.P99Ms; p != nil && !(*p >= 1 && *p <= float64(MaxP99Budget/time.Millisecond)) {
		return fmt.Errorf("p99 budget %v ms: want from 1 ms to %d ms", *p, MaxP99Budget/time.Millisecond)
	}
	if a := o.YieldBudget.Amplification; a != nil && !(*a >= 1 && *a <= MaxAmplificationBudget) {
		return fmt.Errorf("amplification budget %v: want from 1 to %d", *a, MaxAmplificationBudget)
	}
	return nil
}
