package ingest

import "context"

// inFlightBytes bounds the records being framed, queued and decoded at
// once; budgetUnit is the grain it is counted in. 32 MB keeps both cores
// as busy as 64 MB did, for 25-50 MB less at the peak (1M spans).
const (
	inFlightBytes = 32 << 20
	budgetUnit    = 1 << 20
)

// inOrder reads s's records and runs work on each, on up to workers
// goroutines at once, then use with what work made of it, one record at a
// time in the records' order: ingest's and shard's readers. The records
// in flight hold at most inFlightBytes between them (one larger record
// goes alone): a record decodes at several times its size, so this, not
// the number of workers, bounds the memory. After use's first error, or
// once ctx ends, no more records are read; the ones in flight are waited
// for, so nothing runs on after inOrder returns. It returns use's error;
// the caller sees ctx's end for itself.
func inOrder[R any](ctx context.Context, s *stream, workers int, work func(record) R, use func(R) error) error {
	type pending struct {
		out   chan R
		units int
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	budget := make(chan struct{}, inFlightBytes/budgetUnit)
	jobs := make(chan func(), workers*2)
	order := make(chan pending, workers*4)
	go func() {
		defer close(jobs)
		defer close(order)
		for {
			// A stream's read errors come as records of their own (see
			// streamProblem): an error here is its end.
			rec, err := s.next()
			if err != nil {
				return
			}
			p := pending{out: make(chan R, 1), units: int(min(int64(len(rec.data))/budgetUnit+1, inFlightBytes/budgetUnit))}
			for range p.units {
				select {
				case budget <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
			select {
			case order <- p:
			case <-ctx.Done():
				return
			}
			jobs <- func() { p.out <- work(rec) }
		}
	}()
	for range workers {
		go func() {
			for job := range jobs {
				job()
			}
		}()
	}
	var err error
	for p := range order {
		r := <-p.out
		for range p.units {
			<-budget
		}
		if err == nil {
			if err = use(r); err != nil {
				cancel()
			}
		}
	}
	return err
}
