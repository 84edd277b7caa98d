package jsonrows

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/ingest"
	"github.com/floe-io/floe/internal/textnum"
	"github.com/floe-io/floe/internal/texttime"
)

// Rows builds Arrow columns from JSON objects in one pass over each
// object's bytes, where decoding into maps for the inference and again
// into builders cost floe four passes. Without a schema it infers the
// columns (docs/formats.md: kinds, widening, key order) while it appends
// the values, converting a column's values only when its kind widens (int
// to double, or from only nulls); with a schema it reads the values as
// those types, as arrow-go's RecordBuilder.UnmarshalJSON does, and infers
// nothing.
type Rows struct {
	root    *column
	fixed   bool
	discard bool // for Kind: only the columns are wanted, not the values
	// given are top-level columns of a type given for inference
	// (NewObjectWith): their values are skipped, never inferred.
	given map[string]arrow.DataType
	gen   uint64
	hint  int
	// before is the row count before the last Append; dead are the rows
	// set aside (SetAside), which Records leaves out.
	before int
	dead   []int
}

// NewRows returns rows that infer their columns from the objects.
func NewRows() *Rows { return &Rows{root: &column{kind: "object", fields: map[string]*column{}}} }

// NewRowsOf returns rows read as schema's columns; asText are string
// columns whose other values are read as their JSON text (see AsTable).
// Keys that are no column are skipped.
func NewRowsOf(schema *arrow.Schema, asText []string) *Rows {
	r := &Rows{fixed: true, root: &column{kind: "object", fields: map[string]*column{}}}
	for _, f := range schema.Fields() {
		r.root.addFixed(f.Name, f.Type)
	}
	for _, name := range asText {
		if c := r.root.fields[name]; c != nil && c.kind == "string" {
			c.asText = true
		}
	}
	return r
}

// Fixed reports whether the rows are read as a schema's columns
// (NewRowsOf) rather than inferred.
func (r *Rows) Fixed() bool { return r.fixed }

// Reserve makes room for n rows, the columns' bytes estimated from the
// first rows: growing the columns row by row copies them over and over.
func (r *Rows) Reserve(n int) {
	r.hint = n
	for _, k := range r.root.kids {
		k.hint = n
		k.reserve()
	}
}

// Empty reports whether no key was seen (inferring) or no column is read.
func (r *Rows) Empty() bool { return len(r.root.names) == 0 }

// Schema is the rows' columns; inferred ones are in the order their keys
// first appear, nested objects' keys sorted.
func (r *Rows) Schema() *arrow.Schema {
	return arrow.NewSchema(r.root.dataType().(*arrow.StructType).Fields(), nil)
}

// Append reads one JSON object as a row. After an error the rows are
// unusable: the row may be half appended.
func (r *Rows) Append(b []byte) error {
	if r.discard {
		r.root.truncate()
	}
	r.before = r.root.n
	p := parser{b: b, rows: r}
	p.ws()
	if p.i >= len(b) || b[p.i] != '{' {
		return syntaxError(b)
	}
	if err := p.object(r.root, true); err != nil {
		return err
	}
	if p.ws(); p.i < len(b) {
		return errors.New("malformed JSON (more than one value on the line)")
	}
	return nil
}

// SetAside drops the row a failed Append left half appended, so that
// the rows stay usable: the row is completed with nulls, for the columns'
// lengths to agree, and left out of Records. The bad record then costs
// one filter of its chunk, where undoing every column's values would cost
// the columns arrow-go builds (decimals, dates) a copy each.
func (r *Rows) SetAside() {
	if r.discard || r.root.n == r.before {
		return
	}
	r.root.complete(r.root.n)
	r.dead = append(r.dead, r.before)
}

