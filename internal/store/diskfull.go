package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// lowSpace is free space under which a failure is blamed on a full disk.
const lowSpace = 64 << 20

// DiskFull says whether err says the disk is full: a system call's
// ENOSPC, or a message saying so (DuckDB's, or ExplainFull's).
func DiskFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) {
		return true
	}
	// DuckDB passes on the system's message, not its errno, in an error
	// of whatever type the step that met it has (IO when writing a file,
	// out of memory when it could not spill, transaction when a commit
	// could not write), and ExplainFull adds the same words to a failure
	// it blames on a full disk: no type tells a full disk apart, the whole
	// message does.
	return strings.Contains(strings.ToLower(err.Error()), "no space left on device")
}

// OutOfMemory says whether err is DuckDB's failure for want of memory: a
// *duckdb.Error of type out of memory, or a message that says so, for an
// error that reached us as text only (an appender's, one re-wrapped with
// %v) or whose type is another step's (a commit that could not spill).
func OutOfMemory(err error) bool {
	var de *duckdb.Error
	if errors.As(err, &de) && de.Type == duckdb.ErrorTypeOutOfMemory {
		return true
	}
	return strings.Contains(err.Error(), "Out of Memory Error")
}

// usedOfLimit is how DuckDB's out-of-memory messages end: "(95.2 MiB/95.3
// MiB used)", what its buffer manager held and its limit.
var usedOfLimit = regexp.MustCompile(`\([0-9.]+ [KMGT]iB/([0-9.]+ [KMGT]iB) used\)`)

// MemoryLimitHit is the memory limit an out-of-memory message of DuckDB's
// states, as the message writes it ("95.3 MiB") and in bytes; ok false
// when it states none.
func MemoryLimitHit(err error) (limit string, bytes float64, ok bool) {
	m := usedOfLimit.FindStringSubmatch(err.Error())
	if m == nil {
		return "", 0, false
	}
	bytes, ok = parseSize(m[1])
	return m[1], bytes, ok
}

// ExplainFull says "no space left on device" for a failure a full disk
// caused but that does not say so: DuckDB reports that it could not spill
// to a full disk as running out of memory ("increase the memory limit").
// It names the fullest of dirs when one has less than lowSpace free.
func ExplainFull(err error, dirs ...string) error {
	if err == nil || DiskFull(err) {
		return err
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		var fs syscall.Statfs_t
		if syscall.Statfs(d, &fs) != nil {
			continue
		}
		if free := fs.Bavail * uint64(fs.Bsize); free < lowSpace {
			return fmt.Errorf("%w\n(no space left on device: %s has %d MiB free; free some and run again)", err, filepath.Clean(d), free>>20)
		}
	}
	return err
}
