//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/internal/testkit"
)

// tmpfsAt mounts a tmpfs of size bytes at dir, or skips the test where
// mounting is not allowed (not root, or a container without the right).
// It returns a function that grows the tmpfs, as freeing space would.
func tmpfsAt(t *testing.T, dir string, size int64) (grow func()) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): the injected full-disk points of TestCrashAtEveryStepThenRerun still run", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return func() {
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, "size=256m"); err != nil {
			t.Fatal(err)
		}
	}
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// TestFullDiskOnTmpfs fills a real, small file system under the database,
// the Parquet directory and the report in turn; after each the space is
// freed and the nightly runs again, and must leave what runs that never met
// a full disk leave.
func TestFullDiskOnTmpfs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the nightly job as a process about 12 times")
	}
	t.Parallel()
	root, _, after1, want := crashReference(t)
	// Sizes from the first night's run, the one each case fills up.
	requestsBytes := dirSize(t, filepath.Join(after1, "parquet", "requests"))
	attemptsBytes := dirSize(t, filepath.Join(after1, "parquet", "attempts"))
	dbBytes := dirSize(t, filepath.Join(after1, "db.duckdb"))

	for _, c := range []struct {
		name  string
		mount string // relative to the work directory
		size  int64
		night int
	}{
		{"database, first night", "", dbBytes / 2, 1},
		{"parquet, first night: requests fit, attempts do not", "parquet", requestsBytes + attemptsBytes/2, 1},
		{"report, first night", "report", 4 << 10, 1},
	} {
		short := strings.TrimSuffix(strings.Fields(c.name)[0], ",")
		t.Run(short, func(t *testing.T) {
			work := filepath.Join(root, "disk-"+short)
			os.RemoveAll(work)
			t.Cleanup(func() { os.RemoveAll(work) })
			args := crashNight
			if c.mount == "report" {
				args = func(n int) []string {
					a := crashNight(n)
					for i := range a {
						if a[i] == "report.md" {
							a[i] = filepath.Join("report", "report.md")
						}
					}
					return a
				}
			}
			grow := tmpfsAt(t, filepath.Join(work, c.mount), c.size)
			for night := 1; night < c.night; night++ {
				if _, code, stderr := crashRun(t, work, "", args(night)...); code != exitOK {
					t.Fatalf("night %d: exit %d\n%s", night, code, stderr)
				}
			}
			_, code, stderr := crashRun(t, work, "", args(c.night)...)
			if code != exitFailed || !strings.Contains(strings.ToLower(stderr), "no space left on device") {
				t.Fatalf("%s full: exit %d, want 1 saying no space left on device\n%s", c.name, code, stderr)
			}
			grow()
			openDB(t, filepath.Join(work, "db.duckdb")).Close()
			for night := c.night; night <= 2; night++ {
				if _, code, stderr := crashRun(t, work, "", args(night)...); code != exitOK {
					t.Fatalf("night %d after freeing space: exit %d\n%s", night, code, stderr)
				}
			}
			if c.mount == "report" {
				b, err := os.ReadFile(filepath.Join(work, "report", "report.md"))
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(work, "report.md"), b, 0o644)
			}
			got := crashState(t, work)
			for k := range want {
				if got[k] != want[k] {
					t.Errorf("%s differs from runs that never met a full disk: %s", k, testkit.FirstDiff(want[k], got[k]))
				}
			}
		})
	}
}

// DuckDB says it ran out of memory when it cannot spill to a full disk;
// the message then says the disk is full.
func TestOutOfMemoryOnAFullDiskSaysSo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "small")
	tmpfsAt(t, dir, 128<<20)
	full := errors.New("Out of Memory Error: failed to offload data block of size 256.0 KiB (increase the memory limit)")
	if got := store.ExplainFull(full, dir).Error(); strings.Contains(got, "no space left") {
		t.Errorf("an empty disk blamed: %s", got)
	}
	os.WriteFile(filepath.Join(dir, "filler"), make([]byte, 100<<20), 0o644)
	if got := store.ExplainFull(full, "", dir).Error(); !strings.Contains(got, "no space left on device: "+dir) {
		t.Errorf("a full disk not named: %s", got)
	}
}
