package baseline

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// TableWidth is the widest line WriteTable writes.
const TableWidth = 100

// tooFew fills a percentile cell whose sample is too small (model.MinTail).
const tooFew = "too few"

// WriteTable writes the blocks as a text table of at most TableWidth
// columns. Every line starts with the block's kind and provenance, so no
// figure can be read without them: the added latency and the ratio with
// their mean and percentiles, the workload figures, the method and any
// flags (long text wrapped onto lines of its own).
func WriteTable(w io.Writer, blocks []Block) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%-15s %-10s %-9s %6s %6s %10s %10s %10s %10s\n",
		"baseline", "provenance", "figure", "n", "no L0", "mean", "p50", "p95", "p99")
	for _, b := range blocks {
		row := func(figure, n, without string, cells ...string) {
			fmt.Fprintf(bw, "%-15s %-10s %-9s %6s %6s", b.Kind, b.Provenance, figure, n, without)
			for _, c := range cells {
				fmt.Fprintf(bw, " %10s", c)
			}
			bw.WriteString("\n")
		}
		n, without := fmt.Sprint(b.N), fmt.Sprint(b.NWithoutBaseline)
		row("added ms", n, without, cells(b.AddedLatencyMs, "%+.1f")...)
		row("ratio", n, without, cells(b.Ratio, "%.2fx")...)
		prefix := fmt.Sprintf("%-15s %-10s ", b.Kind, b.Provenance)
		writeWrapped(bw, prefix+fmt.Sprintf("%-9s ", "workload"), workloadText(b))
		if b.MatchDistance != nil {
			writeWrapped(bw, prefix+fmt.Sprintf("%-9s ", "matches"),
				fmt.Sprintf("mean distance %.3f over %d matched requests", *b.MatchDistance, b.N))
		}
		if b.ArmContrastMs != nil {
			writeWrapped(bw, prefix+fmt.Sprintf("%-9s ", "arms"),
				fmt.Sprintf("E[L | treatment] - E[L | control] %+.1f ms, all outcomes", *b.ArmContrastMs))
		}
		if b.Method != "" {
			writeWrapped(bw, prefix+fmt.Sprintf("%-9s ", "method"), b.Method)
		}
		for _, f := range b.Flags {
			writeWrapped(bw, prefix+fmt.Sprintf("%-9s ", "flag"), f)
		}
	}
	return bw.Flush()
}

func cells(d Dist, format string) []string {
	out := make([]string, 4)
	for i, v := range []*float64{d.Mean, d.P50, d.P95, d.P99} {
		switch {
		case v != nil:
			out[i] = fmt.Sprintf(format, *v)
		case i == 0:
			out[i] = "-"
		default:
			out[i] = tooFew
		}
	}
	return out
}

func workloadText(b Block) string {
	amp, exp, rate := "-", "-", "-"
	if b.WorkloadAmplification != nil {
		amp = fmt.Sprintf("%.3fx", *b.WorkloadAmplification)
	}
	if b.ExpectedAddedMsPerRequest != nil {
		exp = fmt.Sprintf("%+.1f ms", *b.ExpectedAddedMsPerRequest)
	}
	if b.RetryRate != nil {
		rate = fmt.Sprintf("%.1f%%", 100**b.RetryRate)
	}
	return fmt.Sprintf("E[L]/E[L0] %s; P(R) %s, P(R)·E[ΔL|R] %s/request", amp, rate, exp)
}

// writeWrapped writes text after prefix, breaking it at spaces into lines
// of at most TableWidth columns, each starting with prefix.
func writeWrapped(w *bufio.Writer, prefix, text string) {
	room := max(20, TableWidth-len([]rune(prefix)))
	line := ""
	flush := func() {
		w.WriteString(strings.TrimRight(prefix+line, " ") + "\n")
		line = ""
	}
	for _, word := range strings.Fields(text) {
		for len([]rune(word)) > room { // a word longer than a line is cut
			if line != "" {
				flush()
			}
			r := []rune(word)
			line = string(r[:room])
			flush()
			word = string(r[room:])
		}
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= room:
			line += " " + word
		default:
			flush()
			line = word
		}
	}
	if line != "" {
		flush()
	}
}
