package jsonrows

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// blockBytes is how much of the input one goroutine reads at a time (a
// variable for tests to cut small blocks): small, so that the writer
// waits little for a part's first block and the decoders little while it
// writes the last (1 MB: a tenth less wall than 4 MB in 200,000-row batches),
// yet thousands of rows, so that handing blocks out costs nothing.
var blockBytes = 1 << 20

// block is a run of whole lines read by one of the goroutines of a
// parallel Reader.
type block struct {
	line int // the number of the line before its first
	data []byte
	recs []arrow.RecordBatch
	err  error
	done chan struct{}
}

// parallel is the pipeline of a Reader that decodes on several
// goroutines: one cuts the input into blocks of whole lines, the others
// read a block each into records, and Next hands them out in the input's
// order.
type parallel struct {
	order chan *block // blocks in input order, as they are cut
	stop  chan struct{}
	wg    sync.WaitGroup
	cur   *block
	next  int // the record of cur to hand out next
}

// Parallel makes the reader decode its lines on n goroutines, records
// still in the order of the lines: a file then uses more than one core,
// which a batch of few files needs. It must be called before the first
// Next, and only for a reader without a row function (a Debezium decoder
// keeps state from line to line); with n < 2 it does nothing.
func (r *Reader) Parallel(n int) {
	if n < 2 || r.row != nil || r.par != nil {
		return
	}
	p := &parallel{order: make(chan *block, n), stop: make(chan struct{})}
	work := make(chan *block, n)
	r.par = p
	p.wg.Add(1 + n)
	go func() {
		defer p.wg.Done()
		defer close(work)
		defer close(p.order)
		r.cut(p, work)
	}()
	for range n {
		go func() {
			defer p.wg.Done()
			rows := NewRowsOf(r.schema, r.asText)
			for b := range work {
				if !r.decode(rows, b) {
					rows = NewRowsOf(r.schema, r.asText)
				}
			}
		}()
	}
}

// cut reads the input into blocks of whole lines, sending each to the
// decoders and, in order, to Next; a read error ends the last block.
func (r *Reader) cut(p *parallel, work chan<- *block) {
	var carry []byte // the start of a line the last read cut
	line := 0
	for {
		buf := make([]byte, len(carry), max(blockBytes, 2*len(carry)))
		copy(buf, carry)
		n, err := io.ReadFull(r.br, buf[len(carry):cap(buf)])
		buf = buf[:len(carry)+n]
		last := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if last {
			err = nil
		}
		end := len(buf)
		if !last && err == nil {
			// Cut after the last line ending; a line longer than the
			// block waits for the next read, into a block twice as long.
			end = bytes.LastIndexByte(buf, '\n') + 1
		}
		b := &block{line: line, data: buf[:end], err: err, done: make(chan struct{})}
		carry = buf[end:]
		line += bytes.Count(b.data, []byte{'\n'})
		if len(b.data) > 0 || b.err != nil {
			select {
			case p.order <- b:
			case <-p.stop:
				return
			}
			if len(b.data) == 0 {
				close(b.done)
			} else {
				select {
				case work <- b:
				case <-p.stop:
					close(b.done)
					return
				}
			}
		}
		if last || err != nil {
			return
		}
	}
}

// decode reads the lines of b into records with rows, as fill does; ok
// is false when a line stopped it, leaving rows half a row ahead, to be
// dropped with the block's rows as a sequential read drops its chunk's.
func (r *Reader) decode(rows *Rows, b *block) (ok bool) {
	defer close(b.done)
	data, line := b.data, b.line
	// The block's lines are counted: room for them at once.
	rows.Reserve(bytes.Count(data, []byte{'\n'}) + 1)
	for len(data) > 0 && b.err == nil {
		i := bytes.IndexByte(data, '\n')
		var l []byte
		if i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i+1], data[i+1:]
		}
		line++
		if _, err := r.readLine(rows, line, l); err != nil {
			b.err = err
			return false
		}
	}
	b.data = nil
	b.recs, b.err = rows.Records(r.schema)
	return true
}

// nextParallel is Next for a parallel reader.
func (r *Reader) nextParallel() bool {
	p := r.par
	for {
		if p.cur != nil && p.next < len(p.cur.recs) {
			r.cur = p.cur.recs[p.next]
			p.cur.recs[p.next] = nil
			p.next++
			return true
		}
		if p.cur != nil && p.cur.err != nil {
			r.err = p.cur.err
			return false
		}
		b, ok := <-p.order
		if !ok {
			r.done = true
			return false
		}
		<-b.done
		p.cur, p.next = b, 0
	}
}

// close stops the pipeline and drops the records no one read.
func (p *parallel) close() {
	close(p.stop)
	// Drain what was cut, so that the cutter and the decoders can end.
	go func() {
		for b := range p.order {
			<-b.done
			release(b.recs)
		}
	}()
	p.wg.Wait()
	if p.cur != nil {
		release(p.cur.recs[p.next:])
	}
}

func release(recs []arrow.RecordBatch) {
	for _, r := range recs {
		if r != nil {
			r.Release()
		}
	}
}
