package arrowpool

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
)

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func zero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Freed buffers survive a collection (a sync.Pool would drop them).
func TestKeepsBuffersThroughCollections(t *testing.T) {
	a := New()
	b := a.Allocate(100_000)
	first := addr(b)
	a.Free(b)
	runtime.GC()
	runtime.GC()
	if c := a.Allocate(100_000); addr(c) != first {
		t.Fatalf("a freed buffer was lost to a collection")
	}
}

// The pool keeps at most its limit of idle bytes.
func TestIdleBytesBounded(t *testing.T) {
	a := New()
	a.limit = 3 * (8<<10 + align) // three 8 KiB buffers
	var bufs [][]byte
	for range 5 {
		bufs = append(bufs, a.Allocate(5_000))
	}
	for _, b := range bufs {
		a.Free(b)
	}
	if a.idle != a.limit || len(a.free[class(5_000)]) != 3 {
		t.Fatalf("idle %d bytes in %d buffers; want %d in 3", a.idle, len(a.free[class(5_000)]), a.limit)
	}
}

func TestReusesFreedBuffersZeroedAndAligned(t *testing.T) {
	a := New()
	b := a.Allocate(100_000)
	if len(b) != 100_000 || addr(b)%align != 0 {
		t.Fatalf("len %d, address %#x: want 100000 bytes aligned to %d", len(b), addr(b), align)
	}
	for i := range b {
		b[i] = 0xff
	}
	first := addr(b)
	a.Free(b)
	c := a.Allocate(70_000) // the same class (128 KiB)
	if addr(c) != first {
		t.Errorf("a freed buffer of the class was not handed out again")
	}
	if !zero(c) {
		t.Errorf("a reused buffer is not zeroed")
	}
}

func TestIgnoresDoubleAndForeignFrees(t *testing.T) {
	a := New()
	b := a.Allocate(10_000)
	a.Free(b)
	a.Free(b) // a double release must not put the buffer in the pool twice
	foreign := make([]byte, 16_384)
	a.Free(foreign)
	x, y := a.Allocate(10_000), a.Allocate(10_000)
	if addr(x) == addr(y) {
		t.Fatalf("one buffer handed out twice after a double free")
	}
	for _, p := range []uintptr{addr(x), addr(y)} {
		if p == addr(foreign) {
			t.Fatalf("a buffer the pool did not allocate was handed out")
		}
	}
}

func TestReallocate(t *testing.T) {
	a := New()
	b := a.Allocate(5_000) // class 8 KiB
	for i := range b {
		b[i] = byte(i)
	}
	b = a.Reallocate(3_000, b)
	b = a.Reallocate(8_000, b) // in place: the class holds it
	if len(b) != 8_000 || !zero(b[3_000:]) {
		t.Fatalf("grown in place: len %d, tail zeroed %v", len(b), zero(b[3_000:]))
	}
	g := a.Reallocate(50_000, b) // moves to a larger class
	if len(g) != 50_000 || addr(g)%align != 0 || !zero(g[3_000:]) {
		t.Fatalf("moved: len %d, aligned %v, tail zeroed %v", len(g), addr(g)%align == 0, zero(g[3_000:]))
	}
	for i := range 3_000 {
		if g[i] != byte(i) {
			t.Fatalf("byte %d is %d after the move, want %d", i, g[i], byte(i))
		}
	}
	if n := a.Allocate(5_000); addr(n) != addr(b) {
		t.Errorf("the buffer left by the move was not freed to its class")
	}
}

func TestSmallAndHugeBypassThePool(t *testing.T) {
	defer func(p bool) { poison = p }(poison)
	poison = false // which pools small buffers
	a := New()
	for _, n := range []int{0, 1, 100, 1 << (maxShift + 1)} {
		b := a.Allocate(n)
		if len(b) != n || !zero(b) {
			t.Fatalf("Allocate(%d): len %d, zeroed %v", n, len(b), zero(b))
		}
		a.Free(b)
	}
	if len(a.live) != 0 {
		t.Errorf("%d buffers recorded as handed out, want none", len(a.live))
	}
}

// Concurrent users each see only their own bytes (run with -race).
func TestConcurrentUseKeepsBuffersApart(t *testing.T) {
	a := New()
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				b := a.Allocate(4_000 + (i%7)*3_000)
				for j := range b {
					b[j] = byte(g)
				}
				for j := range b {
					if b[j] != byte(g) {
						errs <- "a buffer in use was handed to another user"
						return
					}
				}
				a.Free(b)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestPoisonOverwritesFreedBuffers(t *testing.T) {
	defer func(p bool) { poison = p }(poison)
	poison = true
	a := New()
	b := a.Allocate(10_000)
	for i := range b {
		b[i] = 7
	}
	a.Free(b)
	// b is what a user holding on to the record would still see.
	for i, c := range b {
		if c != 0xa5 {
			t.Fatalf("byte %d of a freed buffer is %#x, want the poison 0xa5", i, c)
		}
	}
	if c := a.Allocate(10_000); !zero(c) {
		t.Fatalf("a poisoned buffer handed out again is not zeroed")
	}
}

// Buffers have no capacity beyond their length, grown in place or not:
// arrow-go's take and filter kernels size by capacity and copy within the
// length, so spare capacity cut the long strings they select short.
func TestNoSpareCapacity(t *testing.T) {
	a := New()
	b := a.Allocate(5_000)
	if cap(b) != len(b) {
		t.Fatalf("Allocate(5000): capacity %d", cap(b))
	}
	if b = a.Reallocate(7_000, b); cap(b) != 7_000 {
		t.Fatalf("grown in place to 7000: capacity %d", cap(b))
	}
	a.Free(b)
}

func TestTakeAndFilterLongStrings(t *testing.T) {
	a := New()
	ctx := compute.WithAllocator(context.Background(), a)
	long := strings.Repeat("é", 3000)
	sb := array.NewStringBuilder(a)
	for i := range 200 {
		if i%20 == 0 {
			sb.Append(long)
		} else {
			sb.Append("a")
		}
	}
	strs := sb.NewArray()
	defer strs.Release()
	mb := array.NewBooleanBuilder(a)
	ib := array.NewInt32Builder(a)
	for i := range 200 {
		mb.Append(i%20 == 0 || i%7 == 0)
		if i%20 == 0 {
			ib.Append(int32(i))
		}
	}
	mask, idx := mb.NewArray(), ib.NewArray()
	defer mask.Release()
	defer idx.Release()
	filtered, err := compute.FilterArray(ctx, strs, mask, *compute.DefaultFilterOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer filtered.Release()
	taken, err := compute.TakeArray(ctx, strs, idx)
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Release()
	for _, out := range []arrow.Array{filtered, taken} {
		s := out.(*array.String)
		for i := range s.Len() {
			if v := s.Value(i); v != "a" && v != long {
				t.Fatalf("row %d of %d is %d bytes, neither of the values selected", i, s.Len(), len(v))
			}
		}
	}
}
