package files

import (
	"bufio"
	"bytes"
	"context"
	stdcsv "encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/arrowpool"
	"github.com/floe-io/floe/internal/avrorows"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/jsonrows"
	"github.com/floe-io/floe/internal/texttime"
	"github.com/floe-io/floe/source"
)

// filePart reads one landing file.
type filePart struct {
	entry fileEntry
	cfg   config.Source
	store store           // where the file is; nil is the local file system
	ctx   context.Context // the batch's, for an object store's requests; nil is Background
	tail  tailCache       // the end of the file, as last read (see store.open)
	table *arrow.Schema   // the destination table's columns, or nil (see Files.SetTableSchema)

	// What reading the schema learnt, kept so that asking for the schema
	// before reading (the pipeline does, to evolve the table) does not
	// infer it or parse the footer a second time.
	mu      sync.Mutex
	schema  *arrow.Schema          // what Open's reader reports
	csvCols *arrow.Schema          // CSV: the file's columns in file order
	csvSkip []span                 // CSV: the records set aside (on-bad-record: dead-letter)
	asText  []string               // JSON, Debezium: columns whose values are read as their JSON text
	footer  *metadata.FileMetaData // Parquet
	avro    *avrorows.Schema       // Avro: the writer schema and its columns
	derived int                    // schema derivations; tests hold it at one

	// deadLetters sets bad lines aside (on-bad-record: dead-letter).
	deadLetters bool
	asideMu     sync.Mutex
	aside       ingest.BadRecords
}

func (p *filePart) Name() string { return p.entry.Path }

func (p *filePart) bad(err error) error {
	if ve, ok := errors.AsType[*jsonrows.ValueError](err); ok {
		// Without source.schema, a column whose values are read as a type
		// rather than inferred has the table's type.
		ve.Table = len(p.cfg.Schema) == 0
	}
	return &source.BadFileError{Path: p.entry.Path, Err: err}
}

// Schema is the schema Open's reader reports, read from what the format
// needs (the Parquet footer, the CSV header and values, the JSON values),
// and kept for Open.
func (p *filePart) Schema(ctx context.Context) (*arrow.Schema, error) {
	if err := p.readable(); err != nil {
		return nil, err
	}
	if err := p.derive(); err != nil {
		return nil, p.fail(err)
	}
	// The file may have changed while its schema was derived.
	if err := p.unchanged(); err != nil {
		return nil, err
	}
	return p.schema, nil
}

// Open checks that the file is the one planned, then reads it in its format.
// The returned reader checks again at the end, so a file that grew or was
// rewritten while read is reported as unstable instead of ingested torn.
func (p *filePart) Open(ctx context.Context) (array.RecordReader, error) {
	return p.openRows(ctx, 1)
}

// Concurrent reports whether OpenConcurrent decodes on several
// goroutines: JSON lines do.
func (p *filePart) Concurrent() bool { return p.cfg.Format == "json" }

// OpenConcurrent is Open decoding JSON lines on n goroutines; other
// formats read as Open reads them.
func (p *filePart) OpenConcurrent(ctx context.Context, n int) (array.RecordReader, error) {
	return p.openRows(ctx, n)
}

func (p *filePart) openRows(ctx context.Context, decoders int) (array.RecordReader, error) {
	if err := p.readable(); err != nil {
		return nil, err
	}
	if rdr, ok, err := p.onePassJSON(); ok {
		if err != nil {
			return nil, p.fail(err)
		}
		return &checkedReader{RecordReader: rdr, part: p}, nil
	}
	if err := p.derive(); err != nil {
		return nil, p.fail(err)
	}
	var (
		rdr array.RecordReader
		err error
	)
	switch p.cfg.Format {
	case "parquet":
		rdr, err = p.openParquet(ctx)
	case "csv":
		rdr, err = p.openCSV()
	case "json":
		rdr, err = p.openJSON(decoders)
	case "debezium-json":
		rdr, err = p.openDebezium()
	case "avro":
		rdr, err = p.openAvro()
	default:
		err = fmt.Errorf("format %q is not supported", p.cfg.Format)
	}
	if err != nil {
		return nil, p.fail(err)
	}
	return &checkedReader{RecordReader: rdr, part: p}, nil
}

