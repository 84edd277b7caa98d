package write

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/floe-io/floe/internal/ingest"
)

// MaxValueBytes bounds one string or binary value (128 MiB). Larger values
// are bad input: a value is held several times over while it is encoded
// (the input record, the page buffer, the compressed page), and Parquet
// pages and Arrow arrays address at most 2 GiB, so an unbounded value would
// fail a batch on every retry, or exhaust memory, instead of being set aside
// with its file.
const MaxValueBytes = 128 << 20

// checkValueSizes refuses a record holding a value longer than
// MaxValueBytes, naming the column and, when known, the row (1-based in its
// file).
func checkValueSizes(tableName string, rec arrow.RecordBatch, firstRow int64) error {
	for i, col := range rec.Columns() {
		path, n, row, ok := oversized(rec.Schema().Field(i).Name, col)
		if !ok {
			continue
		}
		where := ""
		if row >= 0 && firstRow >= 0 {
			where = fmt.Sprintf(" row %d", firstRow+int64(row)+1)
		}
		return fmt.Errorf("%w: column %q%s holds a value of %d bytes, over floe's limit of %d bytes (128 MiB) for one value of table %s; "+
			"split or shorten the value at its source, or set on-bad-file: quarantine to set such files aside", ingest.ErrBadInput, path, where, n, MaxValueBytes, tableName)
	}
	return nil
}

// oversized finds a value over MaxValueBytes in a, returning its dotted
// column path, its length and its row (-1 inside a list or map).
func oversized(path string, a arrow.Array) (string, int64, int, bool) {
	switch c := a.(type) {
	case *array.String:
		n, row := longest(c.ValueOffsets())
		return path, n, row, n > MaxValueBytes
	case *array.Binary:
		n, row := longest(c.ValueOffsets())
		return path, n, row, n > MaxValueBytes
	case *array.Struct:
		st := c.DataType().(*arrow.StructType)
		for i := range c.NumField() {
			if p, n, row, ok := oversized(path+"."+st.Field(i).Name, c.Field(i)); ok {
				return p, n, row, true
			}
		}
	case *array.Map:
		if p, n, _, ok := oversized(path+".key", c.Keys()); ok {
			return p, n, -1, true
		}
		if p, n, _, ok := oversized(path+".value", c.Items()); ok {
			return p, n, -1, true
		}
	case array.ListLike:
		if p, n, _, ok := oversized(path+".element", c.ListValues()); ok {
			return p, n, -1, true
		}
	}
	return "", 0, 0, false
}

// longest is the longest span between consecutive offsets, and its index.
func longest(offs []int32) (int64, int) {
	var n int32
	at := 0
	for i := 1; i < len(offs); i++ {
		if l := offs[i] - offs[i-1]; l > n {
			n, at = l, i-1
		}
	}
	return int64(n), at
}