// Records hands out the rows appended as records of schema (Schema, or
// the schema of NewRowsOf, nullability aside) of at most BatchRows rows,
// without the rows set aside, and starts again with no rows.
func (r *Rows) Records(schema *arrow.Schema) ([]arrow.RecordBatch, error) {
	n := r.root.n
	var out []arrow.RecordBatch
	var err error
	for lo := 0; lo < n && err == nil; lo += BatchRows {
		hi := min(lo+BatchRows, n)
		cols := make([]arrow.Array, len(r.root.kids))
		for i, k := range r.root.kids {
			cols[i] = k.array(lo, hi)
		}
		rec := array.NewRecordBatch(schema, cols, int64(hi-lo))
		for _, c := range cols {
			c.Release()
		}
		if rec, err = withoutRows(rec, r.dead, lo, hi); err == nil {
			out = append(out, rec)
		}
	}
	r.root.reset()
	r.dead, r.before = r.dead[:0], 0
	if err != nil {
		for _, rec := range out {
			rec.Release()
		}
		return nil, err
	}
	return out, nil
}

// withoutRows is rec, the rows [lo, hi), without those of dead (sorted)
// that fall in it.
func withoutRows(rec arrow.RecordBatch, dead []int, lo, hi int) (arrow.RecordBatch, error) {
	i, _ := slices.BinarySearch(dead, lo)
	j, _ := slices.BinarySearch(dead, hi)
	if i == j {
		return rec, nil
	}
	in := make([]int, j-i)
	for k, row := range dead[i:j] {
		in[k] = row - lo
	}
	return ingest.WithoutRows(rec, in)
}

// Malformed is why b is not one JSON object, in encoding/json's words.
func Malformed(b []byte) error { return syntaxError(b) }

// syntaxError is encoding/json's account of a line that is not one JSON
// object, in the words the earlier readers used.
func syntaxError(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("malformed JSON (%v)", err)
	}
	if dec.More() {
		return errors.New("malformed JSON (more than one value on the line)")
	}
	return errors.New("malformed JSON (a line must hold one object)")
}

func wrongType(err error) error {
	return fmt.Errorf("malformed JSON or a value of the wrong type (%v)", err)
}

// column is one value position: its kind, as Kind's, and its values so
// far; n entries, valid[i] false for a null.
type column struct {
	kind string
	typ  arrow.DataType // with a schema: the type read
	name string
	path string
	n    int
	hint int // the rows expected, for a top-level column

	valid  []bool
	ints   []int64
	floats []float64
	bools  []bool
	data   []byte
	ends   []int // string: end of value i in data; array: of its elements in elem

	names   []string
	kids    []*column // the columns of names
	fields  map[string]*column
	guess   []*column // the columns of the last object's keys, in its order
	pending []string  // new nested keys of the object being read
	seen    uint64    // the generation of the object that set it last

	elem   *column
	asText bool
	zone   *time.Location // timestamp: nil when the type names no zone Go knows, and strings are not read

	// other reads a type floe does not parse itself (dates, timestamps,
	// decimals, ...) through arrow-go, one value at a time.
	other   *array.RecordBuilder
	built   arrow.Array // other's values, built once for Records
	scratch *array.RecordBuilder
	wrap    []byte
}

func (c *column) addFixed(name string, dt arrow.DataType) {
	if _, dup := c.fields[name]; dup {
		return
	}
	path := name
	if c.path != "" {
		path = c.path + "." + name
	}
	k := fixedColumn(dt, path)
	k.name = name
	c.names, c.kids = append(c.names, name), append(c.kids, k)
	c.fields[name] = k
}

func fixedColumn(dt arrow.DataType, path string) *column {
	c := &column{typ: dt, path: path}
	switch dt.ID() {
	case arrow.NULL:
		c.kind = ""
	case arrow.BOOL:
		c.kind = "bool"
	case arrow.INT64:
		c.kind = "int"
	case arrow.FLOAT64:
		c.kind = "float"
	case arrow.STRING:
		c.kind = "string"
	case arrow.TIMESTAMP:
		// The usual JSON timestamps, strings, are read here; anything else
		// goes through arrow-go as other types do.
		c.kind = "timestamp"
		c.zone, _ = dt.(*arrow.TimestampType).GetZone()
	case arrow.STRUCT:
		c.kind = "object"
		c.fields = map[string]*column{}
		for _, f := range dt.(*arrow.StructType).Fields() {
			c.addFixed(f.Name, f.Type)
		}
	case arrow.LIST:
		c.kind = "array"
		c.elem = fixedColumn(dt.(*arrow.ListType).Elem(), path+"[]")
	default:
		c.kind = "other"
		c.other = oneColumn(dt)
	}
	return c
}

