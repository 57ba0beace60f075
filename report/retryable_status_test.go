package report

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// loopTraces builds one trace per loop: an INTERNAL span of service
// "shop" named op over CLIENT GET attempts to route, one per status, 300
// ms apart; a loop whose last status is an error fails.
func loopTraces(loops []struct {
	op, route string
	statuses  []int
}) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "shop")
	ss := rs.ScopeSpans().AppendEmpty()
	base := uint64(1_795_000_000_000_000_000)
	id := uint64(0)
	next := func() pcommon.SpanID {
		id++
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], id)
		return b
	}
	for i, l := range loops {
		var tid [16]byte
		binary.BigEndian.PutUint64(tid[8:], uint64(i+1))
		binary.BigEndian.PutUint64(tid[:8], 0xabc)
		start := base + uint64(i)*10_000_000_000
		loop := ss.Spans().AppendEmpty()
		loop.SetTraceID(tid)
		loop.SetSpanID(next())
		loop.SetName(l.op)
		loop.SetKind(ptrace.SpanKindInternal)
		loop.SetStartTimestamp(pcommon.Timestamp(start))
		loop.SetEndTimestamp(pcommon.Timestamp(start + uint64(len(l.statuses))*300_000_000))
		if l.statuses[len(l.statuses)-1] >= 400 {
			loop.Status().SetCode(ptrace.StatusCodeError)
		}
		for k, status := range l.statuses {
			a := ss.Spans().AppendEmpty()
			a.SetTraceID(tid)
			a.SetSpanID(next())
			a.SetParentSpanID(loop.SpanID())
			a.SetName("GET")
			a.SetKind(ptrace.SpanKindClient)
			at := start + uint64(k)*300_000_000 + 10_000_000
			a.SetStartTimestamp(pcommon.Timestamp(at))
			a.SetEndTimestamp(pcommon.Timestamp(at + 50_000_000))
			attrs := a.Attributes()
			attrs.PutStr("http.request.method", "GET")
			attrs.PutStr("url.full", "http://"+l.route+":8080/v1/items")
			attrs.PutStr("server.address", l.route)
			attrs.PutInt("http.response.status_code", int64(status))
			if status >= 400 {
				attrs.PutStr("error.type", strconv.Itoa(status))
				a.Status().SetCode(ptrace.StatusCodeError)
			}
		}
	}
	return td
}

// TestRetryOnClientErrorLeavesRetryableStatuses: a 409 whose retries
// succeed on its route (an optimistic write that clears) is not a
// deterministic failure there, and no finding tells the client to stop
// retrying it; 404s retried in vain on the same loop still are, with
// exactly their retries as the cost, and the 409's retries named as left
// out.
func TestRetryOnClientErrorLeavesRetryableStatuses(t *testing.T) {
	type loop = struct {
		op, route string
		statuses  []int
	}
	var loops []loop
	for range 8 {
		loops = append(loops, loop{"sync", "inv", []int{409, 200}}, loop{"save", "carts", []int{409, 409, 200}})
	}
	for range 3 {
		loops = append(loops, loop{"sync", "inv", []int{404, 404, 404}})
	}
	path := testkit.WriteFile(t, filepath.Join(t.TempDir(), "traces.jsonl"), sim.WriteJSONLines, []ptrace.Traces{loopTraces(loops)})
	st := testkit.Open(t)
	ctx := context.Background()
	if _, err := ingest.Run(ctx, st, []string{path}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := rebuild.Rebuild(ctx, st); err != nil {
		t.Fatal(err)
	}
	rep, err := Build(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := findingsBySegment(rep, "retry_on_client_error")
	if _, ok := got["service=shop, operation=save, route=carts"]; ok {
		t.Errorf("retry_on_client_error on the 409s that retries clear: %+v", got)
	}
	f, ok := got["service=shop, operation=sync, route=inv"]
	if !ok {
		t.Fatalf("no finding for the 404s retried in vain: %+v", rep.Findings)
	}
	if f.Cost.Attempts != 6 || !sameMs(f.Cost.TimeMs, 6*(50+250)) {
		t.Errorf("cost %+v, want the 6 retries after a 404, 300 ms each", f.Cost)
	}
	if v := evidence(f, "retries after HTTP 404"); v != 6 {
		t.Errorf("retries after HTTP 404: %v, want 6", v)
	}
	var left bool
	for _, e := range f.Evidence {
		left = left || (strings.HasPrefix(e.Name, "retries after HTTP 409 left out") && e.Value == 8)
	}
	if !left {
		t.Errorf("the 8 retries after a 409 are not named as left out: %+v", f.Evidence)
	}
}
