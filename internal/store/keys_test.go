package store

import (
	"encoding/binary"
	"testing"
)

// Every key is new once, and only once, across the table's growth.
func TestSpanKeys(t *testing.T) {
	k := newSpanKeys()
	id := func(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }
	for round := range 2 {
		for i := range 100_000 {
			if got := k.add(id(i), id(i+1)); got != (round == 0) {
				t.Fatalf("round %d, key %d: new = %v", round, i, got)
			}
		}
	}
	if k.n != 100_000 {
		t.Fatalf("%d keys held, want 100000", k.n)
	}
	// Freed, the set is empty, and takes keys again; freed twice, nothing
	// happens.
	k.free()
	k.free()
	if k.n != 0 || len(k.slots) != 0 {
		t.Fatalf("after free: %d keys in %d slots", k.n, len(k.slots))
	}
	for i := range 10_000 {
		if !k.add(id(i), id(i+1)) {
			t.Fatalf("after free, key %d is not new", i)
		}
	}
	k.free()
}
