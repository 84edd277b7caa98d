package write

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/ingest"
)

// Dead-letter columns added to the input's: why the row has no table, and
// where it came from.
const (
	DeadLetterErrorColumn = "_floe_error"
	DeadLetterFileColumn  = "_floe_source_file"
	DeadLetterRowColumn   = "_floe_source_row"
)

// template is a parsed table template such as "db.events_{region}": literal
// text between placeholders that each name a (possibly nested) column.
type template struct {
	text    string
	literal []string   // len(holes)+1 pieces around the placeholders
	holes   [][]string // column paths, e.g. ["meta", "region"]
}

func parseTemplate(s string) (*template, error) {
	t := &template{text: s}
	rest := s
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			t.literal = append(t.literal, rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("%w: table template %q leaves a placeholder unclosed; write {column}", ingest.ErrConfig, s)
		}
		name := strings.TrimSpace(rest[i+1 : i+j])
		if name == "" || strings.ContainsAny(name, "{") {
			return nil, fmt.Errorf("%w: table template %q has an empty or nested placeholder; write {column} or {struct.field}", ingest.ErrConfig, s)
		}
		t.literal = append(t.literal, rest[:i])
		t.holes = append(t.holes, strings.Split(name, "."))
		rest = rest[i+j+1:]
	}
	// The name must still parse once the placeholders are filled: check it
	// with a valid stand-in value.
	probe := t.literal[0]
	for i := range t.holes {
		probe += "x" + t.literal[i+1]
	}
	if _, err := ingest.ParseIdent(probe); err != nil {
		return nil, fmt.Errorf("%w: table template %q does not name NAMESPACE.TABLE once filled in, e.g. db.events_{region}", ingest.ErrConfig, s)
	}
	return t, nil
}

// validNamePart tells whether a column value can stand in a table name.
// Iceberg identifiers and Beam's dynamic destinations take any characters
// (eu-west, région), so only what would change the name's meaning is
// refused: a dot would make it two name parts, a slash or backslash a
// path in the table's location, and a control character cannot be typed.
func validNamePart(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return r == '.' || r == '/' || r == '\\' || unicode.IsControl(r)
	}) < 0
}

// Router splits records by the table their values name.
type Router struct {
	tmpl       *template
	deadLetter string // table for rows without a valid name; "" fails them
	// badRecords writes such rows as bad records (BadRecordSchema, the row
	// as JSON), which the dead-letter table holds under on-bad-record:
	// dead-letter, rather than as the input's columns.
	badRecords bool
}

// NewRouter parses a table template such as "db.events_{region}"; rows
// whose values name no valid table go to deadLetter, or fail the batch
// when it is "". With badRecords they go there as bad records.
func NewRouter(tmpl, deadLetter string, badRecords bool) (*Router, error) {
	t, err := parseTemplate(tmpl)
	if err != nil {
		return nil, err
	}
	if deadLetter != "" {
		if _, err := ingest.ParseIdent(deadLetter); err != nil {
			return nil, err
		}
	}
	return &Router{tmpl: t, deadLetter: deadLetter, badRecords: badRecords}, nil
}

// routed is the rows of one record bound for one table.
type routed struct {
	table string
	rec   arrow.RecordBatch
	// dead is the number of dead letters: rows that name no table and
	// carry the reason columns.
	dead int
}

