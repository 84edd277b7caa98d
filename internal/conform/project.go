package conform

import (
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/floe-io/floe/internal/ingest"
)

// projection selects the input fields a sink writes, with the semantics of
// Beam's Managed I/O: keep lists the fields written, drop the fields left
// out, and only writes the fields of one struct column as the row. Names are
// dotted for nested struct fields ("meta.region"); a dot always separates
// levels. A name matches exactly, or case-insensitively as a last resort, as
// conform matches columns.
//
// Rows where the only struct is itself null are written with every field
// null rather than skipped, as Beam writes the nested record: dropping rows
// silently would lose data and shift the row numbers in errors.
//
// A projection is safe for concurrent use: plans are cached per input
// schema under a mutex.
type Projection struct {
	keep *pathNode // nil unless keep was given
	drop *pathNode // nil unless drop was given
	only []string  // path of the struct column; nil unless only was given

	mu    sync.Mutex
	plans []*projPlan
}

// maxProjPlans bounds the plan cache; inputs with ever-changing schemas
// (inferred JSON) would otherwise grow it without end.
const maxProjPlans = 64

// pathNode is a set of dotted names as a tree: whole selects the field with
// everything below it.
type pathNode struct {
	whole    bool
	names    []string // children in the order given, for stable errors
	children map[string]*pathNode
}

func (n *pathNode) add(path []string) {
	if len(path) == 0 {
		n.whole = true
		return
	}
	if n.children == nil {
		n.children = map[string]*pathNode{}
	}
	c, ok := n.children[path[0]]
	if !ok {
		c = &pathNode{}
		n.children[path[0]] = c
		n.names = append(n.names, path[0])
	}
	c.add(path[1:])
}

func newPathNode(names []string) *pathNode {
	n := &pathNode{}
	for _, name := range names {
		n.add(strings.Split(name, "."))
	}
	return n
}

// newProjection returns nil when there is nothing to do. Names are dotted
// for nested struct fields ("meta.region").
func NewProjection(keep, drop []string, only string) *Projection {
	p := &Projection{}
	switch {
	case only != "":
		p.only = strings.Split(only, ".")
	case len(keep) > 0:
		p.keep = newPathNode(keep)
	case len(drop) > 0:
		p.drop = newPathNode(drop)
	default:
		return nil
	}
	return p
}

// projPlan is the projection of one input schema.
type projPlan struct {
	in   *arrow.Schema
	out  *arrow.Schema
	cols []projCol
	// only is the path of input indices to the only struct, nil otherwise.
	only []int
}

// projCol produces one output column: input column in, narrowed by sel
// when only some of its nested fields are kept.
type projCol struct {
	in  int
	sel *structSel
}

// structSel keeps some fields of a struct, in the input's order.
type structSel struct {
	typ      *arrow.StructType
	children []projCol
}

// schema returns the projected schema, or an error naming a field the input
// lacks.
func (p *Projection) Schema(in *arrow.Schema) (*arrow.Schema, error) {
	pl, err := p.plan(in)
	if err != nil {
		return nil, err
	}
	return pl.out, nil
}

func (p *Projection) plan(in *arrow.Schema) (*projPlan, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pl := range p.plans {
		if pl.in == in {
			return pl, nil
		}
	}
	for _, pl := range p.plans {
		if pl.in.Equal(in) {
			return pl, nil
		}
	}
	pl, err := p.newPlan(in)
	if err != nil {
		return nil, err
	}
	if len(p.plans) >= maxProjPlans {
		p.plans = p.plans[:0]
	}
	p.plans = append(p.plans, pl)
	return pl, nil
}

func (p *Projection) newPlan(in *arrow.Schema) (*projPlan, error) {
	pl := &projPlan{in: in}
	var fields []arrow.Field
	switch {
	case p.only != nil:
		path, st, nullable, err := onlyStruct(in, p.only)
		if err != nil {
			return nil, err
		}
		pl.only = path
		for i, f := range st.Fields() {
			// A null struct gives null fields, so a field is only as
			// required as the struct and everything above it.
			f.Nullable = f.Nullable || nullable
			fields = append(fields, f)
			pl.cols = append(pl.cols, projCol{in: i})
		}
	case p.keep != nil:
		cols, fs, err := keepFields(in.Fields(), p.keep, "")
		if err != nil {
			return nil, err
		}
		pl.cols, fields = cols, fs
	default:
		cols, fs, err := dropFields(in.Fields(), p.drop, "")
		if err != nil {
			return nil, err
		}
		pl.cols, fields = cols, fs
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("%w: the field selection leaves no column to write (the input has %s); keep at least one column", ingest.ErrSchemaMismatch, fieldList(in.Fields()))
	}
	pl.out = arrow.NewSchema(fields, nil)
	return pl, nil
}

