package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/fixture"
)

// UpsertSpec describes the upsert benchmark's data: a table of Rows keys
// (ids 0 to Rows-1), then Batches files of Changes changes each: 80%
// updates of random live keys, 10% inserts of new keys, 10% deletes of
// live keys, shuffled.
type UpsertSpec struct {
	Rows    int64
	Batches int
	Changes int
	Seed    uint64
}

// Upsert10M is the documented setting: 10M rows, 20 batches of 10,000
// changes.
var Upsert10M = UpsertSpec{Rows: 10_000_000, Batches: 20, Changes: 10_000, Seed: 10}

// The environment variables that shrink (or grow) the upsert benchmark.
const (
	UpsertRowsEnv    = "FLOE_BENCH_UPSERT_ROWS"
	UpsertBatchesEnv = "FLOE_BENCH_UPSERT_BATCHES"
	UpsertChangesEnv = "FLOE_BENCH_UPSERT_CHANGES"
)

// UpsertSpecFromEnv is Upsert10M with the sizes the environment sets.
func UpsertSpecFromEnv() (UpsertSpec, error) {
	s := Upsert10M
	for _, v := range []struct {
		env   string
		least int64
		set   func(int64)
	}{
		{UpsertRowsEnv, 1, func(n int64) { s.Rows = n }},
		{UpsertBatchesEnv, 1, func(n int64) { s.Batches = int(n) }},
		// Ten changes make one insert and one delete.
		{UpsertChangesEnv, 10, func(n int64) { s.Changes = int(n) }},
	} {
		str := os.Getenv(v.env)
		if str == "" {
			continue
		}
		n, err := strconv.ParseInt(str, 10, 64)
		if err != nil || n < v.least {
			return s, fmt.Errorf("%s=%q: want a whole number of at least %d", v.env, str, v.least)
		}
		v.set(n)
	}
	if s.Changes > readBatchRows {
		return s, fmt.Errorf("%s=%d: at most %d changes per batch (one record per change file)", UpsertChangesEnv, s.Changes, readBatchRows)
	}
	return s, nil
}

// Name names the dataset's directory.
func (s UpsertSpec) Name() string {
	return fmt.Sprintf("upsert-%d-%dx%d-s%d", s.Rows, s.Batches, s.Changes, s.Seed)
}

func (s UpsertSpec) marker() string {
	return fmt.Sprintf("floe bench upsert dataset v1 rows=%d batches=%d changes=%d seed=%d\n", s.Rows, s.Batches, s.Changes, s.Seed)
}

// upsertFileRows is the most rows of one base file.
const upsertFileRows = 1_000_000

// UpsertDataset is a generated upsert dataset on disk.
type UpsertDataset struct {
	UpsertSpec
	// BaseDir holds the table's first rows; ChangesDir the change files, one per
	// batch, their modification times in batch order.
	BaseDir, ChangesDir string
	BasePaths           []string
	ChangePaths         []string
}

// upsertSchema is the table's: id the key, then one column of each kind.
var upsertSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
}, nil)

