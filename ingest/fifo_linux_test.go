package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/sim"
	"github.com/retryscope/retryscope/internal/testkit"
)

// feedFIFO writes data into the FIFO at path once a reader opens it.
func feedFIFO(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write(data)
		w.Close()
	}()
}

// TestFIFOsAndPipesAreRead is issue 34's fourth night: a named pipe or a
// process substitution (<(zcat dump.gz), a pipe at /dev/fd/N) was "empty"
// because its size came from stat, a FIFO in a directory was skipped
// without a word, and /dev/zero was called empty. Pipes are streams now,
// read as stdin is; other special files are refused, named for what they
// are; a FIFO nobody writes to is reported after FIFOWait, not waited on
// for ever; and the regular file beside them is still read.
func TestFIFOsAndPipesAreRead(t *testing.T) {
	batches := testkit.Batches(3, 60, 20)
	want := int64(testkit.SpanCount(batches))
	var data bytes.Buffer
	if err := sim.WriteJSONLines(&data, batches); err != nil {
		t.Fatal(err)
	}
	other := testkit.Batches(4, 30, 10)
	dir := t.TempDir()

	named := filepath.Join(dir, "named.fifo")
	feedFIFO(t, named, data.Bytes())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { w.Write(data.Bytes()); w.Close() }()
	procSubst := fmt.Sprintf("/dev/fd/%d", r.Fd())

	dumps := filepath.Join(dir, "dumps")
	testkit.WriteFile(t, filepath.Join(dumps, "a.jsonl"), sim.WriteJSONLines, other)
	feedFIFO(t, filepath.Join(dumps, "b.fifo"), data.Bytes())
	if err := syscall.Mkfifo(filepath.Join(dumps, "c-stale.fifo"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, path string
		spans      int64
		reason     string // the rejection, if any
		detail     string
	}{
		{"named FIFO", named, want, "", ""},
		{"process substitution", procSubst, want, "", ""},
		{"directory with a FIFO fed and a FIFO left stale", dumps, want + int64(testkit.SpanCount(other)), "empty_file", "nothing wrote to this FIFO in 200ms"},
		{"/dev/zero", "/dev/zero", 0, "not_a_file", "this is a character device, not a file of traces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := testkit.Open(t)
			var log bytes.Buffer
			start := time.Now()
			sum, err := ingest.Run(context.Background(), st, []string{tc.path}, ingest.Options{Log: &log, FIFOWait: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			tot := sum.Totals()
			spansNew, rejected := tot.SpansNew, tot.Rejected
			if spansNew != tc.spans {
				t.Errorf("%d spans stored, want %d\n%s", spansNew, tc.spans, log.String())
			}
			if tc.reason == "" && rejected != 0 || tc.reason != "" && sum.Rejected[tc.reason] != 1 {
				t.Errorf("rejected %v, want %q once\n%s", sum.Rejected, tc.reason, log.String())
			}
			if !strings.Contains(log.String(), tc.detail) {
				t.Errorf("log lacks %q:\n%s", tc.detail, log.String())
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %s: a stale FIFO held the run", time.Since(start))
			}
		})
	}
}
