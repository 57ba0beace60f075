package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/spf13/pflag"
	"go.opentelemetry.io/collector/pdata/ptrace"

	_ "github.com/duckdb/duckdb-go/v2"
)

// runDecode is step R: read the dump's parts and decode every message with
// pdata, storing nothing. Run with GOMAXPROCS=1 it is the single-core
// reference the other steps are measured against.
func runDecode(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("decode", pflag.ContinueOnError)
	format := fs.String("format", "proto", "proto (4-byte length framing) or json (lines)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var spans int
	for _, path := range fs.Args() {
		n, err := decodeFile(path, *format)
		if err != nil {
			fmt.Fprintf(stderr, "decode %s: %v\n", path, err)
			return 1
		}
		spans += n
	}
	fmt.Fprintln(stdout, spans, "spans")
	return 0
}

func decodeFile(path, format string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 1<<20)
	if strings.HasSuffix(path, ".zst") {
		z, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return 0, err
		}
		defer z.Close()
		r = bufio.NewReaderSize(z, 1<<20)
	}
	spans := 0
	decode := func(msg []byte) error {
		var td ptrace.Traces
		var err error
		if format == "json" {
			td, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(msg)
		} else {
			td, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(msg)
		}
		spans += td.SpanCount()
		return err
	}
	if format == "json" {
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 1<<20), 256<<20)
		for s.Scan() {
			if len(s.Bytes()) > 0 {
				if err := decode(s.Bytes()); err != nil {
					return spans, err
				}
			}
		}
		return spans, s.Err()
	}
	var size [4]byte
	var msg []byte
	for {
		if _, err := io.ReadFull(r, size[:]); errors.Is(err, io.EOF) {
			return spans, nil
		} else if err != nil {
			return spans, err
		}
		n := binary.BigEndian.Uint32(size[:])
		if cap(msg) < int(n) {
			msg = make([]byte, n)
		}
		msg = msg[:n]
		if _, err := io.ReadFull(r, msg); err != nil {
			return spans, err
		}
		if err := decode(msg); err != nil {
			return spans, err
		}
	}
}

// compress writes src zstd-compressed to dst and removes src.
func compress(ctx context.Context, src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	z, err := zstd.NewWriter(out)
	if err == nil {
		_, err = io.Copy(z, in)
		if cerr := z.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Remove(src)
}

// flatSpans is step P: what a user might try with DuckDB alone, reading the
// JSON lines and unnesting resource, scope and span levels into one flat
// table, attributes kept as DuckDB read them.
const flatSpans = `
CREATE TABLE spans AS
WITH rs AS (SELECT unnest(resourceSpans) AS rs FROM read_ndjson(?, maximum_object_size = 268435456)),
ss AS (SELECT rs.resource AS resource, unnest(rs.scopeSpans) AS ss FROM rs),
sp AS (SELECT resource, ss.scope AS scope, unnest(ss.spans) AS s FROM ss)
SELECT s.traceId AS trace_id, s.spanId AS span_id, s.parentSpanId AS parent_span_id, s.name AS name,
       s.kind AS kind, s.startTimeUnixNano AS start_ns, s.endTimeUnixNano AS end_ns, s.status AS status,
       s.attributes AS attributes, s.events AS events, resource.attributes AS resource_attributes,
       scope.name AS scope_name
FROM sp`

// runSQLLoad is step P on the JSON lines parts into a fresh database.
func runSQLLoad(args []string, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "usage: bench sqlload DB FILE...")
		return 2
	}
	db, err := sql.Open("duckdb", args[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer db.Close()
	if _, err := db.Exec(flatSpans, args[1:]); err != nil {
		fmt.Fprintf(stderr, "sqlload: %v\n", err)
		return 1
	}
	return 0
}
