package bench

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/pqgo"
	"github.com/floe-io/floe/maintenance"
)

// Writer settings floe uses for a table with default properties
// (writer.go, encoder_parquetgo.go), which the raw contenders copy: files
// roll at the target size; parquet-go row groups are cut at 1M rows or at
// 128 MiB or a quarter of the target, whichever comes first, arrow-go ones
// at 128 MiB; zstd at level 1.
const (
	compactionTarget    = table.WriteTargetFileSizeBytesDefault // 512 MiB
	compactionRowGroup  = 128 << 20
	compactionGroupRows = 1 << 20
	compactionZstd      = 1
)

// CompactionFixture is a table of many small files, one per snapshot as a
// stream leaves them, kept as two pristine copies, so that every
// compaction starts from the same files: as streamed (one manifest per
// snapshot), and with its manifests merged by maintenance.RewriteManifests,
// as the maintenance scheduler, which runs that task first, leaves it.
type CompactionFixture struct {
	Dataset   Dataset
	Warehouse string
	streamed  string
	merged    string
	// Manifests is the streamed table's manifest count, MergedManifests
	// the merged one's.
	Manifests, MergedManifests int
	// Files are the table's data files (local paths) and Bytes their
	// total size: the input of every contender.
	Files []string
	Bytes int64
	// Rows and Sum are counted from Files: every contender's output must
	// hold the same rows.
	Rows int64
	Sum  uint64
}

// NewCompactionFixture ingests ds under work one file per snapshot and
// keeps the two copies of the warehouse.
func NewCompactionFixture(ctx context.Context, ds Dataset, work string) (*CompactionFixture, error) {
	wh, err := SnapshotTable(ctx, ds, work)
	if err != nil {
		return nil, err
	}
	fx := &CompactionFixture{Dataset: ds, Warehouse: wh, streamed: filepath.Join(work, "streamed"), merged: filepath.Join(work, "merged")}
	if err := os.CopyFS(fx.streamed, os.DirFS(wh)); err != nil {
		return nil, fmt.Errorf("keep the warehouse: %w", err)
	}
	cat, err := floe.OpenCatalog(ctx, compactionCatalog(wh))
	if err != nil {
		return nil, err
	}
	tbl, err := cat.LoadTable(ctx, benchTable)
	if err == nil {
		err = fx.listFiles(ctx, tbl)
	}
	var mr maintenance.ManifestsResult
	if err == nil {
		mr, err = maintenance.RewriteManifests(ctx, cat, benchTable, 0)
	}
	closeCatalog(cat)
	if err != nil {
		return nil, err
	}
	fx.Manifests, fx.MergedManifests = mr.ManifestsBefore, mr.ManifestsAfter
	if err := os.CopyFS(fx.merged, os.DirFS(wh)); err != nil {
		return nil, fmt.Errorf("keep the warehouse: %w", err)
	}
	if fx.Rows, fx.Sum, err = checksumFiles(ctx, fx.Files); err != nil {
		return nil, err
	}
	if fx.Rows != ds.Rows() || len(fx.Files) != ds.Files {
		return nil, fmt.Errorf("compaction table holds %d rows in %d files, want %d in %d", fx.Rows, len(fx.Files), ds.Rows(), ds.Files)
	}
	return fx, nil
}

func (fx *CompactionFixture) listFiles(ctx context.Context, tbl *table.Table) error {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		p, err := localPath(t.File.FilePath())
		if err != nil {
			return err
		}
		fx.Files = append(fx.Files, p)
		fx.Bytes += t.File.FileSizeBytes()
	}
	return nil
}

// Restore puts the warehouse back as it was before any compaction: as
// streamed, or with its manifests merged.
func (fx *CompactionFixture) Restore(merged bool) error {
	if err := os.RemoveAll(fx.Warehouse); err != nil {
		return err
	}
	from := fx.streamed
	if merged {
		from = fx.merged
	}
	return os.CopyFS(fx.Warehouse, os.DirFS(from))
}

