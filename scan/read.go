package scan

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/arrowpool"
)

// This file is floe's reading layer. iceberg-go plans the scan and applies
// deletes (position deletes, equality deletes, deletion vectors); floe then
// fixes, per data file, what iceberg-go gets wrong for tables other engines
// wrote (see shared/reference/iceberg-go-notes.md, "Reading other engines'
// tables"):
//
//   - an identity-partition source column that the data file does not
//     contain reads as NULL in iceberg-go; the spec says its value is the
//     partition value recorded in the manifest;
//   - a column added after a file was written reads as its initial-default,
//     at the top level and inside structs; iceberg-go rejects defaults in
//     the JSON forms the spec gives them (decimal "12345.00", uuid, hex
//     binary, ...), so floe parses them;
//   - a uuid column that the file stores as a plain FIXED_LEN_BYTE_ARRAY(16)
//     (pyarrow writes no UUID annotation) makes iceberg-go fail casting
//     fixed_size_binary[16] to its uuid extension type; such a file is read
//     with uuid declared fixed[16] (the same 16 bytes the spec stores) and
//     its columns re-typed to uuid afterwards.
//
// Whether a file "contains" a column is decided by the Parquet file's field
// ids (or the table's name mapping for files written without ids), never by
// the column being NULL: a file may hold real NULLs.

// Table reads every live row of the snapshot the options select (the
// current one by default), with deletes applied.
func Table(ctx context.Context, tbl *table.Table, o Options) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	a, err := o.at(tbl)
	if err != nil {
		return nil, nil, err
	}
	if err := o.check(tbl, a.schema(tbl)); err != nil {
		return nil, nil, err
	}
	bound, err := o.bind(ctx, tbl, a)
	if err != nil {
		return nil, nil, err
	}
	r, tasks, _, err := planReader(ctx, tbl, o, a, bound, true)
	if err != nil {
		if r == nil {
			return nil, nil, err
		}
		return nil, nil, planError(ctx, r.rt.tbl, a.snapshot(tbl), err)
	}
	return r.out, r.read(ctx, tasks, o.Limit), nil
}

// Count counts the live rows of the snapshot the options select: from
// manifest record counts for files no delete applies to, by reading the
// others (so deletes are applied).
func Count(ctx context.Context, tbl *table.Table, o Options) (int64, error) {
	a, err := o.at(tbl)
	if err != nil {
		return 0, err
	}
	if err := o.check(tbl, a.schema(tbl)); err != nil {
		return 0, err
	}
	if a.snapshot(tbl) == nil {
		return 0, nil
	}
	// Counting keeps nothing of a record once counted.
	if o.Allocator == nil {
		o.Allocator = countPool
	}
	ctx = compute.WithAllocator(ctx, o.Allocator)
	if o.Filter != "" {
		// Manifest counts know nothing of the filter: count what a scan
		// returns.
		o.Columns, o.Drop, o.Limit = nil, nil, 0
		_, recs, err := Table(ctx, tbl, o)
		if err != nil {
			return 0, err
		}
		return countRecords(recs)
	}
	opts := o.scanOptions(nil, nil)
	rt, err := newReadTable(tbl)
	if err != nil {
		return 0, err
	}
	scan, err := a.scan(rt.tbl, opts...)
	if err != nil {
		return 0, err
	}
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return 0, planError(ctx, rt.tbl, a.snapshot(tbl), err)
	}
	var n int64
	var withDeletes []table.FileScanTask
	for _, t := range WholeFiles(tasks) {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			withDeletes = append(withDeletes, t)
			continue
		}
		n += t.File.Count()
	}
	if len(withDeletes) == 0 {
		return n, nil
	}
	if rt.mappingErr != nil {
		return 0, rt.mappingErr
	}
	// Files storing uuid without the UUID annotation are read through
	// rt.uuidTbl (see Table); the count does not depend on the type.
	var viaUUID []table.FileScanTask
	if rt.uuidTbl != nil {
		var rest []table.FileScanTask
		for _, t := range withDeletes {
			md, err := rt.footer(ctx, t.File.FilePath())
			if err != nil {
				return 0, err
			}
			_, plainUUID := rt.fileFieldIDs(md)
			if plainUUID {
				viaUUID = append(viaUUID, t)
			} else {
				rest = append(rest, t)
			}
		}
		withDeletes = rest
	}
	for _, part := range []struct {
		tbl   *table.Table
		tasks []table.FileScanTask
	}{{rt.tbl, withDeletes}, {rt.uuidTbl, viaUUID}} {
		if len(part.tasks) == 0 {
			continue
		}
		sc, err := a.scan(part.tbl, opts...)
		if err != nil {
			return 0, err
		}
		_, recs, err := sc.ReadTasks(ctx, part.tasks)
		if err != nil {
			return 0, err
		}
		read, err := countRecords(recs)
		if err != nil {
			return 0, err
		}
		n += read
	}
	return n, nil
}

