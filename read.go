package floe

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
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
//   - a column added after a file was written reads as its initial-default;
//     iceberg-go rejects defaults in the JSON forms the spec gives them
//     (decimal "12345.00", uuid, hex binary, ...), so floe parses them.
//
// Whether a file "contains" a column is decided by the Parquet file's field
// ids (or the table's name mapping for files written without ids), never by
// the column being NULL: a file may hold real NULLs.

// ScanTable reads every live row of the table's current snapshot, with
// deletes applied. limit > 0 stops after that many rows.
func ScanTable(ctx context.Context, tbl *table.Table, limit int64) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	rt, err := newReadTable(tbl)
	if err != nil {
		return nil, nil, err
	}
	scan := rt.tbl.Scan()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("plan scan: %w", err)
	}
	proj, err := scan.Projection()
	if err != nil {
		return nil, nil, err
	}
	// An empty scan still yields the schema (iceberg-go computes it).
	schema, first, err := scan.ReadTasks(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	for range first {
	}
	// Files that need no fix are read in one call, which iceberg-go reads
	// concurrently; the others one by one, each with its own fixes.
	var plain []table.FileScanTask
	type fixedTask struct {
		task  table.FileScanTask
		fixes []fix
	}
	var fixed []fixedTask
	for _, task := range tasks {
		fixes, err := rt.fixesFor(ctx, task, proj)
		if err != nil {
			return nil, nil, err
		}
		if len(fixes) == 0 {
			plain = append(plain, task)
		} else {
			fixed = append(fixed, fixedTask{task, fixes})
		}
	}
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		var n int64
		// emit yields one record; false means stop.
		emit := func(rec arrow.RecordBatch) bool {
			n += rec.NumRows()
			return yield(rec, nil) && (limit <= 0 || n < limit)
		}
		if len(plain) > 0 {
			_, recs, err := scan.ReadTasks(ctx, plain)
			if err != nil {
				yield(nil, err)
				return
			}
			for rec, err := range recs {
				if err != nil {
					yield(nil, err)
					return
				}
				if !emit(rec) {
					return
				}
			}
		}
		for _, ft := range fixed {
			_, recs, err := scan.ReadTasks(ctx, []table.FileScanTask{ft.task})
			if err != nil {
				yield(nil, fmt.Errorf("read %s: %w", ft.task.File.FilePath(), err))
				return
			}
			for rec, err := range recs {
				if err == nil {
					rec, err = applyFixes(rec, ft.fixes)
				}
				if err != nil {
					yield(nil, fmt.Errorf("read %s: %w", ft.task.File.FilePath(), err))
					return
				}
				if !emit(rec) {
					return
				}
			}
		}
	}
	return schema, seq, nil
}

// CountRows counts the live rows of the current snapshot: from manifest
// record counts for files no delete applies to, by reading the others (so
// deletes are applied).
func CountRows(ctx context.Context, tbl *table.Table) (int64, error) {
	if tbl.CurrentSnapshot() == nil {
		return 0, nil
	}
	rt, err := newReadTable(tbl)
	if err != nil {
		return 0, err
	}
	scan := rt.tbl.Scan()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return 0, fmt.Errorf("plan scan: %w", err)
	}
	var n int64
	var withDeletes []table.FileScanTask
	for _, t := range tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			withDeletes = append(withDeletes, t)
			continue
		}
		n += t.File.Count()
	}
	if len(withDeletes) == 0 {
		return n, nil
	}
	_, recs, err := scan.ReadTasks(ctx, withDeletes)
	if err != nil {
		return 0, err
	}
	for rec, err := range recs {
		if err != nil {
			return 0, err
		}
		n += rec.NumRows()
	}
	return n, nil
}

// readTable is a table prepared for reading: defaults removed from the
// metadata iceberg-go sees (floe fills them itself) and kept by field id.
type readTable struct {
	tbl      *table.Table
	defaults map[int]json.RawMessage // top-level field id -> initial-default
}

func newReadTable(tbl *table.Table) (*readTable, error) {
	rt := &readTable{tbl: tbl, defaults: map[int]json.RawMessage{}}
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
	schemas, _ := doc["schemas"].([]any)
	for _, s := range schemas {
		sm, _ := s.(map[string]any)
		if id, _ := sm["schema-id"].(json.Number); id.String() == strconv.Itoa(cur) {
			fields, _ := sm["fields"].([]any)
			for _, f := range fields {
				fm, _ := f.(map[string]any)
				if d, ok := fm["initial-default"]; ok && d != nil {
					id, _ := fm["id"].(json.Number)
					n, _ := strconv.Atoi(id.String())
					b, _ := json.Marshal(d)
					rt.defaults[n] = b
				}
			}
		}
		found = stripDefaults(sm) || found
	}
	if !found {
		return rt, nil
	}
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
	fsF := func(ctx context.Context) (icebergio.IO, error) { return tbl.FS(ctx) }
	rt.tbl = table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), fsF, nil)
	return rt, nil
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

// fix replaces one top-level column of a file's records by a constant.
type fix struct {
	col   int
	field iceberg.NestedField
	value any // a partition value as iceberg-go decodes it, or json.RawMessage
}

// fixesFor lists the projected top-level columns the task's data file does
// not contain and that have a value other than NULL: an identity partition
// value, else an initial default.
func (rt *readTable) fixesFor(ctx context.Context, task table.FileScanTask, proj *iceberg.Schema) ([]fix, error) {
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
	var cands []int
	for i, f := range proj.Fields() {
		if _, ok := identity[f.ID]; ok {
			cands = append(cands, i)
		} else if _, ok := rt.defaults[f.ID]; ok {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	present, err := rt.fileFieldIDs(ctx, task.File.FilePath())
	if err != nil {
		return nil, err
	}
	var out []fix
	part := task.File.Partition()
	for _, i := range cands {
		f := proj.Field(i)
		if present[f.ID] {
			continue
		}
		if pid, ok := identity[f.ID]; ok {
			out = append(out, fix{col: i, field: f, value: part[pid]})
			continue
		}
		out = append(out, fix{col: i, field: f, value: rt.defaults[f.ID]})
	}
	return out, nil
}

// fileFieldIDs returns the top-level field ids a Parquet data file holds:
// its own field ids, or, for a file written without them, the ids the
// table's name mapping gives its column names.
func (rt *readTable) fileFieldIDs(ctx context.Context, path string) (map[int]bool, error) {
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
	root := rdr.MetaData().Schema.Root()
	ids := map[int]bool{}
	var names []string
	for i := 0; i < root.NumFields(); i++ {
		n := root.Field(i)
		if id := n.FieldID(); id >= 0 {
			ids[int(id)] = true
		} else {
			names = append(names, n.Name())
		}
	}
	if len(names) > 0 {
		nm := rt.tbl.Metadata().NameMapping()
		for _, name := range names {
			for _, mf := range nm {
				for _, mn := range mf.Names {
					if mn == name && mf.FieldID != nil {
						ids[*mf.FieldID] = true
					}
				}
			}
		}
	}
	return ids, nil
}

// applyFixes returns rec with each fixed column replaced by a constant.
func applyFixes(rec arrow.RecordBatch, fixes []fix) (arrow.RecordBatch, error) {
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
		if fx.col >= len(cols) {
			continue
		}
		a, err := constantArray(cols[fx.col].DataType(), fx.field.Type, fx.value, n)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", fx.field.Name, err)
		}
		made = append(made, a)
		cols[fx.col] = a
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(n)), nil
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
