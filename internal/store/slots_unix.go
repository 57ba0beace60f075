//go:build unix

package store

import (
	"syscall"
	"unsafe"
)

// allocSlots returns n zeroed slots in an anonymous mapping of their own,
// outside the Go heap (the kernel zeroes the pages as they are first
// touched), and true; where the mapping fails, slots from the heap and
// false.
func allocSlots(n int) ([]uint64, bool) {
	b, err := syscall.Mmap(-1, 0, n*8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]uint64, n), false
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), n), true
}

// freeSlots unmaps slots that allocSlots mapped; heap slots are left to
// the collector.
func freeSlots(s []uint64, mapped bool) {
	if mapped && len(s) > 0 {
		syscall.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*8))
	}
}
