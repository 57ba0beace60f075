package store_test

import (
	"testing"

	"github.com/retryscope/retryscope/internal/store"
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