func oneColumn(dt arrow.DataType) *array.RecordBuilder {
	return array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "v", Type: dt, Nullable: true}}, nil))
}

func (c *column) dataType() arrow.DataType {
	if c.typ != nil {
		return c.typ
	}
	switch c.kind {
	case "bool":
		return arrow.FixedWidthTypes.Boolean
	case "int":
		return arrow.PrimitiveTypes.Int64
	case "float":
		return arrow.PrimitiveTypes.Float64
	case "string":
		return arrow.BinaryTypes.String
	case "object":
		fields := make([]arrow.Field, len(c.names))
		for i, n := range c.names {
			fields[i] = arrow.Field{Name: n, Type: c.kids[i].dataType(), Nullable: true}
		}
		return arrow.StructOf(fields...)
	case "array":
		if c.elem == nil {
			return arrow.ListOf(arrow.Null)
		}
		return arrow.ListOf(c.elem.dataType())
	}
	return arrow.Null
}

func (c *column) lastEnd() int {
	if len(c.ends) == 0 {
		return 0
	}
	return c.ends[len(c.ends)-1]
}

// appendNull appends a null; a null object's fields get one too, as
// Arrow's struct layout needs.
func (c *column) appendNull() {
	if c.other != nil {
		c.other.Field(0).AppendNull()
		c.n++
		return
	}
	c.n++
	c.valid = append(c.valid, false)
	c.fill(1)
}

// fill appends k zero values for entries already counted in valid.
func (c *column) fill(k int) {
	switch c.kind {
	case "bool":
		c.bools = append(c.bools, make([]bool, k)...)
	case "int", "timestamp":
		c.ints = append(c.ints, make([]int64, k)...)
	case "float":
		c.floats = append(c.floats, make([]float64, k)...)
	case "string", "array":
		e := c.lastEnd()
		for range k {
			c.ends = append(c.ends, e)
		}
	case "object":
		for _, kid := range c.kids {
			kid.appendNulls(k)
		}
	}
}

// complete brings c to want entries after a failed row: a value the row
// did not reach becomes a null, a nested object's fields and an array's
// elements are completed as their parents' entries need.
func (c *column) complete(want int) {
	if c.other != nil {
		f := c.other.Field(0)
		for f.Len() < want {
			f.AppendNull()
		}
		c.n = f.Len()
		return
	}
	switch c.kind {
	case "object":
		if c.n < want {
			c.appendNull()
		}
		for _, k := range c.kids {
			k.complete(c.n)
		}
		for _, name := range c.pending {
			c.fields[name].complete(c.n)
		}
	case "array":
		if c.elem != nil {
			c.elem.complete(c.elem.n)
		}
		if c.n < want {
			// The elements the row got so far make its (dropped) array, so
			// that the next entry starts after them.
			c.n++
			c.valid = append(c.valid, true)
			end := 0
			if c.elem != nil {
				end = c.elem.n
			}
			c.ends = append(c.ends, end)
		}
	default:
		if c.n < want {
			c.appendNull()
		}
	}
}

func (c *column) appendNulls(k int) {
	for range k {
		c.appendNull()
	}
}

// become widens an inferred column to kind, or reports a conflict.
func (c *column) become(kind string) error {
	switch {
	case c.kind == kind:
	case c.kind == "":
		c.kind = kind
		c.reserve()
		if kind == "object" && c.fields == nil {
			c.fields = map[string]*column{}
		}
		c.fill(c.n)
	case c.kind == "int" && kind == "float":
		c.floats = make([]float64, len(c.ints), cap(c.ints))
		for i, v := range c.ints {
			c.floats[i] = float64(v)
		}
		c.ints, c.kind = nil, "float"
	case c.kind == "float" && kind == "int":
	default:
		return &KindConflict{Path: c.path, Was: jsonWord(c.kind), Is: jsonWord(kind)}
	}
	return nil
}