// holeColumn finds a placeholder's column in rec and checks that its type
// can name a table.
func (r *Router) holeColumn(rec arrow.RecordBatch, path []string) (arrow.Array, error) {
	var col arrow.Array
	schemaFields := rec.Schema().Fields()
	for depth, name := range path {
		idx := -1
		for i, f := range schemaFields {
			if f.Name == name {
				idx = i
				break
			}
		}
		if idx < 0 {
			var names []string
			for _, f := range schemaFields {
				names = append(names, f.Name)
			}
			return nil, fmt.Errorf("%w: table template %q names column %q, which the input lacks (it has %s)", ingest.ErrSchemaMismatch, r.tmpl.text, strings.Join(path[:depth+1], "."), strings.Join(names, ", "))
		}
		if col == nil {
			col = rec.Column(idx)
		} else {
			col = col.(*array.Struct).Field(idx)
		}
		if depth < len(path)-1 {
			st, ok := col.DataType().(*arrow.StructType)
			if !ok {
				return nil, fmt.Errorf("%w: table template %q reads %q inside column %q, which is %s, not a struct", ingest.ErrSchemaMismatch, r.tmpl.text, path[depth+1], strings.Join(path[:depth+1], "."), conform.TypeName(col.DataType()))
			}
			schemaFields = st.Fields()
		}
	}
	switch col.DataType().ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.BOOL, arrow.DICTIONARY:
		return col, nil
	}
	return nil, fmt.Errorf("%w: table template %q names column %q of type %s; a table name can only come from a string, integer or boolean column", ingest.ErrSchemaMismatch, r.tmpl.text, strings.Join(path, "."), conform.TypeName(col.DataType()))
}

// valueString renders one value for a table name; ok is false for null.
func valueString(col arrow.Array, i int) (string, bool) {
	if col.IsNull(i) {
		return "", false
	}
	switch a := col.(type) {
	case *array.String:
		return a.Value(i), true
	case *array.LargeString:
		return a.Value(i), true
	case *array.Dictionary:
		return valueString(a.Dictionary(), a.GetValueIndex(i))
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i)), true
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10), true
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10), true
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10), true
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10), true
	case *array.Uint8:
		return strconv.FormatUint(uint64(a.Value(i)), 10), true
	case *array.Uint16:
		return strconv.FormatUint(uint64(a.Value(i)), 10), true
	case *array.Uint32:
		return strconv.FormatUint(uint64(a.Value(i)), 10), true
	case *array.Uint64:
		return strconv.FormatUint(a.Value(i), 10), true
	}
	return "", false
}

