package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/arrowpool"
	"github.com/floe-io/floe/scan"
)

func init() {
	helps["scan"] = commandHelp{
		usage: "scan NS.TABLE|TABLE_DIR|METADATA_FILE|READ.yaml [flags]",
		about: "Print a table's rows on stdout, count them, write them to a Parquet file, or explain what a " +
			"filtered read would touch. The table is a name in the catalog, a table directory or metadata file " +
			"(no catalog needed), or a Beam Managed I/O read config. Deletes are applied; --filter prunes files by " +
			"partition and column statistics (syntax in docs/reads.md).",
		examples: []example{
			{"Count the rows.", "floe scan db.events --count"},
			{"The first ten rows as JSON lines.", "floe scan db.events --output-format jsonl --limit 10"},
			{"What a filter prunes, as JSON.", "floe scan db.events --filter \"id > 5 AND status = 'ACTIVE'\" --explain --json"},
			{"Time travel: the table as it was.", "floe scan db.events --as-of-timestamp 2026-11-02T00:00:00Z --count"},
			{"The changes of an upsert table since a snapshot.", "floe scan db.users --changelog --from-snapshot 4120934717023591283"},
			{"Two columns to a Parquet file.", "floe scan db.events --keep id,ts --output-format parquet --output events.parquet"},
			{"A copy of a table whose metadata names its old location.", "floe scan ./copy-of-table --path-prefix s3a://bucket/table=./copy-of-table"},
		},
	}
}

// outputFormats are the values of scan's --output-format.
var outputFormats = []string{"table", "csv", "jsonl", "parquet"}

