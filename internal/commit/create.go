package commit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/partition"
)

// Create makes the table from an input schema (every column optional, as
// Spark creates them, identifier fields excepted), creating the namespace
// when needed. A concurrent creator winning the race is fine: its table is
// loaded instead.
func (c *Committer) Create(ctx context.Context, schema *arrow.Schema, opts CreateOptions) (*table.Table, error) {
	sc, err := icebergSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot create table %s from the input schema: %v", ingest.ErrSchemaMismatch, c.Name(), err)
	}
	if sc, err = withIdentifiers(sc, opts.IdentifierFields); err != nil {
		return nil, fmt.Errorf("create table %s: %w", c.Name(), err)
	}
	if err := checkFormatVersion(c.Name(), sc, opts.formatVersion(), "set sink.format-version: 3 (--format-version 3) for the new table"); err != nil {
		return nil, err
	}
	if sc, err = withDefaults(c.Name(), sc, opts.Defaults, opts.formatVersion()); err != nil {
		return nil, err
	}
	// A table the batch's own rows cannot be written to would be left
	// behind, refusing every later run of the same input.
	if err := fitsCreated(c.Name(), schema, sc); err != nil {
		return nil, err
	}
	// A property the writer would then refuse must not leave a table behind.
	if err := config.CheckTablePropertyColumns(opts.Properties, sc); err != nil {
		return nil, fmt.Errorf("create table %s: %w: %v", c.Name(), ingest.ErrConfig, err)
	}
	createOpts := []catalog.CreateTableOpt{catalog.WithProperties(opts.properties())}
	if len(opts.PartitionFields) > 0 {
		spec, err := partition.NewSpec(sc, opts.PartitionFields)
		if err != nil {
			return nil, fmt.Errorf("create table %s: %w", c.Name(), err)
		}
		createOpts = append(createOpts, catalog.WithPartitionSpec(&spec))
	}
	ns := c.Ident[:len(c.Ident)-1]
	if len(ns) > 0 {
		if exists, err := c.Catalog.CheckNamespaceExists(ctx, ns); err != nil {
			return nil, fmt.Errorf("check namespace %s: %w", ingest.JoinIdent(ns), err)
		} else if !exists {
			if err := c.Catalog.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
				return nil, fmt.Errorf("create namespace %s: %w", ingest.JoinIdent(ns), err)
			}
		}
	}
	tbl, err := c.Catalog.CreateTable(ctx, c.Ident, sc, createOpts...)
	if err != nil {
		// A concurrent creator that won the race made the table; so may
		// this creation, when the catalog's answer was lost.
		return c.resolveCreate(ctx, sc, createOpts, err)
	}
	if err := c.refuseLostLocation(ctx, tbl); err != nil {
		return nil, err
	}
	return tbl, nil
}

// resolveCreate finds out what a creation that failed with createErr did:
// a concurrent creator may have made the table, and so may this creation
// when the catalog's answer was lost. A table the catalog holds is loaded.
// One whose first metadata file is gone is this creation's own:
// iceberg-go's SQL catalog removes the metadata file of a creation that
// failed (and reports a lost COMMIT answer as "already exists"), though
// the table's row was committed. That table held nothing, so its row is
// dropped and the table created again.
func (c *Committer) resolveCreate(ctx context.Context, sc *iceberg.Schema, opts []catalog.CreateTableOpt, createErr error) (*table.Table, error) {
	if errors.Is(createErr, catalog.ErrNoSuchNamespace) {
		return nil, fmt.Errorf("create table %s: %w", c.Name(), createErr)
	}
	tbl, err := c.Catalog.LoadTable(ctx, c.Ident)
	switch {
	case err == nil:
		return tbl, nil
	case errors.Is(err, catalog.ErrNoSuchTable):
		return nil, fmt.Errorf("create table %s: %w", c.Name(), createErr)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("create table %s: %w; then loading it: %w", c.Name(), createErr, err)
	}
	c.logger().Warn("a table creation whose answer was lost made the table without its metadata file; creating it again", "table", c.Name(), "err", createErr)
	if err := c.Catalog.DropTable(ctx, c.Ident); err != nil {
		return nil, fmt.Errorf("create table %s: %w; its metadata file was found gone, and dropping the table to create it again failed: %w", c.Name(), createErr, err)
	}
	tbl, err = c.Catalog.CreateTable(ctx, c.Ident, sc, opts...)
	if err != nil {
		return nil, fmt.Errorf("create table %s again: %w", c.Name(), err)
	}
	return tbl, nil
}

