package scan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/filter"
	"github.com/floe-io/floe/internal/ingest"
)

// Options select what Table and Count read, with Spark's read
// options: snapshot-id, as-of-timestamp, branch, tag. At most one of them
// picks the snapshot; none means the current one.
type Options struct {
	SnapshotID int64
	// AsOfMs, when set, reads the snapshot that was current at this time
	// (epoch ms). A time before the table's first snapshot is an error,
	// as in Spark.
	AsOfMs      *int64
	Branch, Tag string
	// Columns, when set, are the only columns read (nested as a.b); Drop
	// leaves columns out of what is returned.
	Columns []string
	Drop    []string
	// Filter is a SQL-like row filter such as "id > 5 AND status = 'A'"
	// (package filter): pushed down to prune files, the rest checked on
	// rows.
	Filter string
	// Limit > 0 stops after that many rows.
	Limit int64
	// Allocator, when set, holds the records' buffers; nil is Go's heap,
	// where a value taken from a record (a string of a String column)
	// stays valid as long as it is referenced. An allocator that reuses
	// what Release frees, such as floe's own pool that `floe scan` reads
	// with, makes a full scan several times cheaper, and then nothing of
	// a record may be used after its Release.
	Allocator memory.Allocator
}

// bind parses and binds the filter against the schema the read at a uses;
// nil without a filter.
func (o Options) bind(ctx context.Context, tbl *table.Table, a at) (*filter.Bound, error) {
	if o.Filter == "" {
		return nil, nil
	}
	e, err := filter.Parse(o.Filter)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ingest.ErrConfig, err)
	}
	sc := a.schema(tbl)
	b, err := filter.Bind(e, sc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ingest.ErrConfig, err)
	}
	sources := filterSources(e, sc)
	lost, err := lostLowerBound(ctx, tbl, a.snapshot(tbl), sc, sources)
	if err != nil {
		return nil, err
	}
	if lost || unmapped(nameMapping(tbl.Metadata()), sources) {
		// Pruning would skip files that match: check every row.
		b = b.Unpushed()
	}
	return b, nil
}

// lastMapping memoises nameMapping for the last mapping text seen: a scan
// asks several times, and iceberg-go parses the JSON on every call.
var lastMapping struct {
	sync.Mutex
	text    string
	mapping iceberg.NameMapping
}

// nameMapping is md's name mapping (schema.name-mapping.default), nil
// without one.
func nameMapping(md table.Metadata) iceberg.NameMapping {
	text, ok := md.Properties()[table.DefaultNameMappingKey]
	if !ok {
		return nil
	}
	lastMapping.Lock()
	defer lastMapping.Unlock()
	if lastMapping.mapping == nil || lastMapping.text != text {
		lastMapping.text, lastMapping.mapping = text, md.NameMapping()
	}
	return lastMapping.mapping
}

// unmapped tells whether the table has a name mapping that gives no name
// to a field the filter reads (ids in sources). A data file written
// without field ids then cannot hold the field, which reads as NULL, while
// its manifest may still record metrics under the field's id from the
// mapping the file was added with; those metrics would prune it.
func unmapped(m iceberg.NameMapping, sources map[int]bool) bool {
	if m == nil {
		return false
	}
	named := map[int]bool{}
	var walk func([]iceberg.MappedField)
	walk = func(fields []iceberg.MappedField) {
		for _, f := range fields {
			if f.FieldID != nil && len(f.Names) > 0 {
				named[*f.FieldID] = true
			}
			walk(f.Fields)
		}
	}
	walk(m)
	for id := range sources {
		if !named[id] {
			return true
		}
	}
	return false
}

// lostLowerBound tells whether a manifest of the snapshot summarises a
// string or binary partition field whose source the filter reads (ids in
// sources) without the lower bound its values have. iceberg-go 0.7 writes
// an empty string or binary bound as null (its bytes are a nil slice,
// which its Avro encoder takes for null), so a manifest holding the empty
// string has no lower bound, and one holding only it and NULL reads as
// holding NULLs alone. Manifest pruning, iceberg-go's and any engine's,
// then skips such manifests for every predicate but IS NULL. Fields the
// filter does not read are not pruned on, whatever their summary.
func lostLowerBound(ctx context.Context, tbl *table.Table, s *table.Snapshot, sc *iceberg.Schema, sources map[int]bool) (bool, error) {
	md := tbl.Metadata()
	// at[spec id] holds the positions of the fields that matter.
	at := map[int][]int{}
	for _, spec := range md.PartitionSpecs() {
		for i, pf := range spec.Fields() {
			if sources[pf.SourceID()] && mayBeEmpty(pf, sc) {
				at[spec.ID()] = append(at[spec.ID()], i)
			}
		}
	}
	if s == nil || len(at) == 0 {
		return false, nil
	}
	lost, err := lostBounds(ctx, tbl, s, sc)
	if err != nil {
		return false, err
	}
	for _, l := range lost {
		if slices.Contains(at[l.spec], l.field) {
			return true, nil
		}
	}
	return false, nil
}

