package pipeline

import (
	"context"
	"fmt"
	"io"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/progress"
	"github.com/retryscope/retryscope/internal/store"
)

// Ingest runs ingest.Run on paths with a progress line on log (when it is a
// terminal) and prints the summary line there. A memoryLimit other than ""
// is DuckDB's memory limit while it runs, and threads other than 0 its
// number of threads; the previous ones are restored.
func Ingest(ctx context.Context, st *store.Store, paths []string, opt ingest.Options, memoryLimit string, threads int, log io.Writer) (ingest.Summary, error) {
	if memoryLimit != "" {
		prev, err := st.SetMemoryLimit(ctx, memoryLimit)
		if err != nil {
			return ingest.Summary{}, err
		}
		defer st.SetMemoryLimit(context.WithoutCancel(ctx), prev)
	}
	if threads != 0 {
		prev, err := st.SetThreads(ctx, threads)
		if err != nil {
			return ingest.Summary{}, err
		}
		defer st.SetThreads(context.WithoutCancel(ctx), prev)
	}
	// On a terminal a bar; otherwise a plain line every
	// progress.DefaultEvery, so a log shows where a big file is.
	line := progress.New(log)
	opt.Log = line
	rep := progress.NewReporter(line)
	opt.Progress = func(path string, read, size, spans int64) {
		rep.Update(progress.Bar("ingest "+path, read, size, fmt.Sprintf("%d spans", spans)))
	}
	sum, err := ingest.Run(ctx, st, paths, opt)
	rep.Done()
	line.Clear()
	if err != nil {
		return sum, err
	}
	stored, err := st.CountSpans(ctx)
	if err != nil {
		return sum, err
	}
	fmt.Fprintln(log, sum.Line(stored))
	return sum, nil
}
