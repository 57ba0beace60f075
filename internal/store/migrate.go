package store

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/retryscope/retryscope/queries"
)

// SchemaVersion is the schema this retryscope writes: the number of the
// last migration in queries/migrations.
func SchemaVersion() int {
	all := queries.Migrations()
	return all[len(all)-1].Version
}

// legacyVersion is the migration whose tables a database written before
// schema versions holds: the ingest tables, with derived tables of its own
// making beside them, which the upgrade drops.
const legacyVersion = 2

// migrate brings the schema up to SchemaVersion in one transaction, so a
// database is never left half migrated, and refuses a schema newer than
// this retryscope knows.
func (s *Store) migrate(ctx context.Context) error {
	return s.Tx(ctx, func() error {
		from, err := s.currentVersion(ctx)
		if err != nil {
			return err
		}
		latest := SchemaVersion()
		switch {
		case from > latest:
			return fmt.Errorf("database schema version %d is newer than this retryscope (%d); use a newer retryscope", from, latest)
		case from == latest:
			return nil
		case s.ReadOnly:
			return fmt.Errorf("database schema version %d is older than this retryscope's (%d), and the file is open read-only: run retryscope once where it may write the file, to upgrade it", from, latest)
		}
		for _, m := range queries.Migrations()[from:] {
			if _, err := s.execText(ctx, m.SQL); err != nil {
				return fmt.Errorf("schema migration %s: %w", m.Name, err)
			}
		}
		if err := s.ExecScript(ctx, "store_schema_version_record", latest, writtenBy()); err != nil {
			return fmt.Errorf("record schema version: %w", err)
		}
		return nil
	})
}

// writtenBy names this retryscope for schema_version.
func writtenBy() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return "retryscope " + info.Main.Version
	}
	return "retryscope"
}

// currentVersion reads the schema version. A database without a
// schema_version table is new (no tables: version 0) or was written before
// schema versions, and is then upgraded to legacyVersion (see
// upgradeLegacy).
func (s *Store) currentVersion(ctx context.Context) (int, error) {
	var tables, versioned int
	err := s.QueryRow(ctx, "store_schema_tables").Scan(&tables, &versioned)
	switch {
	case err != nil:
		return 0, fmt.Errorf("read schema version: %w", err)
	case tables == 0:
		return 0, nil
	case versioned == 0:
		return s.upgradeLegacy(ctx)
	}
	var version int
	if err := s.QueryRow(ctx, "store_schema_version").Scan(&version); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return version, nil
}

// upgradeLegacy takes a database written before schema versions to
// legacyVersion: it checks that its ingest tables are column for column
// those of the migrations up to legacyVersion (made in a scratch schema to
// compare), creates schema_version, and drops the derived tables
// (queries/migrate_legacy.sql), which the later migrations make again
// empty, so everything derived is computed again from the spans.
func (s *Store) upgradeLegacy(ctx context.Context) (int, error) {
	steps := []string{queries.Get("store_legacy_scratch")}
	for _, m := range queries.Migrations()[:legacyVersion] {
		steps = append(steps, m.SQL)
	}
	for _, q := range steps {
		if _, err := s.execText(ctx, q); err != nil {
			s.Exec(context.WithoutCancel(ctx), "store_legacy_main")
			return 0, fmt.Errorf("check the layout of a database without schema version: %w", err)
		}
	}
	if _, err := s.Exec(ctx, "store_legacy_main"); err != nil {
		return 0, err
	}
	var missing, differ int
	err := s.QueryRow(ctx, "store_legacy_compare").Scan(&missing, &differ)
	if err != nil {
		return 0, fmt.Errorf("check the layout of a database without schema version: %w", err)
	}
	if missing > 0 || differ > 0 {
		return 0, fmt.Errorf("the database has no schema version and is not one retryscope wrote before schema versions " +
			"(its tables differ from those of 18b8751); ingest the traces into a new database")
	}
	if _, err := s.Exec(ctx, "store_legacy_drop"); err != nil {
		return 0, err
	}
	for _, q := range []string{queries.Migrations()[0].SQL, queries.Get("migrate_legacy")} {
		if _, err := s.execText(ctx, q); err != nil {
			return 0, fmt.Errorf("upgrade a database written before schema versions: %w", err)
		}
	}
	return legacyVersion, nil
}
