package store

import "hash/maphash"

// spanKeys is a set of hashes of (trace_id, span_id): a file's spans so
// far. A span whose hash is new cannot repeat one of them; one whose hash
// is not new may (or its hash collides, which costs a slower merge, never
// a wrong one). Eight bytes a span, in an open-addressing table.
type spanKeys struct {
	seed  maphash.Seed
	slots []uint64 // 0 is free
	n     int
}

func newSpanKeys() spanKeys {
	return spanKeys{seed: maphash.MakeSeed(), slots: make([]uint64, 1<<12)}
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
	if 4*(k.n+1) > 3*len(k.slots) {
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
	old := k.slots
	k.slots, k.n = make([]uint64, 2*len(old)), 0
	for _, x := range old {
		if x != 0 {
			k.addHash(x)
		}
	}
}
