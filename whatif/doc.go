// Package whatif replays the recorded logical requests under another retry
// policy (an attempt cap per layer, triggers never retried, a retry budget)
// and reports what that policy would have produced, beside the recorded
// figures, every one of them labelled modeled (SPEC §9).
package whatif
