package rebuild

import (
	"math"

	"github.com/retryscope/retryscope/model"
)

// setPhases splits an attempt's elapsed time T into T = Q + C + S + G
// (queue, connection, serving, generation) as far as its telemetry shows
// them; a phase it does not show stays nil.
//
//   - C, connection setup: the first start to the last end of the
//     attempt's children that set up its connection (otelhttptrace's
//     http.getconn, http.dns, http.connect, http.tls; rebuild_spans sums
//     them up).
//   - Q: from the end of C (or the attempt's start) to the start of the
//     callee's SERVER span, transit and queues before it served; needs
//     that span.
//   - S: from the SERVER span's start to the first token (streams), or to
//     the server's end but no later than the attempt's: serving up to the
//     first output; needs that span.
//   - G: the rest of the attempt, the stream after its first token or the
//     response coming back; known with a first token or a SERVER span.
//
// With a SERVER span, Q + C + S + G is the attempt's elapsed time (C taken
// as 0 when unseen). The first token is taken from a.TTFTMs, so that the
// phases agree with the ttft_ms stored beside them.
func setPhases(a *model.Attempt, s *span) {
	sent := a.StartNS
	if s.connStart != nil && s.connEnd != nil {
		c := ms(*s.connEnd - *s.connStart)
		a.ConnectMs, sent = &c, *s.connEnd
	}
	var firstToken *int64
	if a.TTFTMs != nil {
		ft := a.StartNS + int64(math.Round(*a.TTFTMs*1e6))
		firstToken = &ft
	}
	output := a.EndNS
	switch {
	case firstToken != nil:
		output = *firstToken
	case s.serverEnd != nil:
		output = min(*s.serverEnd, a.EndNS)
	}
	if s.serverStart != nil {
		q, sv := ms(*s.serverStart-sent), ms(output-*s.serverStart)
		a.QueueMs, a.ServeMs = &q, &sv
	}
	if firstToken != nil || s.serverStart != nil {
		g := ms(a.EndNS - output)
		a.GenerateMs = &g
	}
}