// changeSchema is the change files': the table's columns and the
// operation, Debezium's c, u or d. A delete carries its key alone.
var changeSchema = arrow.NewSchema(append(upsertSchema.Fields(),
	arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil)

// EnsureUpsert returns the dataset of s under root, generating it unless a
// complete copy is there.
func EnsureUpsert(root string, s UpsertSpec) (UpsertDataset, error) {
	dir := filepath.Join(root, s.Name())
	ds := UpsertDataset{UpsertSpec: s, BaseDir: filepath.Join(dir, "base"), ChangesDir: filepath.Join(dir, "changes")}
	for i := int64(0); i*upsertFileRows < s.Rows; i++ {
		ds.BasePaths = append(ds.BasePaths, filepath.Join(ds.BaseDir, fmt.Sprintf("part-%03d.parquet", i)))
	}
	for i := range s.Batches {
		ds.ChangePaths = append(ds.ChangePaths, filepath.Join(ds.ChangesDir, fmt.Sprintf("batch-%03d.parquet", i)))
	}
	if m, err := os.ReadFile(filepath.Join(dir, markerName)); err == nil && string(m) == s.marker() {
		return ds, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return ds, err
	}
	if err := ds.generate(); err != nil {
		return ds, fmt.Errorf("generate dataset %s: %w", s.Name(), err)
	}
	return ds, os.WriteFile(filepath.Join(dir, markerName), []byte(s.marker()), 0o644)
}

// row is one row of the table.
type row struct {
	name string
	v    float64
	ts   int64
	qty  int32
}

// baseRow is the first value of key id, a function of the seed and the key
// alone, so that the oracle needs no copy of the base table.
func baseRow(seed uint64, id int64) row {
	h := baseHash(seed, id)
	return row{
		name: fmt.Sprintf("name-%08x", uint32(h)),
		v:    baseV(seed, id),
		ts:   epoch + id*1000,
		qty:  int32((h >> 32) % 1000),
	}
}

func baseHash(seed uint64, id int64) uint64 { return mix64(seed<<40 ^ uint64(id)) }

// baseV is baseRow's v alone, what the oracle's checksum needs.
func baseV(seed uint64, id int64) float64 { return float64(baseHash(seed, id)>>11) / (1 << 53) }

// mix64 is SplitMix64's finaliser.
func mix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

func (ds UpsertDataset) generate() error {
	for i, p := range ds.BasePaths {
		first := int64(i) * upsertFileRows
		n := min(upsertFileRows, ds.Rows-first)
		b := array.NewRecordBuilder(memory.DefaultAllocator, upsertSchema)
		b.Reserve(int(n))
		for id := first; id < first+n; id++ {
			appendRow(b, id, baseRow(ds.Seed, id))
		}
		rec := b.NewRecordBatch()
		b.Release()
		err := fixture.WriteParquet(p, rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(ds.Seed, 0x75707365727421))
	live := newBitset(ds.Rows + int64(ds.Batches*ds.Changes))
	for id := range ds.Rows {
		live.set(id, true)
	}
	next := ds.Rows
	pick := func() int64 {
		for {
			if id := rng.Int64N(next); live.get(id) {
				return id
			}
		}
	}
	// The files' modification times order the batches, as floe plans them;
	// they lie in the past so that no min-file-age holds them back.
	mtime := time.Now().Add(-time.Duration(len(ds.ChangePaths)+1) * time.Minute)
	for _, p := range ds.ChangePaths {
		ins, del := ds.Changes/10, ds.Changes/10
		ops := make([]byte, 0, ds.Changes)
		for i := range ds.Changes {
			switch {
			case i < ins:
				ops = append(ops, 'c')
			case i < ins+del:
				ops = append(ops, 'd')
			default:
				ops = append(ops, 'u')
			}
		}
		rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
		b := array.NewRecordBuilder(memory.DefaultAllocator, changeSchema)
		for _, op := range ops {
			var id int64
			switch op {
			case 'c':
				id = next
				next++
				live.set(id, true)
			case 'u':
				id = pick()
			case 'd':
				id = pick()
				live.set(id, false)
				b.Field(0).(*array.Int64Builder).Append(id)
				for c := 1; c < len(upsertSchema.Fields()); c++ {
					b.Field(c).AppendNull()
				}
				b.Field(5).(*array.StringBuilder).Append("d")
				continue
			}
			appendRow(b, id, row{
				name: fmt.Sprintf("name-%08x", rng.Uint32()),
				v:    rng.Float64(),
				ts:   epoch + rng.Int64N(1_000_000_000_000),
				qty:  rng.Int32N(1000),
			})
			b.Field(5).(*array.StringBuilder).Append(string(op))
		}
		rec := b.NewRecordBatch()
		b.Release()
		err := fixture.WriteParquet(p, rec)
		rec.Release()
		if err != nil {
			return err
		}
		mtime = mtime.Add(time.Second)
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			return err
		}
	}
	return nil
}

// appendRow appends the table's columns of one row to b.
func appendRow(b *array.RecordBuilder, id int64, r row) {
	b.Field(0).(*array.Int64Builder).Append(id)
	b.Field(1).(*array.StringBuilder).Append(r.name)
	b.Field(2).(*array.Float64Builder).Append(r.v)
	b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts))
	b.Field(4).(*array.Int32Builder).Append(r.qty)
}

type bitset []uint64

func newBitset(n int64) bitset { return make(bitset, (n+63)/64) }

func (b bitset) get(i int64) bool { return b[i>>6]&(1<<(i&63)) != 0 }

