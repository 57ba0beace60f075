package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// oneSpan is a batch of one span with the given ids and one attribute.
func oneSpan(traceID, spanID string, startNS int64) *store.SpanBatch {
	b := &store.SpanBatch{}
	b.AddAttr(b.Text("http.request.method"), b.Text("GET"))
	b.Spans = append(b.Spans, store.BatchSpan{TraceID: b.Text(traceID), SpanID: b.Text(spanID),
		Name: b.Text("a name longer than twelve bytes"), Kind: b.Text("client"), StatusCode: b.Text("unset"),
		StartNS: startNS, EndNS: startNS + 1000, Attributes: b.AttrsSince(0)})
	return b
}

// Two stores of one process on one file share the database, where the
// table function that reads staged spans is registered: each loads its own
// spans.
func TestStoresOnOneFileLoadTheirOwnSpans(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.duckdb")
	a, b := testkit.OpenFile(t, path), testkit.OpenFile(t, path)
	ingest := func(st *store.Store, name string, batch *store.SpanBatch) {
		tx, err := st.BeginFile(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Add(batch); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(store.FileInfo{Path: name, SHA256: name}, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	const start = int64(1_800_000_000) * 1e9
	tb, err := b.BeginFile(ctx, "registers b's function")
	if err != nil {
		t.Fatal(err)
	}
	tb.Rollback()
	ingest(a, "a", oneSpan("0000000000000000000000000000000a", "000000000000000a", start))
	ingest(b, "b", oneSpan("0000000000000000000000000000000b", "000000000000000b", start))
	got := testkit.Dump(t, a, `SELECT trace_id, span_id, name, attributes::VARCHAR FROM spans ORDER BY ALL`)
	want := "0000000000000000000000000000000a\t000000000000000a\ta name longer than twelve bytes\t{http.request.method=GET}\n" +
		"0000000000000000000000000000000b\t000000000000000b\ta name longer than twelve bytes\t{http.request.method=GET}\n"
	if got != want {
		t.Fatalf("spans:\n%s\nwant:\n%s", got, want)
	}
}
