package write

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/partition"
)

type failingFS struct {
	icebergio.WriteFileIO
	mu            sync.Mutex
	open, maxOpen int
	created       int
	failCloseOf   int // 1-based index of the Create whose Close fails
	failAfter     int // bytes a file takes before its writes fail; 0 never fails
	removed       atomic.Int64
}

type failingFile struct {
	icebergio.FileWriter
	fs      *failingFS
	fail    bool
	written int
}

func (f *failingFile) Write(p []byte) (int, error) {
	if f.fs.failAfter > 0 && f.written+len(p) > f.fs.failAfter {
		return 0, errors.New("injected write failure")
	}
	f.written += len(p)
	return f.FileWriter.Write(p)
}

func (f *failingFile) Close() error {
	err := f.FileWriter.Close()
	// The file is open until its Close returns: counting it closed before
	// would hide a writer that opens the next file too early.
	f.fs.mu.Lock()
	f.fs.open--
	f.fs.mu.Unlock()
	if f.fail {
		return errors.New("injected close failure")
	}
	return err
}

func (z *failingFS) Create(name string) (icebergio.FileWriter, error) {
	fw, err := z.WriteFileIO.Create(name)
	if err != nil {
		return nil, err
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	z.created++
	z.open++
	z.maxOpen = max(z.maxOpen, z.open)
	return &failingFile{FileWriter: fw, fs: z, fail: z.created == z.failCloseOf}, nil
}

func (z *failingFS) Remove(name string) error { z.removed.Add(1); return z.WriteFileIO.Remove(name) }

// peak is the most files open at once.
func (z *failingFS) peak() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.maxOpen
}

// countingTable is tbl writing its files through a failingFS that fails
// nothing, to count the files really open at once.
func countingTable(tbl *table.Table) (*table.Table, *failingFS) {
	fs := &failingFS{}
	var once sync.Once
	fsF := func(ctx context.Context) (icebergio.IO, error) {
		inner, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		once.Do(func() { fs.WriteFileIO = inner.(icebergio.WriteFileIO) })
		return fs, nil
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fsF, nil), fs
}

var fanoutSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "p", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

func partRecord(p int64, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, fanoutSchema)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int64Builder).Append(p)
	}
	return b.NewRecordBatch()
}

func fanoutTable(t *testing.T) (catalog.Catalog, *table.Table) {
	return fanoutTableProps(t, "1", "fanout")
}

func fanoutTableProps(t *testing.T, buf, name string) (catalog.Catalog, *table.Table) {
	cat := fixture.Catalog(t)
	return cat, createPartitioned(t, cat, name, map[string]string{BufferBytesKey: buf})
}

// createPartitioned creates db.<name> of fanoutSchema partitioned by p.
func createPartitioned(t *testing.T, cat catalog.Catalog, name string, props iceberg.Properties) *table.Table {
	t.Helper()
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(fanoutSchema, true)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := partition.NewSpec(sc, fixture.PartitionFields(t, "p"))
	if err != nil {
		t.Fatal(err)
	}
	return fixture.CreateIcebergTable(t, cat, table.Identifier{"db", name}, sc, catalog.WithPartitionSpec(&spec), catalog.WithProperties(props))
}

// run mimics Writer.Write with one goroutine, exposing the batch.
func fanoutRun(t *testing.T, tbl *table.Table, maxOpen int, failCloseOf int, ps ...int64) (*batch, *failingFS, error) {
	ctx := context.Background()
	w := &Writer{Table: tbl, FilePrefix: "fanout", MaxOpenFiles: maxOpen}
	b := &batch{w: w, dests: map[string]*dest{}}
	d, err := b.newDest(ctx, "db.fanout", tbl)
	if err != nil {
		t.Fatal(err)
	}
	fs := &failingFS{WriteFileIO: d.wfs, failCloseOf: failCloseOf}
	d.wfs = fs
	b.fixed = d
	b.dests[d.name] = d
	var recs []arrow.RecordBatch
	for _, p := range ps {
		recs = append(recs, partRecord(p, 10))
	}
	err = b.writePart(ctx, 0, fixture.Part{PartName: "fanout", Records: recs})
	if err == nil {
		err = b.finish(ctx, 1)
	}
	return b, fs, err
}