// route splits rec by destination table. file and firstRow locate the
// record's rows in their input file, for dead letters and errors; batch
// is the batch's id, which bad records carry.
func (r *Router) route(ctx context.Context, rec arrow.RecordBatch, file string, firstRow, batch int64) ([]routed, error) {
	cols := make([]arrow.Array, len(r.tmpl.holes))
	for i, h := range r.tmpl.holes {
		c, err := r.holeColumn(rec, h)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	n := int(rec.NumRows())
	var (
		order  []string // destinations in order of first row
		rows   = map[string][]int64{}
		bad    []int64
		why    []string
		last   string
		lastOK bool
		prev   = make([]string, len(cols))
		b      strings.Builder
	)
	for i := 0; i < n; i++ {
		same := i > 0 && lastOK
		reason := ""
		for h, c := range cols {
			v, ok := valueString(c, i)
			switch {
			case !ok:
				reason = fmt.Sprintf("column %s is null", strings.Join(r.tmpl.holes[h], "."))
			case !validNamePart(v):
				reason = fmt.Sprintf("column %s is %q, which cannot be part of a table name (it holds a dot, slash, backslash or control character)", strings.Join(r.tmpl.holes[h], "."), v)
			}
			if reason != "" {
				break
			}
			if v != prev[h] {
				same = false
				prev[h] = v
			}
		}
		if reason != "" {
			if r.deadLetter == "" {
				return nil, fmt.Errorf("%w: row %d has no table to go to under template %q: %s; fill the column, or set sink.dead-letter-table to collect such rows", ingest.ErrBadInput, firstRow+int64(i)+1, r.tmpl.text, reason)
			}
			bad = append(bad, int64(i))
			why = append(why, reason)
			lastOK = false
			continue
		}
		if !same {
			b.Reset()
			b.WriteString(r.tmpl.literal[0])
			for h := range cols {
				b.WriteString(prev[h])
				b.WriteString(r.tmpl.literal[h+1])
			}
			last = b.String()
			if _, seen := rows[last]; !seen {
				order = append(order, last)
			}
		}
		lastOK = true
		rows[last] = append(rows[last], int64(i))
	}
	if len(order) == 1 && len(bad) == 0 {
		rec.Retain()
		return []routed{{table: order[0], rec: rec}}, nil
	}
	out := make([]routed, 0, len(order)+1)
	release := func() {
		for _, o := range out {
			o.rec.Release()
		}
	}
	for _, name := range order {
		sub, err := takeRows(ctx, rec, rows[name])
		if err != nil {
			release()
			return nil, err
		}
		out = append(out, routed{table: name, rec: sub})
	}
	if len(bad) > 0 {
		var dl arrow.RecordBatch
		var err error
		if r.badRecords {
			dl, err = badRecordsOf(rec, bad, why, file, firstRow, batch)
		} else {
			dl, err = deadLetters(ctx, rec, bad, why, file, firstRow)
		}
		if err != nil {
			release()
			return nil, err
		}
		out = append(out, routed{table: r.deadLetter, rec: dl, dead: len(bad)})
	}
	return out, nil
}

// takeRows gathers rows of rec, in order.
func takeRows(ctx context.Context, rec arrow.RecordBatch, rows []int64) (arrow.RecordBatch, error) {
	if len(rows) > 0 && rows[len(rows)-1]-rows[0] == int64(len(rows)-1) {
		return rec.NewSlice(rows[0], rows[len(rows)-1]+1), nil // one run: no copy
	}
	idx := array.NewInt64Builder(memoryPool)
	idx.AppendValues(rows, nil)
	ia := idx.NewArray()
	idx.Release()
	defer ia.Release()
	out, err := compute.Take(ctx, *compute.DefaultTakeOptions(), compute.NewDatumWithoutOwning(rec), compute.NewDatumWithoutOwning(ia))
	if err != nil {
		return nil, fmt.Errorf("gather rows: %w", err)
	}
	return out.(*compute.RecordDatum).Value, nil
}

// badRecordsOf are the rows of rec that name no table, as bad records:
// each row as JSON, the reason, its file and 1-based row.
func badRecordsOf(rec arrow.RecordBatch, rows []int64, why []string, file string, firstRow, batch int64) (arrow.RecordBatch, error) {
	st := array.RecordToStructArray(rec)
	defer st.Release()
	bad := make([]ingest.BadRecord, len(rows))
	for i, row := range rows {
		v, err := json.Marshal(st.GetOneForMarshal(int(row)))
		if err != nil {
			return nil, fmt.Errorf("row %d as JSON: %w", firstRow+row+1, err)
		}
		bad[i] = ingest.BadRecord{File: file, Line: firstRow + row + 1, Value: v, Err: why[i]}
	}
	return BadRecordRows(bad, batch, time.Now()), nil
}

// deadLetters builds the dead-letter rows: the input's columns plus the
// reason and the row's file and 1-based row number.
func deadLetters(ctx context.Context, rec arrow.RecordBatch, rows []int64, why []string, file string, firstRow int64) (arrow.RecordBatch, error) {
	sub, err := takeRows(ctx, rec, rows)
	if err != nil {
		return nil, err
	}
	defer sub.Release()
	eb := array.NewStringBuilder(memoryPool)
	fb := array.NewStringBuilder(memoryPool)
	rb := array.NewInt64Builder(memoryPool)
	defer eb.Release()
	defer fb.Release()
	defer rb.Release()
	for i, r := range rows {
		eb.Append(why[i])
		fb.Append(file)
		rb.Append(firstRow + r + 1)
	}
	extra := []arrow.Array{eb.NewArray(), fb.NewArray(), rb.NewArray()}
	defer func() {
		for _, a := range extra {
			a.Release()
		}
	}()
	fields := append(slices.Clone(sub.Schema().Fields()),
		arrow.Field{Name: DeadLetterErrorColumn, Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: DeadLetterFileColumn, Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: DeadLetterRowColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	cols := append(slices.Clone(sub.Columns()), extra...)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, sub.NumRows()), nil
}
