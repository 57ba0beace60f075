// Package progress draws a one-line progress indicator on a terminal and
// stays silent elsewhere, so cron mail holds only the plain log lines.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Line redraws a single status line at most ten times a second.
type Line struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	last  time.Time
	drawn bool
}

// New returns a Line on w, active only when w is a terminal.
func New(w io.Writer) *Line {
	return &Line{w: w, on: IsTerminal(w)}
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Set replaces the status line with text.
func (l *Line) Set(text string) {
	if l == nil || !l.on {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.last) < 100*time.Millisecond {
		return
	}
	l.last = time.Now()
	fmt.Fprintf(l.w, "\r\033[K%s", text)
	l.drawn = true
}

// Clear removes the status line so a log line can be printed.
func (l *Line) Clear() {
	if l == nil || !l.on {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn {
		fmt.Fprint(l.w, "\r\033[K")
		l.drawn = false
		l.last = time.Time{}
	}
}

// Write clears the status line, then writes p: use the Line as the log's
// writer and progress never garbles a log line.
func (l *Line) Write(p []byte) (int, error) {
	l.Clear()
	return l.w.Write(p)
}

// Bar renders done of total as a bar with a percentage; total <= 0 shows
// only the count.
func Bar(label string, done, total int64, extra string) string {
	if total <= 0 {
		return fmt.Sprintf("%s %s", label, extra)
	}
	const width = 24
	frac := float64(done) / float64(total)
	if frac > 1 {
		frac = 1
	}
	filled := int(frac * width)
	bar := make([]byte, width)
	for i := range bar {
		if i < filled {
			bar[i] = '#'
		} else {
			bar[i] = '.'
		}
	}
	return fmt.Sprintf("%s [%s] %3.0f%% %s", label, bar, frac*100, extra)
}
