package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Fixture two-successes-not-retry: two successful calls of one operation
// are two requests; hedged attempts overlap in time. A Node BFF with undici
// CLIENT spans, Node callees with instrumentation-http SERVER spans.

var appBFF = scope{"storefront-bff", "1.0.0"}

func nodeResource(service, version, host string, pid int) []attr {
	return []attr{
		{"host.name", host},
		{"host.arch", "amd64"},
		{"process.pid", pid},
		{"process.executable.name", "node"},
		{"process.runtime.version", "22.11.0"},
		{"process.runtime.name", "nodejs"},
		{"process.runtime.description", "Node.js"},
		{"service.name", service},
		{"service.version", version},
		{"telemetry.sdk.language", "nodejs"},
		{"telemetry.sdk.name", "opentelemetry"},
		{"telemetry.sdk.version", "2.0.1"},
	}
}

// bff is the Node BFF storefront-bff, catalog, and two pods of
// profile-svc (one resource per pod).
type bff struct {
	g         ids
	spans     []*span
	expected  []any
	resources map[string][]attr
}

func newBFF(seed uint32) *bff {
	return &bff{
		g: newIDs(seed),
		resources: map[string][]attr{
			"bff":       nodeResource("storefront-bff", "4.2.0", "storefront-bff-85c6d7f9c-lq4vn", 31),
			"catalog":   nodeResource("catalog", "7.0.3", "catalog-5f4d8b7c9-2jz8m", 19),
			"profile-a": nodeResource("profile-svc", "1.12.1", "profile-svc-6b7f9d4c8-t5kxw", 23),
			"profile-b": nodeResource("profile-svc", "1.12.1", "profile-svc-6b7f9d4c8-ww9pd", 23),
		},
	}
}

func (b *bff) add(s *span) *span {
	b.spans = append(b.spans, s)
	return s
}

func (b *bff) j(lo, hi float64) float64 { return b.g.uniform(lo, hi) }

func (b *bff) httpServer(res, tid, parent string, start, end int64, host, target, route string) *span {
	hostName, portStr, hasPort := strings.Cut(host, ":")
	port := 80
	if hasPort {
		port, _ = strconv.Atoi(portStr)
	}
	hostIP := fmt.Sprintf("::ffff:10.42.%d.%d", int(b.j(1, 9)), int(b.j(2, 250)))
	a := []attr{
		{"http.url", "http://" + host + target},
		{"http.host", host},
		{"net.host.name", hostName},
		{"http.method", "GET"},
		{"http.scheme", "http"},
		{"http.target", target},
		{"http.user_agent", "node"},
		{"http.flavor", "1.1"},
		{"net.transport", "ip_tcp"},
		{"net.host.ip", hostIP},
		{"net.host.port", port},
		{"net.peer.ip", "::ffff:10.42.6.31"},
		{"net.peer.port", 40000 + int(b.j(0, 20000))},
		{"http.status_code", 200},
		{"http.status_text", "OK"},
		{"http.route", route},
	}
	return b.add(&span{res: res, scope: nodeHTTP, traceID: tid, spanID: b.g.span(), parent: parent,
		name: "GET " + route, kind: kindServer, start: start, end: end, attrs: a})
}

// get is an undici GET; an aborted one ends with no status code and
// status UNSET.
func (b *bff) get(tid, parent, host string, port int, path, query string, start int64, dur float64, aborted bool) *span {
	peer := fmt.Sprintf("10.96.%d.%d", int(b.j(0, 255)), int(b.j(2, 250)))
	a := []attr{
		{"http.request.method", "GET"},
		{"http.request.method_original", "GET"},
		{"url.full", fmt.Sprintf("http://%s:%d%s%s", host, port, path, query)},
		{"url.path", path},
		{"url.query", query},
		{"url.scheme", "http"},
		{"server.address", host},
		{"server.port", port},
		{"user_agent.original", "node"},
		{"network.peer.address", peer},
		{"network.peer.port", port},
	}
	if !aborted {
		a = append(a, attr{"http.response.status_code", 200})
	}
	return b.add(&span{res: "bff", scope: nodeUndici, traceID: tid, spanID: b.g.span(), parent: parent,
		name: "GET", kind: kindClient, start: start, end: start + ms(dur), attrs: a})
}

