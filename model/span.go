package model

// Span is one OpenTelemetry span, flattened for storage. Attribute values are
// kept as text (see AttrText in package ingest for the encoding); maps and
// lists travel as JSON text until the store turns them into DuckDB types.
type Span struct {
	TraceID      string // 32 lowercase hex digits
	SpanID       string // 16 lowercase hex digits
	ParentSpanID string // "" for a root
	TraceState   string
	Name         string
	Kind         string // unspecified, internal, server, client, producer, consumer
	StartNS      int64  // Unix nanoseconds
	EndNS        int64
	StatusCode   string // unset, ok, error
	StatusMsg    string
	ServiceName  string
	ScopeName    string
	ScopeVersion string
	// AttributesJSON, ResourceJSON, EventsJSON and LinksJSON are JSON text:
	// an object of string values, and arrays of {name,time_ns,attributes}
	// and {trace_id,span_id,attributes}.
	AttributesJSON string
	ResourceJSON   string
	EventsJSON     string
	LinksJSON      string
	// Offset is where the record holding the span starts in its file.
	Offset int64
}

// Rejection says why a record or a span was not stored, and where it was.
type Rejection struct {
	Offset  int64
	Reason  string // a short stable label, counted in summaries
	Detail  string // what exactly was wrong, for the user
	TraceID string // set when a single span was quarantined
	SpanID  string
}
