package files

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/avro/ocf"

	"github.com/floe-io/floe/internal/avrorows"
	"github.com/floe-io/floe/internal/jsonrows"
)

// openOCF opens an Avro object container file, its records decoded with
// the options avrorows maps them with.
func (p *filePart) openOCF() (*ocf.Reader, object, error) {
	f, err := p.open()
	if err != nil {
		return nil, nil, err
	}
	rd, err := ocf.NewReader(bufio.NewReaderSize(f, 1<<20), ocf.WithSchemaOpts(avrorows.SchemaOpts()...))
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("not a readable Avro container file (%v); it may be truncated, or not Avro (Kafka Connect's S3 sink writes *.avro container files)", err)
	}
	return rd, f, nil
}

// deriveAvro reads the file's header: the writer schema, mapped onto
// Arrow as the Kafka source maps a registry's schemas.
func (p *filePart) deriveAvro() error {
	rd, f, err := p.openOCF()
	if err != nil {
		return err
	}
	defer f.Close()
	defer rd.Close()
	s, err := avrorows.Parse(string(rd.Metadata()["avro.schema"]))
	if err != nil {
		return err
	}
	p.avro, p.schema = s, s.Arrow()
	return nil
}

// openAvro reads the file's records in batches of jsonrows.BatchRows.
func (p *filePart) openAvro() (array.RecordReader, error) {
	rd, f, err := p.openOCF()
	if err != nil {
		return nil, err
	}
	r := &avroFileReader{rd: rd, f: f, schema: p.avro}
	r.refs.Add(1)
	return r, nil
}

// avroFileReader builds records from a container file's records.
type avroFileReader struct {
	rd     *ocf.Reader
	f      object
	schema *avrorows.Schema
	rows   int64
	cur    arrow.RecordBatch
	err    error
	done   bool
	refs   atomic.Int64
}

func (r *avroFileReader) Retain() { r.refs.Add(1) }

func (r *avroFileReader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	_ = r.rd.Close()
	_ = r.f.Close()
}

func (r *avroFileReader) Schema() *arrow.Schema          { return r.schema.Arrow() }
func (r *avroFileReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *avroFileReader) Record() arrow.RecordBatch      { return r.cur }
func (r *avroFileReader) Err() error                     { return r.err }

func (r *avroFileReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || r.done {
		return false
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, r.schema.Arrow())
	defer b.Release()
	n := 0
	for ; n < jsonrows.BatchRows; n++ {
		var v any
		err := r.rd.Decode(&v)
		if errors.Is(err, io.EOF) {
			r.done = true
			break
		}
		if err == nil {
			err = r.schema.AppendValue(b, v)
		}
		if err != nil {
			r.err = fmt.Errorf("record %d: %w", r.rows+1, err)
			return false
		}
		r.rows++
	}
	if n == 0 {
		return false
	}
	r.cur = b.NewRecordBatch()
	return true
}
