package upsert

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// find returns exactly the positions of the rows holding a batch key, and
// their keys, duplicates included, whatever the file's order.
func TestFileKeysFind(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]int64, 5000)
	for i := range keys {
		keys[i] = rng.Int64N(20000) - 10000
	}
	ix := NewKeyIndex(1 << 20)
	fk := ix.add("f", slices.Clone(keys), nil)
	batch := []int64{-10001, keys[0], keys[17], keys[4999], 123456}
	slices.Sort(batch)
	var want, wantKeys []int64
	for i, k := range keys {
		if _, ok := slices.BinarySearch(batch, k); ok {
			want = append(want, int64(i))
			wantKeys = append(wantKeys, k)
		}
	}
	got, at := fk.find(batch)
	gotKeys := make([]int64, len(at))
	for i, j := range at {
		gotKeys[i] = batch[j]
	}
	if !slices.Equal(got, want) || !slices.Equal(gotKeys, wantKeys) {
		t.Fatalf("find = %v with keys %v, want %v with keys %v", got, gotKeys, want, wantKeys)
	}
	if ix.lookup("f") != fk || ix.Bytes() != entryBytes(len(keys)) {
		t.Fatalf("the file was not admitted: %d bytes", ix.Bytes())
	}
}

// Files beyond the budget are not admitted, and dead files leave.
func TestKeyIndexBudget(t *testing.T) {
	ix := NewKeyIndex(entryBytes(150))
	ix.add("a", make([]int64, 100), nil)
	ix.add("b", make([]int64, 100), nil)
	if ix.lookup("a") == nil || ix.lookup("b") != nil {
		t.Fatal("want a admitted and b, beyond the budget, not")
	}
	ix.Retain(func(p string) bool { return p != "a" })
	if ix.lookup("a") != nil || ix.Bytes() != 0 {
		t.Fatalf("a dead file is kept: %d bytes", ix.Bytes())
	}
	if !ix.fits(150) || ix.fits(151) {
		t.Fatal("fits disagrees with the budget")
	}
}