// Check verifies that a result's output files hold exactly the input's
// rows: the same count and the same order-independent checksum.
func (fx *CompactionFixture) Check(ctx context.Context, r CompactionResult) error {
	rows, sum, err := checksumFiles(ctx, r.outputs)
	if err != nil {
		return fmt.Errorf("%s: %w", r.Contender, err)
	}
	if rows != fx.Rows || sum != fx.Sum || r.Rows != fx.Rows {
		return fmt.Errorf("%s: output holds %d rows (reported %d), checksum %x; want %d rows, checksum %x", r.Contender, rows, r.Rows, sum, fx.Rows, fx.Sum)
	}
	if r.InputFiles != len(fx.Files) || r.InputBytes != fx.Bytes {
		return fmt.Errorf("%s: read %d files of %d bytes, want %d of %d", r.Contender, r.InputFiles, r.InputBytes, len(fx.Files), fx.Bytes)
	}
	return nil
}

func compactionCatalog(warehouse string) config.Catalog {
	cfg := &config.Pipeline{}
	cfg.SetDefaults()
	cfg.Catalog.Warehouse = warehouse
	return cfg.Catalog
}

// localPath is the file behind a local warehouse's location.
func localPath(loc string) (string, error) {
	if !strings.Contains(loc, "://") {
		return loc, nil
	}
	u, err := url.Parse(loc)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("data file %s is not a local file", loc)
	}
	return u.Path, nil
}

// CompactionResult is one contender's compaction of the fixture's files.
type CompactionResult struct {
	Contender   string
	InputFiles  int
	InputBytes  int64
	OutputFiles int
	OutputBytes int64
	Rows        int64
	Cost
	outputs []string
}

// MBPerSec is input megabytes (10^6 bytes) compacted per second of wall.
func (r CompactionResult) MBPerSec() float64 { return float64(r.InputBytes) / 1e6 / r.Wall.Seconds() }

// MBPerCPUSec is input megabytes compacted per CPU-second.
func (r CompactionResult) MBPerCPUSec() float64 { return float64(r.InputBytes) / 1e6 / r.CPU.Seconds() }

// CompactionContender is one way of compacting the fixture's files; out
// is a fresh directory for contenders that write outside the table.
// MergedManifests starts it from the table with merged manifests.
type CompactionContender struct {
	Name            string
	Run             func(ctx context.Context, fx *CompactionFixture, out string) (CompactionResult, error)
	MergedManifests bool
}

// CompactionContenders are measured side by side by BenchmarkCompaction.
var CompactionContenders = []CompactionContender{
	{Name: "floe", Run: FloeCompact},
	{Name: "floe-merged-manifests", Run: FloeCompact, MergedManifests: true},
	{Name: "parquet-go", Run: ParquetGoCompact},
	{Name: "arrow-go", Run: ArrowCompact},
}

// FloeCompact runs maintenance.RewriteDataFiles (binpack, the table's
// default target size) on the whole table and reads the result from the
// snapshot it committed. Opening the catalog is not timed.
func FloeCompact(ctx context.Context, fx *CompactionFixture, _ string) (CompactionResult, error) {
	var res CompactionResult
	cat, err := floe.OpenCatalog(ctx, compactionCatalog(fx.Warehouse))
	if err != nil {
		return res, err
	}
	defer closeCatalog(cat)
	var rw maintenance.RewriteResult
	res.Cost, err = timed(ctx, func() (err error) {
		rw, err = maintenance.RewriteDataFiles(ctx, cat, benchTable, maintenance.RewriteOptions{})
		return err
	})
	if err != nil {
		return res, fmt.Errorf("floe: %w", err)
	}
	res.InputFiles, res.InputBytes = rw.RewrittenDataFiles, rw.RewrittenBytes
	tbl, err := cat.LoadTable(ctx, benchTable)
	if err != nil {
		return res, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return res, err
	}
	manifests, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		return res, err
	}
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return res, err
		}
		for _, e := range entries {
			p, err := localPath(e.DataFile().FilePath())
			if err != nil {
				return res, err
			}
			res.outputs = append(res.outputs, p)
			res.Rows += e.DataFile().Count()
			res.OutputBytes += e.DataFile().FileSizeBytes()
		}
	}
	res.OutputFiles = len(res.outputs)
	if res.OutputFiles != rw.AddedDataFiles || res.OutputBytes != rw.AddedBytes {
		return res, fmt.Errorf("floe: table holds %d files of %d bytes, rewrite reported %d of %d", res.OutputFiles, res.OutputBytes, rw.AddedDataFiles, rw.AddedBytes)
	}
	return res, nil
}

