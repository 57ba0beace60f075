package gen

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"go.opentelemetry.io/collector/pdata/ptrace"
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
