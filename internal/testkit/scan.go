package testkit

import "database/sql"

// ScanRow reads the current row of rows, of n columns, as the driver's
// values (nil for NULL).
func ScanRow(rows *sql.Rows, n int) ([]any, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return vals, rows.Scan(ptrs...)
}
