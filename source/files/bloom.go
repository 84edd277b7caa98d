package files

import (
	"hash/maphash"
	"math/bits"
)

// bloom is a blocked Bloom filter over a segment's paths, kept in memory
// only: a lookup skips the segments that cannot hold a path without
// reading them, which makes a path absent from most of the log (a file
// planned in this run, a new one) cost a hash and a cache line per
// segment. Each path sets bloomProbes bits of one 512-bit block; at
// bloomBits bits a path about 1 lookup in 100 reads a segment in vain.
type bloom []uint64

const (
	bloomBits   = 10
	bloomProbes = 6
)

// pathSeed seeds the hash of paths for this process's filters.
var pathSeed = maphash.MakeSeed()

func hashPath(p string) uint64 { return maphash.String(pathSeed, p) }

func newBloom(hashes []uint64) bloom {
	blocks := max(1, (len(hashes)*bloomBits+511)/512)
	b := make(bloom, 8*blocks)
	for _, h := range hashes {
		blk, g := b.locate(h)
		for i := range bloomProbes {
			pos := (g >> (9 * i)) & 511
			blk[pos>>6] |= 1 << (pos & 63)
		}
	}
	return b
}

// locate picks a path's block from the hash's high half and its bits
// from a remix of it.
func (b bloom) locate(h uint64) ([]uint64, uint64) {
	i, _ := bits.Mul64(h, uint64(len(b)/8))
	return b[i*8 : i*8+8], bits.RotateLeft64(h, 29) * 0x9e3779b97f4a7c15
}

func (b bloom) mayHold(h uint64) bool {
	blk, g := b.locate(h)
	for i := range bloomProbes {
		pos := (g >> (9 * i)) & 511
		if blk[pos>>6]&(1<<(pos&63)) == 0 {
			return false
		}
	}
	return true
}