// Evictions hand places over without the counter drifting, and no more
// files than write.max-open-files are ever open.
func TestEvictionKeepsCap(t *testing.T) {
	t.Parallel()
	_, tbl := fanoutTable(t)
	b, fs, err := fanoutRun(t, tbl, 2, 0, 0, 1, 2, 2, 3, 3, 4, 4, 5, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("open counter after finish = %d (want 0); peak counted = %d; max files actually open at once = %d (cap 2)",
		b.open.Load(), b.peakOpen.Load(), fs.maxOpen)
	if b.open.Load() != 0 {
		t.Errorf("open counter drifted to %d", b.open.Load())
	}
	if fs.maxOpen > 2 || b.peakOpen.Load() > 2 {
		t.Errorf("%d files open at once (peak reported %d), cap 2", fs.maxOpen, b.peakOpen.Load())
	}
}

// A failure to close an evicted file fails the write: its rows are lost.
func TestEvictionErrorFailsWrite(t *testing.T) {
	t.Parallel()
	_, tbl := fanoutTable(t)
	// Create #1 is partition 0's file, the one evicted.
	if _, _, err := fanoutRun(t, tbl, 2, 1, 0, 1, 2, 2); err == nil || !strings.Contains(err.Error(), "injected close failure") {
		t.Fatalf("write with a failed eviction: %v, want the close failure", err)
	}
}

func mixedRecord(seed, n, parts int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, fanoutSchema)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int64Builder).Append(int64((i*7 + seed) % parts))
	}
	return b.NewRecordBatch()
}

// Eight parts over 40 partitions, under every pressure: a cap of 1 to 8
// open files and a buffer from one byte (every waiting row flushed at once)
// to all of it. Every row lands in exactly one file, and nothing hangs.
func TestFanoutStress(t *testing.T) {
	t.Parallel()
	for _, buf := range []string{"1", "50000", "100000000"} {
		_, tbl := fanoutTableProps(t, buf, "s"+buf)
		for _, maxOpen := range []int{1, 3, 8} {
			var parts []ingest.Part
			var want int64
			for p := 0; p < 8; p++ {
				var recs []arrow.RecordBatch
				for r := 0; r < 15; r++ {
					rec := mixedRecord(p*31+r, 50, 40)
					want += rec.NumRows()
					recs = append(recs, rec)
				}
				parts = append(parts, fixture.Part{PartName: "p", Records: recs})
			}
			ctbl, fs := countingTable(tbl)
			w := &Writer{Table: ctbl, FilePrefix: "fanout", MaxOpenFiles: maxOpen}
			// A hang fails the run at go test's -timeout, with every
			// goroutine's stack: under -race a one-byte buffer's ~4,700
			// files take tens of seconds, too close to any fixed limit.
			res, err := w.Write(context.Background(), parts)
			if err != nil {
				t.Fatal(err)
			}
			var in int64
			for _, f := range res.Files {
				in += f.Rows
			}
			t.Logf("maxOpen %d: rows %d in files %d want %d, files %d, peak %d, peak on storage %d", maxOpen, res.Rows, in, want, len(res.Files), res.PeakOpenFiles, fs.peak())
			if in != want || res.Rows != want {
				t.Errorf("maxOpen %d: %d rows counted, %d in files, want %d", maxOpen, res.Rows, in, want)
			}
			if res.PeakOpenFiles > maxOpen {
				t.Errorf("maxOpen %d: %d files open at once", maxOpen, res.PeakOpenFiles)
			}
			if fs.peak() > maxOpen {
				t.Errorf("maxOpen %d: %d files open at once on storage", maxOpen, fs.peak())
			}
		}
	}
}

// twoFileBatch is a batch into a new table db.<name> partitioned by p, with
// at most two files open and a 100 MB buffer for waiting rows, exposed for
// the tests to drive part by part.
func twoFileBatch(t *testing.T, name string) (*batch, *dest) {
	t.Helper()
	_, tbl := fanoutTableProps(t, "100000000", name)
	w := &Writer{Table: tbl, FilePrefix: "fanout", MaxOpenFiles: 2}
	b := &batch{w: w, dests: map[string]*dest{}}
	d, err := b.newDest(context.Background(), "db."+name, tbl)
	if err != nil {
		t.Fatal(err)
	}
	b.fixed = d
	b.dests[d.name] = d
	return b, d
}

