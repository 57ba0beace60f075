package sim

// serve decides what the server does with an attempt and when the client
// sees the result. Server time up to the first byte (or first token) is
// queueing that grows with load, plus base work and, for LLMs, prefill;
// generation follows at a per-token rate.
func (s *simulation) serve(r *simRequest, a *attempt) {
	rt, rng := a.route, r.rng
	load := rt.inflight(a.start)
	net := func() int64 { return ns(rt.netMs * (0.5 + rng.Float64())) }

	firstByteMs := rt.baseMs + rt.perInflight*float64(load) + rt.jitterMs*rng.ExpFloat64()
	var genMs float64
	if rt.llm {
		firstByteMs += float64(r.inputTokens) * 0.02
		a.serverOut = int(float64(r.outputTokens) * (0.8 + 0.4*rng.Float64()))
		genMs = float64(a.serverOut) * rt.perTokenMs
	}
	a.serverStart = a.start + net()
	a.reached = true
	back := net()
	if len(r.attempts) == 0 {
		r.healthyNs = a.serverStart - a.start + ns(firstByteMs+genMs) + back
	}
	a.fault = s.drawFault(r, rt, load, a.start)

	switch a.fault {
	case faultNone:
		a.serverEnd = a.serverStart + ns(firstByteMs+genMs)
		a.httpStatus = 200
		a.outTokens = a.serverOut
		if r.stream {
			a.firstToken = a.serverStart + ns(firstByteMs) + back
		}
	case faultRateLimited:
		a.serverEnd = a.serverStart + r.uniformMs(1, 4)
		a.httpStatus, a.serverOut = 429, 0
		switch {
		case r.shape == ShapeGRPC: // RESOURCE_EXHAUSTED carries no Retry-After
		case rt.llm:
			a.retryAfterS = 1 + rng.IntN(3)
		default:
			a.retryAfterS = 1
		}
	case faultServerError:
		a.serverEnd = a.serverStart + ns(firstByteMs*(0.05+0.5*rng.Float64()))
		a.httpStatus, a.serverOut = pick(rng, []int{500, 502, 503}), 0
		if r.variant == variantRetryable && a.httpStatus == 503 && rng.Float64() < 0.3 {
			// go-retryablehttp honours a 503's Retry-After as a 429's.
			a.retryAfterS = 1
		}
	case faultClientError:
		a.serverEnd = a.serverStart + r.uniformMs(2, 10)
		a.httpStatus, a.serverOut = r.clientErrorStatus, 0
	case faultReset:
		s.reset(r, a, firstByteMs, genMs, back)
	case faultTimeout:
		// The server hangs, then does the work anyway: the client has long
		// gone by then, so all of it is hidden work.
		stallMs := rt.timeoutMs * (1.2 + 1.8*rng.Float64())
		a.serverEnd = a.serverStart + ns(stallMs+firstByteMs+genMs)
	}
	rt.holdInOutage(a) // a held attempt has failed, so it cannot stall
	if p := s.stallChance(r, rt, a.start); a.fault == faultNone && p > 0 && r.rng.Float64() < p {
		s.stall(r, a, firstByteMs, genMs)
	}
	a.end = a.serverEnd + back
	if !a.reached {
		a.end = a.start + r.uniformMs(1, 30)
	}
	if timeout := a.start + ns(rt.timeoutMs); a.end > timeout {
		// Load alone can push an attempt past the client's timeout.
		a.fault, a.end, a.httpStatus, a.retryAfterS = faultTimeout, timeout, 0, 0
		if a.firstToken >= timeout {
			a.firstToken = 0
		}
		a.outTokens = 0
		if a.firstToken > 0 && r.tokensOnAttempts {
			a.outTokens = tokensBy(a.serverOut, a.firstToken, a.serverEnd+back, timeout)
		}
	}
	r.pathologies(a)
	if a.reached {
		rt.accept(a.serverEnd)
	}
}

// reset drops the connection: before the server saw the request half of the
// time, otherwise part-way through (mid-stream for streamed gen_ai attempts,
// which then keep the tokens they received).
func (s *simulation) reset(r *simRequest, a *attempt, firstByteMs, genMs float64, back int64) {
	rng := r.rng
	if rng.Float64() < 0.5 {
		a.reached, a.serverStart, a.serverEnd, a.serverOut = false, 0, 0, 0
		return
	}
	cutMs := firstByteMs * (0.1 + 0.8*rng.Float64())
	if r.stream && r.tokensOnAttempts && rng.Float64() < 0.6 {
		cutMs = firstByteMs + genMs*(0.1+0.8*rng.Float64())
	}
	a.serverEnd = a.serverStart + ns(cutMs)
	if cutMs <= firstByteMs || genMs == 0 {
		a.serverOut = 0
		return
	}
	a.serverOut = int(float64(a.serverOut) * (cutMs - firstByteMs) / genMs)
	a.outTokens = a.serverOut
	a.firstToken = a.serverStart + ns(firstByteMs) + back
}

// tokensBy is how many of total tokens, streamed evenly from first to last,
// had arrived by cut.
func tokensBy(total int, first, last, cut int64) int {
	if cut <= first || last <= first {
		return 0
	}
	return int(float64(total) * float64(cut-first) / float64(last-first))
}

// drawFault picks the attempt's fate. A bad request fails the same way every
// time; an overloaded route sheds load with 429s when rate limiting is on;
// a route in an incident fails far more often.
func (s *simulation) drawFault(r *simRequest, rt *route, load int, now int64) faultKind {
	if r.clientErrorStatus != 0 {
		return faultClientError
	}
	f := s.cfg.Faults
	// Under CRN both draws are always made, so that shedding or not
	// leaves the fault draw where it was.
	var u, shed float64
	if s.cfg.CRN {
		u, shed = r.rng.Float64(), r.rng.Float64()
	}
	if f.RateLimited > 0 && load >= rt.capacity {
		if !s.cfg.CRN {
			shed = r.rng.Float64()
		}
		if shed < 0.5 {
			return faultRateLimited
		}
	}
	scale := rt.faultScaleAt(now)
	if r.big {
		scale *= BigFaultScale
	}
	// Even a route in an incident answers some attempts.
	if total := (f.RateLimited + f.ServerError + f.Reset + f.Timeout) * scale; total > 0.9 {
		scale *= 0.9 / total
	}
	if !s.cfg.CRN {
		u = r.rng.Float64()
	}
	for _, c := range []struct {
		rate float64
		kind faultKind
	}{{f.RateLimited, faultRateLimited}, {f.ServerError, faultServerError}, {f.Reset, faultReset}, {f.Timeout, faultTimeout}} {
		p := c.rate * scale
		if u < p {
			return c.kind
		}
		u -= p
	}
	return faultNone
}