func (c *column) reserve() {
	if c.hint <= c.n {
		return
	}
	c.valid = slices.Grow(c.valid, c.hint-len(c.valid))
	switch c.kind {
	case "bool":
		c.bools = slices.Grow(c.bools, c.hint-len(c.bools))
	case "int", "timestamp":
		c.ints = slices.Grow(c.ints, c.hint-len(c.ints))
	case "float":
		c.floats = slices.Grow(c.floats, c.hint-len(c.floats))
	case "string", "array":
		c.ends = slices.Grow(c.ends, c.hint-len(c.ends))
	}
}

// truncate drops the values, keeping their memory for the next.
func (c *column) truncate() {
	c.n = 0
	c.valid, c.ints, c.floats, c.bools, c.data, c.ends = c.valid[:0], c.ints[:0], c.floats[:0], c.bools[:0], c.data[:0], c.ends[:0]
	for _, k := range c.kids {
		k.truncate()
	}
	for _, n := range c.pending {
		c.fields[n].truncate()
	}
	if c.elem != nil {
		c.elem.truncate()
	}
}

func (c *column) reset() {
	c.n = 0
	if c.built != nil {
		c.built.Release()
		c.built = nil
	}
	c.valid, c.ints, c.floats, c.bools, c.data, c.ends = nil, nil, nil, nil, nil, nil
	for _, f := range c.fields {
		f.reset()
	}
	if c.elem != nil {
		c.elem.reset()
	}
}

// array builds entries [lo, hi) as an Arrow array over the column's own
// memory, which reset then leaves to it.
func (c *column) array(lo, hi int) arrow.Array {
	if c.other != nil {
		if c.built == nil {
			rec := c.other.NewRecordBatch()
			c.built = rec.Column(0)
			c.built.Retain()
			rec.Release()
		}
		return array.NewSlice(c.built, int64(lo), int64(hi))
	}
	n := hi - lo
	if c.kind == "" {
		return array.NewNull(n)
	}
	bitmap, nulls := bits(c.valid[lo:hi])
	dt := c.dataType()
	var data arrow.ArrayData
	switch c.kind {
	case "bool":
		vals, _ := bits(c.bools[lo:hi])
		data = array.NewData(dt, n, []*memory.Buffer{bitmap, vals}, nil, nulls, 0)
	case "int", "timestamp":
		data = array.NewData(dt, n, []*memory.Buffer{bitmap, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(c.ints[lo:hi]))}, nil, nulls, 0)
	case "float":
		data = array.NewData(dt, n, []*memory.Buffer{bitmap, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(c.floats[lo:hi]))}, nil, nulls, 0)
	case "string":
		offs, from, to := c.offsets(lo, hi)
		data = array.NewData(dt, n, []*memory.Buffer{bitmap, offs, memory.NewBufferBytes(c.data[from:to])}, nil, nulls, 0)
	case "array":
		offs, from, to := c.offsets(lo, hi)
		var elem arrow.Array
		if c.elem == nil {
			elem = array.NewNull(0)
		} else {
			elem = c.elem.array(from, to)
		}
		defer elem.Release()
		data = array.NewData(dt, n, []*memory.Buffer{bitmap, offs}, []arrow.ArrayData{elem.Data()}, nulls, 0)
	case "object":
		children := make([]arrow.ArrayData, len(c.kids))
		for i, kid := range c.kids {
			a := kid.array(lo, hi)
			children[i] = a.Data()
			defer a.Release()
		}
		data = array.NewData(dt, n, []*memory.Buffer{bitmap}, children, nulls, 0)
	}
	defer data.Release()
	return array.MakeFromData(data)
}

// offsets are entries [lo, hi)'s ends as Arrow's int32 offsets from the
// first one's start, with that start and the last end.
func (c *column) offsets(lo, hi int) (*memory.Buffer, int, int) {
	from := 0
	if lo > 0 {
		from = c.ends[lo-1]
	}
	offs := make([]int32, hi-lo+1)
	for i, e := range c.ends[lo:hi] {
		offs[i+1] = int32(e - from)
	}
	return memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)), from, from + int(offs[hi-lo])
}

