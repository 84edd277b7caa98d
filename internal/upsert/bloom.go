package upsert

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/cespare/xxhash/v2"
)

// bloomKeys are a batch's keys as Parquet bloom filters hash them (XXH64
// of the value's plain encoding), sorted by key so that a row group's
// minimum and maximum pick out the keys it may hold. Each encoding is
// hashed once per batch, when a file first needs it: a key column read as
// int64 may be INT32 in files written before it was widened.
type bloomKeys struct {
	once64, once32, onceBytes sync.Once
	int64s, int32s            hashedKeys[int64]
	bytes                     hashedKeys[string]
}

// hashedKeys are sorted keys and their hashes, in the same order.
type hashedKeys[K cmp.Ordered] struct {
	keys   []K
	hashes []uint64
}

// between are the hashes of the keys in [lo, hi].
func (h *hashedKeys[K]) between(lo, hi K) []uint64 {
	i, _ := slices.BinarySearch(h.keys, lo)
	j, found := slices.BinarySearch(h.keys, hi)
	if found {
		j++
	}
	if j < i {
		return nil
	}
	return h.hashes[i:j]
}

func (b *bloomKeys) ints64(ix *intIndex) *hashedKeys[int64] {
	b.once64.Do(func() {
		b.int64s = hashedKeys[int64]{keys: ix.sorted, hashes: make([]uint64, len(ix.sorted))}
		var buf [8]byte
		for i, k := range ix.sorted {
			binary.LittleEndian.PutUint64(buf[:], uint64(k))
			b.int64s.hashes[i] = xxhash.Sum64(buf[:])
		}
	})
	return &b.int64s
}

func (b *bloomKeys) ints32(ix *intIndex) *hashedKeys[int64] {
	b.once32.Do(func() {
		lo, _ := slices.BinarySearch(ix.sorted, math.MinInt32)
		hi, _ := slices.BinarySearch(ix.sorted, math.MaxInt32+1)
		keys := ix.sorted[lo:hi]
		b.int32s = hashedKeys[int64]{keys: keys, hashes: make([]uint64, len(keys))}
		var buf [4]byte
		for i, k := range keys {
			binary.LittleEndian.PutUint32(buf[:], uint32(int32(k)))
			b.int32s.hashes[i] = xxhash.Sum64(buf[:])
		}
	})
	return &b.int32s
}

func (b *bloomKeys) byteKeys(c *Changes) *hashedKeys[string] {
	b.onceBytes.Do(func() {
		keys := make([]string, 0, len(c.strs))
		for k := range c.strs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.bytes = hashedKeys[string]{keys: keys, hashes: make([]uint64, len(keys))}
		for i, k := range keys {
			b.bytes.hashes[i] = xxhash.Sum64String(k)
		}
	})
	return &b.bytes
}

// bloomMayHold reports whether row group rg of rdr may hold one of the
// batch's keys, by the bloom filter of its key column (cols holds the key
// columns; only a single-column key is looked up). It is true when the
// column has no filter, when its keys are not hashed as the filter hashes
// them, and when reading the filter does not pay (bloomPays).
func bloomMayHold(rdr *file.Reader, rg int, cols []int, c *Changes, ix *intIndex) bool {
	if len(cols) != 1 {
		return true
	}
	md := rdr.MetaData()
	cc, err := md.RowGroup(rg).ColumnChunk(cols[0])
	if err != nil || cc.BloomFilterOffset() <= 0 {
		return true
	}
	var st metadata.TypedStatistics
	if ok, err := cc.StatsSet(); ok && err == nil {
		if st, err = cc.Statistics(); err != nil {
			st = nil
		}
	}
	var hashes []uint64
	col := md.Schema.Column(cols[0])
	switch col.PhysicalType() {
	case parquet.Types.Int64:
		if ix == nil {
			return true
		}
		keys := c.bloom.ints64(ix)
		hashes = keys.hashes
		if s, ok := st.(*metadata.Int64Statistics); ok && s.HasMinMax() {
			hashes = keys.between(s.Min(), s.Max())
		}
	case parquet.Types.Int32:
		if ix == nil {
			return true
		}
		keys := c.bloom.ints32(ix)
		hashes = keys.hashes
		if s, ok := st.(*metadata.Int32Statistics); ok && s.HasMinMax() {
			hashes = keys.between(int64(s.Min()), int64(s.Max()))
		}
	case parquet.Types.ByteArray, parquet.Types.FixedLenByteArray:
		// Keys of these types are compared as their raw bytes, which is
		// their plain encoding; a decimal's are not.
		switch col.LogicalType().(type) {
		case schema.StringLogicalType, schema.UUIDLogicalType, schema.NoLogicalType, nil:
		default:
			return true
		}
		if ix != nil {
			return true
		}
		keys := c.bloom.byteKeys(c)
		hashes = keys.hashes
		switch s := st.(type) {
		case *metadata.ByteArrayStatistics:
			if s.HasMinMax() {
				hashes = keys.between(string(s.Min()), string(s.Max()))
			}
		case *metadata.FixedLenByteArrayStatistics:
			if s.HasMinMax() {
				hashes = keys.between(string(s.Min()), string(s.Max()))
			}
		}
	default:
		return true
	}
	if len(hashes) == 0 {
		return false
	}
	if !bloomPays(len(hashes), cc, md.RowGroup(rg).NumRows()) {
		return true
	}
	rgf, err := rdr.GetBloomFilterReader().RowGroup(rg)
	if err != nil {
		return true
	}
	bf, err := rgf.GetColumnBloomFilter(cols[0])
	if err != nil || bf == nil {
		return true
	}
	for _, h := range hashes {
		if bf.CheckHash(h) {
			return true
		}
	}
	return false
}

// bloomPays reports whether a key column chunk's bloom filter is worth
// reading for k keys: when the chance that all k miss it, and the chunk is
// skipped, times the chunk's size exceeds the filter's size. The chance
// falls with k as (1-fpp)^k, so the filter is read when k is small next to
// 1/fpp, a few hundred keys at Iceberg's default fpp of 1%, and skipped for
// batches whose keys would pass it almost surely (measured in
// BenchmarkLocate). fpp is estimated from the filter's bits per row.
func bloomPays(k int, cc *metadata.ColumnChunkMetaData, rows int64) bool {
	if rows <= 0 {
		return false
	}
	size := float64(cc.BloomFilterLength())
	if size <= 0 {
		// Writers before Parquet 2.10 leave the length out: assume the
		// filter was sized for 1% of its rows.
		size = float64(rows) * 10 / 8
	}
	bits := size * 8 / float64(rows)
	fpp := math.Pow(1-math.Exp(-8/bits), 8)
	skip := math.Pow(1-fpp, float64(k))
	return skip*float64(cc.TotalCompressedSize()) > size
}
