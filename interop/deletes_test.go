package interop_test

// Rows after row-level deletes, read by readers that share no code with floe
// or iceberg-go. A test that writes a table with equality deletes, position
// deletes or deletion vectors checks what it holds with
//
//	e.checkRows("db.t", map[int64]row{1: {"v": "one"}, 7: {"v": "seven", "p": 2}})
//
// which fails the test unless every reader returns exactly one row for each
// id of the map (the table's "id" column) and no other row, each with the
// values the map gives; columns a row leaves out are not checked. Values are
// Go values: nil (null), bool, string, int/int32/int64 (for int, long,
// date, time and timestamp columns, or a decimal's unscaled value),
// float32/float64, []byte.
// The readers are icebird and check.mjs's DuckDB path on format v2; on
// format v3 the DuckDB path alone, with the deletion vectors decoded by
// dv.mjs, because icebird 0.3.1 cannot apply deletion vectors.
// docs/interop.md says what each reader checks.
//
// The rest of the file tests those delete paths on tables made with
// iceberg-go's public API directly (appends, equality deletes, position
// deletes, deletion vectors, in several snapshots), and dv.mjs on its own.

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math"
	"math/rand"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/canonical"
	"github.com/floe-io/floe/internal/fixture"
)

// row is one row's expected values by column name (see checkRows).
type row map[string]any

// checkRows fails the test unless every independent reader of table returns
// exactly the rows of want after deletes (see the top of this file), and
// the zstd pages of its data and delete files decode in every decoder.
func (e *env) checkRows(table string, want map[int64]row) {
	e.T.Helper()
	readers := []string{"icebird", "duckdb", "spark"}
	if e.describe(table).FormatVersion >= 3 {
		readers = []string{"duckdb", "spark"}
	}
	e.checkRowsOf(table, readers, want)
}

// checkRowsOf is checkRows with the readers named: for tables where icebird
// is known to be wrong (see TestDeletesV2EqualityPartitioned). Spark reads
// when named, the engines are installed, the table has no column Spark
// refuses and the test has not set sparkOff.
func (e *env) checkRowsOf(table string, readers []string, want map[int64]row) {
	e.T.Helper()
	d := e.describe(table)
	var checker []string
	spark := false
	for _, r := range readers {
		if r == "spark" {
			spark = true
		} else {
			checker = append(checker, r)
		}
	}
	var args []string
	if len(checker) == 1 {
		args = []string{"--reader", checker[0]}
	}
	got, err := readRows(d.MetadataLocation, args...)
	if err != nil {
		e.T.Fatal(err)
	}
	if spark && !e.sparkOff && sparkRefuses(d.fields) == "" {
		if s := optionalSpark(e.T); s != nil {
			got["spark"] = e.sparkRows(s, table, d.fields)
			checker = append(checker, "spark")
		}
	}
	for _, reader := range checker {
		if err := compareRows(d.fields, got[reader], want); err != nil {
			e.T.Errorf("%s read by %s: %v", table, reader, err)
		}
	}
	if !e.T.Failed() {
		e.T.Logf("%s (format v%d): %d rows after deletes, as %s read them", table, d.FormatVersion, len(want), strings.Join(checker, " and "))
	}
	e.checkPagesDecode(d)
}

