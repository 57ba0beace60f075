package store

import (
	"fmt"

	"github.com/duckdb/duckdb-go/v2/mapping"
	"github.com/retryscope/retryscope/queries"
)

// A reader names the columns it takes from a result (grafana/tempo's
// parquetquery resolves a column's path to its index once, the same way):
// the names are matched to the result's columns once per query, and the
// reader's loop reads by index, in its own order. Moving a column in the
// SQL then moves nothing the reader reads; renaming, dropping or
// repeating one, or changing its type, is an error that names the query
// and the column.

// Col is a column a reader takes from a query's result: its name there
// and how it is read.
type Col struct {
	Name string
	Kind Kind
}

// TextCol is the KindText column name.
func TextCol(name string) Col { return Col{name, KindText} }

// IntCol is the KindInt column name.
func IntCol(name string) Col { return Col{name, KindInt} }

// FloatCol is the KindFloat column name.
func FloatCol(name string) Col { return Col{name, KindFloat} }

// BoolCol is the KindBool column name.
func BoolCol(name string) Col { return Col{name, KindBool} }

// IntListCol is the KindIntList column name.
func IntListCol(name string) Col { return Col{name, KindIntList} }

// FloatListCol is the KindFloatList column name.
func FloatListCol(name string) Col { return Col{name, KindFloatList} }

// SQL is a query's text and the name its errors give it, the name of its
// file in queries/.
type SQL struct {
	Name, Text string
}

// QueryFile is the query of the queries/ file name.
func QueryFile(name string) SQL { return SQL{name, queries.Get(name)} }

// resolve returns, for each of cols, the index of res's column of that
// name, checked to be readable as its kind. Columns of res that cols do
// not name are left unread.
func resolve(res *mapping.Result, cols []Col) ([]mapping.IdxT, error) {
	byName := make(map[string]int, len(cols))
	for i, c := range cols {
		if _, ok := byName[c.Name]; ok {
			return nil, fmt.Errorf("column %s is read twice", c.Name)
		}
		byName[c.Name] = i
	}
	order := make([]mapping.IdxT, len(cols))
	found := make([]bool, len(cols))
	for j := range mapping.IdxT(mapping.ColumnCount(res)) {
		i, ok := byName[mapping.ColumnName(res, j)]
		if !ok {
			continue
		}
		if found[i] {
			return nil, fmt.Errorf("the query has two columns %s", cols[i].Name)
		}
		order[i], found[i] = j, true
	}
	for i, c := range cols {
		if !found[i] {
			return nil, fmt.Errorf("the query has no column %s", c.Name)
		}
		if err := checkKind(res, order[i], c.Kind); err != nil {
			return nil, err
		}
	}
	return order, nil
}