// readable checks that the file is the one planned, not empty, and can be
// opened.
func (p *filePart) readable() error {
	if err := p.unchanged(); err != nil {
		return err
	}
	if p.entry.Size == 0 {
		return p.bad(errors.New("the file is empty (0 bytes); remove it or replace it with a complete file"))
	}
	// Say plainly that the file cannot be opened, rather than letting each
	// format's reader call it corrupt.
	f, err := p.open()
	if err != nil {
		return p.bad(fmt.Errorf("cannot read the file: %w", err))
	}
	_ = f.Close()
	return nil
}

// where is the store the file is in.
func (p *filePart) where() (context.Context, store) {
	ctx, st := p.ctx, p.store
	if ctx == nil {
		ctx = context.Background()
	}
	if st == nil {
		st = localStore{}
	}
	return ctx, st
}

// open opens the file as planned.
func (p *filePart) open() (object, error) {
	ctx, st := p.where()
	return st.open(ctx, p.entry, &p.tail)
}

// text opens a text file through its codec (see openText).
func (p *filePart) text() (*bufio.Reader, io.Closer, error) {
	f, err := p.open()
	if err != nil {
		return nil, nil, err
	}
	return openText(f, p.codec())
}

// textSize is the bytes of the file's text when they are the file's own
// (no compression), else 0: how much a reader will read, for sizing its
// columns.
func (p *filePart) textSize() int64 {
	if p.codec() != "" {
		return 0
	}
	return p.SizeBytes()
}

// fail reports a failure to read the file: as unstable when the file
// changed since it was planned, else as a bad file.
func (p *filePart) fail(err error) error {
	if cerr := p.unchanged(); cerr != nil {
		return cerr
	}
	var (
		bf *source.BadFileError
		ue *source.UnstableFileError
		sf *storeFailure
	)
	if errors.As(err, &ue) {
		return ue // a read found the object replaced (see store.pinned)
	}
	if errors.As(err, &sf) {
		return fmt.Errorf("%w; the object store failed to serve it, not the file: the batch is tried again", sf)
	}
	if f := p.tail.storeFailed(); f != nil {
		return fmt.Errorf("%w; the object store failed to serve it, not the file: the batch is tried again", f)
	}
	if errors.As(err, &bf) {
		return err
	}
	return p.bad(err)
}

// derive works out the schema once per part.
func (p *filePart) derive() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.schema != nil {
		return nil
	}
	p.derived++
	switch p.cfg.Format {
	case "parquet":
		return p.deriveParquet()
	case "csv":
		return p.deriveCSV()
	case "json":
		return p.deriveJSON()
	case "debezium-json":
		return p.deriveDebezium()
	case "avro":
		return p.deriveAvro()
	}
	return fmt.Errorf("format %q is not supported", p.cfg.Format)
}

// parquetProps are the read properties of every Parquet reader: the schema
// depends on them.
var parquetProps = pqarrow.ArrowReadProperties{BatchSize: jsonrows.BatchRows}

