package write

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/partition"
	"github.com/google/uuid"
)

// partitioner computes partition keys column-at-a-time: every field turns
// its column into dense per-call codes, the codes are combined into one
// group id per row, and rows are moved to their group's run. Values are
// boxed once per group, never per row.
type partitioner struct {
	spec   iceberg.PartitionSpec
	sc     *iceberg.Schema
	fields []partField

	mu   sync.RWMutex
	keys map[string]*partitionKey // canonical encoding of the values
}

// partitionGroup is the rows of one split input that share a partition.
type partitionGroup struct {
	key *partitionKey
	rec arrow.RecordBatch
}

// partitionKey is one partition, interned per partitioner.
type partitionKey struct {
	id     int         // dense 0..n-1 in order of first appearance
	values map[int]any // partition field id -> value for table.DataFileArgs.PartitionValues; shared, read-only
	// path is the Hive-style path relative to the data directory. It is not
	// unique: a null and the string "null" share one, as in iceberg-go.
	path string
}

type xform uint8

const (
	xIdentity xform = iota
	xBucket
	xTruncate
	xYear
	xMonth
	xDay
	xHour
	xVoid
)

// srcKind says how a source column becomes per-row keys.
type srcKind uint8

const (
	srcInt     srcKind = iota // int, long, date, time, timestamp, boolean as int64
	srcFloat                  // float, double as their bits (identity only)
	srcBytes                  // string, binary, fixed, uuid
	srcDecimal                // decimal as decimal128
)

type partField struct {
	id     int
	name   string // source column, for messages
	path   []int  // column index, then struct child indices
	src    iceberg.Type
	kind   srcKind
	xf     xform
	param  int  // buckets or width
	isDate bool // the time transforms see days, not microseconds
	nanos  bool // timestamp_ns: transforms other than identity see microseconds
}

func classify(t iceberg.Type) (srcKind, bool) {
	switch t.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimeType,
		iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType,
		iceberg.BooleanType:
		return srcInt, true
	case iceberg.Float32Type, iceberg.Float64Type:
		return srcFloat, true
	case iceberg.StringType, iceberg.BinaryType, iceberg.FixedType, iceberg.UUIDType:
		return srcBytes, true
	case iceberg.DecimalType:
		return srcDecimal, true
	}
	return 0, false
}

func xformOf(t iceberg.Transform) (xform, int, bool) {
	switch t := t.(type) {
	case iceberg.IdentityTransform:
		return xIdentity, 0, true
	case iceberg.BucketTransform:
		return xBucket, t.NumBuckets, true
	case iceberg.TruncateTransform:
		return xTruncate, t.Width, true
	case iceberg.YearTransform:
		return xYear, 0, true
	case iceberg.MonthTransform:
		return xMonth, 0, true
	case iceberg.DayTransform:
		return xDay, 0, true
	case iceberg.HourTransform:
		return xHour, 0, true
	case iceberg.VoidTransform:
		return xVoid, 0, true
	}
	return 0, 0, false
}

