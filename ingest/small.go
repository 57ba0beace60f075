package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/retryscope/retryscope/internal/crashpoint"
	"github.com/retryscope/retryscope/internal/store"
	"github.com/retryscope/retryscope/model"
)

// A regular file of at most smallFileBytes is read and decoded whole
// before anything of it is stored, and consecutive such files are stored
// several to a transaction (store.StoreWhole): a directory of one-span
// files, as a Collector with rotation leaves them, otherwise pays a
// transaction a file. A group is stored once it holds groupFiles files,
// groupSpans spans or groupTextBytes bytes of decoded text; a file that
// decodes to more than that on its own is read again as a large one.
const (
	groupFiles     = 1000
	groupSpans     = 100_000
	groupTextBytes = 64 << 20
)

// smallFileBytes is a variable so that a test can compare files stored in
// groups with the same files stored one at a time.
var smallFileBytes int64 = 1 << 20

// errNotSmall stops the whole read of a file that decodes to more than a
// group may hold.
var errNotSmall = errors.New("decodes to more than a group of small files holds")

// isSmall reports whether path is a regular file to read whole.
func isSmall(path string) bool {
	if path == "-" {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() <= smallFileBytes
}

// smallFile is a small file read whole, waiting for its group to be
// stored: nothing of it is written, and nothing logged, before that.
type smallFile struct {
	res   FileResult
	whole store.WholeFile
	// reject, if set, is a problem with the file as a whole, recorded
	// without a ledger row (rejectWhole).
	reject *model.Rejection
	log    bytes.Buffer
	start  time.Time
	text   int // the batches' text bytes
}

// Add takes the file's batches, up to what a group holds.
func (f *smallFile) Add(b *store.SpanBatch) error {
	if len(b.Spans) == 0 {
		return nil
	}
	if f.res.Spans+int64(b.Len()) > groupSpans || f.text+b.TextBytes() > groupTextBytes {
		return errNotSmall
	}
	f.whole.Batches = append(f.whole.Batches, b)
	f.text += b.TextBytes()
	return nil
}

// readSmall reads and decodes a small file whole. It returns errNotSmall
// when the file is to be read as a large one after all.
func readSmall(ctx context.Context, path string, walked bool, opt Options) (*smallFile, error) {
	f := &smallFile{res: FileResult{Path: path, Rejected: map[string]int64{}}, start: time.Now()}
	reject := func(r model.Rejection) (*smallFile, error) {
		f.reject = &r
		return f, nil
	}
	wait := time.Duration(0)
	if walked {
		wait = opt.FIFOWait
	}
	src, err := openInput(ctx, path, opt.Stdin, wait)
	var special *specialFileError
	switch {
	case errors.As(err, &special):
		return reject(model.Rejection{Reason: "not_a_file", Detail: err.Error()})
	case errors.Is(err, errNoWriter):
		return reject(model.Rejection{Reason: "empty_file", Detail: err.Error()})
	case err != nil:
		return reject(model.Rejection{Reason: "unreadable", Detail: err.Error()})
	}
	defer src.close()
	if src.file == nil || src.size > smallFileBytes {
		return nil, errNotSmall // no longer the small file it was a moment ago
	}
	if src.size == 0 {
		return reject(model.Rejection{Reason: "empty_file", Detail: "the file is empty"})
	}
	src.hashWhileReading(src.file)
	fileOpt := opt
	fileOpt.Log = &f.log
	rejections, err := readInto(ctx, f, src, &f.res, fileOpt)
	if err != nil {
		return nil, err
	}
	sha, err := src.finishHash()
	if err != nil {
		f.res = FileResult{Path: path, Rejected: map[string]int64{}}
		f.log.Reset()
		return reject(model.Rejection{Reason: "unreadable", Detail: err.Error()})
	}
	f.whole.Info = ledgerRow(&f.res, sha, src.read.Load(), rejections, f.start)
	f.whole.Rejections = rejections
	return f, nil
}

// smallGroup is the small files read and not yet stored, in order.
type smallGroup struct {
	files     []*smallFile
	spans     int64
	textBytes int
}

func (g *smallGroup) add(f *smallFile) {
	g.files = append(g.files, f)
	g.spans += f.res.Spans
	g.textBytes += f.text
}

func (g *smallGroup) full() bool {
	return len(g.files) >= groupFiles || g.spans >= groupSpans || g.textBytes >= groupTextBytes
}

// store stores the group's files, in order, and adds them to sum. A file
// whose content was ingested before (or earlier in the group) is skipped;
// one whose spans may repeat stored ones goes alone, through the careful
// merge of a file's transaction; the files between go together.
func (g *smallGroup) store(ctx context.Context, st *store.Store, opt Options, sum *Summary) error {
	files := g.files
	*g = smallGroup{}
	if len(files) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err // a file may have been cut short: store none
	}
	var shas []string
	for _, f := range files {
		if f.reject == nil {
			shas = append(shas, f.whole.Info.SHA256)
		}
	}
	seen, err := st.SeenFiles(ctx, shas)
	if err != nil {
		return err
	}
	var stored []*smallFile
	for _, f := range files {
		if f.reject != nil {
			continue
		}
		if prev, ok := seen[f.whole.Info.SHA256]; ok {
			f.res = FileResult{Path: f.res.Path, Skipped: "already ingested as " + prev}
			continue
		}
		seen[f.whole.Info.SHA256] = f.res.Path
		stored = append(stored, f)
	}
	wholes := make([]store.WholeFile, len(stored))
	for i, f := range stored {
		wholes[i] = f.whole
	}
	mayRepeat, err := st.MayRepeat(ctx, wholes)
	if err != nil {
		return err
	}
	alone := map[*smallFile]bool{}
	for i, f := range stored {
		alone[f] = mayRepeat[i]
	}

	// run is the files since the last one stored alone or rejected:
	// stored together, then logged and added to sum in order.
	var run []*smallFile
	storeRun := func() error {
		var together []store.WholeFile
		var of []*smallFile
		for _, f := range run {
			if f.res.Skipped == "" {
				together = append(together, f.whole)
				of = append(of, f)
			}
		}
		err := st.StoreWhole(ctx, together, func() error {
			for range together {
				if err := crashpoint.Hit("ingest.staged"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("ingest %s and %d more small files: %w", run[0].res.Path, len(run)-1, err)
		}
		for i, f := range of {
			f.res.SpansNew = together[i].Spans()
			f.res.Elapsed = time.Duration(together[i].Info.Seconds * float64(time.Second))
		}
		for _, f := range run {
			if f.res.Skipped == "" {
				if err := crashpoint.Hit("ingest.committed"); err != nil {
					return err
				}
			}
			f.finish(opt, sum)
		}
		run = run[:0]
		return nil
	}
	for _, f := range files {
		if f.reject == nil && !alone[f] {
			run = append(run, f)
			continue
		}
		if err := storeRun(); err != nil {
			return err
		}
		if f.reject != nil {
			err := rejectWhole(ctx, st, &f.res, opt, *f.reject)
			sum.add(f.res)
			if err != nil {
				return fmt.Errorf("ingest %s: %w", f.res.Path, err)
			}
			continue
		}
		if err := f.storeAlone(ctx, st, opt, sum); err != nil {
			return err
		}
	}
	return storeRun()
}

// finish logs a file of a stored run and adds it to sum.
func (f *smallFile) finish(opt Options, sum *Summary) {
	sum.add(f.res)
	if f.res.Skipped != "" {
		f.res.logSkipped(opt)
		return
	}
	opt.Log.Write(f.log.Bytes())
	if !opt.Quiet {
		fmt.Fprintf(opt.Log, "%s\n", f.res.line())
	}
}

// storeAlone stores a small file in a transaction of its own, whose merge
// keeps the first copy of each span it repeats.
func (f *smallFile) storeAlone(ctx context.Context, st *store.Store, opt Options, sum *Summary) error {
	opt.Log.Write(f.log.Bytes())
	tx, err := st.BeginFile(ctx, f.res.Path)
	if err == nil {
		for _, b := range f.whole.Batches {
			if err = tx.Add(b); err != nil {
				tx.Rollback()
				break
			}
		}
	}
	if err == nil {
		err = commitFile(tx, &f.res, f.whole.Info, f.whole.Rejections, f.start, opt)
	}
	sum.add(f.res)
	if err != nil {
		return fmt.Errorf("ingest %s: %w", f.res.Path, err)
	}
	return nil
}
