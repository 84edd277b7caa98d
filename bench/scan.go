package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/internal/arrowpool"
	"github.com/floe-io/floe/scan"
)

// ScanQuery is one query of the scan benchmark: count(*) and sum(v) over
// the rows a predicate selects, written once per reader.
type ScanQuery struct {
	Name string
	// Filter is the predicate in floe's filter language; "" selects all.
	Filter string
	// Expr is the same predicate for iceberg-go; nil selects all.
	Expr iceberg.BooleanExpression
	// Where is the same predicate in DuckDB's SQL; "" selects all.
	Where string
	// match is the same predicate again, for the brute-force answer.
	match func(ts int64, category string) bool
}

// ScanAnswer is what a scan query returns.
type ScanAnswer struct {
	Rows int64
	Sum  float64
}

// sumTolerance is the relative difference allowed between two sums of the
// same values: readers add them in different orders.
const sumTolerance = 1e-9

// Check compares a with the expected answer: the count exactly, the sum
// within sumTolerance.
func (a ScanAnswer) Check(want ScanAnswer) error {
	if a.Rows != want.Rows || math.Abs(a.Sum-want.Sum) > sumTolerance*math.Max(math.Abs(want.Sum), 1) {
		return fmt.Errorf("count %d, sum(v) %.12g; want %d, %.12g", a.Rows, a.Sum, want.Rows, want.Sum)
	}
	return nil
}

// ScanResult is one contender's run of one scan query.
type ScanResult struct {
	Contender, Query string
	ScanAnswer
	// Files is the number of data files the contender planned to read (for
	// DuckDB, the number of files it was given).
	Files int
	// TableRows and TableFiles are the rows and live data files of the
	// table: the query answers over all of them, whatever it prunes.
	TableRows  int64
	TableFiles int
	Cost
	// Process is the cost of the whole reader process, start-up included,
	// for a contender run in a process of its own (DuckDB); zero otherwise.
	Process Cost
}

// TableRowsPerSec is the table's rows per second of wall time.
func (r ScanResult) TableRowsPerSec() float64 { return float64(r.TableRows) / r.Wall.Seconds() }

// ScanFixture is the table the scan benchmark reads: a dataset ingested
// once by floe into a table partitioned by PartitionFields, with the
// expected answer of every query computed from the source files.
type ScanFixture struct {
	Dataset Dataset
	Catalog catalog.Catalog
	Table   *table.Table
	// DataFiles are the local paths of the table's live data files.
	DataFiles []string
	Queries   []ScanQuery
	// Want is the expected answer of each query, by name.
	Want map[string]ScanAnswer
}

// The selective query's day and category: the dataset's first day (its
// rows span under two hours from epoch) and one of its 100 categories.
const scanCategory = "cat-42"

var scanDay = time.UnixMicro(epoch).UTC().Truncate(24 * time.Hour)

// ScanQueries are the queries of the scan benchmark: the whole table, then
// one day and one category, which partition pruning narrows to one file
// per day-and-category partition.
func ScanQueries() []ScanQuery {
	from, to := scanDay, scanDay.Add(24*time.Hour)
	lit := func(t time.Time) string { return "TIMESTAMP '" + t.Format("2006-01-02 15:04:05") + "'" }
	pred := fmt.Sprintf("ts >= %s AND ts < %s AND category = '%s'", lit(from), lit(to), scanCategory)
	lo, hi := from.UnixMicro(), to.UnixMicro()
	return []ScanQuery{
		{Name: "full", match: func(int64, string) bool { return true }},
		{
			Name:   "selective",
			Filter: pred,
			Expr: iceberg.NewAnd(
				iceberg.GreaterThanEqual(iceberg.Reference("ts"), iceberg.Timestamp(lo)),
				iceberg.LessThan(iceberg.Reference("ts"), iceberg.Timestamp(hi)),
				iceberg.EqualTo(iceberg.Reference("category"), scanCategory)),
			Where: pred,
			match: func(ts int64, cat string) bool { return ts >= lo && ts < hi && cat == scanCategory },
		},
	}
}