// countPool recycles the buffers of the records Count reads.
var countPool = arrowpool.New()

// countRecords drains recs, counting and releasing the records.
func countRecords(recs iter.Seq2[arrow.RecordBatch, error]) (int64, error) {
	var n int64
	for rec, err := range recs {
		if err != nil {
			return 0, err
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n, nil
}

// avroMismatch matches iceberg-go's (hamba/avro's) schema resolution error.
var avroMismatch = regexp.MustCompile(`incompatible at ([^:]+): reader ([^\s:]+) vs writer ([^\s:]+)`)

// planError explains a failed scan plan: it names the manifest list or
// manifest that cannot be read, and, when the file's Avro schema does not
// resolve against the one the Iceberg spec defines, the field at fault.
func planError(ctx context.Context, tbl *table.Table, snap *table.Snapshot, err error) error {
	fsys, ferr := tbl.FS(ctx)
	if snap == nil || ferr != nil {
		return fmt.Errorf("plan scan: %w", err)
	}
	what, kind := "", ""
	manifests, lerr := snap.Manifests(fsys)
	if lerr != nil {
		what, kind = "manifest list "+snap.ManifestList, "manifest list"
		err = lerr
	} else {
		for _, m := range manifests {
			if _, merr := m.FetchEntries(fsys, false); merr != nil {
				what, kind = "manifest "+m.FilePath(), "manifest"
				err = merr
				break
			}
		}
	}
	if what == "" {
		return fmt.Errorf("plan scan: %w", err)
	}
	if m := avroMismatch.FindStringSubmatch(err.Error()); m != nil && m[3] == "null" {
		// Spec, Appendix A (Avro): optional fields are unions with null;
		// a required field is written as its type alone.
		return fmt.Errorf("read %s of snapshot %d: not a valid Iceberg %s: its Avro schema writes required field %s as a union with null (optional), but the Iceberg spec's %s schema requires it (%s, never null; spec Appendix A: only optional fields are unions with null): %w",
			what, snap.SnapshotID, kind, m[1], kind, m[2], err)
	}
	return fmt.Errorf("read %s of snapshot %d: %w", what, snap.SnapshotID, err)
}

// readTable is a table prepared for reading: defaults removed from the
// metadata iceberg-go sees (floe fills them itself) and kept by field id.
type readTable struct {
	tbl      *table.Table
	defaults map[int]json.RawMessage // field id -> initial-default (top level or in structs)
	uuidIDs  map[int]bool            // ids of the current schema's uuid fields
	// uuidTbl is tbl with every uuid type declared fixed[16], for files that
	// store a uuid column without the Parquet UUID annotation; nil when the
	// schema has no uuid field.
	uuidTbl *table.Table
	// mapping is the table's name mapping, nil without one; mappingErr
	// says why the table's cannot be read, which fails a read of any data
	// file, as in Iceberg Java.
	mapping    iceberg.NameMapping
	mappingErr error
}

// collectDefaults records the initial-default of each field of a schema
// JSON field list, descending into struct fields (the spec allows defaults
// on struct fields; list elements and map entries have none).
func collectDefaults(fields []any, into map[int]json.RawMessage) {
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		id, _ := fm["id"].(json.Number)
		n, err := strconv.Atoi(id.String())
		if err != nil {
			continue
		}
		if d, ok := fm["initial-default"]; ok && d != nil {
			if _, nested := fm["type"].(map[string]any); !nested {
				b, _ := json.Marshal(d)
				into[n] = b
			}
		}
		if st, ok := fm["type"].(map[string]any); ok && st["type"] == "struct" {
			sub, _ := st["fields"].([]any)
			collectDefaults(sub, into)
		}
	}
}

// metadataDefaults reads the initial-defaults of the current schema from the
// table's metadata file itself (gzip-compressed or not), numbers exact.
func metadataDefaults(tbl *table.Table) (map[int]json.RawMessage, error) {
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		return nil, err
	}
	f, err := fsys.Open(tbl.MetadataLocation())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	if len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	var doc struct {
		Current json.Number `json:"current-schema-id"`
		Schemas []struct {
			ID     json.Number `json:"schema-id"`
			Fields []any       `json:"fields"`
		} `json:"schemas"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	for _, sc := range doc.Schemas {
		if sc.ID == doc.Current {
			out := map[int]json.RawMessage{}
			collectDefaults(sc.Fields, out)
			return out, nil
		}
	}
	return nil, fmt.Errorf("no current schema")
}

// uuidToFixed declares every uuid type in a schema JSON value fixed[16].
func uuidToFixed(v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"type", "element", "key", "value"} {
			if x[k] == "uuid" {
				x[k] = "fixed[16]"
			}
		}
		for _, e := range x {
			uuidToFixed(e)
		}
	case []any:
		for _, e := range x {
			uuidToFixed(e)
		}
	}
}

// uuidFieldIDs lists the ids of the uuid fields of a type, at any depth.
func uuidFieldIDs(t iceberg.Type, into map[int]bool) {
	var fields []iceberg.NestedField
	switch x := t.(type) {
	case *iceberg.StructType:
		fields = x.FieldList
	case *iceberg.ListType:
		fields = []iceberg.NestedField{x.ElementField()}
	case *iceberg.MapType:
		fields = []iceberg.NestedField{x.KeyField(), x.ValueField()}
	}
	for _, f := range fields {
		if _, ok := f.Type.(iceberg.UUIDType); ok {
			into[f.ID] = true
		}
		uuidFieldIDs(f.Type, into)
	}
}

func newReadTable(tbl *table.Table) (*readTable, error) {
	md := tbl.Metadata()
	rt := &readTable{tbl: tbl, defaults: map[int]json.RawMessage{}, uuidIDs: map[int]bool{}, mapping: nameMapping(md)}
	if _, ok := md.Properties()[table.DefaultNameMappingKey]; ok && rt.mapping == nil {
		rt.mappingErr = mappingError(tbl)
	}
	// completed is the mapping iceberg-go reads with (see namemap.go), nil
	// when the table's own names every field.
	var completed iceberg.NameMapping
	if rt.mapping != nil {
		if m, changed := completeMapping(rt.mapping, md.Schemas(), unreadID(md, rt.mapping)); changed {
			completed = m
		}
	}
	uuidFieldIDs(&iceberg.StructType{FieldList: tbl.Schema().Fields()}, rt.uuidIDs)
	if len(rt.uuidIDs) == 0 && completed == nil && !needsPatch(md) {
		return rt, nil // the common case: iceberg-go reads the table as it is
	}
	raw, err := json.Marshal(tbl.Metadata())
	if err != nil {
		return rt, nil // nothing to patch; read as iceberg-go does
	}
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return rt, nil
	}
	cur := tbl.Schema().ID
	// iceberg-go refuses a file that lacks a required column even when the
	// column is an identity partition source whose value the manifest
	// holds; floe marks those optional for iceberg-go and fills them.
	found := relaxPartitionSources(doc)
	if props, ok := doc["properties"].(map[string]any); ok && completed != nil {
		text, err := json.Marshal(completed)
		if err != nil {
			return nil, err
		}
		props[table.DefaultNameMappingKey], found = string(text), true
	}
	schemas, _ := doc["schemas"].([]any)
	for _, s := range schemas {
		sm, _ := s.(map[string]any)
		if id, _ := sm["schema-id"].(json.Number); id.String() == strconv.Itoa(cur) {
			fields, _ := sm["fields"].([]any)
			collectDefaults(fields, rt.defaults)
		}
		found = stripDefaults(sm) || found
	}
	if len(rt.defaults) > 0 {
		// iceberg-go keeps defaults as float64 (a long default such as
		// -9223372036854775808 loses digits); take them from the file.
		if exact, err := metadataDefaults(tbl); err == nil {
			rt.defaults = exact
		}
	}
	fsF := func(ctx context.Context) (icebergio.IO, error) { return tbl.FS(ctx) }
	if found {
		patched, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		meta, err := table.ParseMetadataBytes(patched)
		if err != nil {
			// The defaults cannot be taken out; let iceberg-go read as it can.
			rt.defaults = map[int]json.RawMessage{}
			return rt, nil
		}
		rt.tbl = table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), fsF, nil)
	}
	if len(rt.uuidIDs) > 0 {
		for _, s := range schemas {
			uuidToFixed(s)
		}
		patched, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		if meta, err := table.ParseMetadataBytes(patched); err == nil {
			rt.uuidTbl = table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), fsF, nil)
		}
	}
	return rt, nil
}

// needsPatch tells whether the metadata has what newReadTable patches
// for iceberg-go: a default anywhere in a schema, or a required source of
// an identity partition field. Checking the parsed metadata spares most
// reads a round trip of the metadata through JSON.
func needsPatch(md table.Metadata) bool {
	identity := map[int]bool{}
	for _, spec := range md.PartitionSpecs() {
		for _, pf := range spec.Fields() {
			if pf.Transform.String() == "identity" {
				identity[pf.SourceID()] = true
			}
		}
	}
	for _, sc := range md.Schemas() {
		for _, f := range sc.Fields() {
			if identity[f.ID] && f.Required {
				return true
			}
		}
		if hasDefault(sc.Fields()) {
			return true
		}
	}
	return false
}

// hasDefault reports an initial or write default among fields, at any
// depth.
func hasDefault(fields []iceberg.NestedField) bool {
	for _, f := range fields {
		if f.InitialDefault != nil || f.WriteDefault != nil {
			return true
		}
		var sub []iceberg.NestedField
		switch x := f.Type.(type) {
		case *iceberg.StructType:
			sub = x.FieldList
		case *iceberg.ListType:
			sub = []iceberg.NestedField{x.ElementField()}
		case *iceberg.MapType:
			sub = []iceberg.NestedField{x.KeyField(), x.ValueField()}
		}
		if hasDefault(sub) {
			return true
		}
	}
	return false
}

// relaxPartitionSources marks the source fields of identity partition
// fields optional in every schema of a metadata JSON document.
func relaxPartitionSources(doc map[string]any) bool {
	sources := map[string]bool{}
	var specs []any
	if l, ok := doc["partition-specs"].([]any); ok {
		specs = l
	}
	for _, sp := range specs {
		m, _ := sp.(map[string]any)
		fields, _ := m["fields"].([]any)
		for _, f := range fields {
			fm, _ := f.(map[string]any)
			if fm["transform"] == "identity" {
				if id, ok := fm["source-id"].(json.Number); ok {
					sources[id.String()] = true
				}
			}
		}
	}
	changed := false
	schemas, _ := doc["schemas"].([]any)
	for _, s := range schemas {
		sm, _ := s.(map[string]any)
		fields, _ := sm["fields"].([]any)
		for _, f := range fields {
			fm, _ := f.(map[string]any)
			if id, ok := fm["id"].(json.Number); ok && sources[id.String()] && fm["required"] == true {
				fm["required"] = false
				changed = true
			}
		}
	}
	return changed
}

// stripDefaults removes initial-default and write-default everywhere in a
// schema JSON object, reporting whether any were present. Nested defaults
// are dropped too (iceberg-go rejects several of their JSON forms); rows of
// files lacking a nested added field then read it as NULL.
func stripDefaults(v any) bool {
	found := false
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"initial-default", "write-default"} {
			if _, ok := x[k]; ok {
				delete(x, k)
				found = true
			}
		}
		for _, e := range x {
			found = stripDefaults(e) || found
		}
	case []any:
		for _, e := range x {
			found = stripDefaults(e) || found
		}
	}
	return found
}

// fix replaces one column of a file's records by a constant: a top-level
// column (path has one index) or a field of struct columns (the indexes of
// the struct fields leading to it).
type fix struct {
	path  []int
	field iceberg.NestedField
	value any // a partition value as iceberg-go decodes it, or json.RawMessage
}

// fixesFor lists the projected columns the task's data file does not
// contain and that have a value other than NULL: for a top-level column an
// identity partition value, else an initial default (also for fields of
// struct columns the file holds). plainUUID reports that the file stores a
// uuid column without the UUID annotation (see rt.uuidTbl). The file's
// footer is read, through footer, only when the answer depends on it.
func (rt *readTable) fixesFor(task table.FileScanTask, proj *iceberg.Schema, footer func() (*metadata.FileMetaData, error), floeFiles func() bool) (fixes []fix, plainUUID bool, err error) {
	meta := rt.tbl.Metadata()
	spec := meta.PartitionSpecByID(int(task.File.SpecID()))
	var identity map[int]int // source field id -> partition field id
	if spec != nil {
		for _, pf := range spec.Fields() {
			if pf.Transform.String() == "identity" {
				if identity == nil {
					identity = map[int]int{}
				}
				identity[pf.SourceID()] = pf.FieldID
			}
		}
	}
	need := len(rt.defaults) > 0 || (len(rt.uuidIDs) > 0 && rt.uuidTbl != nil)
	for _, f := range proj.Fields() {
		if _, ok := identity[f.ID]; ok && !need {
			// floe writes every column of its table's schema under its
			// field id, so no partition source is absent from its files.
			// Manifest metrics cannot tell: a migrated Hive file has
			// metrics for the partition column it lacks.
			need = !floeFiles()
		}
	}
	if !need {
		return nil, false, nil
	}
	md, err := footer()
	if err != nil {
		return nil, false, err
	}
	present, plainUUID := rt.fileFieldIDs(md)
	var out []fix
	part := task.File.Partition()
	var walk func(path []int, f iceberg.NestedField)
	walk = func(path []int, f iceberg.NestedField) {
		if present[f.ID] {
			if st, ok := f.Type.(*iceberg.StructType); ok {
				for j, sf := range st.FieldList {
					walk(append(path[:len(path):len(path)], j), sf)
				}
			}
			return
		}
		if pid, ok := identity[f.ID]; ok && len(path) == 1 {
			out = append(out, fix{path: path, field: f, value: part[pid]})
			return
		}
		if d, ok := rt.defaults[f.ID]; ok {
			out = append(out, fix{path: path, field: f, value: d})
		}
	}
	for i, f := range proj.Fields() {
		walk([]int{i}, f)
	}
	return out, plainUUID && rt.uuidTbl != nil, nil
}

// footer reads the metadata of a Parquet data file.
func (rt *readTable) footer(ctx context.Context, path string) (*metadata.FileMetaData, error) {
	fsys, err := rt.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open data file: %w", err)
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, fmt.Errorf("read Parquet footer of %s: %w", path, err)
	}
	defer rdr.Close()
	return rdr.MetaData(), nil
}

// fileFieldIDs returns the field ids a Parquet data file holds, at any
// depth: its own field ids, or, for columns written without them, the ids
// the table's name mapping gives their names. plainUUID reports a column of
// a uuid field stored as FIXED_LEN_BYTE_ARRAY without the UUID annotation.
func (rt *readTable) fileFieldIDs(md *metadata.FileMetaData) (ids map[int]bool, plainUUID bool) {
	ids = map[int]bool{}
	var walk func(g *pqschema.GroupNode, mapping []iceberg.MappedField)
	walk = func(g *pqschema.GroupNode, mapping []iceberg.MappedField) {
		for i := 0; i < g.NumFields(); i++ {
			n := g.Field(i)
			id := int(n.FieldID())
			var sub []iceberg.MappedField
			for _, mf := range mapping {
				if slices.Contains(mf.Names, n.Name()) {
					if id < 0 && mf.FieldID != nil {
						id = *mf.FieldID
					}
					sub = mf.Fields
				}
			}
			if id >= 0 {
				ids[id] = true
			}
			switch x := n.(type) {
			case *pqschema.GroupNode:
				walk(x, sub)
			case *pqschema.PrimitiveNode:
				if id >= 0 && rt.uuidIDs[id] && x.PhysicalType() == parquet.Types.FixedLenByteArray {
					if _, ok := x.LogicalType().(pqschema.UUIDLogicalType); !ok {
						plainUUID = true
					}
				}
			}
		}
	}
	walk(md.Schema.Root(), rt.mapping)
	return ids, plainUUID
}

// retypeRecord gives rec, read with uuid columns as fixed[16], the types of
// schema (uuid extension arrays over the same 16-byte values).
func retypeRecord(rec arrow.RecordBatch, schema *arrow.Schema) (arrow.RecordBatch, error) {
	defer rec.Release()
	if rec.NumCols() != int64(schema.NumFields()) {
		return nil, fmt.Errorf("internal: %d columns read, %d projected", rec.NumCols(), schema.NumFields())
	}
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		d, err := relabelData(c.Data(), schema.Field(i).Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", schema.Field(i).Name, err)
		}
		cols[i] = array.MakeFromData(d)
		d.Release()
		defer cols[i].Release()
	}
	return array.NewRecordBatch(schema, cols, rec.NumRows()), nil
}

// relabelData relabels d (and its children) with type dt; the layouts must
// agree (fixed_size_binary[16] is the uuid extension's storage).
func relabelData(d arrow.ArrayData, dt arrow.DataType) (arrow.ArrayData, error) {
	storage := dt
	if ext, ok := dt.(arrow.ExtensionType); ok {
		storage = ext.StorageType()
	}
	from := d.DataType()
	if ext, ok := from.(arrow.ExtensionType); ok {
		from = ext.StorageType()
	}
	if from.ID() != storage.ID() {
		return nil, fmt.Errorf("internal: cannot re-type %s as %s", d.DataType(), dt)
	}
	var want []arrow.DataType
	switch t := storage.(type) {
	case *arrow.StructType:
		for _, f := range t.Fields() {
			want = append(want, f.Type)
		}
	case *arrow.MapType:
		want = []arrow.DataType{t.Elem()}
	case arrow.ListLikeType:
		want = []arrow.DataType{t.Elem()}
	}
	ch := d.Children()
	if len(want) != len(ch) {
		return nil, fmt.Errorf("internal: cannot re-type %s as %s", d.DataType(), dt)
	}
	out := make([]arrow.ArrayData, len(ch))
	for i, c := range ch {
		nc, err := relabelData(c, want[i])
		if err != nil {
			return nil, err
		}
		out[i] = nc
		defer nc.Release()
	}
	return array.NewData(dt, d.Len(), d.Buffers(), out, d.NullN(), d.Offset()), nil
}

// applyFixes returns rec with each fixed column replaced by a constant,
// releasing rec.
func applyFixes(rec arrow.RecordBatch, fixes []fix) (arrow.RecordBatch, error) {
	defer rec.Release()
	cols := make([]arrow.Array, rec.NumCols())
	copy(cols, rec.Columns())
	n := int(rec.NumRows())
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for _, fx := range fixes {
		col := fx.path[0]
		if col >= len(cols) {
			continue
		}
		var a arrow.Array
		if len(fx.path) == 1 {
			var err error
			if a, err = constantArray(cols[col].DataType(), fx.field.Type, fx.value, n); err != nil {
				return nil, fmt.Errorf("column %s: %w", fx.field.Name, err)
			}
		} else {
			d, err := replaceNested(cols[col].Data(), fx.path[1:], fx)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", fx.field.Name, err)
			}
			a = array.MakeFromData(d)
			d.Release()
		}
		made = append(made, a)
		cols[col] = a
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(n)), nil
}

// replaceNested returns struct data d with the field at path (indexes of
// struct fields) replaced by fx's constant.
func replaceNested(d arrow.ArrayData, path []int, fx fix) (arrow.ArrayData, error) {
	if _, ok := d.DataType().(*arrow.StructType); !ok {
		return nil, fmt.Errorf("internal: field %s is not in a struct (%s)", fx.field.Name, d.DataType())
	}
	ch := d.Children()
	i := path[0]
	if i >= len(ch) {
		return nil, fmt.Errorf("internal: struct %s has no field %d", d.DataType(), i)
	}
	out := make([]arrow.ArrayData, len(ch))
	copy(out, ch)
	if len(path) == 1 {
		// A struct's children are indexed from its own offset.
		a, err := constantArray(ch[i].DataType(), fx.field.Type, fx.value, d.Offset()+d.Len())
		if err != nil {
			return nil, err
		}
		defer a.Release()
		out[i] = a.Data()
	} else {
		nd, err := replaceNested(ch[i], path[1:], fx)
		if err != nil {
			return nil, err
		}
		defer nd.Release()
		out[i] = nd
	}
	return array.NewData(d.DataType(), d.Len(), d.Buffers(), out, d.NullN(), d.Offset()), nil
}

// constantArray builds n copies of v as an array of type dt. v is a
// partition value as iceberg-go decodes it from a manifest, or the JSON of
// an initial default (single-value JSON form of the spec's Appendix D).
func constantArray(dt arrow.DataType, typ iceberg.Type, v any, n int) (arrow.Array, error) {
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	if raw, ok := v.(json.RawMessage); ok {
		var err error
		if v, err = parseDefault(raw, typ); err != nil {
			return nil, err
		}
	}
	if v == nil {
		b.AppendNulls(n)
		return b.NewArray(), nil
	}
	appendOne, err := appender(b, v)
	if err != nil {
		return nil, err
	}
	for range n {
		appendOne()
	}
	return b.NewArray(), nil
}

// appender returns a function appending v to b, converting iceberg-go's
// value types to the builder's.
func appender(b array.Builder, v any) (func(), error) {
	bad := func() (func(), error) {
		return nil, fmt.Errorf("value %v (%T) does not fit column type %s", v, v, b.Type())
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		if x, ok := v.(bool); ok {
			return func() { bb.Append(x) }, nil
		}
	case *array.Int32Builder:
		if x, ok := asInt64(v); ok {
			return func() { bb.Append(int32(x)) }, nil
		}
	case *array.Int64Builder:
		if x, ok := asInt64(v); ok {
			return func() { bb.Append(x) }, nil
		}
	case *array.Float32Builder:
		switch x := v.(type) {
		case float32:
			return func() { bb.Append(x) }, nil
		case float64:
			return func() { bb.Append(float32(x)) }, nil
		}
	case *array.Float64Builder:
		switch x := v.(type) {
		case float32:
			return func() { bb.Append(float64(x)) }, nil
		case float64:
			return func() { bb.Append(x) }, nil
		}
	case *array.StringBuilder:
		if x, ok := v.(string); ok {
			return func() { bb.Append(x) }, nil
		}
	case *array.LargeStringBuilder:
		if x, ok := v.(string); ok {
			return func() { bb.Append(x) }, nil
		}
	case *array.Date32Builder:
		if x, ok := asInt64(v); ok {
			return func() { bb.Append(arrow.Date32(x)) }, nil
		}
	case *array.Time64Builder:
		if x, ok := asInt64(v); ok {
			return func() { bb.Append(arrow.Time64(x)) }, nil
		}
	case *array.TimestampBuilder:
		if x, ok := asInt64(v); ok {
			return func() { bb.Append(arrow.Timestamp(x)) }, nil
		}
	case *array.Decimal128Builder:
		switch x := v.(type) {
		case iceberg.Decimal:
			return func() { bb.Append(x.Val) }, nil
		case iceberg.DecimalLiteral:
			return func() { bb.Append(x.Val) }, nil
		case decimal128.Num:
			return func() { bb.Append(x) }, nil
		}
	case *array.BinaryBuilder:
		if x, ok := asBytes(v); ok {
			return func() { bb.Append(x) }, nil
		}
	case *array.FixedSizeBinaryBuilder:
		if x, ok := asBytes(v); ok {
			return func() { bb.Append(x) }, nil
		}
	case *extensions.UUIDBuilder:
		switch x := v.(type) {
		case uuid.UUID:
			return func() { bb.Append(x) }, nil
		case []byte:
			if u, err := uuid.FromBytes(x); err == nil {
				return func() { bb.Append(u) }, nil
			}
		}
	}
	return bad()
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case iceberg.Date:
		return int64(x), true
	case iceberg.Time:
		return int64(x), true
	case iceberg.Timestamp:
		return int64(x), true
	case iceberg.TimestampNano:
		return int64(x), true
	}
	return 0, false
}

func asBytes(v any) ([]byte, bool) {
	switch x := v.(type) {
	case []byte:
		return x, true
	case string:
		return []byte(x), true
	case uuid.UUID:
		return x[:], true
	}
	return nil, false
}

// parseDefault reads a default in the spec's single-value JSON form
// (Appendix D) into the value types appender accepts.
func parseDefault(raw json.RawMessage, typ iceberg.Type) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var s string
	isStr := json.Unmarshal(raw, &s) == nil
	num := func() (json.Number, error) {
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", fmt.Errorf("default %s for %s is not a JSON number", raw, typ)
		}
		return n, nil
	}
	switch t := typ.(type) {
	case iceberg.BooleanType:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("default %s for boolean: %w", raw, err)
		}
		return b, nil
	case iceberg.Int32Type, iceberg.Int64Type:
		n, err := num()
		if err != nil {
			return nil, err
		}
		return strconv.ParseInt(n.String(), 10, 64)
	case iceberg.Float32Type:
		n, err := num()
		if err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(n.String(), 32)
		return float32(f), err
	case iceberg.Float64Type:
		n, err := num()
		if err != nil {
			return nil, err
		}
		return strconv.ParseFloat(n.String(), 64)
	case iceberg.DecimalType:
		if !isStr {
			return nil, fmt.Errorf("default %s for %s is not a string", raw, typ)
		}
		return parseDecimal(s, t.Scale())
	case iceberg.StringType:
		if isStr {
			return s, nil
		}
	case iceberg.DateType:
		if isStr {
			d, err := time.Parse("2006-01-02", s)
			if err != nil {
				return nil, err
			}
			return iceberg.Date(d.Unix() / 86400), nil
		}
	case iceberg.TimeType:
		if isStr {
			d, err := time.Parse("15:04:05.999999", s)
			if err != nil {
				return nil, err
			}
			mid := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
			return iceberg.Time(d.Sub(mid).Microseconds()), nil
		}
	case iceberg.TimestampType, iceberg.TimestampTzType:
		if isStr {
			for _, layout := range []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999"} {
				if ts, err := time.Parse(layout, s); err == nil {
					return iceberg.Timestamp(ts.UnixMicro()), nil
				}
			}
			return nil, fmt.Errorf("default %q for %s is not an ISO-8601 timestamp", s, typ)
		}
	case iceberg.UUIDType:
		if isStr {
			u, err := uuid.Parse(s)
			if err != nil {
				return nil, err
			}
			return u, nil
		}
	case iceberg.FixedType, iceberg.BinaryType:
		if isStr {
			return hex.DecodeString(s)
		}
	}
	return nil, fmt.Errorf("default %s for %s is not supported", raw, typ)
}

// parseDecimal reads "12345.00" at scale s into a decimal.
func parseDecimal(s string, scale int) (decimal128.Num, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	ip, fp, _ := strings.Cut(s, ".")
	if len(fp) > scale {
		return decimal128.Num{}, fmt.Errorf("decimal default %q has more than %d fraction digits", s, scale)
	}
	fp += strings.Repeat("0", scale-len(fp))
	n, ok := new(big.Int).SetString(ip+fp, 10)
	if !ok {
		return decimal128.Num{}, fmt.Errorf("decimal default %q is not a number", s)
	}
	if neg {
		n.Neg(n)
	}
	return decimal128.FromBigInt(n), nil
}