// Time-ordered input: yesterday's partition is idle, but a new partition
// never takes its place; all its rows wait in memory.
func TestIdleFileMakesRoom(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, d := twoFileBatch(t, "ev")
	var recs []arrow.RecordBatch
	for p := int64(0); p < 6; p++ {
		for r := 0; r < 2*idleRecords; r++ {
			recs = append(recs, partRecord(p, 10))
		}
	}
	if err := b.writePart(ctx, 0, fixture.Part{PartName: "fanout", Records: recs}); err != nil {
		t.Fatal(err)
	}
	waiting := 0
	for _, s := range d.slots {
		if len(s.waiting) > 0 {
			waiting++
		}
	}
	t.Logf("before finish: %d partitions with rows waiting in memory, open counter %d, buffered %d bytes", waiting, b.open.Load(), b.buffered.Load())
	if err := b.finish(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if waiting > 0 {
		t.Errorf("idle partitions 0..3 were never evicted for newer ones")
	}
}

// A partition's waiting rows hold memory of their own, not the record
// they were cut from: most rows of each record go to partition 0's open
// file and one row in 50 waits, each in a partition of its own. The
// waiting rows' buffers stay within four times what the budget counts,
// however many records they came from.
func TestWaitingRowsOwnTheirMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, d := twoFileBatch(t, "own")
	var recs []arrow.RecordBatch
	for r := 0; r < 20; r++ {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, fanoutSchema)
		for i := 0; i < 10_000; i++ {
			rb.Field(0).(*array.Int64Builder).Append(int64(i))
			p := int64(0)
			if i%50 == 0 {
				p = 1 + int64(i/50)
			}
			rb.Field(1).(*array.Int64Builder).Append(p)
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	if err := b.writePart(ctx, 0, fixture.Part{PartName: "fanout", Records: recs}); err != nil {
		t.Fatal(err)
	}
	held := map[*memory.Buffer]int64{}
	var add func(arrow.ArrayData)
	add = func(a arrow.ArrayData) {
		for _, buf := range a.Buffers() {
			if buf != nil {
				held[buf] = int64(buf.Len())
			}
		}
		for _, ch := range a.Children() {
			add(ch)
		}
	}
	var counted, heldBytes int64
	for _, s := range d.slots {
		counted += s.waitB
		for _, rec := range s.waiting {
			for _, c := range rec.Columns() {
				add(c.Data())
			}
		}
	}
	for _, n := range held {
		heldBytes += n
	}
	t.Logf("waiting rows: %d bytes counted, %d bytes of buffers held", counted, heldBytes)
	if counted == 0 {
		t.Fatal("no rows waited: the test does not exercise waiting rows")
	}
	if heldBytes > 4*counted {
		t.Errorf("waiting rows hold %d bytes of buffers for %d bytes counted", heldBytes, counted)
	}
	if err := b.finish(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

func TestNullPartitionValue(t *testing.T) {
	t.Parallel()
	_, tbl := fanoutTableProps(t, "100000000", "np")
	b := array.NewRecordBuilder(memory.DefaultAllocator, fanoutSchema)
	defer b.Release()
	for i := 0; i < 10; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%2 == 0 {
			b.Field(1).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(1).(*array.Int64Builder).Append(7)
		}
	}
	rec := b.NewRecordBatch()
	w := &Writer{Table: tbl, FilePrefix: "fanout"}
	res, err := w.Write(context.Background(), []ingest.Part{fixture.Part{PartName: "fanout", Records: []arrow.RecordBatch{rec}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[any]int64{}
	for _, f := range res.Files {
		for _, v := range f.File.Partition() {
			got[v] += f.Rows
		}
	}
	if len(got) != 2 || got[nil] != 5 || got[int64(7)] != 5 {
		t.Fatalf("rows by partition value: %v, want 5 in null and 5 in 7", got)
	}
}

// Clustered: 32 MB of rows, well within the 256 MB default budget, should be
// written one file per partition at finish.
func TestClusteredCountsSlices(t *testing.T) {
	t.Parallel()
	tbl := createPartitioned(t, fixture.Catalog(t), "cl", nil)
	var recs []arrow.RecordBatch
	var real int64
	for r := 0; r < 10; r++ {
		rec := mixedRecord(r, 200_000, 100)
		real += recordSize(rec)
		recs = append(recs, rec)
	}
	w := &Writer{Table: tbl, FilePrefix: "fanout", Clustered: true}
	res, err := w.Write(context.Background(), []ingest.Part{fixture.Part{PartName: "fanout", Records: recs}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("input %d MB, 100 partitions: %d files", real>>20, len(res.Files))
	if len(res.Files) > 100 {
		t.Errorf("%d files for 100 partitions", len(res.Files))
	}
}