// timed measures f, labelled for pprof with the contender ctx names
// (WithContender), so that a profile narrowed to the label holds the
// measured runs and nothing around them: the goroutines f starts inherit
// the label, and the caller's goroutine loses it when f returns.
func timed(ctx context.Context, f func() error) (Cost, error) {
	name, ok := ctx.Value(contenderKey{}).(string)
	if !ok {
		return measure(f)
	}
	var cost Cost
	var err error
	pprof.Do(ctx, pprof.Labels("contender", name), func(context.Context) { cost, err = measure(f) })
	return cost, err
}

type contenderKey struct{}

// WithContender names the contender whose measured runs made with ctx
// carry the pprof label contender=<name> (go tool pprof -tagfocus).
func WithContender(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, contenderKey{}, name)
}

// rolling writes numbered output files under a directory and reports
// what it wrote.
type rolling struct {
	dir string
	res *CompactionResult
	f   *os.File
	n   int64
}

func (r *rolling) Write(p []byte) (int, error) {
	n, err := r.f.Write(p)
	r.n += int64(n)
	return n, err
}

func (r *rolling) next() error {
	path := filepath.Join(r.dir, fmt.Sprintf("part-%05d.parquet", len(r.res.outputs)))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	r.f, r.n = f, 0
	r.res.outputs = append(r.res.outputs, path)
	return nil
}

// Close closes the current file; its encoder has written the footer.
func (r *rolling) Close() error {
	r.res.OutputFiles++
	r.res.OutputBytes += r.n
	return r.f.Close()
}

