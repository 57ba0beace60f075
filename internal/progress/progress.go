// Package progress draws a one-line progress indicator on a terminal and
// stays silent elsewhere, so cron mail holds only the plain log lines.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
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

// DefaultEvery is how often a Reporter writes a plain line when its writer
// is not a terminal.
const DefaultEvery = 10 * time.Second

// Reporter shows how a long step is getting on: a redrawn line on a
// terminal; elsewhere (cron) a plain line at most every Every, the first
// only after Every has passed, so short steps log nothing and long ones
// show they are alive without filling the log.
type Reporter struct {
	line   *Line
	w      io.Writer
	Every  time.Duration
	now    func() time.Time
	last   time.Time
	prefix string // said before each bar on a terminal
}

// NewReporter reports on w: a *Line (drawn when it is active), a terminal,
// or any other writer (plain lines).
func NewReporter(w io.Writer) *Reporter {
	r := &Reporter{w: w, Every: DefaultEvery, now: time.Now}
	switch l := w.(type) {
	case *Line:
		r.w = l.w
		if l.on {
			r.line = l
		}
	case Prefixed:
		// Prefixed lines on a terminal still get a bar, prefixed too.
		if IsTerminal(l.W) {
			r.line, r.prefix = New(l.W), l.Prefix
		}
	default:
		if IsTerminal(w) {
			r.line = New(w)
		}
	}
	r.last = r.now()
	return r
}

// Update says where the step is.
func (r *Reporter) Update(text string) {
	if r == nil {
		return
	}
	if r.line != nil {
		r.line.Set(r.prefix + text)
		return
	}
	if now := r.now(); now.Sub(r.last) >= r.Every {
		r.last = now
		fmt.Fprintln(r.w, text)
	}
}

// Done clears the terminal line, so the step's summary stands alone.
func (r *Reporter) Done() {
	if r != nil && r.line != nil {
		r.line.Clear()
	}
}

// Prefixed writes each line to W with Prefix before it, for plain
// cron-mail logs.
type Prefixed struct {
	W      io.Writer
	Prefix string
}

func (p Prefixed) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	for _, l := range lines {
		if l != "" {
			io.WriteString(p.W, p.Prefix+l)
		}
	}
	return len(b), nil
}
