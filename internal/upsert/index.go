package upsert

import (
	"cmp"
	"slices"
	"sync"
)

// KeyIndex keeps, for the data files of a table with an integer key, each
// file's key column sorted with the rows' positions, so that a batch finds
// the rows its keys replace by binary search instead of reading every key
// column again. A data file never changes once written, so an entry stays
// right for as long as the file is live; Retain drops the others. Files
// are admitted while they fit in the budget and never evicted for
// another: a table larger than the budget has its other files read as
// before, not read and sorted again on every batch.
type KeyIndex struct {
	mu     sync.Mutex
	files  map[string]*fileKeys
	bytes  int64
	budget int64
}

// fileKeys is one data file's keys, ascending, with the position of each
// key's row, and on format-version 3 its rows' own _row_id values.
type fileKeys struct {
	keys []int64
	pos  []uint32
	// rowIDs are the file's _row_id values by position, -1 where null,
	// once read (rowIDsRead; nil then when the file has no such column),
	// under the index's lock.
	rowIDs     []int64
	rowIDsRead bool
	bytes      int64 // what the entry costs the budget
}

// entryBytes is what a file of n rows costs the budget.
func entryBytes(n int) int64 { return int64(n) * 12 }

// NewKeyIndex makes an index that holds at most budget bytes of keys.
func NewKeyIndex(budget int64) *KeyIndex {
	return &KeyIndex{files: map[string]*fileKeys{}, budget: budget}
}

// lookup returns the file's entry, or nil.
func (ix *KeyIndex) lookup(path string) *fileKeys {
	if ix == nil {
		return nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.files[path]
}

// fits reports whether a file of n rows may be admitted.
func (ix *KeyIndex) fits(n int) bool {
	if ix == nil {
		return false
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.bytes+entryBytes(n) <= ix.budget
}

// add admits a file's keys (keys[i] is the key of row i, which is null
// where null[i]; null may be nil) if they still fit, and returns its entry
// either way.
func (ix *KeyIndex) add(path string, keys []int64, null []bool) *fileKeys {
	type keyPos struct {
		k int64
		p uint32
	}
	pairs := make([]keyPos, 0, len(keys))
	for i, k := range keys {
		if null == nil || !null[i] {
			pairs = append(pairs, keyPos{k, uint32(i)})
		}
	}
	slices.SortFunc(pairs, func(a, b keyPos) int { return cmp.Compare(a.k, b.k) })
	fk := &fileKeys{keys: make([]int64, len(pairs)), pos: make([]uint32, len(pairs)), bytes: entryBytes(len(pairs))}
	for i, kp := range pairs {
		fk.keys[i], fk.pos[i] = kp.k, kp.p
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if _, ok := ix.files[path]; !ok && ix.bytes+fk.bytes <= ix.budget {
		ix.files[path] = fk
		ix.bytes += fk.bytes
	}
	return fk
}

// fileRowIDs returns the _row_id values kept for a file (nil when it has
// none); ok is false when the index does not hold them.
func (ix *KeyIndex) fileRowIDs(path string) (ids []int64, ok bool) {
	if ix == nil {
		return nil, false
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	fk := ix.files[path]
	if fk == nil || !fk.rowIDsRead {
		return nil, false
	}
	return fk.rowIDs, true
}

// keepRowIDs keeps a file's _row_id values (nil when it has none), 8 bytes
// a row, if the index holds the file's keys and they fit.
func (ix *KeyIndex) keepRowIDs(path string, ids []int64) {
	if ix == nil {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	fk := ix.files[path]
	n := int64(len(ids)) * 8
	if fk == nil || fk.rowIDsRead || ix.bytes+n > ix.budget {
		return
	}
	fk.rowIDs, fk.rowIDsRead = ids, true
	fk.bytes += n
	ix.bytes += n
}

// Retain drops the files that are no longer live.
func (ix *KeyIndex) Retain(live func(path string) bool) {
	if ix == nil {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for path, fk := range ix.files {
		if !live(path) {
			delete(ix.files, path)
			ix.bytes -= fk.bytes
		}
	}
}

// Bytes is what the index holds.
func (ix *KeyIndex) Bytes() int64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.bytes
}

// find returns the positions of the rows whose keys are in sorted (the
// batch's keys, ascending), in file order, and for each the index in
// sorted of its key: for each key, a binary search of what is left of the
// file's keys.
func (fk *fileKeys) find(sorted []int64) (pos []int64, at []int32) {
	if len(fk.keys) == 0 {
		return nil, nil
	}
	// Each row found as its position above its key's index, which sorts
	// them by position as plain integers do.
	var found []uint64
	// Only the batch's keys within the file's range can be in it.
	from, _ := slices.BinarySearch(sorted, fk.keys[0])
	to, ok := slices.BinarySearch(sorted, fk.keys[len(fk.keys)-1])
	if ok {
		to++
	}
	rest := fk.keys
	base := 0
	for i := from; i < to; i++ {
		j, ok := slices.BinarySearch(rest, sorted[i])
		rest, base = rest[j:], base+j
		if !ok {
			continue
		}
		for j := 0; j < len(rest) && rest[j] == sorted[i]; j++ {
			found = append(found, uint64(fk.pos[base+j])<<32|uint64(i))
		}
	}
	slices.Sort(found)
	pos, at = make([]int64, len(found)), make([]int32, len(found))
	for i, f := range found {
		pos[i], at[i] = int64(f>>32), int32(uint32(f))
	}
	return pos, at
}