func newPartitioner(spec iceberg.PartitionSpec, sc *iceberg.Schema, schema *arrow.Schema) (*partitioner, error) {
	p := &partitioner{spec: spec, sc: sc, keys: map[string]*partitionKey{}}
	for _, pf := range spec.Fields() {
		f := partField{id: pf.FieldID}
		f.name, _ = sc.FindColumnName(pf.SourceID())
		xf, param, ok := xformOf(pf.Transform)
		if !ok {
			return nil, fmt.Errorf("%w: partition field %s uses transform %s, which floe cannot write; write to a table partitioned by identity, bucket, truncate, year, month, day, hour or void", ingest.ErrConfig, pf.Name, pf.Transform)
		}
		f.xf, f.param = xf, param
		if xf != xVoid {
			src, ok := sc.FindTypeByID(pf.SourceID())
			if !ok {
				return nil, fmt.Errorf("%w: partition field %s has source column id %d, which is not in the table schema", ingest.ErrConfig, pf.Name, pf.SourceID())
			}
			// partition.Writable lists the types classify knows; were the
			// two to part, refuse rather than compute a wrong key.
			kind, ok := classify(src)
			if !ok || !partition.Writable(src, pf.Transform) {
				return nil, fmt.Errorf("%w: partition field %s: floe cannot compute %s of column %s (%s); change the table's partitioning", ingest.ErrConfig, pf.Name, pf.Transform, f.name, src)
			}
			f.src = src
			f.kind = kind
			_, f.isDate = src.(iceberg.DateType)
			switch src.(type) {
			case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
				f.nanos = true
			}
			path, ok := arrowPath(schema.Fields(), pf.SourceID())
			if !ok {
				return nil, fmt.Errorf("%w: partition source column %s (id %d) is missing from the record schema", ingest.ErrConfig, f.name, pf.SourceID())
			}
			f.path = path
		}
		p.fields = append(p.fields, f)
	}
	return p, nil
}

// arrowPath finds a column by its PARQUET:field_id, through structs only:
// Iceberg does not partition by fields inside lists or maps.
func arrowPath(fields []arrow.Field, id int) ([]int, bool) {
	for i, f := range fields {
		if v, ok := f.Metadata.GetValue("PARQUET:field_id"); ok {
			if n, err := strconv.Atoi(v); err == nil && n == id {
				return []int{i}, true
			}
		}
		if st, ok := f.Type.(*arrow.StructType); ok {
			if sub, ok := arrowPath(st.Fields(), id); ok {
				return append([]int{i}, sub...), true
			}
		}
	}
	return nil, false
}

// fieldCodes is one field's result for one record: a code per row, 0 for
// null and 1..card-1 for values, and the value of each code.
type fieldCodes struct {
	codes  []uint32
	card   uint64
	decode func(code uint32) any
}

// split groups the rows of rec by partition, preserving row order inside
// each group; groups come in order of their first row. When every row falls
// in one partition it returns rec itself, retained, with no copy; when every
// partition is one run of rows, slices of rec. An empty rec has no groups.
// The caller releases every group's record.
func (p *partitioner) split(ctx context.Context, rec arrow.RecordBatch) ([]partitionGroup, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	limit := uint64(max(4096, 2*n))
	s := scratchPool.Get().(*scratch)
	defer s.release()
	fcs := make([]fieldCodes, len(p.fields))
	for i := range p.fields {
		fc, err := p.fields[i].codes(rec, n, limit, s)
		if err != nil {
			return nil, err
		}
		fcs[i] = fc
	}
	gid, reps := groupRows(fcs, n, limit, s)

	keys := make([]*partitionKey, len(reps))
	for g, r := range reps {
		vals := make([]any, len(fcs))
		for i, fc := range fcs {
			vals[i] = fc.decode(fc.codes[r])
		}
		keys[g] = p.intern(vals)
	}
	if len(reps) <= 1 {
		if n == 0 {
			return nil, nil
		}
		rec.Retain()
		return []partitionGroup{{key: keys[0], rec: rec}}, nil
	}

	counts := make([]int, len(reps))
	runs := 1
	for i, g := range gid {
		counts[g]++
		if i > 0 && g != gid[i-1] {
			runs++
		}
	}
	groups := make([]partitionGroup, len(reps))
	if runs == len(reps) {
		// Each partition is one contiguous run: slices share rec's buffers.
		for g, r := range reps {
			groups[g] = partitionGroup{key: keys[g], rec: rec.NewSlice(int64(r), int64(r+counts[g]))}
		}
		return groups, nil
	}

	offsets := make([]int, len(reps)+1)
	for g, c := range counts {
		offsets[g+1] = offsets[g] + c
	}
	// gid becomes each row's destination: its group's next free row.
	next := append([]int(nil), offsets[:len(reps)]...)
	for i, g := range gid {
		gid[i] = int32(next[g])
		next[g]++
	}
	taken, err := scatterRecord(ctx, rec, gid)
	if err != nil {
		return nil, fmt.Errorf("group rows by partition: %w", err)
	}
	defer taken.Release()
	for g := range reps {
		groups[g] = partitionGroup{key: keys[g], rec: taken.NewSlice(int64(offsets[g]), int64(offsets[g+1]))}
	}
	return groups, nil
}

