package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/queries"
)

// A resource's id is a hash of its entries, whatever their order: the
// same resource gets the same id in every batch, and another resource
// another id. (pipeline's upgrade test checks it against the SQL of
// migration 005, which computes it for an older database's spans.)
func TestResourceIDIsTheContentsHash(t *testing.T) {
	id := func(entries ...string) int64 {
		b := store.NewSpanBatch(0, 0)
		first := len(b.Attrs)
		for i := 0; i < len(entries); i += 2 {
			b.AddAttr(b.Text(entries[i]), b.Text(entries[i+1]))
		}
		got := b.AddResource(b.AttrsSince(first))
		if len(b.Resources) != 1 || b.Resources[0].ID != got {
			t.Fatalf("resources %v after AddResource gave %d", b.Resources, got)
		}
		return got
	}
	a := id("service.name", "api", "host.name", "h1")
	if b := id("host.name", "h1", "service.name", "api"); a != b {
		t.Errorf("the same entries in another order: id %d, then %d", a, b)
	}
	for _, other := range [][]string{
		{"service.name", "api", "host.name", "h2"},
		{"service.name", "api"},
		{"service.name", "apihost.name", "h1", ""},
		{},
	} {
		if b := id(other...); b == a || b < 0 {
			t.Errorf("%q: id %d (of %q: %d)", other, b, []string{"service.name", "api", "host.name", "h1"}, a)
		}
	}
}

// The id ingest computes in Go is the one migration 005 computes in SQL
// for an older database's resources, for maps that text could confuse:
// none, empty keys and values, separators, digits, lengths of several
// digits, case, accents composed or not, Cyrillic, emoji, control bytes.
func TestResourceIDMatchesTheMigration(t *testing.T) {
	var sql string
	for _, m := range queries.Migrations() {
		if m.Version == 5 {
			_, rest, _ := strings.Cut(m.SQL, "SELECT m, ")
			sql, _, _ = strings.Cut(rest, " AS resource_id")
		}
	}
	if !strings.Contains(sql, "md5(") {
		t.Fatalf("no id expression found in migration 005: %q", sql)
	}
	st := testkit.Open(t)
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	for _, entries := range [][]string{
		{},
		{"", ""},
		{"k", ""},
		{"a=b", "c,d", "e:f", "1:2"},
		{"1", "22", "12", "2"},
		{"Service.Name", "API", "service.name", "api"},
		{"host", "café", "hôte", "cafe\u0301"},
		{"сервис", "платежи", "emoji", "🙂🚀"},
		{"tab\there", "new\nline", "quote'd", "back\\slash"},
		{"k", "v", "kk", "v", "k" + strings.Repeat("x", 300), strings.Repeat("y", 300)},
	} {
		b := store.NewSpanBatch(0, 0)
		for i := 0; i < len(entries); i += 2 {
			b.AddAttr(b.Text(entries[i]), b.Text(entries[i+1]))
		}
		want := b.AddResource(b.AttrsSince(0))
		keys, values := []string{}, []string{}
		for i := 0; i < len(entries); i += 2 {
			keys, values = append(keys, quote(entries[i])), append(values, quote(entries[i+1]))
		}
		q := "SELECT " + sql + " FROM (SELECT map([" + strings.Join(keys, ", ") + "]::VARCHAR[], [" + strings.Join(values, ", ") + "]::VARCHAR[]) AS m)"
		var got int64
		if err := st.QueryRowText(context.Background(), q).Scan(&got); err != nil {
			t.Fatalf("%q: %v", entries, err)
		}
		if got != want {
			t.Errorf("%q: migration 005 gives id %d, ingest %d", entries, got, want)
		}
	}
}
