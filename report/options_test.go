package report

import (
	"testing"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/model"
	"github.com/retryscope/retryscope/segment"
)

// TestOptionsValidate: the zero Options and the command's are valid;
// each value Build would misread is refused.
func TestOptionsValidate(t *testing.T) {
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("the zero Options: %v", err)
	}
	if err := commandOptions(t).Validate(); err != nil {
		t.Errorf("the command's Options: %v", err)
	}
	f := func(v float64) *float64 { return &v }
	for name, o := range map[string]Options{
		"baseline":      {Baseline: "fastest"},
		"section":       {Sections: []string{"everything"}},
		"window":        {Window: model.Window{Since: 10, Until: 10}},
		"min cohort":    {Segments: segment.Spec{MinCohort: MaxMinCohort + 1}},
		"workers":       {Workers: -1},
		"p99 budget":    {YieldBudget: analysis.YieldBudget{P99Ms: f(0.5)}},
		"amplification": {YieldBudget: analysis.YieldBudget{Amplification: f(0.9)}},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%s: %+v accepted", name, o)
		}
	}
}