// ParquetGoCompact reads the fixture's files with parquet-go, column by
// column, page by page, and writes their values into new files with the
// settings of floe's parquet-go encoder (same schema and field ids,
// dictionary on the columns the input has one on, floe's zstd settings,
// row groups and files cut at the same sizes). No Iceberg at all.
func ParquetGoCompact(ctx context.Context, fx *CompactionFixture, out string) (CompactionResult, error) {
	res := CompactionResult{Contender: "parquet-go"}
	cost, err := timed(ctx, func() error {
		codec, err := pqgo.NewZstd(compactionZstd)
		if err != nil {
			return err
		}
		w := &rolling{dir: out, res: &res}
		var pw *pq.GenericWriter[any]
		var buf []pq.Value
		var pending, groupRows int64
		for _, path := range fx.Files {
			if err := ctx.Err(); err != nil {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			st, err := f.Stat()
			if err != nil {
				_ = f.Close()
				return err
			}
			pf, err := pq.OpenFile(f, st.Size(), pq.SkipPageIndex(true), pq.SkipBloomFilters(true))
			if err != nil {
				_ = f.Close()
				return fmt.Errorf("open %s: %w", path, err)
			}
			if pw == nil {
				if err := w.next(); err != nil {
					_ = f.Close()
					return err
				}
				pw = pq.NewGenericWriter[any](w, rawSchema(pf.Root(), codec), pq.Compression(codec),
					pq.CreatedBy("floe-bench", "", ""), pq.PageBufferSize(1<<20),
					pq.MaxRowsPerRowGroup(2*compactionGroupRows), pq.DataPageStatistics(false))
			}
			writers := pw.ColumnWriters()
			for i, rg := range pf.RowGroups() {
				for c, chunk := range rg.ColumnChunks() {
					if buf, err = copyColumn(writers[c], chunk, buf); err != nil {
						_ = f.Close()
						return fmt.Errorf("%s column %d: %w", path, c, err)
					}
				}
				groupRows += rg.NumRows()
				pending += pf.Metadata().RowGroups[i].TotalCompressedSize
			}
			res.InputFiles++
			res.InputBytes += st.Size()
			res.Rows += pf.NumRows()
			if err := f.Close(); err != nil {
				return err
			}
			// The input's compressed size stands for the output's: the
			// same values in the same codec.
			if groupRows >= compactionGroupRows || pending >= min(compactionRowGroup, compactionTarget/4) {
				if err := pw.Flush(); err != nil {
					return err
				}
				pending, groupRows = 0, 0
			}
			if w.n+pending >= compactionTarget {
				if err := pw.Close(); err != nil {
					return err
				}
				if err := w.Close(); err != nil {
					return err
				}
				pw, pending, groupRows = nil, 0, 0
			}
		}
		if pw == nil {
			return nil
		}
		if err := pw.Close(); err != nil {
			return err
		}
		return w.Close()
	})
	res.Cost = cost
	if err != nil {
		return res, fmt.Errorf("parquet-go: %w", err)
	}
	return res, nil
}

// copyColumn decodes a column chunk's pages and writes their values.
func copyColumn(w *pq.ColumnWriter, chunk pq.ColumnChunk, buf []pq.Value) ([]pq.Value, error) {
	if cap(buf) == 0 {
		buf = make([]pq.Value, 4096)
	}
	buf = buf[:cap(buf)]
	pages := chunk.Pages()
	defer pages.Close()
	for {
		page, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		values := page.Values()
		for {
			n, err := values.ReadValues(buf)
			if n > 0 {
				if _, werr := w.WriteRowValues(buf[:n]); werr != nil {
					pq.Release(page)
					return buf, werr
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pq.Release(page)
				return buf, err
			}
		}
		pq.Release(page)
	}
}

// rawSchema is the input file's schema in its column order, with its
// field ids and dictionaries, encoded and compressed column by column as
// floe's parquet-go encoder does: plain byte arrays where no dictionary,
// a zstd codec per column.
func rawSchema(root *pq.Column, codec *pqgo.ZstdCodec) *pq.Schema {
	cols := root.Columns()
	fields := make(pqgo.Group, len(cols))
	for i, c := range cols {
		node := pq.Leaf(c.Type())
		width := pqgo.PlainWidth(c.Type().Kind())
		if e := c.Encoding(); e != nil && (e.Encoding() == format.RLEDictionary || e.Encoding() == format.PlainDictionary) {
			node, width = pq.Encoded(node, &pq.RLEDictionary), 0
		} else if c.Type().Kind() == pq.ByteArray {
			node = pq.Encoded(node, &pq.Plain)
		}
		node = pq.Compressed(node, codec.Column(width))
		if c.Optional() {
			node = pq.Optional(node)
		} else {
			node = pq.Required(node)
		}
		fields[i] = pqgo.Field(pq.FieldID(node, c.ID()), c.Name())
	}
	return pq.NewSchema(root.Name(), fields)
}

// ArrowCompact reads the fixture's files with arrow-go's pqarrow into
// Arrow records, as floe's file reader does, and writes them with pqarrow
// and the writer properties of floe's arrow-go encoder (zstd level 1,
// statistics, dictionaries on string columns only), row groups and files
// cut at the same sizes. No Iceberg at all.
func ArrowCompact(ctx context.Context, fx *CompactionFixture, out string) (CompactionResult, error) {
	res := CompactionResult{Contender: "arrow-go"}
	cost, err := timed(ctx, func() error {
		w := &rolling{dir: out, res: &res}
		var fw *pqarrow.FileWriter
		for _, path := range fx.Files {
			rdr, err := openParquet(ctx, path)
			if err != nil {
				return err
			}
			if fw == nil {
				if err := w.next(); err != nil {
					rdr.Release()
					return err
				}
				if fw, err = pqarrow.NewFileWriter(rdr.Schema(), w, arrowProps(rdr.Schema()), pqarrow.DefaultWriterProps()); err != nil {
					rdr.Release()
					return err
				}
			}
			for rdr.Next() {
				rec := rdr.RecordBatch()
				res.Rows += rec.NumRows()
				if err := fw.WriteBuffered(rec); err != nil {
					rdr.Release()
					return err
				}
				if fw.RowGroupTotalCompressedBytes() >= compactionRowGroup {
					if err := fw.NewBufferedRowGroupChecked(); err != nil {
						rdr.Release()
						return err
					}
				}
			}
			err = rdr.Err()
			rdr.Release()
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read %s: %w", path, err)
			}
			st, err := os.Stat(path)
			if err != nil {
				return err
			}
			res.InputFiles++
			res.InputBytes += st.Size()
			if fw.TotalCompressedBytes()+fw.RowGroupTotalCompressedBytes() >= compactionTarget {
				// Close writes the footer and closes w.
				if err := fw.Close(); err != nil {
					return err
				}
				fw = nil
			}
		}
		if fw == nil {
			return nil
		}
		return fw.Close()
	})
	res.Cost = cost
	if err != nil {
		return res, fmt.Errorf("arrow-go: %w", err)
	}
	return res, nil
}

// arrowProps are floe's arrow-go writer properties for a table with
// default properties (writer.go newFileOptions).
func arrowProps(s *arrow.Schema) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(compactionZstd),
		parquet.WithStats(true),
		parquet.WithCreatedBy("floe-bench"),
		parquet.WithDictionaryDefault(false),
	}
	for _, f := range s.Fields() {
		if f.Type.ID() == arrow.STRING || f.Type.ID() == arrow.BINARY {
			opts = append(opts, parquet.WithDictionaryFor(f.Name, true))
		}
	}
	return parquet.NewWriterProperties(opts...)
}