// mayBeEmpty tells whether partition field pf of a table with schema sc
// holds strings or binary values, the types whose empty value iceberg-go
// loses from bounds.
func mayBeEmpty(pf iceberg.PartitionField, sc *iceberg.Schema) bool {
	src, ok := sc.FindFieldByID(pf.SourceID())
	if !ok {
		return false
	}
	switch pf.Transform.ResultType(src.Type).(type) {
	case iceberg.StringType, iceberg.BinaryType:
		return true
	}
	return false
}

// lostBound is a string or binary partition field (spec id, position)
// whose lower bound a manifest lost.
type lostBound struct{ spec, field int }

// lostCache memoises lostBounds by manifest list: the list never changes,
// and reading it again costs as much as planning a small scan.
var lostCache struct {
	sync.Mutex
	m map[string][]lostBound
}

// lostBounds lists the string and binary partition fields whose lower
// bound a manifest of s lost: it has none while the manifest holds a value,
// which it shows by holding no NULL, by an upper bound, or, when it holds
// NULLs and no bound at all (NULLs alone, or empty strings and NULLs), by the
// partition tuples of its files.
func lostBounds(ctx context.Context, tbl *table.Table, s *table.Snapshot, sc *iceberg.Schema) ([]lostBound, error) {
	key := s.ManifestList
	lostCache.Lock()
	l, ok := lostCache.m[key]
	lostCache.Unlock()
	if ok {
		return l, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := s.Manifests(fs)
	if err != nil {
		return nil, planError(ctx, tbl, s, err)
	}
	md := tbl.Metadata()
	for _, m := range manifests {
		spec := md.PartitionSpecByID(int(m.PartitionSpecID()))
		if spec == nil {
			continue
		}
		var fields []iceberg.PartitionField
		for _, pf := range spec.Fields() {
			fields = append(fields, pf)
		}
		var unsure []int
		for i, p := range m.Partitions() {
			if p.LowerBound != nil || i >= len(fields) || !mayBeEmpty(fields[i], sc) {
				continue
			}
			if !p.ContainsNull || p.UpperBound != nil {
				l = append(l, lostBound{spec: spec.ID(), field: i})
			} else {
				unsure = append(unsure, i)
			}
		}
		if len(unsure) == 0 {
			continue
		}
		held, err := heldValues(fs, m, fields, unsure)
		if err != nil {
			return nil, planError(ctx, tbl, s, err)
		}
		for _, i := range held {
			l = append(l, lostBound{spec: spec.ID(), field: i})
		}
	}
	lostCache.Lock()
	defer lostCache.Unlock()
	if lostCache.m == nil || len(lostCache.m) >= 1024 {
		lostCache.m = map[string][]lostBound{}
	}
	lostCache.m[key] = l
	return l, nil
}

// heldValues returns the positions among at of the partition fields for
// which a file of manifest m records a value other than NULL.
func heldValues(fs icebergio.IO, m iceberg.ManifestFile, fields []iceberg.PartitionField, at []int) ([]int, error) {
	var held []int
	for e, err := range iceberg.EntriesWithProjection(fs, m, true, iceberg.ManifestEntryProjection{}) {
		if err != nil {
			return nil, err
		}
		part := e.DataFile().Partition()
		for _, i := range at {
			if part[fields[i].FieldID] != nil && !slices.Contains(held, i) {
				held = append(held, i)
			}
		}
		if len(held) == len(at) {
			break
		}
	}
	return held, nil
}

// filterSources are the field ids of the columns e reads.
func filterSources(e filter.Expr, sc *iceberg.Schema) map[int]bool {
	ids := map[int]bool{}
	for _, c := range filter.Columns(e) {
		if f, ok := sc.FindFieldByName(strings.Join(c.Path, ".")); ok {
			ids[f.ID] = true
		}
	}
	return ids
}

// check refuses what no read of sc can do: a negative limit, and keep or
// drop columns sc does not have (a count reads no column, so it would
// otherwise pass over them).
func (o Options) check(tbl *table.Table, sc *iceberg.Schema) error {
	if o.Limit < 0 {
		return fmt.Errorf("%w: limit %d: give a number of rows, 1 or more, or 0 for all", ingest.ErrConfig, o.Limit)
	}
	for _, l := range []struct {
		what  string
		names []string
	}{{"keep", o.Columns}, {"drop", o.Drop}} {
		for _, name := range l.names {
			if _, ok := sc.FindFieldByName(name); ok {
				continue
			}
			have := make([]string, 0, len(sc.Fields()))
			for _, f := range sc.Fields() {
				have = append(have, f.Name)
			}
			return fmt.Errorf("%w: %s: table %s has no column %q (it has: %s; nested columns as a.b)", ingest.ErrConfig, l.what, ingest.JoinIdent(tbl.Identifier()), name, strings.Join(have, ", "))
		}
	}
	return nil
}

// at is what a scan reads: a snapshot, and the schema it is read with.
// As in Iceberg's readers (Spark's SnapshotUtil.schemaFor, iceberg-go's
// scan), the current snapshot and a branch's head are read with the
// table's current schema, so that a column renamed or added since the
// snapshot was written reads, filters and is kept under its current
// name; a snapshot chosen by id, time or tag is read with the schema it
// was written with.
type at struct {
	// snap is the snapshot's id, 0 for the table's current snapshot.
	snap int64
	// branch names the branch whose head snap is, "" otherwise.
	branch string
}

// snapshot is the snapshot a reads: nil for a table without one.
func (a at) snapshot(tbl *table.Table) *table.Snapshot {
	if a.snap == 0 {
		return tbl.CurrentSnapshot()
	}
	return tbl.Metadata().SnapshotByID(a.snap)
}

// schema is the schema a reads with.
func (a at) schema(tbl *table.Table) *iceberg.Schema {
	sc := tbl.Schema()
	if a.snap == 0 || a.branch != "" {
		return sc
	}
	// Schemas clones every schema of the table's history: only asked
	// when the snapshot was written with an older one.
	if s := a.snapshot(tbl); s != nil && s.SchemaID != nil && *s.SchemaID != sc.ID {
		for _, old := range tbl.Metadata().Schemas() {
			if old.ID == *s.SchemaID {
				sc = old
			}
		}
	}
	return sc
}

// scan is iceberg-go's scan of tbl at a with opts (scanOptions): a
// branch is selected as a ref, for iceberg-go to read it with the current
// schema too (by snapshot id it would read the snapshot's).
func (a at) scan(tbl *table.Table, opts ...table.ScanOption) (*table.Scan, error) {
	switch {
	case a.branch != "":
		sc, err := tbl.Scan(opts...).UseRef(a.branch)
		if err != nil {
			return nil, fmt.Errorf("read branch %s of table %s: %w", a.branch, ingest.JoinIdent(tbl.Identifier()), err)
		}
		return sc, nil
	case a.snap != 0:
		opts = append(slices.Clip(opts), table.WithSnapshotID(a.snap))
	}
	return tbl.Scan(opts...), nil
}

// at resolves the options to what a scan reads.
func (o Options) at(tbl *table.Table) (at, error) {
	set := 0
	for _, on := range []bool{o.SnapshotID != 0, o.AsOfMs != nil, o.Branch != "", o.Tag != ""} {
		if on {
			set++
		}
	}
	if set > 1 {
		return at{}, fmt.Errorf("%w: give one of snapshot id, as-of timestamp, branch and tag", ingest.ErrConfig)
	}
	md := tbl.Metadata()
	switch {
	case o.SnapshotID != 0:
		if md.SnapshotByID(o.SnapshotID) == nil {
			return at{}, fmt.Errorf("%w: table %s has no snapshot %d; `floe table snapshots` lists them (expired snapshots cannot be read)", ingest.ErrConfig, ingest.JoinIdent(tbl.Identifier()), o.SnapshotID)
		}
		return at{snap: o.SnapshotID}, nil
	case o.AsOfMs != nil:
		// The snapshot log records which snapshot was current when, which
		// the snapshots' own timestamps do not once a rollback happened.
		when := *o.AsOfMs
		var id, first int64
		seen := false
		for e := range md.SnapshotLogs() {
			if !seen {
				first, seen = e.TimestampMs, true
			}
			if e.TimestampMs <= when {
				id = e.SnapshotID
			}
		}
		switch {
		case !seen:
			return at{}, fmt.Errorf("%w: table %s has no snapshot history to read as of %s", ingest.ErrConfig, ingest.JoinIdent(tbl.Identifier()), msText(when))
		case when < first:
			return at{}, fmt.Errorf("%w: table %s had no snapshot at %s; its history starts at %s", ingest.ErrConfig, ingest.JoinIdent(tbl.Identifier()), msText(when), msText(first))
		}
		return at{snap: id}, nil
	case o.Branch != "" || o.Tag != "":
		name, want := o.Branch, table.BranchRef
		if o.Tag != "" {
			name, want = o.Tag, table.TagRef
		}
		var names []string
		for n, ref := range md.Refs() {
			if n == name {
				if ref.SnapshotRefType != want {
					return at{}, fmt.Errorf("%w: %s of table %s is a %s, not a %s", ingest.ErrConfig, name, ingest.JoinIdent(tbl.Identifier()), ref.SnapshotRefType, want)
				}
				if want == table.BranchRef {
					return at{snap: ref.SnapshotID, branch: name}, nil
				}
				return at{snap: ref.SnapshotID}, nil
			}
			if ref.SnapshotRefType == want {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		have := "none"
		if len(names) > 0 {
			have = strings.Join(names, ", ")
		}
		return at{}, fmt.Errorf("%w: table %s has no %s %q (it has: %s)", ingest.ErrConfig, ingest.JoinIdent(tbl.Identifier()), want, name, have)
	}
	return at{}, nil
}

// scanOptions are the iceberg-go options for o but the snapshot, which
// at.scan selects; b is from o.bind and sc the schema they read
// (at.schema).
func (o Options) scanOptions(b *filter.Bound, sc *iceberg.Schema) []table.ScanOption {
	var opts []table.ScanOption
	if b != nil {
		opts = append(opts, table.WithRowFilter(b.Pushed))
	}
	if cols := o.readColumns(b, sc); len(cols) > 0 {
		opts = append(opts, table.WithSelectedFields(cols...))
	}
	return append(opts, table.WithArrowBatchSize(readBatchRows))
}

// readBatchRows is the rows of a record read from a data file. arrow-go
// reserves a whole batch for every record it reads, whatever the row
// group holds: iceberg-go's 131,072 reserved 2.6 times the memory of a
// 50,000-row group, and allocating and collecting it was most of a full
// scan (events5 in 100 files: 148 ms and 273 CPU-ms at 131,072 rows,
// 121 ms at 8,192, 111 ms and 200 CPU-ms at 32,768, 114 ms at 65,536).
// It stays under a power of two: arrow-go rounds what it reserves up to
// one, counting the levels it decoded ahead of the batch, so 32,768 rows
// reserved 65,536 (a full scan of events5 allocated and zeroed 295 MB of
// buffers; 209 MB at 28,672).
const readBatchRows = 28 << 10

// readColumns are the columns a scan reads for o, nil for all: the kept
// columns plus those of the residual, which floe checks on the rows read
// and then drops (for files read unfiltered, b.Unpushed(), the residual is
// the whole filter). The pushed part is not read: iceberg-go drops what a
// file's partition already decides, and reading a string column it need
// not read costs a selective scan most of its time. With a filter on a
// schema that has nested columns every column is read: iceberg-go 0.7.0
// fails ("invalid") filtering rows when a struct column is left out of the
// selection.
func (o Options) readColumns(b *filter.Bound, sc *iceberg.Schema) []string {
	if len(o.Columns) == 0 {
		return nil
	}
	if b == nil {
		return o.Columns
	}
	for _, f := range sc.Fields() {
		if _, nested := f.Type.(iceberg.NestedType); nested {
			return nil
		}
	}
	cols := slices.Clone(o.Columns)
	if b.Residual == nil {
		return cols
	}
	for _, c := range filter.Columns(b.Residual) {
		if name := strings.Join(c.Path, "."); !slices.Contains(cols, name) {
			cols = append(cols, name)
		}
	}
	return cols
}

func msText(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }
