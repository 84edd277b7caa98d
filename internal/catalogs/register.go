package catalogs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/ingest"
)

// registrar is implemented by catalogs with Iceberg's register-table
// operation (REST, Glue, Hive).
type registrar interface {
	RegisterTable(ctx context.Context, ident table.Identifier, metadataLocation string) (*table.Table, error)
}

// Register adds a table to the catalog c opens, by an existing metadata
// file, as Spark's register_table procedure does: nothing is copied or
// rewritten, the catalog just points at the file. A name already taken is
// refused.
func Register(ctx context.Context, c config.Catalog, ident table.Identifier, metadataFile string) (*table.Table, error) {
	cat, err := Open(ctx, c)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cl, ok := cat.(catalog.Closer); ok {
			_ = cl.Close()
		}
	}()
	return RegisterIn(ctx, cat, c, ident, metadataFile)
}

// RegisterIn is Register on cat, a catalog opened from c.
func RegisterIn(ctx context.Context, cat catalog.Catalog, c config.Catalog, ident table.Identifier, metadataFile string) (*table.Table, error) {
	name := ingest.JoinIdent(ident)
	if exists, err := cat.CheckTableExists(ctx, ident); err != nil {
		return nil, fmt.Errorf("check table %s: %w", name, err)
	} else if exists {
		return nil, fmt.Errorf("%w: table %s already exists in the catalog; drop it from the catalog first, or register under another name", ingest.ErrConfig, name)
	}
	if ns := ident[:len(ident)-1]; len(ns) > 0 {
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return nil, fmt.Errorf("create namespace %s: %w", ingest.JoinIdent(ns), err)
		}
	}
	if r, ok := cat.(registrar); ok {
		tbl, err := r.RegisterTable(ctx, ident, metadataFile)
		if err != nil {
			return nil, fmt.Errorf("register table %s at %s: %w", name, metadataFile, err)
		}
		return tbl, nil
	}
	_, typ, props, err := properties(c)
	if err != nil {
		return nil, err
	}
	if typ != "sql" {
		return nil, fmt.Errorf("%w: a %s catalog finds its tables by their directories and cannot register a metadata file; copy the table directory into the warehouse instead", ingest.ErrConfig, typ)
	}
	return registerSQL(ctx, cat, props, ident, metadataFile)
}

// registerSQL registers a table in a JDBC-schema catalog, which iceberg-go
// cannot do: the catalog creates a placeholder table under the name, so
// that its own rules pick the row's keys, and the row is then pointed at
// the metadata file.
func registerSQL(ctx context.Context, cat catalog.Catalog, props iceberg.Properties, ident table.Identifier, metadataFile string) (*table.Table, error) {
	name := ingest.JoinIdent(ident)
	tmp, err := os.MkdirTemp("", "floe-register-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	placeholder, err := cat.CreateTable(ctx, ident, iceberg.NewSchema(0), catalog.WithLocation("file://"+filepath.ToSlash(tmp)))
	if err != nil {
		return nil, fmt.Errorf("register table %s: %w", name, err)
	}
	db, err := sql.Open(props[sqlcat.DriverKey], props["uri"])
	if err != nil {
		return nil, fmt.Errorf("open catalog database: %w", err)
	}
	defer db.Close()
	update := "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = NULL WHERE table_name = ? AND metadata_location = ?"
	if props[sqlcat.DialectKey] == string(sqlcat.Postgres) {
		update = "UPDATE iceberg_tables SET metadata_location = $1, previous_metadata_location = NULL WHERE table_name = $2 AND metadata_location = $3"
	}
	res, err := db.ExecContext(ctx, update,
		metadataFile, ident[len(ident)-1], placeholder.MetadataLocation())
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n != 1 {
			err = fmt.Errorf("%d catalog rows matched", n)
		}
	}
	if err != nil {
		_ = cat.DropTable(ctx, ident)
		return nil, fmt.Errorf("register table %s at %s: %w", name, metadataFile, err)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load registered table %s: %w", name, err)
	}
	return tbl, nil
}
