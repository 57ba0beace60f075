// Package crashpoint lets the crash-safety tests stop retryscope at a named
// point of its work, as a kill -9 or a full disk would. It does nothing
// unless RETRYSCOPE_CRASH_AT is set, which only those tests do.
//
// RETRYSCOPE_CRASH_AT=kill:NAME:N kills the process (SIGKILL, no cleanup)
// the N-th time it reaches the point NAME; full:NAME:N makes that point
// fail with "no space left on device" instead, as a write there would on a
// full disk.
package crashpoint

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

var (
	mu     sync.Mutex
	action string // "kill" or "full"
	target string
	nth    int
	hits   = map[string]int{}
)

func init() {
	spec := os.Getenv("RETRYSCOPE_CRASH_AT")
	if spec == "" {
		return
	}
	parts := strings.Split(spec, ":")
	if len(parts) != 3 || (parts[0] != "kill" && parts[0] != "full") {
		panic(fmt.Sprintf("RETRYSCOPE_CRASH_AT=%q: want kill:NAME:N or full:NAME:N", spec))
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil || n < 1 {
		panic(fmt.Sprintf("RETRYSCOPE_CRASH_AT=%q: N must be a positive count", spec))
	}
	action, target, nth = parts[0], parts[1], n
}

// Hit marks that the work reached the point name. It returns an error only
// when a test asked that point to fail as on a full disk.
func Hit(name string) error {
	if target == "" || name != target {
		return nil
	}
	mu.Lock()
	hits[name]++
	n := hits[name]
	mu.Unlock()
	if n != nth {
		return nil
	}
	if action == "kill" {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
	return &os.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
}