// icebergSchema converts an input schema into a table schema with fresh
// field ids. Types Iceberg lacks are mapped to their nearest kin.
func icebergSchema(s *arrow.Schema) (*iceberg.Schema, error) {
	fields := make([]arrow.Field, len(s.Fields()))
	for i, f := range s.Fields() {
		f.Type = tableType(f.Type)
		f.Metadata = arrow.Metadata{}
		fields[i] = f
	}
	return table.ArrowSchemaToIcebergWithFreshIDs(arrow.NewSchema(fields, nil), false)
}

func tableType(t arrow.DataType) arrow.DataType {
	switch t.ID() {
	case arrow.NULL:
		return arrow.BinaryTypes.String // a column only ever null so far
	case arrow.DICTIONARY:
		return tableType(t.(*arrow.DictionaryType).ValueType)
	case arrow.UINT32, arrow.UINT64:
		return arrow.PrimitiveTypes.Int64
	case arrow.FLOAT16:
		return arrow.PrimitiveTypes.Float32
	case arrow.TIMESTAMP:
		// Nanoseconds make timestamp_ns (format-version 3); every coarser
		// unit fits Iceberg's microseconds.
		ts := t.(*arrow.TimestampType)
		unit := arrow.Microsecond
		if ts.Unit == arrow.Nanosecond {
			unit = arrow.Nanosecond
		}
		if ts.TimeZone != "" {
			return &arrow.TimestampType{Unit: unit, TimeZone: "UTC"}
		}
		return &arrow.TimestampType{Unit: unit}
	case arrow.DATE64:
		return arrow.FixedWidthTypes.Date32
	case arrow.TIME32:
		return arrow.FixedWidthTypes.Time64us
	case arrow.STRUCT:
		st := t.(*arrow.StructType)
		fs := make([]arrow.Field, st.NumFields())
		for i, f := range st.Fields() {
			f.Type = tableType(f.Type)
			f.Metadata = arrow.Metadata{}
			fs[i] = f
		}
		return arrow.StructOf(fs...)
	case arrow.LIST, arrow.LARGE_LIST:
		lt := t.(arrow.ListLikeType)
		return arrow.ListOf(tableType(lt.Elem()))
	case arrow.MAP:
		mt := t.(*arrow.MapType)
		return arrow.MapOf(tableType(mt.KeyType()), tableType(mt.ItemType()))
	}
	return t
}

// CreateOptions are what a table floe creates gets besides its schema.
type CreateOptions struct {
	Properties       map[string]string
	PartitionFields  []partition.Field
	IdentifierFields []string
	// FormatVersion defaults to 2.
	FormatVersion int
	// Defaults are default values of columns by name, as text
	// (sink.column-defaults): a column created or added by schema
	// evolution gets its value as write-default and initial-default.
	Defaults map[string]string
}

func (o CreateOptions) formatVersion() int {
	if v, err := strconv.Atoi(o.Properties["format-version"]); err == nil {
		return v
	}
	if o.FormatVersion == 0 {
		return 2
	}
	return o.FormatVersion
}

func (o CreateOptions) properties() iceberg.Properties {
	tp := iceberg.Properties{"format-version": strconv.Itoa(o.formatVersion())}
	maps.Copy(tp, metadataRetention)
	maps.Copy(tp, o.Properties)
	return tp
}

// metadataRetention bounds the metadata files of the tables floe creates:
// every commit writes a new metadata file, one per batch for a stream, and
// without these Iceberg keeps them all. Old metadata files serve only
// readers that pinned an old metadata location; 25 of them cover minutes
// of a fast trigger. Table properties given in the pipeline override them.
var metadataRetention = iceberg.Properties{
	"write.metadata.delete-after-commit.enabled": "true",
	"write.metadata.previous-versions-max":       "25",
}

// withIdentifiers marks the identifier fields, which must be required
// top-level primitive columns.
func withIdentifiers(sc *iceberg.Schema, names []string) (*iceberg.Schema, error) {
	if len(names) == 0 {
		return sc, nil
	}
	fields := slices.Clone(sc.Fields())
	var ids []int
	for _, n := range names {
		i := slices.IndexFunc(fields, func(f iceberg.NestedField) bool { return f.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("%w: identifier field %q is not a top-level column of the input (it has %s)", ingest.ErrConfig, n, icebergFieldNames(fields))
		}
		if _, ok := fields[i].Type.(iceberg.PrimitiveType); !ok {
			return nil, fmt.Errorf("%w: identifier field %q is %s; identifier fields must be primitive columns", ingest.ErrConfig, n, fields[i].Type)
		}
		fields[i].Required = true
		ids = append(ids, fields[i].ID)
	}
	return iceberg.NewSchemaWithIdentifiers(sc.ID, ids, fields...), nil
}

func icebergFieldNames(fs []iceberg.NestedField) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}
