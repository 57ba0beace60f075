// Package testkit is the one place for what tests share: it builds OTLP
// traces and writes them in every framing retryscope reads (traces.go),
// opens throwaway databases and dumps tables as sorted text so tests compare
// what a user would query (db.go), and reads the fixtures of real
// instrumentations under testdata/fixtures (fixtures.go).
//
// It imports neither ingest nor rebuild, so their own tests can use it;
// generating a workload and rebuilding it is in the workload subpackage.
package testkit
