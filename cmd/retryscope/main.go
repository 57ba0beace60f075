// Command retryscope tells teams what their retries really cost: it reads
// OpenTelemetry trace exports into an embedded DuckDB database, rebuilds each
// logical request from its attempts, and reports the retry tax.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