// bits packs bools into an Arrow bitmap, with the count of unset ones.
func bits(v []bool) (*memory.Buffer, int) {
	buf := make([]byte, bitutil.BytesForBits(int64(len(v))))
	unset := 0
	for i, b := range v {
		if b {
			buf[i>>3] |= 1 << (i & 7)
		} else {
			unset++
		}
	}
	return memory.NewBufferBytes(buf), unset
}

// parser walks one object's bytes.
type parser struct {
	b    []byte
	i    int
	rows *Rows
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) fail() error { return syntaxError(p.b) }

// object reads an object into c, whose entry it appends.
func (p *parser) object(c *column, root bool) error {
	p.i++ // '{'
	gen := p.rows.gen + 1
	p.rows.gen = gen
	c.n++
	if !root {
		c.valid = append(c.valid, true)
	}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return p.closeObject(c, gen)
	}
	at := 0
	for {
		key, err := p.key()
		if err != nil {
			return err
		}
		// Objects mostly repeat the last one's keys in its order: comparing
		// one name finds the column without hashing the key.
		var f *column
		if at < len(c.guess) && c.guess[at].name == string(key) {
			f = c.guess[at]
		} else {
			f = c.fields[string(key)]
		}
		if f == nil && p.rows.fixed {
			if err := p.skip(); err != nil {
				return err
			}
		} else {
			if f == nil {
				f = p.newField(c, key, root)
			}
			if at < len(c.guess) {
				c.guess[at] = f
			} else {
				c.guess = append(c.guess, f)
			}
			at++
			if f.seen == gen {
				if root {
					return wrongType(fmt.Errorf("key %s shows up twice in row to be decoded", key))
				}
				return wrongType(fmt.Errorf("key %s is specified twice", key))
			}
			f.seen = gen
			if err := p.value(f); err != nil {
				return err
			}
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.fail()
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return p.closeObject(c, gen)
		default:
			return p.fail()
		}
	}
}

// newField adds the column of a key c has not seen, null in c's earlier
// entries.
func (p *parser) newField(c *column, key []byte, root bool) *column {
	name := string(key)
	f := &column{name: name, path: name}
	if root {
		f.hint = p.rows.hint
	} else {
		f.path = c.path + "." + name
	}
	if dt, ok := p.rows.given[name]; ok && root {
		f.typ, f.kind = dt, "given"
	}
	f.valid = make([]bool, 0, max(c.n, f.hint))
	f.appendNulls(c.n - 1)
	c.fields[name] = f
	if root {
		c.names, c.kids = append(c.names, name), append(c.kids, f)
	} else {
		c.pending = append(c.pending, name)
	}
	return f
}

// closeObject gives the fields the object lacked a null and records its
// new keys sorted, the order ObserveLine gives nested keys.
func (p *parser) closeObject(c *column, gen uint64) error {
	if len(c.pending) > 0 {
		slices.Sort(c.pending)
		for _, n := range c.pending {
			c.names, c.kids = append(c.names, n), append(c.kids, c.fields[n])
		}
		c.pending = c.pending[:0]
	}
	for _, f := range c.kids {
		if f.seen != gen {
			f.appendNull()
		}
	}
	return nil
}

// key reads an object's member name and the colon after it, with the
// white space around them.
func (p *parser) key() ([]byte, error) {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, p.fail()
	}
	key, err := p.str()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != ':' {
		return nil, p.fail()
	}
	p.i++
	p.ws()
	return key, nil
}

// str reads a string token, returning its unescaped bytes (valid UTF-8,
// as encoding/json gives them), which may alias the input.
func (p *parser) str() ([]byte, error) {
	// Most strings are plain ASCII: found by the closing quote, checked
	// in one tight loop.
	from := p.i + 1
	if end := bytes.IndexByte(p.b[from:], '"'); end >= 0 {
		s := p.b[from : from+end]
		if plainASCII(s) {
			p.i = from + end + 1
			return s, nil
		}
	}
	return p.escapedStr()
}