// NewScanFixture ingests ds with floe (library call, embedded SQLite
// catalog and local warehouse under work, partitioned by PartitionFields)
// and computes every query's answer by brute force from ds's files.
func NewScanFixture(ctx context.Context, ds Dataset, work string) (*ScanFixture, error) {
	cfg, err := floeConfig(ds, work, 0)
	if err != nil {
		return nil, err
	}
	cfg.Sink.PartitionFields = PartitionFields
	cat, _, err := runFloe(ctx, cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("ingest %s: %w", ds.Name, err)
	}
	fx := &ScanFixture{Dataset: ds, Catalog: cat, Queries: ScanQueries()}
	if err := fx.init(ctx); err != nil {
		fx.Close()
		return nil, err
	}
	return fx, nil
}

func (fx *ScanFixture) init(ctx context.Context) error {
	var err error
	if fx.Table, err = fx.Catalog.LoadTable(ctx, benchTable); err != nil {
		return fmt.Errorf("load table: %w", err)
	}
	tasks, err := fx.Table.Scan().PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("plan scan: %w", err)
	}
	var rows int64
	for _, t := range scan.WholeFiles(tasks) {
		fx.DataFiles = append(fx.DataFiles, strings.TrimPrefix(t.File.FilePath(), "file://"))
		rows += t.File.Count()
	}
	if rows != fx.Dataset.Rows() {
		return fmt.Errorf("table holds %d rows, want %d", rows, fx.Dataset.Rows())
	}
	if fx.Want, err = bruteForce(ctx, fx.Dataset, fx.Queries); err != nil {
		return err
	}
	for _, q := range fx.Queries {
		if fx.Want[q.Name].Rows == 0 {
			return fmt.Errorf("query %s selects no row of %s", q.Name, fx.Dataset.Name)
		}
	}
	return nil
}

// Close closes the catalog; the warehouse stays for the caller to remove.
func (fx *ScanFixture) Close() {
	if fx.Catalog != nil {
		closeCatalog(fx.Catalog)
	}
}

