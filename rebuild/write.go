package rebuild

import (
	"errors"
	"fmt"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
)

// writer appends rebuilt rows to the attempts and requests tables.
type writer struct {
	reqApp, attApp     *duckdb.Appender
	altApp             *duckdb.Appender
	requests, attempts int
}

// requestColumns, attemptColumns and alternativeColumns are the columns
// write and writeAlternative give, in the order of their values.
var (
	requestColumns = []string{"request_id", "trace_id", "span_id", "linkage", "inferred",
		"service", "operation", "route", "final_route", "model", "final_model", "stream",
		"start_ns", "end_ns", "latency_ms", "attempts", "layers", "layer_counts",
		"outcome", "final_trigger", "triggers", "t_failed_ms", "backoff_ms", "overhead_ms",
		"gap_ms", "gap_split", "t_final_ms", "residual_ms", "ttft_ms", "generation_ms",
		"input_tokens", "output_tokens", "duplicated_output_tokens", "hidden_work_ms", "hidden_output_tokens", "attached_to",
		"outcome_detail"}
	attemptColumns = []string{"request_id", "trace_id", "span_id", "ordinal", "tries",
		"service", "name", "route", "model", "operation",
		"start_ns", "end_ns", "elapsed_ms", "outcome", "trigger", "is_final",
		"http_status", "grpc_status", "error_type", "retry_after_s",
		"input_tokens", "output_tokens", "ttft_ms", "gap_before_ms",
		"overlap_ms", "server_end_ns", "hidden_work_ms", "hidden_output_tokens",
		"queue_ms", "connect_ms", "serve_ms", "generate_ms"}
	alternativeColumns = []string{"request_id", "start_ns",
		"d_requests", "d_retried", "d_retried_ok", "d_failed"}
)

func newWriter(st *store.Store) (*writer, error) {
	w := &writer{}
	var err error
	if w.reqApp, err = st.NewAppender("", "requests", requestColumns); err == nil {
		if w.attApp, err = st.NewAppender("", "attempts", attemptColumns); err == nil {
			w.altApp, err = st.NewAppender("", "join_alternatives", alternativeColumns)
		}
	}
	if err != nil {
		for _, a := range []*duckdb.Appender{w.reqApp, w.attApp} {
			if a != nil {
				a.Close()
			}
		}
		return nil, fmt.Errorf("open appender: %w", err)
	}
	return w, nil
}

func (w *writer) close() error {
	return errors.Join(w.reqApp.Close(), w.attApp.Close(), w.altApp.Close())
}

// writeAlternative records what one doubtful cross-trace decision would
// change had it gone the other way.
func (w *writer) writeAlternative(a alternative) error {
	d := a.delta
	if d == (countDelta{}) {
		return nil
	}
	err := w.altApp.AppendRow(a.request.traceID+":"+a.request.spanID, a.request.start,
		int32(d.requests), int32(d.retried), int32(d.retriedOK), int32(d.failed))
	if err != nil {
		return fmt.Errorf("write join alternative: %w", err)
	}
	return nil
}

func (w *writer) write(r *model.Request, attempts []*model.Attempt) error {
	var finalTrigger any
	if r.FinalTrigger != "" {
		finalTrigger = string(r.FinalTrigger)
	}
	layerCounts := make([]int32, len(r.LayerCounts))
	for i, c := range r.LayerCounts {
		layerCounts[i] = int32(c)
	}
	err := w.reqApp.AppendRow(r.ID, r.TraceID, r.SpanID, string(r.Linkage), r.Inferred,
		r.Service, r.Operation, r.Route, r.FinalRoute, nullString(r.Model), nullString(r.FinalModel), r.Stream,
		r.StartNS, r.EndNS, r.LatencyMs, int32(r.Attempts), r.Layers, layerCounts,
		r.Outcome, finalTrigger, r.Triggers, r.TFailedMs, nullFloat(r.BackoffMs), nullFloat(r.OverheadMs),
		r.GapMs, r.GapSplit, r.TFinalMs, r.ResidualMs, nullFloat(r.TTFTMs), nullFloat(r.GenerationMs),
		r.InputTokens, r.OutputTokens, r.DuplicatedOutputTokens, r.HiddenWorkMs, r.HiddenOutputTokens, nullString(r.AttachedTo), nil)
	if err != nil {
		return fmt.Errorf("write request %s: %w", r.ID, err)
	}
	w.requests++
	for _, a := range attempts {
		tries := make([]int32, len(a.Tries))
		for i, t := range a.Tries {
			tries[i] = int32(t)
		}
		var trigger any
		if a.Trigger != "" {
			trigger = string(a.Trigger)
		}
		err := w.attApp.AppendRow(a.RequestID, a.TraceID, a.SpanID, int32(a.Ordinal), tries,
			a.Service, a.Name, nullString(a.Route), nullString(a.Model), a.Operation,
			a.StartNS, a.EndNS, a.ElapsedMs(), a.Outcome, trigger, a.Final,
			nullInt(a.HTTPStatus), nullInt(a.GRPCStatus), nullString(a.ErrorType), nullFloat(a.RetryAfterS),
			nullInt(a.InputTokens), nullInt(a.OutputTokens), nullFloat(a.TTFTMs), nullFloat(a.GapBeforeMs),
			a.OverlapMs, nullInt(a.ServerEndNS), a.HiddenWorkMs, a.HiddenOutputTokens, nil, nil, nil, nil)
		if err != nil {
			return fmt.Errorf("write attempt %s:%s: %w", a.TraceID, a.SpanID, err)
		}
		w.attempts++
	}
	return nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullFloat(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