// plainASCII reports whether s holds no control character, backslash or
// byte of a multi-byte character, eight bytes at a time.
func plainASCII(s []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(s) >= 8 {
		w := binary.LittleEndian.Uint64(s)
		// A byte under 0x20 or at 0x80 and above; a backslash is a
		// zero byte of w^0x5c5c...: the classic has-zero-byte test.
		bs := w ^ (0x5c * ones)
		if (w-0x20*ones|w|(bs-ones)&^bs)&highs != 0 {
			return false
		}
		s = s[8:]
	}
	for _, ch := range s {
		if ch < 0x20 || ch == '\\' || ch >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// escapedStr is str for strings with escapes, other characters than
// ASCII or errors.
func (p *parser) escapedStr() ([]byte, error) {
	start := p.i
	p.i++
	plain := true
	for p.i < len(p.b) {
		ch := p.b[p.i]
		switch {
		case ch == '"':
			p.i++
			raw := p.b[start:p.i]
			if plain {
				return raw[1 : len(raw)-1], nil
			}
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return nil, p.fail()
			}
			return []byte(s), nil
		case ch == '\\':
			plain = false
			p.i += 2
			continue
		case ch < 0x20:
			return nil, p.fail()
		case ch >= utf8.RuneSelf:
			if r, size := utf8.DecodeRune(p.b[p.i:]); r == utf8.RuneError && size == 1 {
				plain = false
			} else {
				p.i += size
				continue
			}
		}
		p.i++
	}
	return nil, p.fail()
}

// number reads a number token; isInt is ObserveLine's int kind, a number
// ParseInt reads.
func (p *parser) number() (text []byte, v int64, isInt bool, err error) {
	start := p.i
	b := p.b
	i := p.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	// The integer part's value is summed while it is scanned: most
	// numbers are integers of fewer than 19 digits, which cannot overflow.
	var u uint64
	intStart := i
	switch {
	case i < len(b) && b[i] == '0':
		i++
	default:
		for i < len(b) && b[i]-'0' <= 9 {
			u = u*10 + uint64(b[i]-'0')
			i++
		}
		if i == intStart {
			p.i = i
			return nil, 0, false, p.fail()
		}
	}
	intDigits := i - intStart
	digits := func() int {
		s := i
		for i < len(b) && b[i]-'0' <= 9 {
			i++
		}
		return i - s
	}
	isInt = true
	if i < len(b) && b[i] == '.' {
		i++
		isInt = false
		if digits() == 0 {
			p.i = i
			return nil, 0, false, p.fail()
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		isInt = false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			p.i = i
			return nil, 0, false, p.fail()
		}
	}
	p.i = i
	text = b[start:i]
	if !isInt {
		return text, 0, false, nil
	}
	if intDigits <= 18 {
		v = int64(u)
		if neg {
			v = -v
		}
		return text, v, true, nil
	}
	v, perr := strconv.ParseInt(transient(text), 10, 64)
	return text, v, perr == nil, nil
}

// skip passes over one value, checking its syntax.
func (p *parser) skip() error {
	if p.i >= len(p.b) {
		return p.fail()
	}
	switch ch := p.b[p.i]; {
	case ch == '"':
		_, err := p.str()
		return err
	case ch == '{' || ch == '[':
		close := byte('}')
		if ch == '[' {
			close = ']'
		}
		p.i++
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == close {
			p.i++
			return nil
		}
		for {
			if ch == '{' {
				if _, err := p.key(); err != nil {
					return err
				}
			} else {
				p.ws()
			}
			if err := p.skip(); err != nil {
				return err
			}
			p.ws()
			if p.i >= len(p.b) {
				return p.fail()
			}
			if p.b[p.i] == close {
				p.i++
				return nil
			}
			if p.b[p.i] != ',' {
				return p.fail()
			}
			p.i++
		}
	case ch == 't':
		return p.literal("true")
	case ch == 'f':
		return p.literal("false")
	case ch == 'n':
		return p.literal("null")
	default:
		_, _, _, err := p.number()
		return err
	}
}

func (p *parser) literal(word string) error {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return p.fail()
	}
	p.i += len(word)
	return nil
}

