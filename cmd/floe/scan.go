package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/iceberg-go/table"
)

func cmdScan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("scan", "scan NS.TABLE|TABLE_DIR|METADATA_FILE [--count] [--format table|csv|jsonl] [--limit N] [--path-prefix FROM=TO]", stderr)
	var cf catalogFlags
	cf.register(fs)
	count := fs.Bool("count", false, "print only the number of rows")
	format := fs.String("format", "table", "output format: table, csv or jsonl")
	limit := fs.Int64("limit", 0, "print at most N rows (0: all)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("scan takes one table, e.g. floe scan db.events --count")
	}
	switch *format {
	case "table", "csv", "jsonl":
	default:
		return usagef("--format %q is not known; use table, csv or jsonl", *format)
	}
	tbl, err := loadTable(ctx, cf, pos[0])
	if err != nil {
		return err
	}
	if tbl.CurrentSnapshot() == nil {
		if *count {
			fmt.Fprintln(stdout, 0)
			return nil
		}
	}
	if *count {
		n, err := countRows(ctx, tbl)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, n)
		return nil
	}
	var opts []table.ScanOption
	if *limit > 0 {
		opts = append(opts, table.WithLimit(*limit))
	}
	schema, recs, err := tbl.Scan(opts...).ToArrowRecords(ctx)
	if err != nil {
		return fmt.Errorf("scan %s: %w", pos[0], err)
	}
	pr := newRowPrinter(*format, schema, stdout)
	var printed int64
	for rec, err := range recs {
		if err != nil {
			return fmt.Errorf("scan %s: %w", pos[0], err)
		}
		if *limit > 0 && printed+rec.NumRows() > *limit {
			rec = rec.NewSlice(0, *limit-printed)
		}
		if err := pr.write(rec); err != nil {
			return err
		}
		printed += rec.NumRows()
		if *limit > 0 && printed >= *limit {
			break
		}
	}
	return pr.flush()
}

// countRows answers from manifest record counts when no delete files apply,
// and reads the rows otherwise.
func countRows(ctx context.Context, tbl *table.Table) (int64, error) {
	scan := tbl.Scan()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return 0, fmt.Errorf("plan scan: %w", err)
	}
	var n int64
	var withDeletes []table.FileScanTask
	for _, t := range tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			withDeletes = append(withDeletes, t)
			continue
		}
		n += t.File.Count()
	}
	if len(withDeletes) == 0 {
		return n, nil
	}
	_, recs, err := scan.ReadTasks(ctx, withDeletes)
	if err != nil {
		return 0, err
	}
	for rec, err := range recs {
		if err != nil {
			return 0, err
		}
		n += rec.NumRows()
	}
	return n, nil
}

type rowPrinter struct {
	format string
	schema *arrow.Schema
	w      io.Writer
	csv    *csv.Writer
	rows   [][]string
}

func newRowPrinter(format string, schema *arrow.Schema, w io.Writer) *rowPrinter {
	p := &rowPrinter{format: format, schema: schema, w: w}
	if format == "csv" {
		p.csv = csv.NewWriter(w, schema, csv.WithHeader(true), csv.WithNullWriter(""),
			csv.WithCustomTypeConverter(timeAsText))
	}
	return p
}

// timeAsText prints time-of-day columns, which arrow-go's CSV writer has no
// conversion for.
func timeAsText(typ arrow.DataType, col arrow.Array) ([]string, bool) {
	if typ.ID() != arrow.TIME32 && typ.ID() != arrow.TIME64 {
		return nil, false
	}
	out := make([]string, col.Len())
	for i := range out {
		if col.IsValid(i) {
			out[i] = col.ValueStr(i)
		}
	}
	return out, true
}

func (p *rowPrinter) write(rec arrow.RecordBatch) error {
	switch p.format {
	case "csv":
		return p.csv.Write(rec)
	case "jsonl":
		return array.RecordToJSON(rec, p.w)
	}
	// The table format aligns columns, so rows are collected first.
	for i := 0; i < int(rec.NumRows()); i++ {
		row := make([]string, rec.NumCols())
		for j, col := range rec.Columns() {
			if col.IsNull(i) {
				row[j] = "NULL"
			} else {
				row[j] = col.ValueStr(i)
			}
		}
		p.rows = append(p.rows, row)
	}
	return nil
}

func (p *rowPrinter) flush() error {
	switch p.format {
	case "csv":
		p.csv.Flush()
		return p.csv.Error()
	case "jsonl":
		return nil
	}
	names := make([]string, p.schema.NumFields())
	widths := make([]int, len(names))
	for i, f := range p.schema.Fields() {
		names[i] = f.Name
		widths[i] = len(f.Name)
	}
	for _, r := range p.rows {
		for i, v := range r {
			widths[i] = max(widths[i], len(v))
		}
	}
	line := func(vals []string) {
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprintf("%-*s", widths[i], v)
		}
		fmt.Fprintln(p.w, strings.TrimRight(strings.Join(parts, " | "), " "))
	}
	line(names)
	sep := make([]string, len(names))
	for i := range sep {
		sep[i] = strings.Repeat("-", widths[i])
	}
	fmt.Fprintln(p.w, strings.Join(sep, "-+-"))
	for _, r := range p.rows {
		line(r)
	}
	fmt.Fprintf(p.w, "(%d rows)\n", len(p.rows))
	return nil
}

// writeJSON prints v indented, for --json outputs.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
