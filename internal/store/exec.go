package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/retryscope/retryscope/queries"
)

// The store runs its statements by the name of their file in queries/:
// the SQL is read where it is written, and a caller names what it runs.

// Exec runs the statement (or, without args, the statements) of the
// queries/ file name and returns the number of rows it affected.
func (s *Store) Exec(ctx context.Context, name string, args ...any) (int64, error) {
	return s.execText(ctx, queries.Get(name), args...)
}

// Query runs the query of the queries/ file name.
func (s *Store) Query(ctx context.Context, name string, args ...any) (*sql.Rows, error) {
	return s.conn.QueryContext(ctx, queries.Get(name), args...)
}

// QueryRow runs the query of the queries/ file name, which yields at most
// one row.
func (s *Store) QueryRow(ctx context.Context, name string, args ...any) *sql.Row {
	return s.conn.QueryRowContext(ctx, queries.Get(name), args...)
}

// EachRow runs the query of the queries/ file name and calls each with
// every row of its result, in order, stopping at the first error.
func (s *Store) EachRow(ctx context.Context, name string, args []any, each func(*sql.Rows) error) error {
	rows, err := s.Query(ctx, name, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Strings runs the query of the queries/ file name, which yields one
// column of text, and returns its values in order.
func (s *Store) Strings(ctx context.Context, name string, args ...any) ([]string, error) {
	rows, err := s.Query(ctx, name, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ExecScript runs a query file's statements one by one: the driver binds
// parameters per statement, so those that use them ($1...) get args.
func (s *Store) ExecScript(ctx context.Context, name string, args ...any) error {
	for _, stmt := range strings.SplitAfter(queries.Get(name), ";\n") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		var a []any
		if usesParams(stmt) {
			a = args
		}
		if _, err := s.conn.ExecContext(ctx, stmt, a...); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// usesParams says whether a statement of a script refers to $1, in its
// code rather than in a comment (a file's header comment rides along with
// its first statement).
func usesParams(stmt string) bool {
	for _, line := range strings.Split(stmt, "\n") {
		code, _, _ := strings.Cut(line, "--")
		if strings.Contains(code, "$1") {
			return true
		}
	}
	return false
}

// execText runs SQL text and returns the number of rows it affected.
func (s *Store) execText(ctx context.Context, text string, args ...any) (int64, error) {
	res, err := s.conn.ExecContext(ctx, text, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// QueryText runs SQL text that is no file of queries/ as it stands: a
// test's own query (internal/testkit), or a query file's text its caller
// adapted (whatif switches on its --task-key clause).
func (s *Store) QueryText(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	return s.conn.QueryContext(ctx, text, args...)
}

// QueryRowText runs SQL text that is no file of queries/, as QueryText
// does, for a query that yields at most one row.
func (s *Store) QueryRowText(ctx context.Context, text string, args ...any) *sql.Row {
	return s.conn.QueryRowContext(ctx, text, args...)
}

// ExecText runs SQL text that is no file of queries/ and returns the
// number of rows it affected: a test's own statement, or one a caller
// builds around or from a query file's text (export's COPY of an export
// query; the rebuild's span facts, which a test may adapt).
func (s *Store) ExecText(ctx context.Context, text string, args ...any) (int64, error) {
	return s.execText(ctx, text, args...)
}

// Tx runs f in a transaction or, when Tx is already running one on this
// store, as part of it: only the outermost commits, or rolls back when f
// fails, so steps that are each atomic can be made atomic together.
func (s *Store) Tx(ctx context.Context, f func() error) error {
	if s.inTx {
		return f()
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	s.inTx = true
	err := f()
	s.inTx = false
	if err != nil {
		s.rollback(ctx)
		return err
	}
	if err := s.commit(ctx); err != nil {
		s.rollback(ctx)
		return err
	}
	return nil
}

// begin, commit and rollback are the transaction's statements, for Tx
// and the ingest's own transactions (FileTx, StoreWhole). A rollback runs
// even when ctx is cancelled: it is what cleans up after the cancel.
func (s *Store) begin(ctx context.Context) error {
	_, err := s.Exec(ctx, "store_begin")
	return err
}

func (s *Store) commit(ctx context.Context) error {
	_, err := s.Exec(ctx, "store_commit")
	return err
}

func (s *Store) rollback(ctx context.Context) {
	s.Exec(context.WithoutCancel(ctx), "store_rollback")
}