// value reads one value into c.
func (p *parser) value(c *column) error {
	if p.i >= len(p.b) {
		return p.fail()
	}
	if p.rows.fixed {
		return p.fixedValue(c)
	}
	if c.kind == "given" {
		if err := p.skip(); err != nil {
			return err
		}
		c.n++
		c.valid = append(c.valid, true)
		return nil
	}
	switch ch := p.b[p.i]; {
	case ch == 'n':
		if err := p.literal("null"); err != nil {
			return err
		}
		c.appendNull()
	case ch == 't' || ch == 'f':
		word := "true"
		if ch == 'f' {
			word = "false"
		}
		if err := p.literal(word); err != nil {
			return err
		}
		if err := c.become("bool"); err != nil {
			return err
		}
		c.n++
		c.valid = append(c.valid, true)
		c.bools = append(c.bools, ch == 't')
	case ch == '"':
		s, err := p.str()
		if err != nil {
			return err
		}
		if err := c.become("string"); err != nil {
			return err
		}
		if p.rows.discard {
			// Inferring keeps no values: the string's bytes are not
			// copied.
			c.n++
			c.valid = append(c.valid, true)
			c.ends = append(c.ends, len(c.data))
			return nil
		}
		c.appendString(s)
	case ch == '{':
		if err := c.become("object"); err != nil {
			return err
		}
		return p.object(c, false)
	case ch == '[':
		if err := c.become("array"); err != nil {
			return err
		}
		if c.elem == nil {
			c.elem = &column{path: c.path + "[]"}
		}
		return p.array(c)
	default:
		text, v, isInt, err := p.number()
		if err != nil {
			return err
		}
		kind := "float"
		if isInt {
			kind = "int"
		}
		if err := c.become(kind); err != nil {
			return err
		}
		if c.kind == "int" {
			c.n++
			c.valid = append(c.valid, true)
			c.ints = append(c.ints, v)
			return nil
		}
		if p.rows.discard && len(text) < 300 && bytes.IndexAny(text, "eE") < 0 {
			// Inferring keeps no values: a double that cannot be out of
			// range (no exponent, fewer than 308 digits) is not parsed.
			c.n++
			c.valid = append(c.valid, true)
			c.floats = append(c.floats, 0)
			return nil
		}
		return c.appendFloat(text)
	}
	return nil
}

func (c *column) appendString(s []byte) {
	if len(c.data)+len(s) > cap(c.data) && c.n > 0 && c.hint > c.n {
		// Room for the rows to come at the length of the values so far,
		// growing by a quarter at least.
		need := len(s) + (len(c.data)/c.n+1)*(c.hint-c.n)
		c.data = slices.Grow(c.data, max(need, cap(c.data)/4))
	}
	c.n++
	c.valid = append(c.valid, true)
	c.data = append(c.data, s...)
	c.ends = append(c.ends, len(c.data))
}

func (c *column) appendFloat(text []byte) error {
	f, err := textnum.ParseFloat(text)
	if err != nil || math.IsInf(f, 0) {
		return wrongType(fmt.Errorf("number %s is out of the range of a double", text))
	}
	c.n++
	c.valid = append(c.valid, true)
	c.floats = append(c.floats, f)
	return nil
}

// array reads an array into c, whose entry it appends.
func (p *parser) array(c *column) error {
	p.i++ // '['
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
	} else {
		for {
			p.ws()
			if err := p.value(c.elem); err != nil {
				return err
			}
			p.ws()
			if p.i >= len(p.b) {
				return p.fail()
			}
			if p.b[p.i] == ']' {
				p.i++
				break
			}
			if p.b[p.i] != ',' {
				return p.fail()
			}
			p.i++
		}
	}
	c.n++
	c.valid = append(c.valid, true)
	c.ends = append(c.ends, c.elem.n)
	return nil
}

