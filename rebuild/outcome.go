package rebuild

import (
	"slices"

	"github.com/retryscope/retryscope/model"
)

// dumpEnd is what the outcome rules know of the dump: the last end of any
// stored span, and how close to it a failed loop may end and still be
// taken for one that was running when the dump was cut.
type dumpEnd struct {
	endNS, window int64
}

// outcomeDetail says what ended a request, beside its outcome, where its
// spans let that be inferred; "" when they do not. The first rule that
// holds wins:
//
//   - stated: failed, and the anchor span states why its loop gave up
//     (retryscope.exhausted.reason: attempt_cap, deadline, no_progress,
//     token_cap, no_capacity, retry_budget or not_retryable; rebuild_spans
//     keeps only those), the only way to learn no_progress;
//   - unfinished: failed, the anchor names a parent span that was never
//     exported (the logical span had not ended), and the request ends
//     within the window of the dump's end: the loop was still running;
//   - cancelled: failed, and the final attempt was cancelled by the client;
//   - deadline: failed, and it lasted at least the deadline the anchor
//     states (retryscope.deadline_ms);
//   - token_cap: the answer used stopped at the output token cap
//     (gen_ai.response.finish_reasons holds "length"), whatever the
//     outcome;
//   - no_capacity: failed, and every attempt was turned away for want of
//     capacity (HTTP 429 or 503, gRPC RESOURCE_EXHAUSTED, a throttling
//     code).
//
// The stated reasons are also retry_budget and not_retryable, and
// retry_budget when the anchor's failure says its retry quota or budget
// ran out (the AWS SDKs' "retry quota exceeded"), attempt_cap when it says
// "exceeded maximum number of attempts" (the AWS SDK for Go v2). The rules that compare a
// request with the others of its service, operation and route (attempt_cap,
// not_retryable, retry_budget, and no_capacity against them) need every
// request, and rebuild_outcomes applies them once they are all written.
func outcomeDetail(req *model.Request, g *group, attempts []*model.Attempt, final int, dump dumpEnd) string {
	anchor := g.anchor
	if anchor == nil {
		anchor = g.attempts[0]
	}
	failed := req.Outcome == model.OutcomeError
	switch {
	case failed && anchor.exhaustedReason != "":
		return anchor.exhaustedReason
	case failed && anchor.parentID != "" && !anchor.parentExported && dump.endNS-req.EndNS < dump.window:
		return "unfinished"
	case failed && req.FinalTrigger == model.TriggerCancelled:
		return "cancelled"
	case failed && anchor.deadlineMs != nil && req.LatencyMs >= *anchor.deadlineMs:
		return "deadline"
	case g.attempts[final].lengthCut:
		return "token_cap"
	case failed && !slices.ContainsFunc(attempts, hadCapacity):
		return "no_capacity"
	}
	return ""
}

// hadCapacity: the attempt was not turned away for want of capacity.
func hadCapacity(a *model.Attempt) bool {
	turnedAway := (a.HTTPStatus != nil && (*a.HTTPStatus == 429 || *a.HTTPStatus == 503)) ||
		(a.GRPCStatus != nil && *a.GRPCStatus == 8) || a.Trigger == model.TriggerRateLimited
	return !turnedAway
}
