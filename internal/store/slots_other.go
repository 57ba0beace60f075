//go:build !unix

package store

// allocSlots returns n zeroed slots from the heap (no anonymous mappings
// here).
func allocSlots(n int) ([]uint64, bool) { return make([]uint64, n), false }

// freeSlots leaves heap slots to the collector.
func freeSlots([]uint64, bool) {}