// fixedValue reads one value into a column of a given type: the values
// floe reads itself directly, others as arrow-go reads them.
func (p *parser) fixedValue(c *column) error {
	start := p.i
	ch := p.b[p.i]
	if ch == 'n' && c.other == nil {
		if err := p.literal("null"); err != nil {
			return err
		}
		c.appendNull()
		return nil
	}
	switch {
	case c.other != nil:
	case ch == '"' && c.kind == "string":
		s, err := p.str()
		if err != nil {
			return err
		}
		c.appendString(s)
		return nil
	case ch == '"' && c.kind == "timestamp":
		s, err := p.str()
		if err != nil {
			return err
		}
		if ts, ok := c.timestamp(s); ok {
			c.n++
			c.valid = append(c.valid, true)
			c.ints = append(c.ints, int64(ts))
			return nil
		}
	case ch == '{' && c.kind == "object":
		return p.object(c, false)
	case ch == '[' && c.kind == "array":
		return p.array(c)
	case (ch == 't' || ch == 'f') && c.kind == "bool":
		if err := p.skip(); err != nil {
			return err
		}
		c.n++
		c.valid = append(c.valid, true)
		c.bools = append(c.bools, ch == 't')
		return nil
	case (ch == '-' || ch >= '0' && ch <= '9') && (c.kind == "int" || c.kind == "float"):
		text, v, isInt, err := p.number()
		if err != nil {
			return err
		}
		if c.kind == "int" && isInt {
			c.n++
			c.valid = append(c.valid, true)
			c.ints = append(c.ints, v)
			return nil
		}
		if c.kind == "float" {
			if f, err := textnum.ParseFloat(text); err == nil {
				c.n++
				c.valid = append(c.valid, true)
				c.floats = append(c.floats, f)
				return nil
			}
		}
	}
	p.i = start
	if err := p.skip(); err != nil {
		return err
	}
	raw := p.b[start:p.i]
	if c.asText {
		c.appendString(raw)
		return nil
	}
	return c.delegate(raw)
}

// timestamp reads a JSON string as arrow-go's TimestampBuilder does, or
// reports that it cannot.
func (c *column) timestamp(s []byte) (arrow.Timestamp, bool) {
	if texttime.Integer(s) {
		if i, err := strconv.ParseInt(transient(s), 10, 64); err == nil {
			return arrow.Timestamp(i), true
		}
	}
	if c.zone == nil {
		return 0, false
	}
	tt := c.typ.(*arrow.TimestampType)
	ts, zoned, err := texttime.Timestamp(s, tt.Unit)
	return ts, err == nil && zoned == (tt.TimeZone != "")
}

// delegate reads a value as arrow-go's RecordBuilder.UnmarshalJSON does,
// for types and values floe does not read itself; it is its errors too.
func (c *column) delegate(raw []byte) error {
	rb := c.other
	if rb == nil {
		if c.scratch == nil {
			c.scratch = oneColumn(c.typ)
		}
		rb = c.scratch
	}
	c.wrap = append(append(append(c.wrap[:0], `{"v":`...), raw...), '}')
	if err := rb.UnmarshalJSON(c.wrap); err != nil {
		return &ValueError{Column: c.path, Value: string(raw), Type: c.typ, Err: err}
	}
	if rb == c.other {
		c.n++
		return nil
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	col := rec.Column(0)
	if col.IsNull(0) {
		c.appendNull()
		return nil
	}
	c.n++
	c.valid = append(c.valid, true)
	switch a := col.(type) {
	case *array.Boolean:
		c.bools = append(c.bools, a.Value(0))
	case *array.Int64:
		c.ints = append(c.ints, a.Value(0))
	case *array.Timestamp:
		c.ints = append(c.ints, int64(a.Value(0)))
	case *array.Float64:
		c.floats = append(c.floats, a.Value(0))
	case *array.String:
		c.data = append(c.data, a.Value(0)...)
		c.ends = append(c.ends, len(c.data))
	default:
		return &ValueError{Column: c.path, Value: string(raw), Type: c.typ}
	}
	return nil
}

// transient views b as a string for a parser that keeps no reference to
// its argument (strconv copies it into its errors): converting a copy was
// a third of parsing a double.
func transient(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
