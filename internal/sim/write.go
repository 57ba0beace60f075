package sim

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/retryscope/retryscope/internal/atomicfile"
)

// WriteJSONLines writes one OTLP/JSON ExportTraceServiceRequest per line,
// as the Collector's file exporter does with format: json.
func WriteJSONLines(w io.Writer, batches []ptrace.Traces) error {
	bw := bufio.NewWriter(w)
	var m ptrace.JSONMarshaler
	for i, td := range batches {
		b, err := m.MarshalTraces(td)
		if err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// WriteProtoFramed writes each batch as an OTLP protobuf message preceded by
// its length as 4 bytes big-endian, as the Collector's file exporter does
// with format: proto.
func WriteProtoFramed(w io.Writer, batches []ptrace.Traces) error {
	bw := bufio.NewWriter(w)
	var m ptrace.ProtoMarshaler
	for i, td := range batches {
		b, err := m.MarshalTraces(td)
		if err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
		bw.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b))))
		bw.Write(b)
	}
	return bw.Flush()
}

// WriteTo writes to the file at path, or to stdout when path is "-". A
// regular file is written beside its name and renamed, so a failure leaves
// the old file, or none, never half of the new one.
func WriteTo(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" {
		return write(stdout)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		f.Abort()
	}
	return err
}

// Summary says what a run generated and where it went: the truth's
// requests, attempts and amplification, the spans, the traces file out and
// the truth file (none when ""), with its final failure rate.
func (r Result) Summary(out, truth string) string {
	spans := 0
	for _, td := range r.Traces {
		spans += td.SpanCount()
	}
	w := r.Truth.Workload
	s := fmt.Sprintf("%d logical requests, %d attempts (amplification %.3f), final failure rate %.1f%%, %d spans -> %s",
		w.LogicalRequests, w.Attempts, w.Amplification, 100*w.FinalFailureRate, spans, out)
	if truth != "" {
		s += ", truth -> " + truth
	}
	return s
}

// WriteFiles generates cfg's workload and writes its traces to out in
// format (json or proto) and its truth to truth ("" for none); "-" is
// stdout. It returns the summary line `retryscope gen` prints.
func WriteFiles(cfg Config, format, out, truth string, stdout io.Writer) (string, error) {
	res, err := Generate(cfg)
	if err != nil {
		return "", err
	}
	write := WriteJSONLines
	if format == "proto" {
		write = WriteProtoFramed
	}
	// The truth is encoded first: a truth that cannot be written must not
	// leave the traces without it.
	var truthJSON bytes.Buffer
	if truth != "" {
		if err := WriteTruth(&truthJSON, res.Truth); err != nil {
			return "", fmt.Errorf("write %s: %w", truth, err)
		}
	}
	if err := WriteTo(out, stdout, func(w io.Writer) error { return write(w, res.Traces) }); err != nil {
		return "", fmt.Errorf("write %s: %w", out, err)
	}
	if truth != "" {
		if err := WriteTo(truth, stdout, func(w io.Writer) error { _, err := w.Write(truthJSON.Bytes()); return err }); err != nil {
			return "", fmt.Errorf("write %s: %w", truth, err)
		}
	}
	return res.Summary(out, truth), nil
}
