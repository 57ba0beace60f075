package store

import (
	"context"
	"fmt"

	"github.com/duckdb/duckdb-go/v2/mapping"
)

// The chunk decoding read by position, for the tests of the decoding
// itself (read_test.go); the product reads every column by name.

func EachChunkInOrder(ctx context.Context, s *Store, query string, args []any, kinds []Kind, each func(*Chunk) error) error {
	return eachChunk(ctx, s.conn, "", query, args, kinds, inOrderOf(kinds), each, false)
}

func StreamChunksInOrder(ctx context.Context, s *Store, query string, args []any, kinds []Kind, each func(*Chunk) error) error {
	return eachChunk(ctx, s.conn, "", query, args, kinds, inOrderOf(kinds), each, true)
}

func inOrderOf(kinds []Kind) func(*mapping.Result) ([]mapping.IdxT, error) {
	return func(res *mapping.Result) ([]mapping.IdxT, error) {
		if n := int(mapping.ColumnCount(res)); n != len(kinds) {
			return nil, fmt.Errorf("query returns %d columns, read as %d", n, len(kinds))
		}
		order := make([]mapping.IdxT, len(kinds))
		for i, k := range kinds {
			order[i] = mapping.IdxT(i)
			if err := checkKind(res, order[i], k); err != nil {
				return nil, err
			}
		}
		return order, nil
	}
}