func (b bitset) set(i int64, on bool) {
	if on {
		b[i>>6] |= 1 << (i & 63)
	} else {
		b[i>>6] &^= 1 << (i & 63)
	}
}

// KeyedSum is a table's row count and an order-insensitive checksum of
// its (id, v) pairs.
type KeyedSum struct {
	Rows int64
	Sum  uint64
}

func (k *KeyedSum) add(id int64, v float64) {
	k.Rows++
	k.Sum += pairHash(id, v)
}

func (k *KeyedSum) remove(id int64, v float64) {
	k.Rows--
	k.Sum -= pairHash(id, v)
}

func pairHash(id int64, v float64) uint64 {
	return mix64(mix64(uint64(id)) ^ math.Float64bits(v))
}

// UpsertOracle is what the table must hold after every batch: computed
// from the base rows' definition and the change files read back, the
// last change of each key winning, in file and row order, without floe.
type UpsertOracle struct {
	KeyedSum
	// changed holds every key a change touched: its last row, or nil once
	// deleted.
	changed map[int64]*row
	rows    int64
	seed    uint64
}

// NewUpsertOracle applies every change file of ds to its base rows.
func NewUpsertOracle(ctx context.Context, ds UpsertDataset) (*UpsertOracle, error) {
	o := &UpsertOracle{changed: map[int64]*row{}, rows: ds.Rows, seed: ds.Seed}
	for id := range ds.Rows {
		o.add(id, baseV(ds.Seed, id))
	}
	for _, p := range ds.ChangePaths {
		rec, err := readWhole(ctx, p)
		if err != nil {
			return nil, err
		}
		err = o.apply(rec)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return o, nil
}

// current is key id's row, or nil when the key is absent.
func (o *UpsertOracle) current(id int64) *row {
	if r, ok := o.changed[id]; ok {
		return r
	}
	if id < o.rows {
		r := baseRow(o.seed, id)
		return &r
	}
	return nil
}

func (o *UpsertOracle) apply(rec arrow.RecordBatch) error {
	got := rec.Schema().Fields()
	for i, f := range changeSchema.Fields() {
		if i >= len(got) || got[i].Name != f.Name || !arrow.TypeEqual(got[i].Type, f.Type) {
			return fmt.Errorf("schema %s, want the columns of %s", rec.Schema(), changeSchema)
		}
	}
	ids := rec.Column(0).(*array.Int64)
	names := rec.Column(1).(*array.String)
	vs := rec.Column(2).(*array.Float64)
	tss := rec.Column(3).(*array.Timestamp)
	qtys := rec.Column(4).(*array.Int32)
	ops := rec.Column(5).(*array.String)
	for i := range int(rec.NumRows()) {
		id := ids.Value(i)
		if old, ok := o.changed[id]; ok && old != nil {
			o.remove(id, old.v)
		} else if !ok && id < o.rows {
			o.remove(id, baseV(o.seed, id))
		}
		switch op := ops.Value(i); op {
		case "d":
			o.changed[id] = nil
		case "c", "u":
			r := &row{name: names.Value(i), v: vs.Value(i), ts: int64(tss.Value(i)), qty: qtys.Value(i)}
			o.changed[id] = r
			o.add(id, r.v)
		default:
			return fmt.Errorf("row %d: operation %q", i, op)
		}
	}
	return nil
}

// WriteRows writes the oracle's rows, in key order, as Parquet files of
// the table's columns under dir: the table written fresh.
func (o *UpsertOracle) WriteRows(dir string) error {
	var last int64 = o.rows - 1
	for id := range o.changed {
		last = max(last, id)
	}
	var b *array.RecordBuilder
	n, files := 0, 0
	flush := func() error {
		rec := b.NewRecordBatch()
		b.Release()
		b, n = nil, 0
		err := fixture.WriteParquet(filepath.Join(dir, fmt.Sprintf("part-%03d.parquet", files)), rec)
		rec.Release()
		files++
		return err
	}
	for id := int64(0); id <= last; id++ {
		r := o.current(id)
		if r == nil {
			continue
		}
		if b == nil {
			b = array.NewRecordBuilder(memory.DefaultAllocator, upsertSchema)
		}
		appendRow(b, id, *r)
		if n++; n == upsertFileRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if b != nil {
		return flush()
	}
	return nil
}
