package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReportOntoDeviceKeepsTheDevice is issue 34's second night: the
// report went to NAME.tmp and was renamed over NAME, so as root
// "report -o ./null" (a device node) or a FIFO, or a symlink to
// /dev/null, became a regular file. Such names are written in place now;
// only regular files are renamed.
func TestReportOntoDeviceKeepsTheDevice(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.duckdb")
	mustRunCLI(t, "ingest", "--db", db, "../../testdata/sample/traces.jsonl")

	link := filepath.Join(dir, "null-link")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 1)
	go func() { // the FIFO's reader, as a shell's "cat fifo" would be
		f, err := os.Open(fifo)
		if err != nil {
			got <- -1
			return
		}
		n, _ := io.Copy(io.Discard, f)
		f.Close()
		got <- n
	}()
	targets := []string{link, fifo}
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err == nil { // 1,3 is /dev/null; root only
		targets = append(targets, dev)
	} else {
		t.Logf("no device node (%v): testing the symlink and the FIFO", err)
	}
	for _, target := range targets {
		before, _ := os.Lstat(target)
		for _, args := range [][]string{
			{"report", "--db", db, "-o", target, "--format", "json"},
			{"gen", "--requests", "5", "-o", target, "--truth", filepath.Join(dir, "truth.json")},
		} {
			if target == fifo && args[0] == "gen" {
				continue // the FIFO's one reader has gone
			}
			if code, _, stderr := runCLI(t, args...); code != 0 {
				t.Fatalf("%s -o %s: exit %d: %s", args[0], target, code, stderr)
			}
			after, err := os.Lstat(target)
			if err != nil || after.Mode().Type() != before.Mode().Type() {
				t.Errorf("%s -o %s: %v became %v (%v)", args[0], filepath.Base(target), before.Mode().Type(), after.Mode().Type(), err)
			}
			if _, err := os.Lstat(target + ".tmp"); err == nil {
				t.Errorf("%s -o %s: left %s.tmp", args[0], filepath.Base(target), filepath.Base(target))
			}
		}
	}
	select {
	case n := <-got:
		if n <= 0 {
			t.Errorf("the FIFO's reader got %d bytes of the report", n)
		}
	case <-time.After(5 * time.Second):
		t.Error("the FIFO's reader got nothing: the report never went through the FIFO")
	}
}
