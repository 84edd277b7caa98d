package files

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// restartEvery is how many entries a block of a segment holds: a lookup
// binary-searches the blocks' first paths, stored whole, then reads at
// most this many front-coded entries.
const restartEvery = 16

// segment is the committed entries of the log batches lo to hi, sorted by
// path and kept encoded, in memory as on disk (docs/format/checkpoint.md):
// each entry is its path's length shared with the previous one and the
// rest, its size, its modification time less the previous one's, its log
// batch less lo, and its ETag (an object store's; empty on a disk). A
// million entries of a landing directory take about 16 MB of memory,
// where a map of them took more than 200. Segments are immutable: merging
// two writes a third.
type segment struct {
	lo, hi int64
	// acct is the count, digest and watermark of the entries, so that the
	// account of the query's input sums segments without reading them.
	acct        account
	first, last string // the least and the greatest path, "" when empty
	data        []byte
	// restarts are the offsets in data of each block's first entry, whose
	// path is stored whole.
	restarts []int
	// filter tells the paths the segment cannot hold.
	filter bloom
	// legacy names the JSON compact file the segment was read from, which
	// the next compaction writes again as a segment file.
	legacy string
}

// name is the segment's file name in the log directory.
func (s *segment) name() string {
	return strconv.FormatInt(s.lo, 10) + "-" + strconv.FormatInt(s.hi, 10) + segmentSuffix
}

const segmentSuffix = ".seg"