// bruteForce answers every query by reading ts, category and v of every
// source file and testing each row.
func bruteForce(ctx context.Context, ds Dataset, qs []ScanQuery) (map[string]ScanAnswer, error) {
	want := make([]ScanAnswer, len(qs))
	for _, p := range ds.Paths {
		err := readColumns(ctx, p, []int{1, 2, 3}, func(rec arrow.RecordBatch) error {
			ts, ok1 := rec.Column(0).(*array.Timestamp)
			cat, ok2 := rec.Column(1).(*array.String)
			v, ok3 := rec.Column(2).(*array.Float64)
			if !ok1 || !ok2 || !ok3 {
				return fmt.Errorf("%s: columns are %s, want ts, category, v", p, rec.Schema())
			}
			for i := range int(rec.NumRows()) {
				for j, q := range qs {
					if q.match(int64(ts.Value(i)), cat.Value(i)) {
						want[j].Rows++
						if v.IsValid(i) {
							want[j].Sum += v.Value(i)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := map[string]ScanAnswer{}
	for j, q := range qs {
		out[q.Name] = want[j]
	}
	return out, nil
}

// readColumns hands f the records of the given columns of one Parquet file.
func readColumns(ctx context.Context, path string, cols []int, f func(arrow.RecordBatch) error) error {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: readBatchRows}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer rr.Release()
	for rr.Next() {
		if err := f(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// ScanContender is one way of answering a scan query over the fixture.
type ScanContender struct {
	Name string
	Run  func(ctx context.Context, fx *ScanFixture, q ScanQuery) (ScanResult, error)
}

// ScanContenders are the Go readers measured side by side by
// BenchmarkScan, in this order; DuckDB (a separate process, see DuckDB)
// runs after them.
var ScanContenders = []ScanContender{
	{Name: "floe", Run: FloeScan},
	{Name: "iceberg-go", Run: func(ctx context.Context, fx *ScanFixture, q ScanQuery) (ScanResult, error) {
		return IcebergGoScan(ctx, fx, q, "iceberg-go")
	}},
	{Name: "iceberg-go+pool", Run: func(ctx context.Context, fx *ScanFixture, q ScanQuery) (ScanResult, error) {
		return IcebergGoScan(compute.WithAllocator(ctx, arrowpool.New()), fx, q, "iceberg-go+pool")
	}},
}

// FloeScan answers q with floe's library read path as `floe scan` uses
// it: scan.Table reading v (and, with a filter, what the filter needs)
// into a new buffer pool, as each `floe scan` process has its own, one
// pass counting rows and summing v. The planned file count comes from
// scan.Explain, outside the measured run. iceberg-go+pool is iceberg-go
// given such a pool.
func FloeScan(ctx context.Context, fx *ScanFixture, q ScanQuery) (ScanResult, error) {
	opts := scan.Options{Filter: q.Filter, Columns: []string{"v"}, Allocator: arrowpool.New()}
	var ans ScanAnswer
	cost, err := measure(func() error {
		_, recs, err := scan.Table(ctx, fx.Table, opts)
		if err != nil {
			return err
		}
		ans, err = countAndSum(recs)
		return err
	})
	if err != nil {
		return ScanResult{}, fmt.Errorf("floe %s: %w", q.Name, err)
	}
	plan, err := scan.Explain(ctx, fx.Table, opts)
	if err != nil {
		return ScanResult{}, fmt.Errorf("floe %s: explain: %w", q.Name, err)
	}
	return ScanResult{Contender: "floe", Query: q.Name, ScanAnswer: ans, Files: plan.FilesPlanned, TableRows: fx.Dataset.Rows(), TableFiles: len(fx.DataFiles), Cost: cost}, nil
}

// IcebergGoScan answers q with iceberg-go's own scanner on the same table:
// Scan with the row filter and v selected, PlanFiles, ReadTasks; its
// allocator is ctx's (compute.WithAllocator), Go's heap by default.
func IcebergGoScan(ctx context.Context, fx *ScanFixture, q ScanQuery, name string) (ScanResult, error) {
	opts := []table.ScanOption{table.WithSelectedFields("v")}
	if q.Expr != nil {
		opts = append(opts, table.WithRowFilter(q.Expr))
	}
	var ans ScanAnswer
	var files int
	cost, err := measure(func() error {
		scan := fx.Table.Scan(opts...)
		tasks, err := scan.PlanFiles(ctx)
		if err != nil {
			return err
		}
		files = len(tasks)
		_, recs, err := scan.ReadTasks(ctx, tasks)
		if err != nil {
			return err
		}
		ans, err = countAndSum(recs)
		return err
	})
	if err != nil {
		return ScanResult{}, fmt.Errorf("%s %s: %w", name, q.Name, err)
	}
	return ScanResult{Contender: name, Query: q.Name, ScanAnswer: ans, Files: files, TableRows: fx.Dataset.Rows(), TableFiles: len(fx.DataFiles), Cost: cost}, nil
}

// sum adds the valid values of v in four lanes, as a vectorised engine
// does: one running total would make each addition wait for the previous
// one, and the benchmark's own loop would take more time than a reader.
func sum(v *array.Float64) float64 {
	vals := v.Float64Values()
	var s [4]float64
	if v.NullN() == 0 {
		i := 0
		for ; i+4 <= len(vals); i += 4 {
			s[0] += vals[i]
			s[1] += vals[i+1]
			s[2] += vals[i+2]
			s[3] += vals[i+3]
		}
		for ; i < len(vals); i++ {
			s[0] += vals[i]
		}
	} else {
		for i, x := range vals {
			if v.IsValid(i) {
				s[i&3] += x
			}
		}
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// countAndSum drains recs, counting rows and summing their v column.
func countAndSum(recs iter.Seq2[arrow.RecordBatch, error]) (ScanAnswer, error) {
	var a ScanAnswer
	for rec, err := range recs {
		if err != nil {
			return ScanAnswer{}, err
		}
		idx := rec.Schema().FieldIndices("v")
		var v *array.Float64
		if len(idx) == 1 {
			v, _ = rec.Column(idx[0]).(*array.Float64)
		}
		if v == nil {
			schema := rec.Schema()
			rec.Release()
			return ScanAnswer{}, fmt.Errorf("records %s have no float64 column v", schema)
		}
		a.Rows += rec.NumRows()
		a.Sum += sum(v)
		rec.Release()
	}
	return a, nil
}