func cmdScan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("scan", stderr)
	var cf catalogFlags
	cf.register(fs)
	cf.registerPathPrefix(fs)
	count := fs.Bool("count", false, "Print only the number of rows.")
	format := fs.String("output-format", "table", "How to print the rows, a `FORMAT`: table (aligned columns), csv, jsonl, or parquet (to the file --output names).")
	fs.values("output-format", "table", "csv", "jsonl", "parquet")
	output := fs.String("output", "", "With --output-format parquet: the `FILE` to write.")
	limit := fs.Int64("limit", 0, "Print at most `N` rows (0: all).")
	var o scan.Options
	var asOf, keep, drop string
	fs.Int64Var(&o.SnapshotID, "snapshot-id", 0, "Read the snapshot with this `ID` (time travel; floe table snapshots lists them).")
	fs.StringVar(&asOf, "as-of-timestamp", "", "Read the snapshot current at this `TIME`: epoch milliseconds or RFC 3339 (2024-01-01T10:00:00Z).")
	fs.StringVar(&o.Branch, "branch", "", "Read the head of this `BRANCH`.")
	fs.StringVar(&o.Tag, "tag", "", "Read the snapshot of this `TAG`.")
	fs.StringVar(&o.Filter, "filter", "", "Read only rows matching this SQL-like `FILTER`, e.g. \"id > 5 AND status = 'ACTIVE'\"; files are pruned by partition and statistics.")
	explain := fs.Bool("explain", false, "Print what the scan would read (files and bytes planned of the total, pushed and residual filters) instead of rows.")
	asJSON := fs.Bool("json", false, "With --explain: print the plan as JSON.")
	fs.StringVar(&keep, "keep", "", "Read only these comma-separated `COLUMNS`, nested as a.b.")
	fs.StringVar(&drop, "drop", "", "Leave out these comma-separated `COLUMNS`, nested as a.b.")
	changelog := fs.Bool("changelog", false, "Print the row-level changes of the snapshots after --from-snapshot up to --to-snapshot, "+
		"as Spark's changelog view: each row with _change_type (INSERT, DELETE, UPDATE_BEFORE, UPDATE_AFTER), _change_ordinal and _commit_snapshot_id.")
	var co scan.ChangelogOptions
	var ident string
	fs.Int64Var(&co.FromSnapshot, "from-snapshot", 0, "With --changelog: start after the snapshot with this `ID` (exclusive; default: before the table's first).")
	fs.Int64Var(&co.ToSnapshot, "to-snapshot", 0, "With --changelog: end with the snapshot with this `ID` (inclusive; default: the current one).")
	fs.StringVar(&ident, "identifier-columns", "", "With --changelog: the comma-separated `COLUMNS` that identify a row, pairing a delete and an insert into an update (default: the table's identifier fields).")
	fs.alias("format", "output-format", "--output-format", nil)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("scan takes one table, e.g. floe scan db.events --count")
	}
	if asOf != "" {
		ms, err := parseTimeMs(asOf)
		if err != nil {
			return usagef("--as-of-timestamp: %v", err)
		}
		o.AsOfMs = &ms
	}
	if *limit < 0 {
		return usagef("--limit %d: give a number of rows, 1 or more, or 0 for all", *limit)
	}
	if keep != "" && drop != "" {
		return usagef("--keep and --drop are mutually exclusive; give one")
	}
	o.Columns, o.Drop, o.Limit = config.SplitList(keep), config.SplitList(drop), *limit
	switch *format {
	case "table", "csv", "jsonl":
		if *output != "" {
			return usagef("--output is for --output-format parquet; the other formats print on stdout")
		}
	case "parquet":
		if *output == "" {
			return usagef("--output-format parquet needs --output FILE")
		}
	default:
		if hint := config.Closest(*format, outputFormats); hint != "" {
			return usagef("--output-format %q is not known; did you mean %s? (use table, csv, jsonl or parquet)", *format, hint)
		}
		return usagef("--output-format %q is not known; use table, csv, jsonl or parquet", *format)
	}
	if !*changelog && (co.FromSnapshot != 0 || co.ToSnapshot != 0 || ident != "") {
		return usagef("--from-snapshot, --to-snapshot and --identifier-columns go with --changelog")
	}
	if *changelog && (o.SnapshotID != 0 || o.AsOfMs != nil || o.Branch != "" || o.Tag != "" || *explain || *count) {
		return usagef("--changelog reads a range of snapshots (--from-snapshot, --to-snapshot); it goes with no --snapshot-id, --as-of-timestamp, --branch, --tag, --explain or --count")
	}
	var tbl *table.Table
	if isConfigFile(pos[0]) {
		tbl, err = loadManagedRead(ctx, cf, pos[0], &o, stderr)
	} else {
		tbl, err = loadTable(ctx, cf, pos[0])
	}
	if err != nil {
		return err
	}
	if *explain {
		plan, err := scan.Explain(ctx, tbl, o)
		if err != nil {
			return fmt.Errorf("scan %s: %w", pos[0], err)
		}
		if *asJSON {
			return writeJSON(stdout, plan)
		}
		pct := func(a, b int64) float64 {
			if b == 0 {
				return 0
			}
			return 100 * float64(a) / float64(b)
		}
		fmt.Fprintf(stdout, "snapshot %d: %d of %d files (%.0f%%), %d of %d bytes (%.0f%%)\n", plan.SnapshotID,
			plan.FilesPlanned, plan.FilesTotal, pct(int64(plan.FilesPlanned), int64(plan.FilesTotal)),
			plan.BytesPlanned, plan.BytesTotal, pct(plan.BytesPlanned, plan.BytesTotal))
		fmt.Fprintf(stdout, "pushed filter:   %s\nresidual filter: %s\n", orNone(plan.PushedFilter), orNone(plan.ResidualFilter))
		return nil
	}
	if *asJSON {
		return usagef("--json goes with --explain; use --output-format jsonl for rows")
	}
	if *count {
		// scan.Count applies deletes; manifest counts alone would not.
		n, err := scan.Count(ctx, tbl, o)
		if err != nil {
			return fmt.Errorf("scan %s: %w", pos[0], err)
		}
		fmt.Fprintln(stdout, n)
		return nil
	}
	// scan.Table fills what iceberg-go reads as NULL for other engines'
	// tables: partition values of absent columns, initial defaults. Every
	// writer below copies what it keeps of a record, so the read may reuse
	// its memory once it is released.
	var schema *arrow.Schema
	var recs iter.Seq2[arrow.RecordBatch, error]
	if *changelog {
		co.Read, co.Identifier = o, config.SplitList(ident)
		co.Read.Limit = 0
		schema, recs, err = scan.Changelog(ctx, tbl, co)
	} else {
		o.Allocator = arrowpool.New()
		schema, recs, err = scan.Table(ctx, tbl, o)
	}
	if err != nil {
		return fmt.Errorf("scan %s: %w", pos[0], err)
	}
	var pr recordWriter
	if *format == "parquet" {
		if pr, err = newParquetOutput(*output, schema); err != nil {
			return err
		}
	} else {
		pr = newRowPrinter(*format, schema, stdout)
	}
	var printed int64
	for rec, err := range recs {
		if err != nil {
			pr.abort()
			return fmt.Errorf("scan %s: %w", pos[0], err)
		}
		if *limit > 0 && printed+rec.NumRows() > *limit {
			whole := rec
			rec = rec.NewSlice(0, *limit-printed)
			whole.Release()
		}
		err = pr.write(rec)
		n := rec.NumRows()
		rec.Release()
		if err != nil {
			pr.abort()
			return err
		}
		printed += n
		if *limit > 0 && printed >= *limit {
			break
		}
	}
	return pr.flush()
}