// groupRows combines the fields' codes into a group id per row, numbered in
// order of first appearance, and returns each group's first row.
func groupRows(fcs []fieldCodes, n int, limit uint64, s *scratch) ([]int32, []int) {
	acc := s.uint32s(n)
	card := uint64(1)
	for _, fc := range fcs {
		if fc.card <= 1 {
			continue
		}
		if card*fc.card > limit {
			card = densify(acc, card)
		}
		if card*fc.card <= limit {
			c := uint32(fc.card)
			for i, v := range fc.codes {
				acc[i] = acc[i]*c + v
			}
			card *= fc.card
			continue
		}
		card = pairCodes(acc, fc.codes)
	}
	// A last densify numbers groups by first appearance and finds their rows.
	table := make([]int32, card)
	gidBuf := s.uint32s(n)
	gid := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(gidBuf))), n)
	var reps []int
	for i, v := range acc {
		g := table[v]
		if g == 0 {
			reps = append(reps, i)
			g = int32(len(reps))
			table[v] = g
		}
		gid[i] = g - 1
	}
	return gid, reps
}

// densify renumbers codes below card to 0..distinct-1.
func densify(acc []uint32, card uint64) uint64 {
	table := make([]uint32, card)
	var next uint32
	for i, v := range acc {
		c := table[v]
		if c == 0 {
			next++
			c = next
			table[v] = c
		}
		acc[i] = c - 1
	}
	return uint64(next)
}

// pairCodes combines two code columns too large for a table through a hash
// map, asked only when a row's pair differs from the previous row's.
func pairCodes(acc, codes []uint32) uint64 {
	m := map[uint64]uint32{}
	prev, prevCode := uint64(math.MaxUint64), uint32(0)
	for i := range acc {
		k := uint64(acc[i])<<32 | uint64(codes[i])
		if k != prev {
			c, ok := m[k]
			if !ok {
				c = uint32(len(m))
				m[k] = c
			}
			prev, prevCode = k, c
		}
		acc[i] = prevCode
	}
	return uint64(len(m))
}

