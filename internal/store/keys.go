package store

import "hash/maphash"

// spanKeys is a set of hashes of (trace_id, span_id): a file's spans so
// far. A span whose hash is new cannot repeat one of them; one whose hash
// is not new may (or its hash collides, which costs a slower merge, never
// a wrong one). Eight bytes a span, in an open-addressing table.
//
// The table lives outside the Go heap (see allocSlots): it lasts as long
// as the file's ingest and grows with it, while ingest holds the Go heap
// to a soft limit meant for the short-lived decoded records. On the heap,
// a file of 10M spans (a 134 MB table, 201 MB while it doubles) passed
// that limit, and the collector ran without pause: the file took 118 s
// instead of 67 s.
type spanKeys struct {
	seed   maphash.Seed
	slots  []uint64 // 0 is free
	mapped bool     // slots are mapped by allocSlots, not on the heap
	n      int
}

func newSpanKeys() spanKeys {
	k := spanKeys{seed: maphash.MakeSeed()}
	k.slots, k.mapped = allocSlots(1 << 12)
	return k
}

// free gives the table back; the set is empty afterwards. Safe to call
// twice.
func (k *spanKeys) free() {
	freeSlots(k.slots, k.mapped)
	k.slots, k.mapped, k.n = nil, false, 0
}

// add records the key and reports whether its hash was new.
func (k *spanKeys) add(traceID, spanID []byte) bool {
	var h maphash.Hash
	h.SetSeed(k.seed)
	h.Write(traceID)
	h.WriteByte(0)
	h.Write(spanID)
	x := h.Sum64()
	if x == 0 {
		x = 1
	}
	return k.addHash(x)
}

func (k *spanKeys) addHash(x uint64) bool {
	if 4*(k.n+1) > 3*len(k.slots) { // also true for a freed, empty table
		k.grow()
	}
	mask := uint64(len(k.slots) - 1)
	for i := x & mask; ; i = (i + 1) & mask {
		switch k.slots[i] {
		case 0:
			k.slots[i] = x
			k.n++
			return true
		case x:
			return false
		}
	}
}

func (k *spanKeys) grow() {
	old, oldMapped := k.slots, k.mapped
	k.slots, k.mapped = allocSlots(max(2*len(old), 1<<12))
	k.n = 0
	for _, x := range old {
		if x != 0 {
			k.addHash(x)
		}
	}
	freeSlots(old, oldMapped)
}