func (p *filePart) deriveParquet() error {
	f, err := p.open()
	if err != nil {
		return fmt.Errorf("cannot read the file: %w", err)
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("not a readable Parquet file (%v); it may be truncated or corrupt", err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, parquetProps, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("cannot read the Parquet schema: %w", err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("cannot read the Parquet schema: %w", err)
	}
	p.schema, p.footer = schema, pf.MetaData()
	return nil
}

func (p *filePart) deriveCSV() error {
	delim, header := p.csvDialect()
	out, err := jsonrows.Explicit(p.cfg.Schema)
	if err != nil {
		return err
	}
	// cols is the file's columns in file order; out is what the reader
	// returns.
	cols, explicit := out, out != nil
	switch {
	case out == nil && p.deadLetters:
		inferred := csvColumns{header: header}
		if p.csvSkip, err = p.scanCSV(delim, header, nil, inferred.observe); err != nil {
			return err
		}
		if cols, err = inferred.schema(); err != nil {
			return err
		}
		typed := tableTyped(cols, p.table)
		if !typed.Equal(cols) {
			// The table's types may not read every value inferred otherwise.
			if p.csvSkip, err = p.scanCSV(delim, header, typed, nil); err != nil {
				return err
			}
		}
		cols, out = typed, typed
	case out == nil:
		if cols, err = inferCSV(p.text, delim, header); err != nil {
			return err
		}
		cols, _ = jsonrows.AsTable(cols, p.table, false)
		out = cols
	case header:
		if cols, err = csvHeaderSchema(p.text, delim, out); err != nil {
			return err
		}
	}
	if p.deadLetters && explicit {
		if p.csvSkip, err = p.scanCSV(delim, header, cols, nil); err != nil {
			return err
		}
	}
	p.schema, p.csvCols = out, cols
	return nil
}

func (p *filePart) deriveJSON() error {
	schema, err := jsonrows.Explicit(p.cfg.Schema)
	if err != nil {
		return err
	}
	if schema == nil {
		if schema, err = inferJSON(p.text, jsonrows.Variants(p.table), p.lineAside()); err != nil {
			return err
		}
		schema, p.asText = jsonrows.AsTable(schema, p.table, true)
	}
	p.schema = schema
	return nil
}

// unchanged compares the file with what planning saw.
func (p *filePart) unchanged() error {
	ctx, st := p.where()
	if st.pinned() && p.entry.ETag != "" {
		return nil
	}
	now, err := st.stat(ctx, p.entry.Path)
	if err != nil {
		return p.bad(fmt.Errorf("cannot read the file: %w", err))
	}
	if !sameVersion(p.entry, now) {
		reason := fmt.Sprintf("size %d -> %d since it was listed", p.entry.Size, now.Size)
		if now.Size == p.entry.Size {
			reason = "replaced since it was listed"
		}
		return &source.UnstableFileError{Path: p.entry.Path, Reason: reason}
	}
	return nil
}

// readPool holds the records read from Parquet files. The writers release
// each record once encoded and keep no part of it (a partition value is
// copied out), so its buffers serve the next record: the Go heap's
// allocation and collection of them were a tenth of a re-encoding
// ingest's CPU.
var readPool = arrowpool.New()

// openParquet reads the file with the footer derive parsed.
func (p *filePart) openParquet(ctx context.Context) (array.RecordReader, error) {
	f, err := p.open()
	if err != nil {
		return nil, fmt.Errorf("cannot read the file: %w", err)
	}
	pf, err := file.NewParquetReader(f, file.WithMetadata(p.footer))
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("not a readable Parquet file (%v); it may be truncated or corrupt", err)
	}
	fr, err := pqarrow.NewFileReader(pf, parquetProps, readPool)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("cannot read the Parquet schema: %w", err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("cannot read the Parquet data: %w", err)
	}
	return &closingReader{RecordReader: rr, close: pf.Close}, nil
}

// parquetPart is a file read as Parquet, whose column chunks a writer may
// copy.
type parquetPart struct{ *filePart }

// OpenParquet opens the file for a writer that copies its column chunks.
func (p *parquetPart) OpenParquet(ctx context.Context) (ingest.ParquetFile, error) {
	if _, err := p.Schema(ctx); err != nil {
		return nil, err
	}
	f, err := p.open()
	if err != nil {
		return nil, p.bad(fmt.Errorf("cannot read the file: %w", err))
	}
	return &parquetFile{object: f, part: p.filePart}, nil
}

// parquetFile is an open Parquet part.
type parquetFile struct {
	object
	part *filePart
}

func (f *parquetFile) Size() int64                    { return f.part.entry.Size }
func (f *parquetFile) Footer() *metadata.FileMetaData { return f.part.footer }

func (f *parquetFile) Close() error {
	err := f.object.Close()
	if cerr := f.part.unchanged(); cerr != nil {
		return cerr
	}
	return err
}

// csvDialect is the delimiter and whether the first line is a header.
func (p *filePart) csvDialect() (delim rune, header bool) {
	delim = ','
	if d := p.cfg.CSV.Delimiter; d != "" {
		delim = []rune(d)[0]
	}
	return delim, p.cfg.CSV.Header == nil || *p.cfg.CSV.Header
}

// openCSV reads the file with the columns derive found.
func (p *filePart) openCSV() (array.RecordReader, error) {
	delim, header := p.csvDialect()
	br, f, err := p.text()
	if err != nil {
		return nil, err
	}
	var text io.Reader = br
	if len(p.csvSkip) > 0 {
		text = &skipSpans{r: br, spans: p.csvSkip}
	}
	var r array.RecordReader
	if schema := csvValuesSchema(p.csvCols); schema != nil {
		r = newCSVValues(text, p.textSize(), schema, delim, header)
	} else {
		r = csv.NewReader(text, csvReadSchema(p.csvCols),
			csv.WithHeader(header), csv.WithComma(delim), csv.WithChunk(jsonrows.BatchRows),
			csv.WithNullReader(true, ""))
	}
	return &closingReader{RecordReader: newCSVConvReader(r, p.csvCols, p.schema), close: f.Close}, nil
}

// csvHeaderSchema matches the header of a file to an explicit schema by
// name: arrow's CSV reader would take the types by position and the names
// from the header, so a file listing the columns in another order than
// source.schema would get the wrong types. It returns the schema's fields
// in file order.
func csvHeaderSchema(text textOpener, delim rune, schema *arrow.Schema) (*arrow.Schema, error) {
	br, f, err := text()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := stdcsv.NewReader(br)
	r.Comma = delim
	names, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("the CSV file has no header row")
	}
	if err != nil {
		return nil, fmt.Errorf("malformed CSV header: %w", err)
	}
	fields := make([]arrow.Field, len(names))
	used := make([]bool, schema.NumFields())
	for j, n := range names {
		n = strings.TrimSpace(n)
		i := jsonrows.FieldIndex(schema, n)
		if i < 0 {
			return nil, fmt.Errorf("column %q of the header is not in source.schema; add it to the schema or remove it from the file", n)
		}
		if used[i] {
			return nil, fmt.Errorf("the header names column %q twice", n)
		}
		used[i] = true
		fields[j] = schema.Field(i)
	}
	for i, u := range used {
		if f := schema.Field(i); !u && !f.Nullable {
			return nil, fmt.Errorf("required column %q of source.schema is missing from the header", f.Name)
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

// csvReadSchema replaces time and null columns, which arrow's CSV reader
// cannot read (it panics on them), and timestamp and date columns, which
// it reads through time.Parse, by string columns.
func csvReadSchema(schema *arrow.Schema) *arrow.Schema {
	fields := schema.Fields()
	for i, f := range fields {
		switch f.Type.ID() {
		case arrow.TIME32, arrow.TIME64, arrow.NULL, arrow.TIMESTAMP, arrow.DATE32:
			fields[i].Type = arrow.BinaryTypes.String
		}
	}
	return arrow.NewSchema(fields, nil)
}

// csvConvReader turns the records of arrow's CSV reader, whose columns are
// in file order, named after the header and typed by csvReadSchema, into
// records of the out schema: columns in its order, with its names, the
// string columns of time and null columns converted, and columns the file
// lacks all null.
type csvConvReader struct {
	array.RecordReader
	file *arrow.Schema // the file's columns, with the types they must have
	out  *arrow.Schema
	idx  []int // for each out column, the file column or -1
	cur  arrow.RecordBatch
	rows int64
	err  error
}

func newCSVConvReader(r array.RecordReader, file, out *arrow.Schema) *csvConvReader {
	idx := make([]int, out.NumFields())
	for i, f := range out.Fields() {
		idx[i] = jsonrows.FieldIndex(file, f.Name)
	}
	return &csvConvReader{RecordReader: r, file: file, out: out, idx: idx}
}

func (r *csvConvReader) Schema() *arrow.Schema          { return r.out }
func (r *csvConvReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *csvConvReader) Record() arrow.RecordBatch      { return r.cur }

func (r *csvConvReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.RecordReader.Err()
}

func (r *csvConvReader) Release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.RecordReader.Release()
}

func (r *csvConvReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || !r.RecordReader.Next() {
		return false
	}
	rec := r.RecordReader.RecordBatch()
	n := rec.NumRows()
	cols := make([]arrow.Array, r.out.NumFields())
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	for i, f := range r.out.Fields() {
		j := r.idx[i]
		switch {
		case j < 0:
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, int(n))
		case rec.Column(j).DataType().ID() == arrow.STRING && r.file.Field(j).Type.ID() != arrow.STRING:
			arr, err := fromStrings(rec.Column(j).(*array.String), r.file.Field(j).Type, f.Name, r.rows)
			if err != nil {
				release()
				r.err = err
				return false
			}
			cols[i] = arr
		default:
			cols[i] = rec.Column(j)
			cols[i].Retain()
		}
	}
	r.cur = array.NewRecordBatch(r.out, cols, n)
	release()
	r.rows += n
	return true
}

// fromStrings converts HH:MM:SS[.fffffffff] strings into a time array,
// timestamps and dates as arrow's CSV reader reads them, and empty values
// into a null array; name and firstRow name the column and number the
// rows in errors.
func fromStrings(in *array.String, dt arrow.DataType, name string, firstRow int64) (arrow.Array, error) {
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	b.Reserve(in.Len())
	for j := 0; j < in.Len(); j++ {
		if in.IsNull(j) {
			b.AppendNull()
			continue
		}
		v := in.Value(j)
		var err error
		switch t := dt.(type) {
		case *arrow.Time64Type:
			var tm arrow.Time64
			if tm, err = arrow.Time64FromString(v, t.Unit); err == nil {
				b.(*array.Time64Builder).Append(tm)
			}
		case *arrow.Time32Type:
			var tm arrow.Time32
			if tm, err = arrow.Time32FromString(v, t.Unit); err == nil {
				b.(*array.Time32Builder).Append(tm)
			}
		case *arrow.TimestampType:
			var ts arrow.Timestamp
			if ts, err = csvTimestamp(v, t); err != nil {
				return nil, fmt.Errorf("row %d: %w", firstRow+int64(j)+1, &jsonrows.ValueError{Column: name, Value: strconv.Quote(v), Type: t, Err: err})
			}
			b.(*array.TimestampBuilder).Append(ts)
		case *arrow.Date32Type:
			var d arrow.Date32
			if d, err = texttime.Date(v); err != nil {
				return nil, fmt.Errorf("column %q: row %d: %q is not a date (YYYY-MM-DD): %w", name, firstRow+int64(j)+1, v, err)
			}
			b.(*array.Date32Builder).Append(d)
		case *arrow.NullType:
			return nil, fmt.Errorf("column %q: row %d holds %q where the column was found empty", name, firstRow+int64(j)+1, v)
		}
		if err != nil {
			return nil, fmt.Errorf("column %q: row %d: %q is not a time of day (HH:MM:SS[.ffffff]): %w", name, firstRow+int64(j)+1, v, err)
		}
	}
	return b.NewArray(), nil
}

// openJSON reads the file with the schema derive found, decoding on the
// given number of goroutines.
func (p *filePart) openJSON(decoders int) (array.RecordReader, error) {
	br, f, err := p.text()
	if err != nil {
		return nil, err
	}
	r := jsonrows.NewReader(br, f, p.schema, p.asText, nil)
	r.SizeHint(p.textSize())
	if aside := p.lineAside(); aside != nil {
		r.SetAside(aside, p.lineSetAside)
	}
	r.Parallel(decoders)
	return r, nil
}

// utf8BOM is the byte order mark that Excel's "CSV UTF-8" and some other
// Windows tools put at the start of a UTF-8 file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// skipBOM drops a byte order mark at the start of a file: it is no part of
// the first column's name or the first line's JSON.
func skipBOM(br *bufio.Reader) {
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
}

// checkedReader turns read errors into BadFileErrors naming the file, and
// re-checks the file when it has been read to the end.
type checkedReader struct {
	array.RecordReader
	part *filePart
	err  error
}

func (r *checkedReader) Next() bool {
	if r.err != nil {
		return false
	}
	if r.RecordReader.Next() {
		return true
	}
	if err := r.RecordReader.Err(); err != nil && !errors.Is(err, io.EOF) {
		if cerr := r.part.unchanged(); cerr != nil {
			r.err = cerr
		} else {
			var bf *source.BadFileError
			if errors.As(err, &bf) {
				r.err = err
			} else {
				r.err = r.part.bad(err)
			}
		}
		return false
	}
	r.err = r.part.unchanged()
	return false
}

func (r *checkedReader) Err() error { return r.err }

// closingReader closes the underlying file when the reader is released.
type closingReader struct {
	array.RecordReader
	close func() error
	done  bool
}

func (r *closingReader) Release() {
	r.RecordReader.Release()
	if !r.done {
		r.done = true
		_ = r.close()
	}
}