func (b *bff) bffServer(tid string, start int64, target, route string) *span {
	return b.httpServer("bff", tid, "", start, 0, "storefront-bff.prod.svc:3000", target, route)
}

func (b *bff) sequentialSameURL(t int64, d1, d2 float64) {
	tid := b.g.trace()
	srv := b.bffServer(tid, t, "/api/cart", "/api/cart")
	g1 := b.get(tid, srv.spanID, "catalog.prod.svc", 8080, "/v1/flags", "", t+ms(2.14), d1, false)
	b.httpServer("catalog", tid, g1.spanID, g1.start+ms(1.9), g1.end-ms(0.8), "catalog.prod.svc:8080", "/v1/flags", "/v1/flags")
	g2 := b.get(tid, srv.spanID, "catalog.prod.svc", 8080, "/v1/flags", "", g1.end+ms(3.27), d2, false)
	b.httpServer("catalog", tid, g2.spanID, g2.start+ms(1.6), g2.end-ms(0.7), "catalog.prod.svc:8080", "/v1/flags", "/v1/flags")
	srv.end = g2.end + ms(2.51)
	for _, g := range []*span{g1, g2} {
		b.expected = append(b.expected, request(
			g, []*span{g}, layers(1), "ok", nil, "catalog.prod.svc", "catalog.prod.svc", latency{}, nil,
			object{{"desc", "one of two sequential GET /v1/flags (same url.full, both 200) " +
				"under the same SERVER span: two logical requests, not a retry"}}))
	}
}

func (b *bff) parallelSameOp(t int64) {
	tid := b.g.trace()
	srv := b.bffServer(tid, t, "/api/cart/prices", "/api/cart/prices")
	g1 := b.get(tid, srv.spanID, "catalog.prod.svc", 8080, "/v1/prices", "?sku=A1-2207", t+ms(1.88), 37.415, false)
	g2 := b.get(tid, srv.spanID, "catalog.prod.svc", 8080, "/v1/prices", "?sku=B7-0113", t+ms(2.03), 41.962, false)
	for _, g := range []*span{g1, g2} {
		b.httpServer("catalog", tid, g.spanID, g.start+ms(1.7), g.end-ms(0.9), "catalog.prod.svc:8080",
			"/v1/prices"+g.attrs[4].value.(string), "/v1/prices")
	}
	srv.end = max(g1.end, g2.end) + ms(1.96)
	for _, g := range []*span{g1, g2} {
		b.expected = append(b.expected, request(
			g, []*span{g}, layers(1), "ok", nil, "catalog.prod.svc", "catalog.prod.svc", latency{}, nil,
			object{{"desc", "one of two concurrent (Promise.all) GET /v1/prices for different " +
				"SKUs, overlapping in time, both 200 and both used: two logical " +
				"requests, not a hedge"}}))
	}
}