// resolve finds each name of node among fields: exactly, else
// case-insensitively. Names resolving to the same field are merged.
func resolve(fields []arrow.Field, node *pathNode, op, prefix string) (map[int]*pathNode, error) {
	out := map[int]*pathNode{}
	for _, name := range node.names {
		i := FieldIndex(fields, name)
		if i < 0 {
			where := "the input"
			if prefix != "" {
				where = "struct " + strings.TrimSuffix(prefix, ".")
			}
			return nil, fmt.Errorf("%w: %s: field %q does not exist in the input; %s has %s", ingest.ErrSchemaMismatch, op, prefix+name, where, fieldList(fields))
		}
		c := node.children[name]
		if prev, ok := out[i]; ok {
			c = mergePaths(prev, c)
		}
		out[i] = c
	}
	return out, nil
}

func mergePaths(a, b *pathNode) *pathNode {
	m := &pathNode{whole: a.whole || b.whole, children: map[string]*pathNode{}}
	for _, n := range []*pathNode{a, b} {
		for _, name := range n.names {
			if prev, ok := m.children[name]; ok {
				m.children[name] = mergePaths(prev, n.children[name])
				continue
			}
			m.names = append(m.names, name)
			m.children[name] = n.children[name]
		}
	}
	return m
}

func fieldList(fields []arrow.Field) string {
	if len(fields) == 0 {
		return "no fields"
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// keepFields keeps the fields node names, in the input's order.
func keepFields(fields []arrow.Field, node *pathNode, prefix string) ([]projCol, []arrow.Field, error) {
	sel, err := resolve(fields, node, "keep", prefix)
	if err != nil {
		return nil, nil, err
	}
	var cols []projCol
	var out []arrow.Field
	for i, f := range fields {
		n, ok := sel[i]
		if !ok {
			continue
		}
		if n.whole {
			cols = append(cols, projCol{in: i})
			out = append(out, f)
			continue
		}
		st, ok := f.Type.(*arrow.StructType)
		if !ok {
			return nil, nil, notStruct("keep", prefix+f.Name, f.Type, prefix+f.Name+"."+n.names[0])
		}
		ccols, cfields, err := keepFields(st.Fields(), n, prefix+f.Name+".")
		if err != nil {
			return nil, nil, err
		}
		cols = append(cols, selCol(i, cfields, ccols))
		f.Type = cols[len(cols)-1].sel.typ
		out = append(out, f)
	}
	return cols, out, nil
}

// dropFields keeps every field but those node names.
func dropFields(fields []arrow.Field, node *pathNode, prefix string) ([]projCol, []arrow.Field, error) {
	sel, err := resolve(fields, node, "drop", prefix)
	if err != nil {
		return nil, nil, err
	}
	var cols []projCol
	var out []arrow.Field
	for i, f := range fields {
		n, ok := sel[i]
		if !ok {
			cols = append(cols, projCol{in: i})
			out = append(out, f)
			continue
		}
		if n.whole {
			continue
		}
		st, ok := f.Type.(*arrow.StructType)
		if !ok {
			return nil, nil, notStruct("drop", prefix+f.Name, f.Type, prefix+f.Name+"."+n.names[0])
		}
		ccols, cfields, err := dropFields(st.Fields(), n, prefix+f.Name+".")
		if err != nil {
			return nil, nil, err
		}
		if len(cfields) == 0 {
			// Iceberg has no empty structs.
			return nil, nil, fmt.Errorf("%w: drop: dropping every field of struct %s leaves it empty; drop %s itself", ingest.ErrSchemaMismatch, prefix+f.Name, prefix+f.Name)
		}
		cols = append(cols, selCol(i, cfields, ccols))
		f.Type = cols[len(cols)-1].sel.typ
		out = append(out, f)
	}
	return cols, out, nil
}

func selCol(in int, fields []arrow.Field, children []projCol) projCol {
	return projCol{in: in, sel: &structSel{typ: arrow.StructOf(fields...), children: children}}
}

func notStruct(op, name string, t arrow.DataType, asked string) error {
	return fmt.Errorf("%w: %s: field %s is %s, not a struct, so %q does not exist; name %s itself", ingest.ErrSchemaMismatch, op, name, TypeName(t), asked, name)
}

// onlyStruct finds the struct column only names, returning the input
// indices along its path and whether it or any struct above it is nullable.
func onlyStruct(in *arrow.Schema, path []string) ([]int, *arrow.StructType, bool, error) {
	fields := in.Fields()
	var idx []int
	nullable := false
	for depth, name := range path {
		prefix := strings.Join(path[:depth], ".")
		i := FieldIndex(fields, name)
		if i < 0 {
			where := "the input"
			if prefix != "" {
				where = "struct " + prefix
				prefix += "."
			}
			return nil, nil, false, fmt.Errorf("%w: only: field %q does not exist in the input; %s has %s", ingest.ErrSchemaMismatch, prefix+name, where, fieldList(fields))
		}
		f := fields[i]
		st, ok := f.Type.(*arrow.StructType)
		if !ok {
			return nil, nil, false, fmt.Errorf("%w: only: field %s is %s, not a struct; only writes the fields of a struct column as the row, so name a struct, or use keep: [%s]", ingest.ErrSchemaMismatch, strings.Join(path[:depth+1], "."), TypeName(f.Type), strings.Join(path[:depth+1], "."))
		}
		idx = append(idx, i)
		nullable = nullable || f.Nullable
		fields = st.Fields()
		if depth == len(path)-1 {
			return idx, st, nullable, nil
		}
	}
	panic("unreachable")
}

// apply projects one record. Columns are reused as they are; narrowed
// structs are rebuilt from their children without copying buffers. Only
// copies a validity bitmap, and only where a struct on its path has nulls.
func (p *Projection) Apply(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	pl, err := p.plan(rec.Schema())
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, len(pl.cols))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	if pl.only != nil {
		chain := make([]*array.Struct, len(pl.only))
		var cur arrow.Array = rec.Column(pl.only[0])
		for d, i := range pl.only {
			if d > 0 {
				cur = chain[d-1].Field(i)
			}
			chain[d] = cur.(*array.Struct)
		}
		st := chain[len(chain)-1]
		for i := range pl.cols {
			cols[i] = maskNulls(st.Field(i), chain)
		}
	} else {
		for i, c := range pl.cols {
			cols[i] = projectColumn(rec.Column(c.in), c.sel)
		}
	}
	return array.NewRecordBatch(pl.out, cols, rec.NumRows()), nil
}

// projectColumn returns a (retained) column narrowed to sel.
func projectColumn(a arrow.Array, sel *structSel) arrow.Array {
	if sel == nil {
		a.Retain()
		return a
	}
	d := selectData(a.Data(), sel)
	defer d.Release()
	return array.MakeFromData(d)
}

// selectData narrows struct data to sel. A struct's children span its
// offset as well as its length, so they are taken whole and the offset kept.
func selectData(d arrow.ArrayData, sel *structSel) arrow.ArrayData {
	children := make([]arrow.ArrayData, len(sel.children))
	for i, c := range sel.children {
		ch := d.Children()[c.in]
		if c.sel == nil {
			ch.Retain()
			children[i] = ch
		} else {
			children[i] = selectData(ch, c.sel)
		}
	}
	out := array.NewData(sel.typ, d.Len(), d.Buffers()[:1], children, d.NullN(), d.Offset())
	for _, c := range children {
		c.Release()
	}
	return out
}

// maskNulls returns child (retained) with nulls wherever a struct of chain
// is null: Arrow leaves a struct's nulls out of its children, whose values
// there are arbitrary.
func maskNulls(child arrow.Array, chain []*array.Struct) arrow.Array {
	nulls := false
	for _, s := range chain {
		nulls = nulls || s.NullN() > 0
	}
	switch child.DataType().ID() {
	case arrow.NULL, arrow.SPARSE_UNION, arrow.DENSE_UNION, arrow.RUN_END_ENCODED:
		// No validity bitmap to mask; Iceberg has no such types anyway, and
		// the conformer refuses them.
		nulls = false
	}
	if !nulls || child.NullN() == child.Len() {
		child.Retain()
		return child
	}
	d := child.Data()
	n, off := d.Len(), d.Offset()
	buf := memory.NewResizableBuffer(memory.DefaultAllocator)
	buf.Resize(int(bitutil.BytesForBits(int64(off + n))))
	bits := buf.Bytes()
	clear(bits)
	nullN := 0
	for j := range n {
		valid := child.IsValid(j)
		for _, s := range chain {
			valid = valid && s.IsValid(j)
		}
		if valid {
			bitutil.SetBit(bits, off+j)
		} else {
			nullN++
		}
	}
	buffers := append([]*memory.Buffer{buf}, d.Buffers()[1:]...)
	var nd *array.Data
	if d.DataType().ID() == arrow.DICTIONARY {
		// A dictionary column (a pandas categorical) keeps its dictionary.
		nd = array.NewDataWithDictionary(d.DataType(), n, buffers, nullN, off, d.Dictionary().(*array.Data))
	} else {
		nd = array.NewData(d.DataType(), n, buffers, d.Children(), nullN, off)
	}
	buf.Release()
	defer nd.Release()
	return array.MakeFromData(nd)
}
