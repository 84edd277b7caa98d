// Package catalogs opens the catalogs floe supports from their
// configuration: the embedded default (SQLite at <warehouse>/catalog.db,
// in the JDBC catalog schema), SQL on PostgreSQL, MySQL and MariaDB, REST,
// Hadoop, Glue and Hive.
package catalogs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/glue"   // registers "glue"
	_ "github.com/apache/iceberg-go/catalog/hadoop" // registers "hadoop"
	_ "github.com/apache/iceberg-go/catalog/hive"   // registers "hive"
	_ "github.com/apache/iceberg-go/catalog/rest"   // registers "rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/apache/iceberg-go/io/gocloud" // s3://, gs://, abfs:// storage
	_ "modernc.org/sqlite"                      // pure-Go SQLite driver "sqlite"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/ingest"
)

// WarehouseEnv overrides the default warehouse directory.
const WarehouseEnv = "FLOE_WAREHOUSE"

// ResolveWarehouse applies floe's precedence: an explicit value, then
// $FLOE_WAREHOUSE, then ./warehouse. Local paths are made absolute, since
// table locations recorded in the catalog must not depend on the working
// directory.
func ResolveWarehouse(explicit string) (string, error) {
	wh := explicit
	if wh == "" {
		wh = os.Getenv(WarehouseEnv)
	}
	if wh == "" {
		wh = "warehouse"
	}
	if IsURL(wh) {
		if strings.HasPrefix(wh, "file://") {
			return strings.TrimPrefix(wh, "file://"), nil
		}
		return wh, nil
	}
	return filepath.Abs(wh)
}

// IsURL tells a URL (s3://, file://) from a local path.
func IsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && len(u.Scheme) > 1
}

// Open opens the configured catalog. The embedded default is an
// SQLite catalog at <warehouse>/catalog.db with tables under <warehouse>,
// in the standard JDBC catalog schema, so other engines can open it.
func Open(ctx context.Context, c config.Catalog) (catalog.Catalog, error) {
	name, typ, props, err := properties(c)
	if err != nil {
		return nil, err
	}
	shown := props[shownURIKey]
	delete(props, shownURIKey)
	var cat catalog.Catalog
	if typ == "rest" {
		cat, err = openREST(ctx, name, props)
	} else {
		cat, err = catalog.Load(ctx, name, props)
	}
	if err != nil {
		if typ == "rest" {
			err = explainREST(ctx, props, err)
		}
		if shown != "" {
			check := "the database server runs, is reachable and takes the credentials given (jdbc.user, jdbc.password)"
			if typ == "hive" {
				check = "the Hive Metastore runs and is reachable at that address"
			}
			return nil, fmt.Errorf("open %s catalog %q at %s: %w; check that %s", typ, name, shown, err, check)
		}
		return nil, fmt.Errorf("open %s catalog %q: %w", typ, name, err)
	}
	if typ == "sql" && props[sqlcat.DriverKey] == "sqlite" {
		watch(cat, sqlitePath(props["uri"]))
	}
	return cat, nil
}

// properties are the catalog's name, type and iceberg-go properties, with
// floe's defaults applied.
func properties(c config.Catalog) (name, typ string, props iceberg.Properties, err error) {
	wh, err := ResolveWarehouse(c.Warehouse)
	if err != nil {
		return "", "", nil, fmt.Errorf("%w: warehouse %q: %v", ingest.ErrConfig, c.Warehouse, err)
	}
	name = c.Name
	if name == "" {
		name = "floe"
	}
	typ = c.Type
	if typ == "" {
		typ = "sql"
	}
	props = iceberg.Properties{}
	for k, v := range c.Properties {
		props[k] = v
	}
	local := !IsURL(wh)
	whURL := wh
	if local {
		whURL = "file://" + wh
	}
	switch typ {
	case "sql":
		uri := c.URI
		if uri == "" {
			if !local {
				return "", "", nil, fmt.Errorf("%w: the embedded SQLite catalog keeps its database on local disk, and warehouse %s is not local; pass --catalog-uri with the catalog database, e.g. --catalog-uri ./catalog.db", ingest.ErrConfig, wh)
			}
			if err := os.MkdirAll(wh, 0o755); err != nil {
				return "", "", nil, fmt.Errorf("create warehouse %s: %w", wh, err)
			}
			uri = filepath.Join(wh, "catalog.db")
		}
		if _, chosen := props[sqlcat.DriverKey]; !chosen {
			server, ok, err := parseSQLServer(uri, props)
			if err != nil {
				return "", "", nil, err
			}
			if ok {
				props[sqlcat.DriverKey], props[sqlcat.DialectKey], props["uri"] = server.driver, string(server.dialect), server.dsn
				props[shownURIKey] = server.shown
			}
		}
		driver := props.Get(sqlcat.DriverKey, "sqlite")
		if driver == "sqlite" {
			if uri, err = sqliteURI(uri); err != nil {
				return "", "", nil, err
			}
		}
		setDefault(props, "uri", uri)
		setDefault(props, sqlcat.DriverKey, driver)
		setDefault(props, sqlcat.DialectKey, string(sqlcat.SQLite))
		setDefault(props, "init_catalog_tables", "true")
		setDefault(props, "warehouse", whURL)
	case "hadoop":
		if local {
			if err := os.MkdirAll(wh, 0o755); err != nil {
				return "", "", nil, fmt.Errorf("create warehouse %s: %w", wh, err)
			}
		}
		setDefault(props, "warehouse", wh)
	case "hive":
		setDefault(props, "uri", c.URI)
		props[shownURIKey] = c.URI
		if c.Warehouse != "" {
			setDefault(props, "warehouse", c.Warehouse)
		}
	case "rest", "glue":
		if c.URI != "" {
			setDefault(props, "uri", c.URI)
		}
		if c.Warehouse != "" {
			setDefault(props, "warehouse", c.Warehouse)
		}
	default:
		return "", "", nil, fmt.Errorf("%w: catalog type %q is not supported; use sql, rest, hadoop, glue or hive", ingest.ErrConfig, typ)
	}
	props["type"] = typ
	return name, typ, props, nil
}