// checksumSeed is fixed for the process: checksums are compared within
// one run only.
var checksumSeed = maphash.MakeSeed()

// checksumFiles counts the rows of Parquet files and sums a hash of each
// row, so that two sets of files compare equal whatever the order of
// their rows and files.
func checksumFiles(ctx context.Context, paths []string) (int64, uint64, error) {
	var rows int64
	var sum uint64
	for _, p := range paths {
		rdr, err := openParquet(ctx, p)
		if err != nil {
			return 0, 0, err
		}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			hs, err := rowHashes(rec)
			if err != nil {
				rdr.Release()
				return 0, 0, fmt.Errorf("%s: %w", p, err)
			}
			for _, h := range hs {
				sum += h
			}
			rows += rec.NumRows()
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, fmt.Errorf("read %s: %w", p, err)
		}
	}
	return rows, sum, nil
}

// rowHashes hashes every row of rec over all its columns, by name.
func rowHashes(rec arrow.RecordBatch) ([]uint64, error) {
	n := int(rec.NumRows())
	hs := make([]uint64, n)
	var h maphash.Hash
	h.SetSeed(checksumSeed)
	for c, col := range rec.Columns() {
		name := rec.ColumnName(c)
		for i := range n {
			h.Reset()
			h.WriteString(name)
			if col.IsNull(i) {
				h.WriteByte(0)
			} else {
				h.WriteByte(1)
				switch a := col.(type) {
				case *array.Int64:
					writeUint64(&h, uint64(a.Value(i)))
				case *array.Int32:
					writeUint64(&h, uint64(a.Value(i)))
				case *array.Timestamp:
					writeUint64(&h, uint64(a.Value(i)))
				case *array.Float64:
					writeUint64(&h, math.Float64bits(a.Value(i)))
				case *array.String:
					h.WriteString(a.Value(i))
				default:
					return nil, fmt.Errorf("column %s: type %s is not checksummed", name, col.DataType())
				}
			}
			hs[i] = hs[i]*31 + h.Sum64()
		}
	}
	return hs, nil
}

func writeUint64(h *maphash.Hash, v uint64) {
	var b [8]byte
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	_, _ = h.Write(b[:])
}