// readRows runs check.mjs --rows on a metadata file and returns each
// reader's canonical rows.
func readRows(metadata string, args ...string) (map[string][]map[string]any, error) {
	cmd := exec.Command("node", append([]string{"check.mjs", metadata, "--rows"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("check.mjs %s: %v\n%s", metadata, err, errb.String())
	}
	var got map[string]struct {
		CanonicalRows []map[string]any `json:"canonicalRows"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		return nil, fmt.Errorf("check.mjs printed %q: %v", out.String(), err)
	}
	rows := map[string][]map[string]any{}
	for reader, g := range got {
		rows[reader] = g.CanonicalRows
	}
	return rows, nil
}

// compareRows reports how one reader's canonical rows differ from want.
func compareRows(fields []canonical.Field, got []map[string]any, want map[int64]row) error {
	types := map[string]*canonical.Type{}
	for _, f := range fields {
		types[f.Name] = f.Type
	}
	if _, ok := types["id"]; !ok {
		return fmt.Errorf("the table has no id column")
	}
	var problems []string
	seen := map[int64]int{}
	for _, g := range got {
		s, _ := g["id"].(string)
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			problems = append(problems, fmt.Sprintf("row with id %v", g["id"]))
			continue
		}
		seen[id]++
		w, ok := want[id]
		if !ok || seen[id] > 1 {
			continue
		}
		for col, wv := range w {
			t, ok := types[col]
			if !ok {
				return fmt.Errorf("want names column %s, which the table does not have", col)
			}
			cv, err := canonicalWant(wv, t)
			if err != nil {
				return fmt.Errorf("want id %d column %s: %v", id, col, err)
			}
			if !reflect.DeepEqual(g[col], cv) {
				problems = append(problems, fmt.Sprintf("id %d: %s = %v, want %v", id, col, g[col], cv))
			}
		}
	}
	var missing, extra, dup []int64
	for id := range want {
		if seen[id] == 0 {
			missing = append(missing, id)
		}
	}
	for id, n := range seen {
		if _, ok := want[id]; !ok {
			extra = append(extra, id)
		} else if n > 1 {
			dup = append(dup, id)
		}
	}
	for _, l := range []struct {
		what string
		ids  []int64
	}{{"missing", missing}, {"deleted or never written, yet returned", extra}, {"returned more than once", dup}} {
		if len(l.ids) > 0 {
			problems = append(problems, fmt.Sprintf("%d ids %s: %s", len(l.ids), l.what, firstIDs(l.ids)))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	if len(problems) > 10 {
		problems = append(problems[:10], fmt.Sprintf("and %d more", len(problems)-10))
	}
	return fmt.Errorf("%d rows, want %d:\n  %s", len(got), len(want), strings.Join(problems, "\n  "))
}

func firstIDs(ids []int64) string {
	slices.Sort(ids)
	var s []string
	for i, id := range ids {
		if i == 8 {
			s = append(s, "...")
			break
		}
		s = append(s, strconv.FormatInt(id, 10))
	}
	return strings.Join(s, ", ")
}

// canonicalWant turns a Go value into the canonical form (check.mjs's
// header) of a column of type t.
func canonicalWant(v any, t *canonical.Type) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool, string:
		return x, nil
	case int:
		return strconv.Itoa(x), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case []byte:
		return hex.EncodeToString(x), nil
	case float32:
		return canonicalWant(float64(x), t)
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN", nil
		case t.Kind == "float":
			return fmt.Sprintf("%08x", math.Float32bits(float32(x))), nil
		case t.Kind == "double":
			return fmt.Sprintf("%016x", math.Float64bits(x)), nil
		}
		return nil, fmt.Errorf("a float for a %s column", t.Kind)
	}
	return nil, fmt.Errorf("values of type %T are not supported", v)
}

// ---------------------------------------------------------------- tables with deletes

// deletesSchema is every test table's: a unique id, a partition column and
// a value that tells versions of a row apart.
var deletesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "p", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// rec is one row of deletesSchema.
type rec struct {
	id int64
	p  int32
	v  string
}

// rowLoc is where a live row's id sits: its data file and position.
type rowLoc struct {
	file iceberg.DataFile
	pos  int64
}

// deletesTable is a table a test changes through iceberg-go's public API
// alone, as an upsert writer would, one snapshot per change. want follows
// every change by the spec's rules, so the test knows the rows the table
// must hold; loc knows where each live row is, for position deletes.
type deletesTable struct {
	t    *testing.T
	ctx  context.Context
	tbl  *table.Table
	want map[int64]row
	live map[int64]rec
	loc  map[int64]rowLoc
	// files are the data files already read for loc.
	files map[string]bool
	// partitioned: equality deletes apply within their row's partition p.
	partitioned bool
}

// newDeletesTable creates table name ("db.t") in the env's warehouse with
// the given format version, partitioned by identity(p) if asked.
func newDeletesTable(e *env, name string, version int, partitioned bool) *deletesTable {
	e.T.Helper()
	cat, _ := fixture.CatalogAt(e.T, e.Warehouse)
	opts := []catalog.CreateTableOpt{catalog.WithProperties(iceberg.Properties{"format-version": strconv.Itoa(version)})}
	if partitioned {
		// Field ids are fresh: id 1, p 2, v 3.
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "p", Transform: iceberg.IdentityTransform{}})
		opts = append(opts, catalog.WithPartitionSpec(&spec))
	}
	tbl := fixture.CreateTable(e.T, cat, strings.Split(name, "."), deletesSchema, opts...)
	return &deletesTable{t: e.T, ctx: context.Background(), tbl: tbl, want: map[int64]row{}, live: map[int64]rec{},
		loc: map[int64]rowLoc{}, files: map[string]bool{}, partitioned: partitioned}
}

// record builds an Arrow record of rows, with only the named columns of
// deletesSchema.
func record(cols []string, rows []rec) arrow.RecordBatch {
	var fields []arrow.Field
	for _, c := range cols {
		fields = append(fields, deletesSchema.Field(deletesSchema.FieldIndices(c)[0]))
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, r := range rows {
		for i, c := range cols {
			switch c {
			case "id":
				b.Field(i).(*array.Int64Builder).Append(r.id)
			case "p":
				b.Field(i).(*array.Int32Builder).Append(r.p)
			case "v":
				b.Field(i).(*array.StringBuilder).Append(r.v)
			}
		}
	}
	return b.NewRecordBatch()
}

func oneRecord(r arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) { yield(r, nil) }
}

// added records rows as live, each id at most once.
func (d *deletesTable) added(rows []rec) {
	d.t.Helper()
	for _, r := range rows {
		if _, ok := d.live[r.id]; ok {
			d.t.Fatalf("test bug: id %d added while live", r.id)
		}
		d.live[r.id] = r
		d.want[r.id] = row{"p": r.p, "v": r.v}
	}
}

// deleted records ids as deleted.
func (d *deletesTable) deleted(ids ...int64) {
	for _, id := range ids {
		delete(d.live, id)
		delete(d.want, id)
		delete(d.loc, id)
	}
}

// commit commits tx and then finds where the rows it added sit.
func (d *deletesTable) commit(tx *table.Transaction) {
	d.t.Helper()
	tbl, err := tx.Commit(d.ctx)
	if err != nil {
		d.t.Fatal(err)
	}
	d.tbl = tbl
	tasks, err := tbl.Scan().PlanFiles(d.ctx)
	if err != nil {
		d.t.Fatal(err)
	}
	for _, task := range tasks {
		path := task.File.FilePath()
		if d.files[path] {
			continue
		}
		d.files[path] = true
		ids, err := fileIDs(path)
		if err != nil {
			d.t.Fatal(err)
		}
		for pos, id := range ids {
			// An id a new file holds is that file's row: every older copy
			// of it was deleted before the id was written again.
			d.loc[id] = rowLoc{file: task.File, pos: int64(pos)}
		}
	}
}

// fileIDs reads the id column of a local data file, in row order.
func fileIDs(path string) ([]int64, error) {
	if u, err := url.Parse(path); err == nil && u.Scheme == "file" {
		path = u.Path
	}
	tbl, err := fixture.ReadParquetFile(path)
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	var ids []int64
	for _, c := range tbl.Column(tbl.Schema().FieldIndices("id")[0]).Data().Chunks() {
		ids = append(ids, c.(*array.Int64).Int64Values()...)
	}
	return ids, nil
}

// appendRows commits rows in an append snapshot.
func (d *deletesTable) appendRows(rows []rec) {
	d.t.Helper()
	r := record([]string{"id", "p", "v"}, rows)
	defer r.Release()
	tx := d.tbl.NewTransaction()
	rdr, err := array.NewRecordReader(r.Schema(), []arrow.RecordBatch{r})
	if err != nil {
		d.t.Fatal(err)
	}
	if err := tx.Append(d.ctx, rdr, nil); err != nil {
		d.t.Fatal(err)
	}
	d.commit(tx)
	d.added(rows)
}

// dataFiles writes rows as data files of the table without committing them.
func (d *deletesTable) dataFiles(rows []rec) []iceberg.DataFile {
	d.t.Helper()
	if len(rows) == 0 {
		return nil
	}
	r := record([]string{"id", "p", "v"}, rows)
	var out []iceberg.DataFile
	for df, err := range table.WriteRecords(d.ctx, d.tbl, r.Schema(), oneRecord(r)) {
		if err != nil {
			d.t.Fatal(err)
		}
		out = append(out, df)
	}
	return out
}

// equalityDelete commits, in one row delta, equality deletes on column col
// ("id" or "v") for the keys of keys (for a partitioned table, each in its
// key row's partition p) and the data files of insert, whose rows the
// deletes must not touch: they have the delta's own sequence number, as an
// upsert's new rows do.
func (d *deletesTable) equalityDelete(col string, keys []rec, insert []rec) {
	d.t.Helper()
	cols := []string{col}
	if d.partitioned {
		cols = append(cols, "p")
	}
	fieldID := d.tbl.Schema().Fields()[deletesSchema.FieldIndices(col)[0]].ID
	r := record(cols, keys)
	tx := d.tbl.NewTransaction()
	dels, err := tx.WriteEqualityDeletes(d.ctx, []int{fieldID}, oneRecord(r))
	if err != nil {
		d.t.Fatal(err)
	}
	rd := tx.NewRowDelta(nil).AddDeletes(dels...)
	if adds := d.dataFiles(insert); len(adds) > 0 {
		rd.AddRows(adds...)
	}
	if err := rd.Commit(d.ctx); err != nil {
		d.t.Fatal(err)
	}
	d.commit(tx)
	var gone []int64
	for id, l := range d.live {
		for _, k := range keys {
			match := (col == "id" && l.id == k.id) || (col == "v" && l.v == k.v)
			if match && (!d.partitioned || l.p == k.p) {
				gone = append(gone, id)
			}
		}
	}
	d.deleted(gone...)
	d.added(insert)
}

// dvDelete commits, in one row delta, deletion vectors deleting the live
// rows of ids and the data files of insert. A data file that already has a
// deletion vector gets a merged one, and the old one is removed: the spec
// allows one per data file, and iceberg-go 0.7.0 accepts a second one that
// leaves the table unreadable.
func (d *deletesTable) dvDelete(ids []int64, insert []rec) {
	d.t.Helper()
	d.writeDVs(ids, insert, true)
}

// writeDVs is dvDelete; with merge false it adds a second deletion vector
// beside a data file's first, as the spec forbids.
func (d *deletesTable) writeDVs(ids []int64, insert []rec, merge bool) {
	d.t.Helper()
	fs, err := d.tbl.FS(d.ctx)
	if err != nil {
		d.t.Fatal(err)
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		d.t.Fatalf("the table's file IO %T cannot write", fs)
	}
	meta := d.tbl.Metadata()
	w := dv.NewDVWriter(wfs, func(id int32) *iceberg.PartitionSpec { return meta.PartitionSpecByID(int(id)) })
	tasks, err := d.tbl.Scan().PlanFiles(d.ctx)
	if err != nil {
		d.t.Fatal(err)
	}
	byFile := map[string][]int64{}
	for _, id := range ids {
		l, ok := d.loc[id]
		if !ok {
			d.t.Fatalf("test bug: id %d is not live", id)
		}
		byFile[l.file.FilePath()] = append(byFile[l.file.FilePath()], l.pos)
	}
	var old []iceberg.DataFile
	for _, task := range tasks {
		f := task.File
		positions, ok := byFile[f.FilePath()]
		if !ok {
			continue
		}
		delete(byFile, f.FilePath())
		for _, prev := range task.DeletionVectorFiles {
			if !merge {
				break
			}
			bm, err := dv.ReadDV(fs, prev)
			if err != nil {
				d.t.Fatal(err)
			}
			w.Load(f.FilePath(), bm, f.SpecID(), f.Partition())
			old = append(old, prev)
		}
		if err := w.Add(f.FilePath(), positions, f.SpecID(), f.Partition()); err != nil {
			d.t.Fatal(err)
		}
	}
	if len(byFile) > 0 {
		d.t.Fatalf("test bug: data files %v are not in the table", byFile)
	}
	dvs, err := w.Flush(d.ctx, fmt.Sprintf("%s/data/dv-%s.puffin", d.tbl.Location(), uuid.NewString()))
	if err != nil {
		d.t.Fatal(err)
	}
	tx := d.tbl.NewTransaction()
	rd := tx.NewRowDelta(nil).AddDeletes(dvs...)
	if len(old) > 0 {
		rd.RemoveDeletes(old...)
	}
	if adds := d.dataFiles(insert); len(adds) > 0 {
		rd.AddRows(adds...)
	}
	if err := rd.Commit(d.ctx); err != nil {
		d.t.Fatal(err)
	}
	if !merge {
		// iceberg-go commits it, but can no longer plan a scan of the
		// table, which commit does to find the rows.
		if _, err := tx.Commit(d.ctx); err != nil {
			d.t.Fatal(err)
		}
		return
	}
	d.commit(tx)
	d.deleted(ids...)
	d.added(insert)
}

// scanDelete deletes the live rows of ids with iceberg-go's own
// merge-on-read delete: Parquet position delete files on format v2,
// deletion vectors (merged with any a file has) on v3.
func (d *deletesTable) scanDelete(ids []int64) {
	d.t.Helper()
	tx := d.tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}); err != nil {
		d.t.Fatal(err)
	}
	if err := tx.Delete(d.ctx, iceberg.IsIn(iceberg.Reference("id"), ids...), nil); err != nil {
		d.t.Fatal(err)
	}
	d.commit(tx)
	d.deleted(ids...)
}

// checkIceberg checks the model against iceberg-go's own scan, so that a
// disagreement in checkRows is the independent reader's, not the test's.
func (d *deletesTable) checkIceberg(e *env, name string) {
	d.t.Helper()
	ids := e.TableIDs(name)
	for id, n := range ids {
		if _, ok := d.want[id]; !ok || n != 1 {
			d.t.Fatalf("iceberg-go's scan of %s has id %d %d times; the test's model has it %v", name, id, n, ok)
		}
	}
	if len(ids) != len(d.want) {
		d.t.Fatalf("iceberg-go's scan of %s has %d ids, the test's model %d", name, len(ids), len(d.want))
	}
}

// recs makes rows first..first+n-1 in partition id%parts with value
// prefix+id.
func recs(first, n int64, parts int32, prefix string) []rec {
	var out []rec
	for id := first; id < first+n; id++ {
		out = append(out, rec{id: id, p: int32(id % int64(parts)), v: prefix + strconv.FormatInt(id, 10)})
	}
	return out
}

func keysOf(rows []rec) []int64 {
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.id)
	}
	return ids
}

// ---------------------------------------------------------------- format v2

// Equality deletes on an unpartitioned v2 table, as Flink writes upserts:
// several delete snapshots; an upsert's new rows, committed with the
// deletes of their keys, survive them (same sequence number); rows
// appended after a delete survive it too; a key deleted twice, and a key
// no row has, change nothing more.
func TestDeletesV2EqualityUnpartitioned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := newDeletesTable(e, "db.eq", 2, false)
	d.appendRows(recs(0, 100, 1, "a"))
	d.equalityDelete("id", append(recs(10, 10, 1, ""), rec{id: 3}), nil)
	// The upsert: ids 20, 21 and 3 (deleted already) get new values, 150
	// never existed; 100-104 are new.
	d.equalityDelete("id", []rec{{id: 20}, {id: 21}, {id: 3}, {id: 150}},
		append([]rec{{id: 20, v: "b20"}, {id: 21, v: "b21"}, {id: 3, v: "b3"}}, recs(100, 5, 1, "b")...))
	d.appendRows(recs(10, 3, 1, "c"))
	d.equalityDelete("id", []rec{{id: 21}, {id: 11}}, nil)
	d.checkIceberg(e, "db.eq")
	e.checkRows("db.eq", d.want)
}

// Equality deletes on a partitioned v2 table apply only in their own
// partition: every value of v is in both partitions (ids 2k and 2k+1), and
// a delete of v in partition 0 must leave partition 1's rows; a delete of
// id 43 in partition 0 must leave id 43, which is in partition 1. The
// DuckDB path must read exactly the rows left. icebird 0.3.1 applies
// equality deletes to every partition, so it is checked for exactly the
// rows that rule loses: harmless on a table whose keys are unique across
// partitions (an upsert table's), wrong here, where keys repeat.
func TestDeletesV2EqualityPartitioned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := newDeletesTable(e, "db.eqp", 2, true)
	var rows []rec
	for id := int64(0); id < 100; id++ {
		rows = append(rows, rec{id: id, p: int32(id % 2), v: "k" + strconv.FormatInt(id/2, 10)})
	}
	d.appendRows(rows)
	d.equalityDelete("v", []rec{{v: "k5", p: 0}, {v: "k6", p: 0}, {v: "k7", p: 0}}, nil)
	d.equalityDelete("v", []rec{{v: "k7", p: 1}, {v: "k8", p: 1}}, []rec{{id: 200, p: 1, v: "k8"}, {id: 201, p: 0, v: "k5"}})
	d.equalityDelete("id", []rec{{id: 40, p: 0}, {id: 41, p: 1}, {id: 43, p: 0}}, nil)
	d.checkIceberg(e, "db.eqp")
	e.checkRowsOf("db.eqp", []string{"duckdb", "spark"}, d.want)
	// The live rows that only another partition's deletes name: ids 11
	// (k5) and 13 (k6), named in partition 0; 16 (k8), named in partition
	// 1; 43, named in partition 0.
	global := maps.Clone(d.want)
	for _, id := range []int64{11, 13, 16, 43} {
		if _, ok := global[id]; !ok {
			t.Fatalf("test bug: id %d must survive", id)
		}
		delete(global, id)
	}
	e.checkRowsOf("db.eqp", []string{"icebird"}, global)
}

// Parquet position deletes on a v2 table (iceberg-go's merge-on-read
// delete), in two snapshots, the second after more appends.
func TestDeletesV2Position(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := newDeletesTable(e, "db.pos", 2, true)
	d.appendRows(recs(0, 200, 3, "a"))
	d.scanDelete([]int64{0, 1, 2, 50, 199})
	d.appendRows(recs(200, 50, 3, "b"))
	d.scanDelete([]int64{3, 210, 211, 100})
	d.equalityDelete("id", []rec{{id: 4, p: 1}, {id: 5, p: 2}}, []rec{{id: 4, p: 1, v: "c4"}})
	d.checkIceberg(e, "db.pos")
	e.checkRows("db.pos", d.want)
}

// The partition scope of an equality delete, on a table another writer made
// (PyIceberg, with a hand-built delete manifest): the delete of key 100 in
// partition 0 must keep key 100 in partition 1 in the DuckDB path. (floe
// refuses this table for its snapshot id, above the largest long, which
// has no bearing on its deletes.)
func TestCheckerEqualityDeletePartitionScope(t *testing.T) {
	t.Parallel()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	root := fixture.Shared(t, "fixtures/peer-tables/tables/equality_delete_cross_partition")
	got, err := readRows(filepath.Join(root, "warehouse/ns/t/metadata/vfinal.metadata.json"),
		"--path-prefix", "data/persistent/equality_delete_cross_partition/="+root+"/", "--reader", "duckdb")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range got["duckdb"] {
		keys = append(keys, fmt.Sprint(r["part"], "/", r["key"]))
	}
	sort.Strings(keys)
	if want := []string{"0/999", "1/100", "1/888"}; !slices.Equal(keys, want) {
		t.Errorf("DuckDB path: rows (part/key) %v, want %v", keys, want)
	}
}

// ---------------------------------------------------------------- format v3

// Deletion vectors on an unpartitioned v3 table: several delete snapshots,
// DVs replaced by merged ones (so the live DV holds the positions of every
// earlier one), an upsert's new rows committed with the DVs, a DV dense
// enough for bitmap containers and one of long runs, and iceberg-go's own
// merge-on-read delete. icebird cannot read the table and says so.
func TestDeletesV3DeletionVectors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := newDeletesTable(e, "db.dv", 3, false)
	d.appendRows(recs(0, 20000, 1, "a"))
	d.appendRows(recs(20000, 1000, 1, "b"))
	d.dvDelete([]int64{1, 2, 3, 20001}, nil)
	// A merged DV for each of the two files.
	d.dvDelete([]int64{4, 5, 19999, 20002, 20999}, []rec{{id: 1, v: "c1"}, {id: 4, v: "c4"}, {id: 30000, v: "c30000"}})
	var dense []int64
	for id := int64(100); id < 15000; id += 2 {
		dense = append(dense, id)
	}
	d.dvDelete(dense, nil)
	d.dvDelete(keysOf(recs(15000, 3000, 1, "")), nil)
	// The row re-inserted by the upsert is deleted from its new file.
	d.dvDelete([]int64{1}, nil)
	d.scanDelete([]int64{7, 20500})
	d.checkIceberg(e, "db.dv")
	e.checkRows("db.dv", d.want)

	if _, err := readRows(e.describe("db.dv").MetadataLocation, "--reader", "icebird"); err == nil || !strings.Contains(err.Error(), "cannot apply deletion vectors") {
		t.Fatalf("icebird on a table with deletion vectors: %v; want the checker to say it cannot apply them", err)
	}
}

// Deletion vectors on a partitioned v3 table, in data files of every
// partition, replaced by merged ones, with equality deletes beside them.
func TestDeletesV3Partitioned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := newDeletesTable(e, "db.dvp", 3, true)
	d.appendRows(recs(0, 300, 3, "a"))
	d.dvDelete([]int64{0, 1, 2, 3, 4, 5}, nil)
	d.appendRows(recs(300, 30, 3, "b"))
	d.dvDelete([]int64{6, 7, 8, 300, 301, 302}, []rec{{id: 0, p: 0, v: "c0"}, {id: 2, p: 2, v: "c2"}})
	d.equalityDelete("id", []rec{{id: 9, p: 0}, {id: 10, p: 2}, {id: 11, p: 1}}, nil)
	d.dvDelete([]int64{0, 12}, nil)
	d.checkIceberg(e, "db.dvp")
	e.checkRows("db.dvp", d.want)
}

// A second deletion vector for a data file that has one is refused by the
// DuckDB path, naming the data file and both vectors: the spec allows one,
// and applying either alone would return deleted rows.
func TestCheckerRefusesTwoDeletionVectors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := newDeletesTable(e, "db.twodv", 3, false)
	d.appendRows(recs(0, 100, 1, "a"))
	d.dvDelete([]int64{1, 2}, nil)
	d.writeDVs([]int64{3}, nil, false)
	_, err := readRows(e.describe("db.twodv").MetadataLocation, "--reader", "duckdb")
	if err == nil || !strings.Contains(err.Error(), "two deletion vectors for data file") {
		t.Fatalf("a data file with two deletion vectors: %v; want the checker to refuse it", err)
	}
}

// ---------------------------------------------------------------- dv.mjs

// decodeDV runs dv.mjs on args and returns the positions it printed.
func decodeDV(args ...string) ([]uint64, error) {
	cmd := exec.Command("node", append([]string{"dv.mjs"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("dv.mjs %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	var ps []uint64
	for _, l := range strings.Fields(out.String()) {
		p, err := strconv.ParseUint(l, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("dv.mjs printed %q", l)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func needNode(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// The vectors in testdata/dv were written by RoaringBitmap/roaring's
// roaring64 (v2.30.0) in the deletion-vector-v1 framing; each set is
// rebuilt here from the rule that made it. dv.mjs must decode every one,
// and refuse a damaged copy.
func TestDVDecoderVectors(t *testing.T) {
	t.Parallel()
	needNode(t)
	span := func(from, to, step uint64) []uint64 {
		var out []uint64
		for i := from; i < to; i += step {
			out = append(out, i)
		}
		return out
	}
	r := rand.New(rand.NewSource(1))
	var high []uint64
	for range 5000 {
		high = append(high, uint64(r.Int63n(1<<40)))
	}
	high = append(high, 1<<32, 1<<32+1, 5<<32|0xffff_ffff)
	cases := map[string][]uint64{
		"empty":    nil,
		"small":    {0, 1, 3, 65535, 65536, 1 << 31},
		"dense":    span(0, 100000, 3),    // bitmap containers
		"runs":     span(1000, 200000, 1), // run containers
		"highkeys": high,                  // many 32-bit buckets, runs and arrays
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			slices.Sort(want)
			want = slices.Compact(want)
			path := filepath.Join("testdata", "dv", name+".bin")
			got, err := decodeDV(path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d positions, want %d (first %v, want %v)", len(got), len(want), got[:min(5, len(got))], want[:min(5, len(want))])
			}
			blob, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(t.TempDir(), "bad.bin")
			damaged := slices.Clone(blob)
			damaged[len(damaged)-6] ^= 1
			if err := os.WriteFile(bad, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := decodeDV(bad); err == nil || !strings.Contains(err.Error(), "CRC-32") {
				t.Fatalf("a flipped bit: %v, want a CRC-32 mismatch", err)
			}
			if err := os.WriteFile(bad, blob[:len(blob)-1], 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := decodeDV(bad); err == nil {
				t.Fatal("a truncated blob decoded")
			}
		})
	}
}

// Deletion vectors written by iceberg-go's DVWriter (one Puffin file, a
// blob per data file, run-length encoded as Java does) decode to the
// positions it was given, bucket boundaries and positions past 2^32
// included; and the Puffin file iceberg-go's tests keep, around a
// deletion vector Iceberg Java wrote, decodes to its five positions.
func TestDVDecoderIcebergGo(t *testing.T) {
	t.Parallel()
	needNode(t)
	sets := map[string][]int64{
		"one":    {42},
		"sparse": {0, 1, 3, 65535, 65536, 65537, 1 << 31, 1<<32 - 1},
		"high":   {1 << 32, 1<<32 + 5, 5<<32 | 0xffff_ffff, 1<<40 + 7, 1<<62 + 1},
	}
	for i := int64(0); i < 200000; i += 3 {
		sets["dense"] = append(sets["dense"], i)
	}
	for i := int64(70000); i < 270000; i++ {
		sets["runs"] = append(sets["runs"], i)
	}
	for i := int64(0); i < 5000; i++ {
		sets["mixed"] = append(sets["mixed"], i*i%1000003, 1<<33+i)
	}
	dir := t.TempDir()
	w := dv.NewDVWriter(iceio.LocalFS{}, func(int32) *iceberg.PartitionSpec { return iceberg.UnpartitionedSpec })
	for name, ps := range sets {
		if err := w.Add("data/"+name+".parquet", ps, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	puffin := filepath.Join(dir, "dvs.puffin")
	files, err := w.Flush(context.Background(), puffin)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(*f.ReferencedDataFile(), "data/"), ".parquet")
		got, err := decodeDV(puffin, strconv.FormatInt(*f.ContentOffset(), 10), strconv.FormatInt(*f.ContentSizeInBytes(), 10))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := slices.Clone(sets[name])
		slices.Sort(want)
		want = slices.Compact(want)
		if len(got) != len(want) {
			t.Fatalf("%s: %d positions, want %d", name, len(got), len(want))
		}
		for i := range got {
			if got[i] != uint64(want[i]) {
				t.Fatalf("%s: position %d is %d, want %d", name, i, got[i], want[i])
			}
		}
	}
	if len(files) != len(sets) {
		t.Fatalf("%d deletion vectors written, want %d", len(files), len(sets))
	}

	java := fixture.Shared(t, "fixtures/iceberg-go/deletion-vector-v1.puffin")
	cmd := exec.Command("node", "dv.mjs", "--puffin", java)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dv.mjs --puffin %s: %v", java, err)
	}
	var blob struct {
		Properties map[string]string `json:"properties"`
		Positions  []string          `json:"positions"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &blob); err != nil {
		t.Fatalf("dv.mjs --puffin printed %q: %v", out, err)
	}
	if want := []string{"1", "3", "5", "7", "9"}; !slices.Equal(blob.Positions, want) || blob.Properties["referenced-data-file"] != "data/test.parquet" {
		t.Fatalf("%s: %+v, want positions %v of data/test.parquet", java, blob, want)
	}
}
