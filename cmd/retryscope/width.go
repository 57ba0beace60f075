package main

import (
	"io"
	"os"
	"strings"

	"github.com/retryscope/retryscope/internal/progress"
	"github.com/retryscope/retryscope/internal/texttab"
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

// usageIndent is where a usage line's continuation starts: under the
// command name's "retryscope", past "Usage: ".
const usageIndent = "       "

// wrapUsage is "Usage: retryscope " and synopsis, its first line wrapped
// to cols between its [bracketed] options with the continuation indented
// by usageIndent, the rest as wrapText wraps it.
func wrapUsage(synopsis string, cols int) string {
	first, rest, hasRest := strings.Cut(synopsis, "\n")
	var lines []string
	line := "Usage: retryscope"
	for _, word := range usageWords(first) {
		if len(line)+1+len(word) > cols {
			lines = append(lines, line)
			line = usageIndent + word
			continue
		}
		line += " " + word
	}
	lines = append(lines, line)
	out := strings.Join(lines, "\n")
	if hasRest {
		out += "\n" + wrapText(rest, cols)
	}
	return out
}

// usageWords splits a usage line at the spaces outside brackets, so that
// "[--format table|json]" stays on one line.
func usageWords(s string) []string {
	var words []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case r == ' ' && depth == 0:
			if i > start {
				words = append(words, s[start:i])
			}
			start = i + 1
		}
	}
	if start < len(s) {
		words = append(words, s[start:])
	}
	return words
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
		out = append(out, texttab.Wrap(line, cols)...)
	}
	return strings.Join(out, "\n")
}