// hedge is app-level hedging (application code, invented): getProfile
// starts a GET on one pod; if no answer in 120 ms it sends a second GET (to
// the other pod) and aborts the loser (AbortController) when one answers.
// The only evidence of it in the spans is two overlapping CLIENT children
// of one INTERNAL span, one of them aborted.
func (b *bff) hedge(t int64, hedgeWins bool) {
	tid := b.g.trace()
	srv := b.bffServer(tid, t, "/api/me", "/api/me")
	app := b.add(&span{res: "bff", scope: appBFF, traceID: tid, spanID: b.g.span(), parent: srv.spanID,
		name: "getProfile", kind: kindInternal, start: t + ms(1.41), attrs: []attr{{"profile.hedge_after_ms", 120}}})
	p1Start := app.start + ms(0.37)
	p2Start := p1Start + ms(120.0+0.62)
	var p1, p2, winner, loser, loserSrv *span
	var desc string
	if hedgeWins {
		p2 = b.get(tid, app.spanID, "profile-svc.prod.svc", 8080, "/v1/profiles/u_7731", "", p2Start, 64.208, false)
		p1 = b.get(tid, app.spanID, "profile-svc.prod.svc", 8080, "/v1/profiles/u_7731", "",
			p1Start, float64(p2.end-p1Start)/1e6+0.47, true)
		s1 := b.httpServer("profile-a", tid, p1.spanID, p1.start+ms(1.83), p1.end+ms(227.35),
			"profile-svc.prod.svc:8080", "/v1/profiles/u_7731", "/v1/profiles/:id")
		b.httpServer("profile-b", tid, p2.spanID, p2.start+ms(1.52), p2.end-ms(0.91),
			"profile-svc.prod.svc:8080", "/v1/profiles/u_7731", "/v1/profiles/:id")
		winner, loser, loserSrv = p2, p1, s1
		desc = "hedged: primary GET slow, hedge sent after 120 ms to the other pod " +
			"wins; primary aborted (span ends UNSET, no status code)"
	} else {
		p1 = b.get(tid, app.spanID, "profile-svc.prod.svc", 8080, "/v1/profiles/u_1208", "", p1Start, 150.913, false)
		p2 = b.get(tid, app.spanID, "profile-svc.prod.svc", 8080, "/v1/profiles/u_1208", "",
			p2Start, float64(p1.end-p2Start)/1e6+0.52, true)
		b.httpServer("profile-a", tid, p1.spanID, p1.start+ms(1.77), p1.end-ms(0.86),
			"profile-svc.prod.svc:8080", "/v1/profiles/u_1208", "/v1/profiles/:id")
		s2 := b.httpServer("profile-b", tid, p2.spanID, p2.start+ms(1.61), p2.end+ms(38.12),
			"profile-svc.prod.svc:8080", "/v1/profiles/u_1208", "/v1/profiles/:id")
		winner, loser, loserSrv = p1, p2, s2
		desc = "hedged: hedge sent after 120 ms, primary answers first; hedge " +
			"aborted (span ends UNSET, no status code)"
	}
	app.end = max(p1.end, p2.end) + ms(0.74)
	srv.end = app.end + ms(1.63)
	b.expected = append(b.expected, request(
		app, []*span{p1, p2}, layers(2), "ok", []string{"cancelled"}, "profile-svc.prod.svc",
		"profile-svc.prod.svc", latency{app}, []*span{srv},
		object{
			{"desc", desc},
			{"hedged", true},
			{"winner_span_id", winner.spanID},
			{"loser_span_id", loser.spanID},
			{"overlap_ms", round3(float64(min(p1.end, p2.end)-max(p1.start, p2.start)) / 1e6)},
			{"loser_server_span_id", loserSrv.spanID},
			{"loser_server_end_after_abandon_ms", round3(float64(loserSrv.end-loser.end) / 1e6)},
		}))
}

func buildBFF(out string) error {
	b := newBFF(41)
	b.sequentialSameURL(t0+ms(5.0), 14.382, 11.906)
	b.hedge(t0+ms(1204.7), true)
	b.parallelSameOp(t0 + ms(2811.3))
	b.hedge(t0+ms(6020.8), false)
	b.sequentialSameURL(t0+ms(7730.1), 9.817, 13.045)
	batches := exportBatches(b.spans, b.resources, exportOptions{firstTick: map[string]int64{
		"bff": t0 - ms(2404.0), "catalog": t0 - ms(611.0), "profile-a": t0 - ms(3888.0), "profile-b": t0 - ms(1250.0),
	}})
	notes := "Node BFF 'storefront-bff' (instrumentation-http SERVER spans, undici CLIENT spans, one " +
		"app span 'getProfile') calling 'catalog' and two pods of 'profile-svc' (each pod its own " +
		"resource). No retries at all in this file: sequential GETs of the same url.full and " +
		"concurrent GETs of the same route that all succeed are separate logical requests (key = " +
		"the CLIENT span itself, latency = its duration). getProfile hedges: the losing attempt " +
		"is aborted by the app (undici ends the span with no status and no status code); its " +
		"callee SERVER span keeps running after the client abandoned it " +
		"(loser_server_end_after_abandon_ms). Trigger of the aborted loser is 'cancelled'."
	return writeFixture(filepath.Join(out, "two-successes-not-retry"), batches, object{{"notes", notes}, {"requests", b.expected}})
}
