package rebuild

import "github.com/retryscope/retryscope/model"

// setPhases splits an attempt's elapsed time T into T = Q + C + S + G
// (queue, connection, serving, generation) as far as its telemetry shows
// them; a phase it does not show stays nil.
//
//   - C, connection setup: the first start to the last end of the
//     attempt's children that set up its connection (otelhttptrace's
//     http.getconn, http.dns, http.connect, http.tls; rebuild_spans sums
//     them up).
//   - Q: from the end of C (or the attempt's start) to the start of the
//     callee's SERVER span, transit and queues before it served, plus the
//     queue time that span states (retryscope.queue_ms,
//     gen_ai.latency.time_in_queue); without that span, the queue time
//     the attempt itself states, else unknown.
//   - S: from the SERVER span's start to the first token (streams), or to
//     the server's end but no later than the attempt's: serving up to the
//     first output; needs that span.
//   - G: the rest of the attempt, the stream after its first token or the
//     response coming back; known with a first token or a SERVER span.
//
// With a SERVER span, Q + C + S + G is the attempt's elapsed time (C taken
// as 0 when unseen). s is the attempt's span, whose first token gave
// a.TTFTMs.
func setPhases(a *model.Attempt, s *span) {
	sent := a.StartNS
	if s.connStart != nil && s.connEnd != nil {
		c := ms(*s.connEnd - *s.connStart)
		a.ConnectMs, sent = &c, *s.connEnd
	}
	output := a.EndNS
	switch {
	case s.firstToken != nil:
		output = *s.firstToken
	case s.serverEnd != nil:
		output = min(*s.serverEnd, a.EndNS)
	}
	if s.serverStart != nil && (*s.serverStart < sent || *s.serverStart > a.EndNS) {
		// The callee's clock disagrees with the caller's: a queue before
		// the request was sent, or serving after the answer came back.
		// Such phases are not measured, they are skew.
		skew := *s.serverStart - a.EndNS
		if *s.serverStart < sent {
			skew = sent - *s.serverStart
		}
		a.ClockSkewMs = ms(skew)
		if s.firstToken != nil {
			g := ms(a.EndNS - output)
			a.GenerateMs = &g
		}
		return
	}
	switch {
	case s.serverStart != nil:
		q, sv := ms(*s.serverStart-sent), ms(output-*s.serverStart)
		// A queue the callee states (vLLM's time in queue) was spent
		// inside its span, before it served: it moves from S to Q.
		if sq := s.serverQueueMs; sq != nil && *sq > 0 {
			moved := min(*sq, sv)
			q, sv = q+moved, sv-moved
		}
		a.QueueMs, a.ServeMs = &q, &sv
	case s.statedQueueMs != nil && *s.statedQueueMs >= 0 && *s.statedQueueMs <= ms(output-sent):
		// Without the callee's span, a queue the attempt states is all
		// that is known of Q; S stays unknown.
		q := *s.statedQueueMs
		a.QueueMs = &q
	}
	if s.firstToken != nil || s.serverStart != nil {
		g := ms(a.EndNS - output)
		a.GenerateMs = &g
	}
}
