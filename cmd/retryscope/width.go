package main

import (
	"io"
	"os"
	"strings"

	"github.com/retryscope/retryscope/internal/progress"
	"github.com/retryscope/retryscope/report"
)

// helpWidth is how wide help is wrapped: the terminal's width when w is
// one (at least 60 columns, at most 120), else 80.
func helpWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && progress.IsTerminal(f) {
		if c := terminalWidth(f); c > 0 {
			return min(max(c, 60), 120)
		}
	}
	return 80
}

// wrapText wraps each paragraph of s (lines as written) to cols,
// keeping indented lines (examples) as they are.
func wrapText(s string, cols int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, " ") || len(line) <= cols {
			out = append(out, line)
			continue
		}
		out = append(out, report.Wrap(line, cols)...)
	}
	return strings.Join(out, "\n")
}
