package rebuild

import (
	"context"
	"errors"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
)

// writer writes rebuilt rows to the requests, attempts and
// join_alternatives tables. The rows are inserted some thousands at a
// time, so they must not change after write.
type writer struct {
	ctx                context.Context
	reqs               *store.Loader[*model.Request]
	atts               *store.Loader[*model.Attempt]
	alts               *store.Loader[alternative]
	requests, attempts int
	// What the attempts written showed of the clocks (see Stats).
	skewed, firstTokenOutside int
	maxSkewMs                 float64
}

// The columns the writer gives, every column of its tables.
var (
	requestColumns = []store.Column[*model.Request]{
		store.TextColumn("request_id", func(r *model.Request) string { return r.ID }),
		store.TextColumn("trace_id", func(r *model.Request) string { return r.TraceID }),
		store.TextColumn("span_id", func(r *model.Request) string { return r.SpanID }),
		store.TextColumn("linkage", func(r *model.Request) string { return string(r.Linkage) }),
		store.BoolColumn("inferred", func(r *model.Request) bool { return r.Inferred }),
		store.TextColumn("service", func(r *model.Request) string { return r.Service }),
		store.TextColumn("operation", func(r *model.Request) string { return r.Operation }),
		store.TextColumn("route", func(r *model.Request) string { return r.Route }),
		store.TextColumn("final_route", func(r *model.Request) string { return r.FinalRoute }),
		store.NullTextColumn("model", func(r *model.Request) string { return r.Model }),
		store.NullTextColumn("final_model", func(r *model.Request) string { return r.FinalModel }),
		store.BoolColumn("stream", func(r *model.Request) bool { return r.Stream }),
		store.IntColumn("start_ns", func(r *model.Request) int64 { return r.StartNS }),
		store.IntColumn("end_ns", func(r *model.Request) int64 { return r.EndNS }),
		store.FloatColumn("latency_ms", func(r *model.Request) float64 { return r.LatencyMs }),
		store.IntColumn("attempts", func(r *model.Request) int64 { return int64(r.Attempts) }),
		store.FloatListColumn("layers", func(r *model.Request) []float64 { return r.Layers }),
		store.IntListColumn("layer_counts", func(r *model.Request) []int { return r.LayerCounts }),
		store.TextColumn("outcome", func(r *model.Request) string { return r.Outcome }),
		store.NullTextColumn("final_trigger", func(r *model.Request) string { return string(r.FinalTrigger) }),
		store.TextListColumn("triggers", func(r *model.Request) []string { return r.Triggers }),
		store.FloatColumn("t_failed_ms", func(r *model.Request) float64 { return r.TFailedMs }),
		store.NullFloatColumn("backoff_ms", func(r *model.Request) *float64 { return r.BackoffMs }),
		store.NullFloatColumn("overhead_ms", func(r *model.Request) *float64 { return r.OverheadMs }),
		store.FloatColumn("gap_ms", func(r *model.Request) float64 { return r.GapMs }),
		store.BoolColumn("gap_split", func(r *model.Request) bool { return r.GapSplit }),
		store.FloatColumn("t_final_ms", func(r *model.Request) float64 { return r.TFinalMs }),
		store.FloatColumn("residual_ms", func(r *model.Request) float64 { return r.ResidualMs }),
		store.NullFloatColumn("ttft_ms", func(r *model.Request) *float64 { return r.TTFTMs }),
		store.NullFloatColumn("generation_ms", func(r *model.Request) *float64 { return r.GenerationMs }),
		store.IntColumn("input_tokens", func(r *model.Request) int64 { return r.InputTokens }),
		store.IntColumn("output_tokens", func(r *model.Request) int64 { return r.OutputTokens }),
		store.IntColumn("duplicated_output_tokens", func(r *model.Request) int64 { return r.DuplicatedOutputTokens }),
		store.FloatColumn("hidden_work_ms", func(r *model.Request) float64 { return r.HiddenWorkMs }),
		store.IntColumn("hidden_output_tokens", func(r *model.Request) int64 { return r.HiddenOutputTokens }),
		store.NullTextColumn("attached_to", func(r *model.Request) string { return r.AttachedTo }),
		store.NullTextColumn("outcome_detail", func(r *model.Request) string { return r.OutcomeDetail }),
	}
	attemptColumns = []store.Column[*model.Attempt]{
		store.TextColumn("request_id", func(a *model.Attempt) string { return a.RequestID }),
		store.TextColumn("trace_id", func(a *model.Attempt) string { return a.TraceID }),
		store.TextColumn("span_id", func(a *model.Attempt) string { return a.SpanID }),
		store.IntColumn("ordinal", func(a *model.Attempt) int64 { return int64(a.Ordinal) }),
		store.IntListColumn("tries", func(a *model.Attempt) []int { return a.Tries }),
		store.TextColumn("service", func(a *model.Attempt) string { return a.Service }),
		store.TextColumn("name", func(a *model.Attempt) string { return a.Name }),
		store.NullTextColumn("route", func(a *model.Attempt) string { return a.Route }),
		store.NullTextColumn("model", func(a *model.Attempt) string { return a.Model }),
		store.TextColumn("operation", func(a *model.Attempt) string { return a.Operation }),
		store.IntColumn("start_ns", func(a *model.Attempt) int64 { return a.StartNS }),
		store.IntColumn("end_ns", func(a *model.Attempt) int64 { return a.EndNS }),
		store.FloatColumn("elapsed_ms", func(a *model.Attempt) float64 { return a.ElapsedMs() }),
		store.TextColumn("outcome", func(a *model.Attempt) string { return a.Outcome }),
		store.NullTextColumn("trigger", func(a *model.Attempt) string { return string(a.Trigger) }),
		store.BoolColumn("is_final", func(a *model.Attempt) bool { return a.Final }),
		store.NullIntColumn("http_status", func(a *model.Attempt) *int64 { return a.HTTPStatus }),
		store.NullIntColumn("grpc_status", func(a *model.Attempt) *int64 { return a.GRPCStatus }),
		store.NullTextColumn("error_type", func(a *model.Attempt) string { return a.ErrorType }),
		store.NullFloatColumn("retry_after_s", func(a *model.Attempt) *float64 { return a.RetryAfterS }),
		store.NullIntColumn("input_tokens", func(a *model.Attempt) *int64 { return a.InputTokens }),
		store.NullIntColumn("output_tokens", func(a *model.Attempt) *int64 { return a.OutputTokens }),
		store.NullFloatColumn("ttft_ms", func(a *model.Attempt) *float64 { return a.TTFTMs }),
		store.NullFloatColumn("gap_before_ms", func(a *model.Attempt) *float64 { return a.GapBeforeMs }),
		store.FloatColumn("overlap_ms", func(a *model.Attempt) float64 { return a.OverlapMs }),
		store.NullIntColumn("server_end_ns", func(a *model.Attempt) *int64 { return a.ServerEndNS }),
		store.FloatColumn("hidden_work_ms", func(a *model.Attempt) float64 { return a.HiddenWorkMs }),
		store.IntColumn("hidden_output_tokens", func(a *model.Attempt) int64 { return a.HiddenOutputTokens }),
		store.NullFloatColumn("queue_ms", func(a *model.Attempt) *float64 { return a.QueueMs }),
		store.NullFloatColumn("connect_ms", func(a *model.Attempt) *float64 { return a.ConnectMs }),
		store.NullFloatColumn("serve_ms", func(a *model.Attempt) *float64 { return a.ServeMs }),
		store.NullFloatColumn("generate_ms", func(a *model.Attempt) *float64 { return a.GenerateMs }),
	}
	alternativeColumns = []store.Column[alternative]{
		store.TextColumn("request_id", func(a alternative) string { return a.request.traceID + ":" + a.request.spanID }),
		store.IntColumn("start_ns", func(a alternative) int64 { return a.request.start }),
		store.IntColumn("d_requests", func(a alternative) int64 { return int64(a.delta.requests) }),
		store.IntColumn("d_retried", func(a alternative) int64 { return int64(a.delta.retried) }),
		store.IntColumn("d_retried_ok", func(a alternative) int64 { return int64(a.delta.retriedOK) }),
		store.IntColumn("d_failed", func(a alternative) int64 { return int64(a.delta.failed) }),
	}
)