// sqliteURI turns a database path (or file: URI) into the driver's URI with
// a busy timeout and the WAL journal: several floe processes may share one
// catalog, and they must wait for the lock instead of failing, while readers
// run beside a writer.
func sqliteURI(uri string) (string, error) {
	if strings.Contains(uri, "_pragma=") {
		return uri, nil // the caller chose its own settings
	}
	abs, err := filepath.Abs(sqlitePath(uri))
	if err != nil {
		return "", fmt.Errorf("%w: catalog database %q: %v", ingest.ErrConfig, uri, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", fmt.Errorf("create directory for catalog database %s: %w", abs, err)
	}
	sep := "?"
	if strings.Contains(uri, "?") {
		sep = "&"
		abs = abs + uri[strings.IndexByte(uri, '?'):]
	}
	return "file:" + abs + sep + "_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)", nil
}

// sqlitePath is the database file of an SQLite URI or path.
func sqlitePath(uri string) string {
	path := strings.TrimPrefix(uri, "file:")
	if q := strings.IndexByte(path, '?'); q >= 0 {
		path = path[:q]
	}
	return path
}

// LocalWarehouse is the local directory a catalog of type sql (the
// embedded default) or hadoop keeps its tables in, or "" when the tables
// are elsewhere (REST, Glue and Hive catalogs, object-store warehouses).
func LocalWarehouse(c config.Catalog) string {
	if c.Type != "" && c.Type != "sql" && c.Type != "hadoop" {
		return ""
	}
	wh, err := ResolveWarehouse(c.Warehouse)
	if err != nil || IsURL(wh) {
		return ""
	}
	return wh
}

// Missing tells a local catalog that does not exist yet from one that
// does: Open would create it (the embedded default's warehouse and
// catalog.db, a Hadoop warehouse directory, an SQLite database), which a
// command that only reads must not do. It returns what is missing and the
// flag that names it; catalogs that are not local files are left for the
// catalog itself to judge.
func Missing(c config.Catalog) (what, flag string, missing bool) {
	wh, err := ResolveWarehouse(c.Warehouse)
	if err != nil {
		return "", "", false // Open reports it
	}
	local := !IsURL(wh)
	switch c.Type {
	case "", "sql":
		if c.URI == "" {
			db := filepath.Join(wh, "catalog.db")
			return "warehouse at " + wh + " (no catalog.db)", "--warehouse", local && !exists(db)
		}
		if driver := c.Properties[sqlcat.DriverKey]; driver != "" && driver != "sqlite" {
			return "", "", false
		}
		if _, server, _ := parseSQLServer(c.URI, c.Properties); server {
			return "", "", false
		}
		path := sqlitePath(c.URI)
		if path == "" || path == ":memory:" || strings.Contains(c.URI, "mode=memory") {
			return "", "", false
		}
		return "catalog database at " + path, "--catalog-uri", !exists(path)
	case "hadoop":
		return "warehouse at " + wh, "--warehouse", local && !exists(wh)
	}
	return "", "", false
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// shownURIKey carries a database URI without its password from
// properties to Open's messages; it is not passed to the catalog.
const shownURIKey = "floe.shown-uri"

func setDefault(p iceberg.Properties, k, v string) {
	if _, ok := p[k]; !ok {
		p[k] = v
	}
}

// Warehouse is the root URL c places new tables under ("" when the catalog
// decides alone, as REST and Glue do).
func Warehouse(c config.Catalog) string {
	_, _, props, err := properties(c)
	if err != nil {
		return ""
	}
	return props["warehouse"]
}
