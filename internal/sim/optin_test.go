package sim

import (
	"bytes"
	"math"
	"testing"
)

// TestCounterfactualChangesNoSpan: recording counterfactuals adds to the
// truth and leaves the traces byte for byte as they were (TestSample pins
// the default output itself).
func TestCounterfactualChangesNoSpan(t *testing.T) {
	cfg := smallConfig(200)
	plain, plainTruth := render(t, generate(t, cfg))
	cfg.Counterfactual = true
	with, withTruth := render(t, generate(t, cfg))
	if !bytes.Equal(plain, with) {
		t.Error("Counterfactual changed the traces")
	}
	if bytes.Contains(plainTruth, []byte("counterfactual")) || !bytes.Contains(withTruth, []byte(`"counterfactual_ms"`)) {
		t.Error("counterfactual_ms should be in the truth exactly when asked for")
	}
	if bytes.Contains(plain, []byte(ArmAttribute)) {
		t.Error("default traces carry a policy arm")
	}
}

// TestExperimentArms: about the configured share is in the control arm,
// which never retries; every anchor span carries its arm.
func TestExperimentArms(t *testing.T) {
	cfg := smallConfig(2000)
	cfg.Experiment = 0.3
	cfg.Faults = DefaultFaults().Scale(2)
	res := generate(t, cfg)
	d := index(t, res.Traces)
	control, retriedTreated := 0, 0
	for _, r := range res.Truth.Requests {
		if got := strAttr(d.get(t, r.Key), ArmAttribute); got != r.Arm {
			t.Fatalf("%s: anchor arm %q, truth %q", r.Key, got, r.Arm)
		}
		switch r.Arm {
		case ArmNoRetry:
			control++
			if r.Attempts != 1 {
				t.Errorf("%s: control arm request made %d attempts", r.Key, r.Attempts)
			}
		case ArmRetry:
			if r.Attempts > 1 {
				retriedTreated++
			}
		default:
			t.Fatalf("%s: arm %q", r.Key, r.Arm)
		}
	}
	share := float64(control) / float64(len(res.Truth.Requests))
	if math.Abs(share-0.3) > 0.04 || retriedTreated == 0 {
		t.Errorf("control share %.3f (want about 0.3), %d retried in the retry arm", share, retriedTreated)
	}
}

// TestCounterfactual: a request that succeeded on its only attempt took
// exactly its counterfactual; a retried one took longer.
func TestCounterfactual(t *testing.T) {
	cfg := smallConfig(1000)
	cfg.Counterfactual = true
	res := generate(t, cfg)
	slower := 0
	retried := 0
	for _, r := range res.Truth.Requests {
		if r.CounterfactualMs == nil {
			t.Fatalf("%s: no counterfactual", r.Key)
		}
		cf := *r.CounterfactualMs
		if r.Attempts == 1 && r.Outcome == "ok" && math.Abs(cf-r.LatencyMs) > 1e-6 {
			t.Errorf("%s: one healthy attempt of %.3f ms, counterfactual %.3f ms", r.Key, r.LatencyMs, cf)
		}
		if r.Attempts > 1 && r.Shape != ShapeHedge {
			retried++
			if r.LatencyMs > cf {
				slower++
			}
		}
	}
	// A retry can land on a quieter server than the first attempt met, so
	// not every retried request is slower than its counterfactual; nearly all are.
	if retried == 0 || float64(slower) < 0.9*float64(retried) {
		t.Errorf("%d of %d retried requests slower than their counterfactual", slower, retried)
	}
}

// TestBigInputsRetryMore: big requests carry more tokens and retry more
// often than the rest.
func TestBigInputsRetryMore(t *testing.T) {
	cfg := smallConfig(3000)
	cfg.BigInputs = 0.2
	cfg.Shapes = []Shape{ShapeWrapped}
	cfg.Rate = 4 // LLM calls last seconds: keep the servers below their capacity
	res := generate(t, cfg)
	var n, retried [2]int
	for _, r := range res.Truth.Requests {
		i := 0
		if r.Big {
			i = 1
		}
		n[i]++
		if r.Attempts > 1 {
			retried[i]++
		}
	}
	small, big := float64(retried[0])/float64(n[0]), float64(retried[1])/float64(n[1])
	// Evaluator rejections and incidents retry small requests too, so the
	// gap is less than BigFaultScale.
	if n[1] == 0 || big < 1.5*small {
		t.Errorf("retry rate: big %.3f (n=%d), others %.3f (n=%d); want big at least 1.5 times", big, n[1], small, n[0])
	}
}
