// Package queries holds retryscope's SQL as named files. Each file starts
// with a comment saying what it computes and which columns it yields; Go
// code runs them by name, never by splicing user text into SQL.
package queries

import (
	"embed"
	"fmt"
)

//go:embed *.sql
var files embed.FS

// Get returns the SQL text of the named file (without the .sql suffix).
// It panics on an unknown name: the set is fixed at build time.
func Get(name string) string {
	b, err := files.ReadFile(name + ".sql")
	if err != nil {
		panic(fmt.Sprintf("queries: no file %s.sql", name))
	}
	return string(b)
}
