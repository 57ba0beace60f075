package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/flagval"
)

// registerLimits adds to fs the flags that bound what one input may cost,
// defaulting to ingest.DefaultLimits (sizes in MiB), and sets *l to those
// defaults. Each flag refuses a value out of its range while fs is
// parsed; call the returned func after fs.Parse to set l from them.
func registerLimits(fs *pflag.FlagSet, l *ingest.Limits) (finish func() error) {
	*l = ingest.DefaultLimits
	var recordMiB, docMiB, expansion int
	fs.Var(flagval.NewDuration(&l.MaxDuration, l.MaxDuration, time.Second, ingest.MaxSpanDurationLimit), "max-span-duration", "longest believable span; longer ones are quarantined")
	fs.Var(flagval.NewInt(&recordMiB, int(l.MaxRecordBytes>>20), 1, ingest.MaxRecordBytes>>20), "max-record-mib",
		fmt.Sprintf("largest record (a JSON line, a framed or raw protobuf message), in MiB, at most %d; larger ones are rejected (record_too_large)", ingest.MaxRecordBytes>>20))
	fs.Var(flagval.NewInt(&docMiB, int(l.MaxDocumentBytes>>20), 1, ingest.MaxRecordBytes>>20), "max-document-mib",
		"largest multi-line (pretty-printed) JSON document, in MiB without whitespace; larger ones are rejected (document_too_large)")
	fs.Var(flagval.NewInt(&expansion, int(l.MaxExpansion), 1, ingest.MaxExpansionLimit), "max-expansion",
		fmt.Sprintf("most bytes a gzip or zstd file may expand to per compressed byte, beyond its first %d MiB; the rest of a file that expands more is rejected (expansion_limit)", l.ExpansionFloor>>20))
	return func() error {
		l.MaxRecordBytes, l.MaxDocumentBytes, l.MaxExpansion = int64(recordMiB)<<20, int64(docMiB)<<20, int64(expansion)
		return nil
	}
}
