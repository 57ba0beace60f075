package ingest

import (
	"fmt"

	"github.com/spf13/pflag"
)

// RegisterFlags adds to fs the flags that bound what one input may cost,
// defaulting to l's values (sizes in MiB). Call the returned func after
// fs.Parse: it sets l from them and refuses a limit that would switch a
// bound off.
func (l *Limits) RegisterFlags(fs *pflag.FlagSet) (finish func() error) {
	*l = l.withDefaults()
	recordMiB, docMiB := l.MaxRecordBytes>>20, l.MaxDocumentBytes>>20
	fs.DurationVar(&l.MaxDuration, "max-span-duration", l.MaxDuration, "longest believable span; longer ones are quarantined")
	fs.Int64Var(&recordMiB, "max-record-mib", recordMiB,
		fmt.Sprintf("largest record (a JSON line, a framed or raw protobuf message), in MiB, at most %d; larger ones are rejected (record_too_large)", MaxRecordBytes>>20))
	fs.Int64Var(&docMiB, "max-document-mib", docMiB,
		"largest multi-line (pretty-printed) JSON document, in MiB without whitespace; larger ones are rejected (document_too_large)")
	fs.Int64Var(&l.MaxExpansion, "max-expansion", l.MaxExpansion,
		fmt.Sprintf("most bytes a gzip or zstd file may expand to per compressed byte, beyond its first %d MiB; the rest of a file that expands more is rejected (expansion_limit)", l.ExpansionFloor>>20))
	return func() error {
		l.MaxRecordBytes, l.MaxDocumentBytes = recordMiB<<20, docMiB<<20
		switch {
		case l.MaxDuration <= 0:
			return fmt.Errorf("--max-span-duration %s: want a positive duration", l.MaxDuration)
		case recordMiB <= 0 || recordMiB > MaxRecordBytes>>20:
			return fmt.Errorf("--max-record-mib %d: want 1 to %d", recordMiB, MaxRecordBytes>>20)
		case docMiB <= 0:
			return fmt.Errorf("--max-document-mib %d: want a positive number of MiB", docMiB)
		case docMiB > MaxRecordBytes>>20:
			return fmt.Errorf("--max-document-mib %d: at most %d (the record limit)", docMiB, MaxRecordBytes>>20)
		case l.MaxExpansion <= 0:
			return fmt.Errorf("--max-expansion %d: want a positive ratio", l.MaxExpansion)
		}
		return nil
	}
}