// recordWriter is where scan sends the rows.
type recordWriter interface {
	write(rec arrow.RecordBatch) error
	flush() error
	// abort gives up after a failure: no half-written output file stays.
	abort()
}

// parquetOutput writes the rows to a Parquet file, zstd-compressed.
type parquetOutput struct {
	path string
	fw   *pqarrow.FileWriter
}

func newParquetOutput(path string, schema *arrow.Schema) (*parquetOutput, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--output: %w", err)
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCreatedBy("floe"))
	fw, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &parquetOutput{path: path, fw: fw}, nil
}

func (p *parquetOutput) write(rec arrow.RecordBatch) error {
	if err := p.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	return nil
}

func (p *parquetOutput) abort() {
	_ = p.fw.Close()
	_ = os.Remove(p.path)
}

func (p *parquetOutput) flush() error {
	if err := p.fw.Close(); err != nil {
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	return nil
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

// timeAsText prints the columns arrow-go's CSV writer has no conversion
// for (and panics on): time-of-day as text, nested columns as JSON.
func timeAsText(typ arrow.DataType, col arrow.Array) ([]string, bool) {
	var text func(i int) string
	switch typ.ID() {
	case arrow.TIME32, arrow.TIME64:
		text = col.ValueStr
	case arrow.STRUCT, arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP:
		text = func(i int) string {
			b, err := json.Marshal(col.GetOneForMarshal(i))
			if err != nil {
				return col.ValueStr(i)
			}
			return string(b)
		}
	default:
		return nil, false
	}
	out := make([]string, col.Len())
	for i := range out {
		if col.IsValid(i) {
			out[i] = text(i)
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
	// The table format aligns columns, so rows are collected first; a
	// string value shares the record's memory, which the read reuses once
	// the record is released, so each is cloned.
	for i := 0; i < int(rec.NumRows()); i++ {
		row := make([]string, rec.NumCols())
		for j, col := range rec.Columns() {
			if col.IsNull(i) {
				row[j] = "NULL"
			} else {
				row[j] = strings.Clone(col.ValueStr(i))
			}
		}
		p.rows = append(p.rows, row)
	}
	return nil
}

func (p *rowPrinter) abort() {}

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

// parseTimeMs reads epoch milliseconds or an RFC 3339 time.
func parseTimeMs(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("%q is neither epoch milliseconds nor an RFC 3339 time such as 2024-01-01T10:00:00Z", s)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// isConfigFile tells a Managed I/O read config (floe scan read.yaml) from a
// table name or location.
func isConfigFile(arg string) bool {
	return strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml")
}

// loadManagedRead opens the table a Managed I/O read config names, taking
// its filter, keep and drop where the flags give none.
func loadManagedRead(ctx context.Context, cf catalogFlags, path string, o *scan.Options, stderr io.Writer) (*table.Table, error) {
	if _, err := cf.config(); err != nil {
		return nil, err
	}
	r, err := config.LoadManagedRead(path)
	if err != nil {
		return nil, err
	}
	for _, w := range r.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if o.Filter == "" {
		o.Filter = r.Filter
	}
	if len(o.Columns) == 0 && len(o.Drop) == 0 {
		o.Columns, o.Drop = r.Keep, r.Drop
	}
	if o.SnapshotID == 0 && o.AsOfMs == nil {
		o.SnapshotID, o.AsOfMs = r.ToSnapshot, r.ToTimestampMs
	}
	if r.Incremental != "" {
		// Beam reads the appends of a range of snapshots then, not the
		// table as of one: rows deleted since would be missing here.
		return nil, usagef("%s: %s makes this Beam's incremental read of the table's appends from a start snapshot, "+
			"which floe scan, reading the table as of one snapshot, cannot do exactly; run floe run %s, which prints those appends, "+
			"or remove %s to scan the table", path, r.Incremental, path, r.Incremental)
	}
	catCfg, err := cf.override(r.Catalog)
	if err != nil {
		return nil, err
	}
	if err := requireCatalog(catCfg); err != nil {
		return nil, err
	}
	cat, err := floe.OpenCatalog(ctx, catCfg)
	if err != nil {
		return nil, err
	}
	ident, err := floe.ParseIdent(r.Table)
	if err != nil {
		return nil, err
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s (from %s): %w", r.Table, path, err)
	}
	return tbl, nil
}
