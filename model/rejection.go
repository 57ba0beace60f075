package model

// Rejection says why a record or a span was not stored, and where it was.
type Rejection struct {
	Offset  int64
	Reason  string // a short stable label, counted in summaries
	Detail  string // what exactly was wrong, for the user
	TraceID string // set when a single span was quarantined
	SpanID  string
}
