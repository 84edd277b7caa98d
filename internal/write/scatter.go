package write

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// scatterRecord moves row i of rec to row dest[i]. Flat fixed-width and
// string/binary columns are scattered here: reading the input in order and
// writing one sequential stream per partition is kinder to caches than
// gathering in random order, and each buffer is sized once, where arrow's
// Take kernel grows variable-length buffers row by row. Other columns go
// through compute.TakeArray.
func scatterRecord(ctx context.Context, rec arrow.RecordBatch, dest []int32) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var idx arrow.Array
	defer func() {
		if idx != nil {
			idx.Release()
		}
	}()
	for i, col := range rec.Columns() {
		if c := scatterArray(col, dest); c != nil {
			cols[i] = c
			continue
		}
		if idx == nil {
			perm := make([]int32, len(dest))
			for i, d := range dest {
				perm[d] = int32(i)
			}
			idx = array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, len(perm),
				[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(perm))}, nil, 0, 0))
		}
		c, err := compute.TakeArray(ctx, col, idx)
		if err != nil {
			return nil, fmt.Errorf("gather column %s: %w", rec.ColumnName(i), err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(len(dest))), nil
}

// ownRows returns rec, retained, to be kept waiting for a file; size is
// its recordSize. A partition's rows are a slice of a record holding every
// partition's rows, and a slice kept waiting would keep the whole record
// alive while the waiting budget counts only the slice: with many
// partitions the batch's memory would grow with the partitions. A slice
// holding under a quarter of its buffers is copied into buffers of its own,
// so what waits stays within four times the budget.
func ownRows(ctx context.Context, rec arrow.RecordBatch, size int64) (arrow.RecordBatch, error) {
	var backing int64
	for _, c := range rec.Columns() {
		backing += bufferBytes(c.Data())
	}
	if backing <= 4*size {
		rec.Retain()
		return rec, nil
	}
	dest := make([]int32, rec.NumRows())
	for i := range dest {
		dest[i] = int32(i)
	}
	return scatterRecord(ctx, rec, dest)
}

// bufferBytes is the memory an array's data holds, its children's included.
func bufferBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, ch := range d.Children() {
		n += bufferBytes(ch)
	}
	return n
}

// scatterArray returns nil for the types it leaves to arrow.
func scatterArray(a arrow.Array, dest []int32) arrow.Array {
	d := a.Data()
	if id := d.DataType().ID(); id == arrow.EXTENSION || id == arrow.DICTIONARY || len(d.Children()) > 0 {
		return nil
	}
	bufs := d.Buffers()
	valid, nulls := scatterValidity(a, dest)
	var out []*memory.Buffer
	switch a := a.(type) {
	case *array.String:
		out = scatterVarBinary(a.ValueOffsets(), bufs[2], dest)
	case *array.Binary:
		out = scatterVarBinary(a.ValueOffsets(), bufs[2], dest)
	case *array.LargeString:
		out = scatterVarBinary(a.ValueOffsets(), bufs[2], dest)
	case *array.LargeBinary:
		out = scatterVarBinary(a.ValueOffsets(), bufs[2], dest)
	default:
		fw, ok := d.DataType().(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth()%8 != 0 || len(bufs) != 2 || bufs[1] == nil {
			return nil
		}
		w := fw.BitWidth() / 8
		src := bufs[1].Bytes()[d.Offset()*w:]
		n := len(dest)
		dst := make([]byte, n*w)
		switch w {
		case 4:
			scatterFixed(unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(dst))), n),
				unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(src))), n), dest)
		case 8:
			scatterFixed(unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(dst))), n),
				unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(src))), n), dest)
		default:
			for i, d := range dest {
				copy(dst[int(d)*w:(int(d)+1)*w], src[i*w:])
			}
		}
		out = []*memory.Buffer{nil, memory.NewBufferBytes(dst)}
	}
	out[0] = valid
	return array.MakeFromData(array.NewData(d.DataType(), len(dest), out, nil, nulls, 0))
}

func scatterFixed[T uint32 | uint64](dst, src []T, dest []int32) {
	for i, d := range dest {
		dst[d] = src[i]
	}
}

func scatterValidity(a arrow.Array, dest []int32) (*memory.Buffer, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	bits := make([]byte, bitutil.BytesForBits(int64(len(dest))))
	for i, d := range dest {
		if a.IsValid(i) {
			bitutil.SetBit(bits, int(d))
		}
	}
	return memory.NewBufferBytes(bits), a.NullN()
}

// scatterVarBinary places the lengths first to find the new offsets; offs
// is the array's own offsets, already shifted by its slice offset.
func scatterVarBinary[O int32 | int64](offs []O, values *memory.Buffer, dest []int32) []*memory.Buffer {
	n := len(dest)
	newOffs := make([]O, n+1)
	for i, d := range dest {
		newOffs[d+1] = offs[i+1] - offs[i]
	}
	for i := range n {
		newOffs[i+1] += newOffs[i]
	}
	var src []byte
	if values != nil {
		src = values.Bytes()
	}
	dst := make([]byte, newOffs[n])
	for i, d := range dest {
		copy(dst[newOffs[d]:], src[offs[i]:offs[i+1]])
	}
	return []*memory.Buffer{nil, memory.NewBufferBytes(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(newOffs))), len(newOffs)*int(unsafe.Sizeof(O(0))))), memory.NewBufferBytes(dst)}
}
