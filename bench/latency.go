package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe"
)

// Latency is a run of one small batch per input file, one snapshot each,
// with the time each batch took in the phase being measured.
type Latency struct {
	// Name says what was timed.
	Name string
	// Times holds one duration per batch, in batch order.
	Times []time.Duration
	// Rows and Snapshots are counted from the table afterwards.
	Rows      int64
	Snapshots int
}

// Median is the median of Times[from:to] (batch indexes from 0, to
// clamped to the series), or 0 when that window is empty.
func (l Latency) Median(from, to int) time.Duration {
	to = min(to, len(l.Times))
	if from < 0 || from >= to {
		return 0
	}
	s := slices.Clone(l.Times[from:to])
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Percentile is the p-th quantile of Times (nearest rank), or 0 for none.
func (l Latency) Percentile(p float64) time.Duration {
	if len(l.Times) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(l.Times))
	i := int(p*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// FloeLatency runs a floe pipeline with max-files-per-trigger 1, so that
// every input file is its own batch and snapshot, and returns one series
// per phase of floe's progress records (millisecond resolution): first the
// commit phase (DurationMs.Commit: table commit, commits-log entry, source
// clean-up), then the whole batch (TriggerExecution), then the phases
// before the commit, which show where the rest of a batch goes.
func FloeLatency(ctx context.Context, ds Dataset, work string) ([]Latency, error) {
	cfg, err := floeConfig(ds, work, 1)
	if err != nil {
		return nil, err
	}
	phases := []struct {
		name string
		get  func(floe.Durations) int64
	}{
		{"floe commit phase (DurationMs.Commit)", func(d floe.Durations) int64 { return d.Commit }},
		{"floe whole batch (DurationMs.TriggerExecution)", func(d floe.Durations) int64 { return d.TriggerExecution }},
		{"floe write phase (DurationMs.AddBatch)", func(d floe.Durations) int64 { return d.AddBatch }},
		{"floe planning (DurationMs.LatestOffset)", func(d floe.Durations) int64 { return d.LatestOffset }},
		{"floe offsets log (DurationMs.WalCommit)", func(d floe.Durations) int64 { return d.WalCommit }},
	}
	series := make([]Latency, len(phases))
	for i, ph := range phases {
		series[i].Name = ph.name
	}
	cat, _, err := runFloe(ctx, cfg, func(p floe.Progress) {
		for i, ph := range phases {
			series[i].Times = append(series[i].Times, time.Duration(ph.get(p.DurationMs))*time.Millisecond)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("floe: %w", err)
	}
	defer closeCatalog(cat)
	var counted Latency
	if err := countTable(ctx, cat, &counted); err != nil {
		return nil, err
	}
	for i := range series {
		series[i].Rows, series[i].Snapshots = counted.Rows, counted.Snapshots
	}
	return series, nil
}

// IcebergGoLatency appends each input file with its own Table.Append and
// times each call (data file write plus commit, iceberg-go having no
// separate commit step for Append). Files are decoded beforehand so that
// the times hold no input reading.
func IcebergGoLatency(ctx context.Context, ds Dataset, work string) (Latency, error) {
	recs := make([]arrow.RecordBatch, 0, len(ds.Paths))
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, p := range ds.Paths {
		rec, err := readWhole(ctx, p)
		if err != nil {
			return Latency{}, err
		}
		recs = append(recs, rec)
	}
	cat, tbl, err := createIcebergGoTable(ctx, work, nil)
	if err != nil {
		return Latency{}, fmt.Errorf("iceberg-go: %w", err)
	}
	defer closeCatalog(cat)
	l := Latency{Name: "iceberg-go Append call"}
	for i, rec := range recs {
		rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
		if err != nil {
			return Latency{}, err
		}
		t0 := time.Now()
		tbl, err = tbl.Append(ctx, rdr, nil)
		l.Times = append(l.Times, time.Since(t0))
		rdr.Release()
		if err != nil {
			return Latency{}, fmt.Errorf("iceberg-go: append %s: %w", ds.Paths[i], err)
		}
	}
	if err := countTable(ctx, cat, &l); err != nil {
		return Latency{}, err
	}
	return l, nil
}

// readWhole reads a small file into one record.
func readWhole(ctx context.Context, path string) (arrow.RecordBatch, error) {
	rdr, err := openParquet(ctx, path)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	var recs []arrow.RecordBatch
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(recs) != 1 {
		for _, r := range recs {
			r.Release()
		}
		return nil, fmt.Errorf("read %s: %d records, want 1 (file larger than %d rows)", path, len(recs), readBatchRows)
	}
	return recs[0], nil
}

func countTable(ctx context.Context, cat catalog.Catalog, l *Latency) error {
	res, err := tableResult(ctx, "count", cat, Cost{})
	if err != nil {
		return err
	}
	tbl, err := cat.LoadTable(ctx, benchTable)
	if err != nil {
		return err
	}
	l.Rows, l.Snapshots = res.Rows, len(tbl.Metadata().Snapshots())
	return nil
}
