// Package whatif replays the recorded logical requests under another retry
// policy (an attempt cap per layer, triggers never retried, a retry budget)
// and reports what that policy would have produced, beside the recorded
// figures, every one of them labelled modeled (docs/whatif.md, "The model").
package whatif