// parseSegmentName reads the log batch range of a segment file's name.
func parseSegmentName(name string) (lo, hi int64, ok bool) {
	rng, ok := strings.CutSuffix(name, segmentSuffix)
	if !ok {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(rng, "-")
	if !ok {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(b, 10, 64)
	return lo, hi, err1 == nil && err2 == nil && 0 <= lo && lo <= hi
}

// segmentWriter builds a segment from entries added in increasing path
// order. The digest is the caller's to set: merging combines the inputs'
// rather than hashing every entry again.
type segmentWriter struct {
	seg     segment
	prev    []byte
	prevMod int64
	wmPath  []byte
	hashes  []uint64
}

func newSegmentWriter(lo, hi int64) *segmentWriter {
	return &segmentWriter{seg: segment{lo: lo, hi: hi, acct: account{wm: watermark{ms: math.MinInt64}}}}
}

func (w *segmentWriter) add(path []byte, size, mtime, batch int64, etag []byte) {
	shared := 0
	if w.seg.acct.total%restartEvery == 0 {
		w.seg.restarts = append(w.seg.restarts, len(w.seg.data))
		w.prevMod = 0
	} else {
		for shared < len(path) && shared < len(w.prev) && path[shared] == w.prev[shared] {
			shared++
		}
	}
	d := w.seg.data
	d = binary.AppendUvarint(d, uint64(shared))
	d = binary.AppendUvarint(d, uint64(len(path)-shared))
	d = append(d, path[shared:]...)
	d = binary.AppendVarint(d, size)
	d = binary.AppendVarint(d, mtime-w.prevMod)
	d = binary.AppendUvarint(d, uint64(batch-w.seg.lo))
	d = binary.AppendUvarint(d, uint64(len(etag)))
	d = append(d, etag...)
	w.seg.data = d
	w.prev = append(w.prev[:0], path...)
	w.prevMod = mtime
	w.hashes = append(w.hashes, maphash.Bytes(pathSeed, path))
	w.seg.acct.total++
	// Paths come in increasing order, so an equal time makes this one the
	// greater (time, path).
	if mtime >= w.seg.acct.wm.ms {
		w.seg.acct.wm.ms = mtime
		w.wmPath = append(w.wmPath[:0], path...)
	}
}

// finish returns the segment, its digest still to be set.
func (w *segmentWriter) finish() *segment {
	s := w.seg
	// Kept for the life of the log: without the room appends left.
	s.data, s.restarts = slices.Clone(s.data), slices.Clone(s.restarts)
	s.last = string(w.prev)
	if len(s.restarts) > 0 {
		s.first = string(s.blockKey(0))
	}
	s.acct.wm.path = string(w.wmPath)
	s.filter = newBloom(w.hashes)
	return &s
}

// segmentFromEntries builds a segment of the log batches lo to hi from
// entries sorted by path, one per path.
func segmentFromEntries(lo, hi int64, entries []fileEntry) *segment {
	w := newSegmentWriter(lo, hi)
	var d digest
	for _, f := range entries {
		w.add([]byte(f.Path), f.Size, f.ModTime, f.Batch, []byte(f.ETag))
		d.add(f)
	}
	s := w.finish()
	s.acct.digest = d
	return s
}

// segmentIter reads a segment's entries in order. key is valid until the
// next call of next.
type segmentIter struct {
	s                  *segment
	off                int
	i                  int64
	key                []byte
	size, mtime, batch int64
	etag               []byte
	err                error
}

func (s *segment) iter(block int, buf []byte) segmentIter {
	if block >= len(s.restarts) {
		return segmentIter{s: s, off: len(s.data), key: buf}
	}
	return segmentIter{s: s, off: s.restarts[block], i: int64(block) * restartEvery, key: buf}
}

func (it *segmentIter) next() bool {
	d := it.s.data
	if it.off >= len(d) || it.err != nil {
		return false
	}
	off := it.off
	shared, n1 := binary.Uvarint(d[off:])
	rest, n2 := binary.Uvarint(d[max(off+n1, off):])
	start := off + n1 + n2
	block := it.i%restartEvery == 0
	if n1 <= 0 || n2 <= 0 || shared > uint64(len(it.key)) || (block && shared != 0) || rest > uint64(len(d)-start) {
		it.err = fmt.Errorf("entry %d is malformed", it.i)
		return false
	}
	it.key = append(it.key[:shared], d[start:start+int(rest)]...)
	off = start + int(rest)
	size, n3 := binary.Varint(d[off:])
	dt, n4 := binary.Varint(d[max(off+n3, off):])
	batch, n5 := binary.Uvarint(d[max(off+n3+n4, off):])
	off = max(off+n3+n4+n5, off)
	etag, n6 := binary.Uvarint(d[off:])
	if n3 <= 0 || n4 <= 0 || n5 <= 0 || n6 <= 0 || etag > uint64(len(d)-off-n6) {
		it.err = fmt.Errorf("entry %d is malformed", it.i)
		return false
	}
	if block {
		it.mtime = 0
	}
	off += n6
	it.size, it.mtime, it.batch = size, it.mtime+dt, it.s.lo+int64(batch)
	it.etag = d[off : off+int(etag)]
	it.off = off + int(etag)
	it.i++
	return true
}

func (it *segmentIter) entry() fileEntry {
	return fileEntry{Path: string(it.key), Size: it.size, ModTime: it.mtime, Batch: it.batch, ETag: string(it.etag)}
}

// blockKey is the first path of block i, stored whole.
func (s *segment) blockKey(i int) []byte {
	off := s.restarts[i]
	_, n := binary.Uvarint(s.data[off:]) // shared, 0
	l, m := binary.Uvarint(s.data[off+n:])
	start := off + n + m
	return s.data[start : start+int(l)]
}

// block is the last block whose first path is not after path, -1 when
// there is none.
func (s *segment) block(path string) int {
	return sort.Search(len(s.restarts), func(i int) bool { return string(s.blockKey(i)) > path }) - 1
}

// mayHold tells whether path, of hash h, can be in the segment.
func (s *segment) mayHold(path string, h uint64) bool {
	return len(s.restarts) > 0 && s.first <= path && path <= s.last && s.filter.mayHold(h)
}

// lookup finds the entry of path, of hash h: a binary search of the
// blocks, then a read of one.
func (s *segment) lookup(path string, h uint64) (fileEntry, bool) {
	if !s.mayHold(path, h) {
		return fileEntry{}, false
	}
	b := s.block(path)
	if b < 0 {
		return fileEntry{}, false
	}
	var buf [256]byte
	it := s.iter(b, buf[:0])
	for n := 0; n < restartEvery && it.next(); n++ {
		if string(it.key) == path {
			return it.found(path), true
		}
		if string(it.key) > path {
			break
		}
	}
	return fileEntry{}, false
}

// found is the entry at the iterator, whose path is path.
func (it *segmentIter) found(path string) fileEntry {
	return fileEntry{Path: path, Size: it.size, ModTime: it.mtime, Batch: it.batch, ETag: string(it.etag)}
}

// segmentCursor looks up paths in one segment in increasing order, from
// where the last one left it: a listing in path order reads each block of
// the segment once at most, instead of searching it for every path.
type segmentCursor struct {
	s  *segment
	it segmentIter
	// at is whether it holds the first entry whose path is not before
	// the last one sought.
	at bool
}

func (c *segmentCursor) seek(path string, h uint64) (fileEntry, bool) {
	s := c.s
	if !s.mayHold(path, h) {
		return fileEntry{}, false
	}
	switch {
	case !c.at:
		b := s.block(path)
		if b < 0 {
			return fileEntry{}, false
		}
		c.it = s.iter(b, c.it.key[:0])
		c.at = c.it.next()
	case string(c.it.key) < path:
		// Whole blocks before path are skipped, by galloping over their
		// first paths.
		b := int((c.it.i - 1) / restartEvery)
		if b+1 < len(s.restarts) && string(s.blockKey(b+1)) <= path {
			lo, step := b+1, 1
			for lo+step < len(s.restarts) && string(s.blockKey(lo+step)) <= path {
				lo += step
				step *= 2
			}
			hi := min(lo+step, len(s.restarts))
			b = lo + sort.Search(hi-lo, func(i int) bool { return string(s.blockKey(lo+i)) > path }) - 1
			c.it = s.iter(b, c.it.key[:0])
			c.at = c.it.next()
		}
	}
	for c.at && string(c.it.key) < path {
		c.at = c.it.next()
	}
	if c.at && string(c.it.key) == path {
		return c.it.found(path), true
	}
	return fileEntry{}, false
}

// accountThrough is the account of the entries of log batches up to n:
// the header's when the segment ends by n, otherwise a read of it (a
// checkpoint whose offsets end inside a merged range, which is rare).
func (s *segment) accountThrough(n int64) account {
	if s.hi <= n {
		return s.acct
	}
	a := account{wm: watermark{ms: math.MinInt64}}
	if s.lo > n {
		return a
	}
	it := s.iter(0, nil)
	for it.next() {
		if it.batch <= n {
			a.add(it.entry())
		}
	}
	return a
}

// mergeSegments merges older and newer, adjacent in log batches, into one
// segment. Entries modified before oldest are let go (max-file-age), and a
// path in both keeps newer's entry; the digest drops theirs.
func mergeSegments(older, newer *segment, oldest int64) (*segment, error) {
	w := newSegmentWriter(older.lo, newer.hi)
	d := older.acct.digest
	d.xor(newer.acct.digest)
	a, b := older.iter(0, nil), newer.iter(0, nil)
	okA, okB := a.next(), b.next()
	for okA || okB {
		it := &a
		switch {
		case !okA:
			it = &b
		case okB:
			c := strings.Compare(string(a.key), string(b.key))
			if c > 0 {
				it = &b
			} else if c == 0 {
				d.add(a.entry())
				okA = a.next()
				continue
			}
		}
		if it.mtime < oldest {
			d.add(it.entry())
		} else {
			w.add(it.key, it.size, it.mtime, it.batch, it.etag)
		}
		if it == &a {
			okA = a.next()
		} else {
			okB = b.next()
		}
	}
	if err := errors.Join(a.err, b.err); err != nil {
		return nil, err
	}
	s := w.finish()
	s.acct.digest = d
	return s, nil
}

// The segment file: a magic, a header (the log batch range, the entry
// count, digest and watermark, the greatest path, the entries' encoded
// length), the encoded entries compressed with zstd, and a CRC-32C of all
// that.
const segmentMagic = "floeseg\x01"

// The codecs are made once; EncodeAll and DecodeAll may run concurrently.
var (
	segmentEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	})
	segmentDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	})
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *segment) encode() ([]byte, error) {
	b := []byte(segmentMagic)
	b = binary.AppendVarint(b, s.lo)
	b = binary.AppendVarint(b, s.hi)
	b = binary.AppendUvarint(b, uint64(s.acct.total))
	b = append(b, s.acct.digest[:]...)
	b = binary.AppendVarint(b, s.acct.wm.ms)
	b = binary.AppendUvarint(b, uint64(len(s.acct.wm.path)))
	b = append(b, s.acct.wm.path...)
	b = binary.AppendUvarint(b, uint64(len(s.last)))
	b = append(b, s.last...)
	b = binary.AppendUvarint(b, uint64(len(s.data)))
	enc, err := segmentEncoder()
	if err != nil {
		return nil, fmt.Errorf("zstd encoder: %w", err)
	}
	b = enc.EncodeAll(s.data, b)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// decodeSegment reads a segment file and checks every entry: the paths in
// increasing order, the count, the greatest path and the watermark as the
// header states them.
func decodeSegment(b []byte) (*segment, error) {
	if len(b) < len(segmentMagic)+4 || string(b[:len(segmentMagic)]) != segmentMagic {
		return nil, errors.New("not a source log segment")
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, errors.New("checksum mismatch")
	}
	r := body[len(segmentMagic):]
	bad := false
	uv := func() uint64 {
		v, n := binary.Uvarint(r)
		if n <= 0 {
			bad = true
			return 0
		}
		r = r[n:]
		return v
	}
	sv := func() int64 {
		v, n := binary.Varint(r)
		if n <= 0 {
			bad = true
			return 0
		}
		r = r[n:]
		return v
	}
	str := func() string {
		l := uv()
		if bad || l > uint64(len(r)) {
			bad = true
			return ""
		}
		v := string(r[:l])
		r = r[l:]
		return v
	}
	s := &segment{lo: sv(), hi: sv()}
	s.acct.total = int64(uv())
	if len(r) < len(s.acct.digest) {
		return nil, errors.New("truncated header")
	}
	copy(s.acct.digest[:], r)
	r = r[len(s.acct.digest):]
	s.acct.wm.ms = sv()
	s.acct.wm.path = str()
	s.last = str()
	raw := uv()
	if bad {
		return nil, errors.New("malformed header")
	}
	dec, err := segmentDecoder()
	if err != nil {
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	// The header's length is trusted only as far as a generous ratio to
	// the compressed bytes: a damaged one must not allocate gigabytes.
	data, err := dec.DecodeAll(r, make([]byte, 0, min(raw, 64*uint64(len(r))+1<<16)))
	if err != nil {
		return nil, fmt.Errorf("entries: %w", err)
	}
	if uint64(len(data)) != raw {
		return nil, fmt.Errorf("entries are %d bytes, the header says %d", len(data), raw)
	}
	s.data = data
	n := int(s.acct.total)
	s.restarts = make([]int, 0, (n+restartEvery-1)/restartEvery)
	it := segmentIter{s: s}
	wm := watermark{ms: math.MinInt64}
	var prev []byte
	hashes := make([]uint64, 0, n)
	for {
		if it.i%restartEvery == 0 && it.off < len(data) {
			s.restarts = append(s.restarts, it.off)
		}
		if !it.next() {
			break
		}
		if it.i > 1 && string(it.key) <= string(prev) {
			return nil, fmt.Errorf("entry %d (%s) is out of order", it.i-1, it.key)
		}
		if it.batch < s.lo || it.batch > s.hi {
			return nil, fmt.Errorf("entry %d (%s) is of log batch %d, outside %d-%d", it.i-1, it.key, it.batch, s.lo, s.hi)
		}
		if it.mtime >= wm.ms {
			wm.ms = it.mtime
		}
		prev = append(prev[:0], it.key...)
		hashes = append(hashes, maphash.Bytes(pathSeed, it.key))
	}
	switch {
	case it.err != nil:
		return nil, it.err
	case it.i != s.acct.total:
		return nil, fmt.Errorf("%d entries, the header says %d", it.i, s.acct.total)
	case string(prev) != s.last:
		return nil, fmt.Errorf("the greatest path is %q, the header says %q", prev, s.last)
	case wm.ms != s.acct.wm.ms:
		return nil, fmt.Errorf("the newest modification time is %d, the header says %d", wm.ms, s.acct.wm.ms)
	}
	s.filter = newBloom(hashes)
	if n > 0 {
		s.first = string(s.blockKey(0))
	}
	return s, nil
}