func newWriter(ctx context.Context, st *store.Store) (*writer, error) {
	w := &writer{ctx: ctx}
	var err error
	if w.reqs, err = store.NewLoader(st, "requests", requestColumns); err == nil {
		if w.atts, err = store.NewLoader(st, "attempts", attemptColumns); err == nil {
			w.alts, err = store.NewLoader(st, "join_alternatives", alternativeColumns)
		}
	}
	return w, err
}

// close inserts what is still gathered.
func (w *writer) close() error {
	return errors.Join(w.reqs.Flush(w.ctx), w.atts.Flush(w.ctx), w.alts.Flush(w.ctx))
}

// writeAlternative records what one doubtful cross-trace decision would
// change had it gone the other way.
func (w *writer) writeAlternative(a alternative) error {
	if a.delta == (countDelta{}) {
		return nil
	}
	return w.alts.Add(w.ctx, a)
}

func (w *writer) write(r *model.Request, attempts []*model.Attempt) error {
	if err := w.reqs.Add(w.ctx, r); err != nil {
		return err
	}
	w.requests++
	for _, a := range attempts {
		if err := w.atts.Add(w.ctx, a); err != nil {
			return err
		}
		w.attempts++
		if a.ClockSkewMs > 0 {
			w.skewed++
			w.maxSkewMs = max(w.maxSkewMs, a.ClockSkewMs)
		}
		if a.FirstTokenOutside {
			w.firstTokenOutside++
		}
	}
	return nil
}
