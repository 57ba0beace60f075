package rebuild

import "strings"

// A retry re-sends the same request. When a try's own spans say it
// succeeded (a stream that stalled after HTTP 200 and was abandoned by the
// caller's watchdog looks exactly like a success), the only evidence that
// it failed is that the caller sent the same request again right after
// it. An agent or tool loop, which is not a retry, changes its input (the
// context grows) or its operation. The functions here weigh that evidence.

// fallbackTokenRatio bounds how far the input token counts of one input may
// differ between two models' tokenizers (a fallback to another provider).
const fallbackTokenRatio = 1.25

// sameInput says whether b sends a's input again: known is false when the
// spans carry neither a captured input on both nor token counts on both.
// Captured inputs and token counts of one model must match exactly. Across
// models (a fallback to another provider) the captured input is written in
// each provider's own format and tokenizers differ, so only token counts
// are compared, and only roughly.
func sameInput(a, b *span) (same, known bool) {
	if a.inputHash != nil && b.inputHash != nil && a.model == b.model {
		return *a.inputHash == *b.inputHash, true
	}
	if a.inputTokens == nil || b.inputTokens == nil {
		return false, false
	}
	x, y := float64(*a.inputTokens), float64(*b.inputTokens)
	if a.model == b.model {
		return x == y, true
	}
	return x > 0 && y > 0 && x <= y*fallbackTokenRatio && y <= x*fallbackTokenRatio, true
}

// otherRequest: the spans show b is not a re-send of a, because its
// operation, its recorded parameters or its input differ. Missing evidence
// never counts against a re-send.
func otherRequest(a, b *span) bool {
	if a.genAIOperation != "" && b.genAIOperation != "" && a.genAIOperation != b.genAIOperation {
		return true
	}
	if paramsDiffer(a.requestParams, b.requestParams) {
		return true
	}
	same, known := sameInput(a, b)
	return known && !same
}

// resends: b starts after a ended and sends the same LLM request again (the
// same operation, parameters and input), so a's answer was not used.
func resends(a, b *span) bool {
	if a == nil || b == nil || b.start < a.end || a.genAIOperation == "" || a.genAIOperation != b.genAIOperation {
		return false
	}
	if otherRequest(a, b) {
		return false
	}
	same, known := sameInput(a, b)
	return known && same
}

// retryEventBetween: the loop span recorded an exception or a retry between
// the start of one try and the start of the next.
func retryEventBetween(loop *span, from, to int64) bool {
	for _, t := range loop.retryEvents {
		if t >= from && t <= to {
			return true
		}
	}
	return false
}

// paramSep parts the "key=value" entries of requestParams (rebuild_spans).
const paramSep = "\x1f"

// paramsDiffer: a parameter that both spans record has another value in
// each. One recorded on one span only is no evidence: providers differ in
// what they require (Anthropic needs max_tokens, OpenAI does not).
func paramsDiffer(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	values := map[string]string{}
	for _, kv := range strings.Split(a, paramSep) {
		k, v, _ := strings.Cut(kv, "=")
		values[k] = v
	}
	for _, kv := range strings.Split(b, paramSep) {
		k, v, _ := strings.Cut(kv, "=")
		if w, ok := values[k]; ok && w != v {
			return true
		}
	}
	return false
}