func (p *partitioner) intern(vals []any) *partitionKey {
	canon := canonicalKey(vals)
	p.mu.RLock()
	k := p.keys[canon]
	p.mu.RUnlock()
	if k != nil {
		return k
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if k := p.keys[canon]; k != nil {
		return k
	}
	k = &partitionKey{id: len(p.keys), values: make(map[int]any, len(vals))}
	for i, f := range p.fields {
		k.values[f.id] = vals[i]
	}
	k.path = p.spec.PartitionToPath(partitionRow(vals), p.sc)
	p.keys[canon] = k
	return k
}

// partitionRow adapts values to iceberg.StructLike for PartitionToPath.
type partitionRow []any

func (r partitionRow) Size() int        { return len(r) }
func (r partitionRow) Get(i int) any    { return r[i] }
func (r partitionRow) Set(i int, v any) { r[i] = v }

// canonicalKey encodes values unambiguously: each position holds one Go type,
// so a tag for null and length prefixes for variable data are enough.
func canonicalKey(vals []any) string {
	var b []byte
	for _, v := range vals {
		switch v := v.(type) {
		case nil:
			b = append(b, 0)
			continue
		case int32:
			b = binary.LittleEndian.AppendUint32(append(b, 1), uint32(v))
		case iceberg.Date:
			b = binary.LittleEndian.AppendUint32(append(b, 1), uint32(v))
		case iceberg.Time:
			b = binary.LittleEndian.AppendUint64(append(b, 1), uint64(v))
		case int64:
			b = binary.LittleEndian.AppendUint64(append(b, 1), uint64(v))
		case iceberg.Timestamp:
			b = binary.LittleEndian.AppendUint64(append(b, 1), uint64(v))
		case iceberg.TimestampNano:
			b = binary.LittleEndian.AppendUint64(append(b, 1), uint64(v))
		case bool:
			b = append(b, 1, byte(bits.Len(boolBit(v))))
		case float32:
			b = binary.LittleEndian.AppendUint32(append(b, 1), math.Float32bits(v))
		case float64:
			b = binary.LittleEndian.AppendUint64(append(b, 1), math.Float64bits(v))
		case string:
			b = append(binary.AppendUvarint(append(b, 1), uint64(len(v))), v...)
		case []byte:
			b = append(binary.AppendUvarint(append(b, 1), uint64(len(v))), v...)
		case uuid.UUID:
			b = append(append(b, 1), v[:]...)
		case iceberg.Decimal:
			b = binary.LittleEndian.AppendUint64(append(b, 1), v.Val.LowBits())
			b = binary.LittleEndian.AppendUint64(b, uint64(v.Val.HighBits()))
		default:
			panic(fmt.Sprintf("floe: partition value of type %T", v))
		}
	}
	return string(b)
}

func boolBit(v bool) uint {
	if v {
		return 1
	}
	return 0
}

// column finds the field's leaf array and the struct arrays above it, whose
// nulls make the leaf null too.
func (f *partField) column(rec arrow.RecordBatch) (arrow.Array, []arrow.Array, error) {
	col := rec.Column(f.path[0])
	var parents []arrow.Array
	for _, i := range f.path[1:] {
		st, ok := col.(*array.Struct)
		if !ok {
			return nil, nil, fmt.Errorf("partition source column %s: expected a struct, got %s", f.name, col.DataType())
		}
		parents = append(parents, col)
		col = st.Field(i)
	}
	return col, parents, nil
}

// nullMask is nil when no row is null.
func nullMask(leaf arrow.Array, parents []arrow.Array, n int) []bool {
	nulls := leaf.NullN() > 0
	for _, p := range parents {
		nulls = nulls || p.NullN() > 0
	}
	if !nulls {
		return nil
	}
	null := make([]bool, n)
	for _, a := range append(parents, leaf) {
		if a.NullN() == 0 {
			continue
		}
		for i := range null {
			null[i] = null[i] || a.IsNull(i)
		}
	}
	return null
}

func (f *partField) codes(rec arrow.RecordBatch, n int, limit uint64, s *scratch) (fieldCodes, error) {
	if f.xf == xVoid {
		return fieldCodes{codes: s.uint32s(n), card: 1, decode: func(uint32) any { return nil }}, nil
	}
	leaf, parents, err := f.column(rec)
	if err != nil {
		return fieldCodes{}, err
	}
	null := nullMask(leaf, parents, n)
	dict, isDict := leaf.(*array.Dictionary)
	if !isDict {
		return f.valueCodes(leaf, null, limit, s)
	}
	// Codes of the dictionary's values, then one lookup per row by index.
	values := dict.Dictionary()
	dc, err := f.valueCodes(values, nullMask(values, nil, values.Len()), limit, s)
	if err != nil {
		return fieldCodes{}, err
	}
	codes := s.uint32s(n)
	for i := range codes {
		if null == nil || !null[i] {
			codes[i] = dc.codes[dict.GetValueIndex(i)]
		}
	}
	return fieldCodes{codes: codes, card: dc.card, decode: dc.decode}, nil
}

func (f *partField) valueCodes(a arrow.Array, null []bool, limit uint64, s *scratch) (fieldCodes, error) {
	if ext, ok := a.(array.ExtensionArray); ok {
		a = ext.Storage()
	}
	n := a.Len()
	switch f.kind {
	case srcInt, srcFloat:
		vals, err := f.rawInts(a, s)
		if err != nil {
			return fieldCodes{}, err
		}
		f.transformInts(vals)
		return intCodes(vals, null, limit, f.boxInt, s), nil
	case srcDecimal:
		d, ok := a.(*array.Decimal128)
		if !ok {
			return fieldCodes{}, f.typeErr(a)
		}
		nums := d.Values()
		if f.xf == xBucket {
			vals := s.int64s(n)
			var buf [16]byte
			for i, v := range nums {
				vals[i] = int64(bucketOf(murmur3(decimalBytes(v, &buf)), f.param))
			}
			return intCodes(vals, null, limit, f.boxInt, s), nil
		}
		scale := int(d.DataType().(*arrow.Decimal128Type).Scale)
		return keyCodes(n, null, func(i int) decimal128.Num { return nums[i] }, func(v decimal128.Num) decimal128.Num { return v },
			func(v decimal128.Num) any { return iceberg.Decimal{Val: v, Scale: scale} }, s), nil
	}
	at, err := stringsOf(a)
	if err != nil {
		return fieldCodes{}, f.typeErr(a)
	}
	switch f.xf {
	case xBucket:
		vals := s.int64s(n)
		for i := range vals {
			if null == nil || !null[i] {
				s := at(i)
				vals[i] = int64(bucketOf(murmur3(unsafe.Slice(unsafe.StringData(s), len(s))), f.param))
			}
		}
		return intCodes(vals, null, limit, f.boxInt, s), nil
	case xTruncate:
		w := f.param
		if _, isStr := f.src.(iceberg.StringType); isStr {
			return keyCodes(n, null, func(i int) string { return truncateCodePoints(at(i), w) }, strings.Clone, f.boxBytes, s), nil
		}
		return keyCodes(n, null, func(i int) string { v := at(i); return v[:min(len(v), w)] }, strings.Clone, f.boxBytes, s), nil
	}
	switch a := a.(type) {
	case *array.String:
		return offsetCodes(a.ValueOffsets(), a.Data().Buffers()[2], null, f.boxBytes, s), nil
	case *array.LargeString:
		return offsetCodes(a.ValueOffsets(), a.Data().Buffers()[2], null, f.boxBytes, s), nil
	}
	return keyCodes(n, null, at, strings.Clone, f.boxBytes, s), nil
}

// offsetCodes is keyCodes for identity on strings, reading the offsets and
// bytes directly and interning through a stringTable: this is the hot path
// of partitioning by a category column.
func offsetCodes[O int32 | int64](offs []O, values *memory.Buffer, null []bool, box func(string) any, s *scratch) fieldCodes {
	var data []byte
	if values != nil {
		data = values.Bytes()
	}
	n := len(offs) - 1
	codes := s.uint32s(n)
	var t stringTable
	var prev string
	prevCode := uint32(0)
	for i := range n {
		if null != nil && null[i] {
			continue
		}
		v := unsafe.String(unsafe.SliceData(data[offs[i]:]), int(offs[i+1]-offs[i]))
		if prevCode == 0 || v != prev {
			prev, prevCode = v, t.code(v)
		}
		codes[i] = prevCode
	}
	keys := t.keys
	return fieldCodes{codes: codes, card: uint64(len(keys)) + 1, decode: func(c uint32) any {
		if c == 0 {
			return nil
		}
		return box(keys[c-1])
	}}
}

func (f *partField) typeErr(a arrow.Array) error {
	return fmt.Errorf("partition source column %s: Arrow type %s does not match table type %s", f.name, a.DataType(), f.src)
}

// stringsOf views a string or binary column's values as strings without
// copying; they alias the record's buffers.
func stringsOf(a arrow.Array) (func(int) string, error) {
	switch a := a.(type) {
	case *array.String:
		return a.Value, nil
	case *array.LargeString:
		return a.Value, nil
	case *array.Binary:
		return func(i int) string { b := a.Value(i); return unsafe.String(unsafe.SliceData(b), len(b)) }, nil
	case *array.LargeBinary:
		return func(i int) string { b := a.Value(i); return unsafe.String(unsafe.SliceData(b), len(b)) }, nil
	case *array.FixedSizeBinary:
		return func(i int) string { b := a.Value(i); return unsafe.String(unsafe.SliceData(b), len(b)) }, nil
	}
	return nil, fmt.Errorf("not a string or binary array: %s", a.DataType())
}

func truncateCodePoints(s string, w int) string {
	if len(s) <= w {
		return s
	}
	for i := range s {
		if w == 0 {
			return s[:i]
		}
		w--
	}
	return s
}

// keyCodes interns per-row keys, asking the map only when a row's key
// differs from the previous row's. clone detaches a key from the record.
func keyCodes[K comparable](n int, null []bool, at func(int) K, clone func(K) K, box func(K) any, s *scratch) fieldCodes {
	codes := s.uint32s(n)
	m := map[K]uint32{}
	var keys []K
	var prev K
	prevCode := uint32(0)
	for i := range codes {
		if null != nil && null[i] {
			continue
		}
		k := at(i)
		if prevCode == 0 || k != prev {
			c, ok := m[k]
			if !ok {
				k = clone(k)
				keys = append(keys, k)
				c = uint32(len(keys))
				m[k] = c
			}
			prev, prevCode = k, c
		}
		codes[i] = prevCode
	}
	return fieldCodes{codes: codes, card: uint64(len(keys)) + 1, decode: func(c uint32) any {
		if c == 0 {
			return nil
		}
		return box(keys[c-1])
	}}
}

// intCodes codes transformed integers by offset from the minimum when their
// range is small, and through a map otherwise.
func intCodes(vals []int64, null []bool, limit uint64, box func(int64) any, s *scratch) fieldCodes {
	lo, hi, seen := int64(math.MaxInt64), int64(math.MinInt64), false
	for i, v := range vals {
		if null != nil && null[i] {
			continue
		}
		lo, hi, seen = min(lo, v), max(hi, v), true
	}
	codes := s.uint32s(len(vals))
	if !seen {
		return fieldCodes{codes: codes, card: 1, decode: func(uint32) any { return nil }}
	}
	if span := uint64(hi) - uint64(lo); span < limit {
		for i, v := range vals {
			codes[i] = uint32(v-lo) + 1
		}
		for i, isNull := range null {
			if isNull {
				codes[i] = 0
			}
		}
		return fieldCodes{codes: codes, card: span + 2, decode: func(c uint32) any {
			if c == 0 {
				return nil
			}
			return box(lo + int64(c-1))
		}}
	}
	return keyCodes(len(vals), null, func(i int) int64 { return vals[i] }, func(v int64) int64 { return v }, box, s)
}

// rawInts reads the column as int64: integers, days, microseconds (or
// nanoseconds), booleans as 0/1, floats as their bits.
func (f *partField) rawInts(a arrow.Array, s *scratch) ([]int64, error) {
	vals := s.int64s(a.Len())
	switch a := a.(type) {
	case *array.Int32:
		for i, v := range a.Int32Values() {
			vals[i] = int64(v)
		}
	case *array.Int64:
		copy(vals, a.Int64Values())
	case *array.Date32:
		for i, v := range a.Date32Values() {
			vals[i] = int64(v)
		}
	case *array.Time64:
		for i, v := range a.Time64Values() {
			vals[i] = int64(v)
		}
	case *array.Timestamp:
		for i, v := range a.TimestampValues() {
			vals[i] = int64(v)
		}
	case *array.Boolean:
		for i := range vals {
			vals[i] = 0
			if a.Value(i) {
				vals[i] = 1
			}
		}
	case *array.Float32:
		for i, v := range a.Float32Values() {
			vals[i] = int64(math.Float32bits(v))
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			vals[i] = int64(math.Float64bits(v))
		}
	default:
		return nil, f.typeErr(a)
	}
	return vals, nil
}

const (
	microsPerHour = int64(3600_000_000)
	microsPerDay  = 24 * microsPerHour
)

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// transformInts applies the transform in place, one loop per transform.
func (f *partField) transformInts(vals []int64) {
	if f.nanos && f.xf != xIdentity {
		for i, v := range vals {
			vals[i] = floorDiv(v, 1000)
		}
	}
	switch f.xf {
	case xBucket:
		n := f.param
		for i, v := range vals {
			vals[i] = int64(bucketOf(hashLong(v), n))
		}
	case xTruncate:
		w := int64(f.param)
		for i, v := range vals {
			vals[i] = v - (((v % w) + w) % w)
		}
	case xHour:
		for i, v := range vals {
			vals[i] = floorDiv(v, microsPerHour)
		}
	case xDay, xMonth, xYear:
		if !f.isDate {
			for i, v := range vals {
				vals[i] = floorDiv(v, microsPerDay)
			}
		}
		if f.xf == xDay {
			return
		}
		// Consecutive rows mostly share a day; convert each day once.
		prev, prevOut := int64(math.MinInt64), int64(0)
		for i, d := range vals {
			if d != prev {
				y, m, _ := civilFromDays(d)
				prev = d
				if f.xf == xYear {
					prevOut = y - 1970
				} else {
					prevOut = (y-1970)*12 + m - 1
				}
			}
			vals[i] = prevOut
		}
	}
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date (Howard Hinnant's algorithm), without time.Time's cost per row.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// boxInt turns a transformed integer into the Go type the manifest writer
// records for the field's result type.
func (f *partField) boxInt(v int64) any {
	switch f.xf {
	case xBucket, xYear, xMonth, xHour:
		return int32(v)
	case xDay:
		return iceberg.Date(v)
	}
	switch f.src.(type) {
	case iceberg.Int32Type:
		return int32(v)
	case iceberg.DateType:
		return iceberg.Date(v)
	case iceberg.TimeType:
		return iceberg.Time(v)
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return iceberg.Timestamp(v)
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return iceberg.TimestampNano(v)
	case iceberg.BooleanType:
		return v != 0
	case iceberg.Float32Type:
		return math.Float32frombits(uint32(v))
	case iceberg.Float64Type:
		return math.Float64frombits(uint64(v))
	}
	return v
}

func (f *partField) boxBytes(s string) any {
	switch f.src.(type) {
	case iceberg.StringType:
		return s
	case iceberg.UUIDType:
		return uuid.UUID([]byte(s))
	}
	return []byte(s)
}

func bucketOf(h uint32, n int) int32 {
	return (int32(h) & math.MaxInt32) % int32(n)
}

// hashLong is murmur3_x86_32 of v's 8 little-endian bytes, unrolled: the
// spec hashes int, long, date, time and timestamp this way.
func hashLong(v int64) uint32 {
	h := mixBlock(0, uint32(v))
	h = mixBlock(h, uint32(uint64(v)>>32))
	return fmix(h ^ 8)
}

const (
	murmurC1 = 0xcc9e2d51
	murmurC2 = 0x1b873593
)

func mixBlock(h, k uint32) uint32 {
	k *= murmurC1
	k = bits.RotateLeft32(k, 15)
	k *= murmurC2
	h ^= k
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

func fmix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// murmur3 is murmur3_x86_32 with seed 0.
func murmur3(b []byte) uint32 {
	var h uint32
	n := len(b) &^ 3
	for i := 0; i < n; i += 4 {
		h = mixBlock(h, binary.LittleEndian.Uint32(b[i:]))
	}
	var k uint32
	switch len(b) - n {
	case 3:
		k ^= uint32(b[n+2]) << 16
		fallthrough
	case 2:
		k ^= uint32(b[n+1]) << 8
		fallthrough
	case 1:
		k ^= uint32(b[n])
		k *= murmurC1
		k = bits.RotateLeft32(k, 15)
		k *= murmurC2
		h ^= k
	}
	return fmix(h ^ uint32(len(b)))
}

// decimalBytes is the unscaled value's shortest big-endian two's complement,
// which the spec hashes for decimals.
func decimalBytes(v decimal128.Num, buf *[16]byte) []byte {
	binary.BigEndian.PutUint64(buf[:8], uint64(v.HighBits()))
	binary.BigEndian.PutUint64(buf[8:], v.LowBits())
	start := 0
	if v.Sign() >= 0 {
		for start < 15 && buf[start] == 0 && buf[start+1]&0x80 == 0 {
			start++
		}
	} else {
		for start < 15 && buf[start] == 0xff && buf[start+1]&0x80 != 0 {
			start++
		}
	}
	return buf[start:]
}

// scratch lends a split call its per-row working slices, which would
// otherwise be most of its allocations.
type scratch struct {
	u32  [][]uint32
	i64  [][]int64
	nu32 int
	ni64 int
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// uint32s returns n zeroed values, valid until release.
func (s *scratch) uint32s(n int) []uint32 {
	if s.nu32 == len(s.u32) {
		s.u32 = append(s.u32, nil)
	}
	b := s.u32[s.nu32]
	if cap(b) < n {
		b = make([]uint32, n)
		s.u32[s.nu32] = b
	} else {
		b = b[:n]
		clear(b)
	}
	s.nu32++
	return b
}

// int64s returns n values, not zeroed, valid until release.
func (s *scratch) int64s(n int) []int64 {
	if s.ni64 == len(s.i64) {
		s.i64 = append(s.i64, nil)
	}
	b := s.i64[s.ni64]
	if cap(b) < n {
		b = make([]int64, n)
		s.i64[s.ni64] = b
	}
	s.ni64++
	return b[:n]
}

func (s *scratch) release() {
	s.nu32, s.ni64 = 0, 0
	scratchPool.Put(s)
}

// stringTable interns strings with open addressing and a hash of at most
// two loads for values up to 16 bytes, typical of partition columns; it
// was faster than a Go map on the hot path.
type stringTable struct {
	slots []uint32 // code, 0 when empty
	keys  []string // code-1 -> value, detached from the record
	shift uint     // 64 - log2(len(slots))
}

var stringSeed = maphash.MakeSeed()

func hashString(v string) uint64 {
	n := len(v)
	b := unsafe.Slice(unsafe.StringData(v), n)
	var x, y uint64
	switch {
	case n > 16:
		return maphash.String(stringSeed, v)
	case n >= 8:
		x, y = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4:
		x, y = uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[n-4:]))
	default:
		for _, c := range b {
			x = x<<8 | uint64(c)
		}
	}
	// Fibonacci hashing: the table indexes by the product's top bits, which
	// depend on every input bit.
	return (x ^ bits.RotateLeft64(y, 29) ^ uint64(n)<<59) * 0x9e3779b97f4a7c15
}

// code returns v's code, adding a copy of v when it is new.
func (t *stringTable) code(v string) uint32 {
	if 2*(len(t.keys)+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := hashString(v) >> t.shift; ; i = (i + 1) & mask {
		c := t.slots[i]
		if c == 0 {
			t.keys = append(t.keys, strings.Clone(v))
			c = uint32(len(t.keys))
			t.slots[i] = c
			return c
		}
		if t.keys[c-1] == v {
			return c
		}
	}
}

func (t *stringTable) grow() {
	t.slots = make([]uint32, max(64, 2*len(t.slots)))
	t.shift = uint(64 - bits.Len(uint(len(t.slots)-1)))
	mask := uint64(len(t.slots) - 1)
	for k, v := range t.keys {
		i := hashString(v) >> t.shift
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = uint32(k + 1)
	}
}
