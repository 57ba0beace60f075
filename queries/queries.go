// Package queries holds retryscope's SQL as named files. Each file starts
// with a comment saying what it computes and which columns it yields; Go
// code runs them by name, never by splicing user text into SQL. The
// schema is made only by the numbered files in migrations/.
package queries

import (
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
)

//go:embed *.sql
var files embed.FS

//go:embed migrations/*.sql
var migrations embed.FS

// Get returns the SQL text of the named file (without the .sql suffix).
// It panics on an unknown name: the set is fixed at build time.
func Get(name string) string {
	text, ok := byName()[name]
	if !ok {
		panic(fmt.Sprintf("queries: no file %s.sql", name))
	}
	return text
}

// byName holds every file's text, read once: the store runs some
// queries once per file or chunk ingested.
var byName = sync.OnceValue(func() map[string]string {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		panic(err)
	}
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		b, err := files.ReadFile(e.Name())
		if err != nil {
			panic(err)
		}
		m[strings.TrimSuffix(e.Name(), ".sql")] = string(b)
	}
	return m
})

// Migration is one step of the schema: the file migrations/NNN_name.sql.
type Migration struct {
	Version int    // NNN: migrations run in this order, each once
	Name    string // the file name
	SQL     string
}

// Migrations returns every migration in version order. It panics when a
// file is misnamed or a number is missing or repeated: the set is fixed
// at build time, and a test runs it.
func Migrations() []Migration {
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		panic(err)
	}
	var out []Migration
	for i, e := range entries { // ReadDir sorts by name
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			panic(fmt.Sprintf("queries: migration %s: want the name %03d_<what>.sql", e.Name(), i+1))
		}
		b, err := migrations.ReadFile("migrations/" + e.Name())
		if err != nil {
			panic(err)
		}
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(b)})
	}
	return out
}
