package progress

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A Reporter on a writer that is not a terminal (cron) writes nothing for
// a short step and a plain line per interval for a long one.
func TestReporterPlainLines(t *testing.T) {
	var out strings.Builder
	clock := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	r := NewReporter(&out)
	r.now = func() time.Time { return clock }
	r.last = clock
	r.Update("rebuild 10%")
	if out.Len() != 0 {
		t.Fatalf("wrote %q before an interval passed", out.String())
	}
	for i := 1; i <= 100; i++ {
		clock = clock.Add(time.Second)
		r.Update(fmt.Sprintf("rebuild %d s", i))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 10 || lines[0] != "rebuild 10 s" || lines[4] != "rebuild 50 s" || lines[9] != "rebuild 100 s" {
		t.Fatalf("100 s of updates every second wrote %q, want one line every 10 s", lines)
	}
	r.Done()
}
