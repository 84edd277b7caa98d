// Package arrowpool is an Arrow memory allocator that hands freed buffers
// out again, so that a read which allocates and releases the same sizes
// batch after batch stops paying the Go heap (allocation, zeroing of fresh
// pages, collection) for each of them.
//
// Its users must not touch a record's memory after its Release: a string
// taken from a String column aliases the buffer. With FLOE_ARROWPOOL_POISON
// set in the environment every freed buffer is overwritten at once, so
// that a test run finds such a use by its garbage instead of by chance.
package arrowpool

import (
	"math/bits"
	"os"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

const (
	// minShift sizes the smallest class, 4 KiB. Buffers under half of it
	// come from the Go heap and are not pooled: keeping them costs more
	// than allocating them.
	minShift = 12
	// maxShift: larger buffers are not pooled either, so that a rare huge
	// batch does not stay resident.
	maxShift = 27
	align    = 64
	// MaxIdleBytes bounds the freed memory a pool keeps for reuse; what a
	// release frees beyond it goes back to the Go heap. Free lists, unlike
	// a sync.Pool, survive collections: a scan collects often enough
	// (its decoders allocate too) that a sync.Pool was empty for most of it.
	MaxIdleBytes = 64 << 20
)

// poison is read once: the tests of the packages that read into the pool
// run with it set (see the Makefile).
var poison = os.Getenv("FLOE_ARROWPOOL_POISON") != ""

// Allocator pools buffers by power-of-two capacity class. Free accepts
// only buffers it handed out (their address is recorded), so a double
// release or a foreign buffer is ignored rather than handed out twice.
type Allocator struct {
	mu    sync.Mutex
	free  [maxShift - minShift + 1][][]byte // idle backing slices by class
	idle  int                               // bytes in free
	live  map[uintptr][]byte                // handed out: aligned address → backing slice
	limit int                               // MaxIdleBytes unless a test sets less
}

// New returns an empty pool.
func New() *Allocator { return &Allocator{live: map[uintptr][]byte{}, limit: MaxIdleBytes} }

var _ memory.Allocator = (*Allocator)(nil)

func class(size int) int {
	if size <= 1<<minShift {
		return 0
	}
	return bits.Len(uint(size-1)) - minShift
}

// Allocate returns size zeroed bytes aligned to 64, with no capacity
// beyond them, as Arrow's own allocators hand out: arrow-go's compute
// kernels (v18.8 and v18.9) decide by a buffer's capacity whether a value
// fits but copy it within the buffer's length, so spare capacity made
// take and filter on long strings cut values short and then panic.
func (a *Allocator) Allocate(size int) []byte {
	c := class(size)
	// Under poison small buffers are pooled too, so that tests on small
	// tables find a use after Release as well.
	if c >= len(a.free) || size == 0 || (size < 1<<(minShift-1) && !poison) {
		return memory.DefaultAllocator.Allocate(size)
	}
	a.mu.Lock()
	if n := len(a.free[c]); n > 0 {
		back := a.free[c][n-1]
		a.free[c][n-1] = nil
		a.free[c] = a.free[c][:n-1]
		a.idle -= len(back)
		buf := a.handOut(back, c, size)
		a.mu.Unlock()
		clear(buf) // outside the lock: other readers allocate meanwhile
		return buf
	}
	a.mu.Unlock()
	back := make([]byte, (1<<(c+minShift))+align)
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.handOut(back, c, size)
}

// handOut records back, of class c, as handed out and returns its 64-byte
// aligned first size bytes; a.mu is held.
func (a *Allocator) handOut(back []byte, c, size int) []byte {
	shift := int(-uintptr(unsafe.Pointer(&back[0])) & (align - 1))
	buf := back[shift : shift+size : shift+size]
	a.live[uintptr(unsafe.Pointer(unsafe.SliceData(buf)))] = back
	return buf
}

// Reallocate grows b in place when its class allows, else moves it.
func (a *Allocator) Reallocate(size int, b []byte) []byte {
	if in := a.resize(b, size); in != nil {
		clear(in[min(len(b), size):])
		return in
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// resize is b at size bytes in place, within the class of the buffer
// the pool handed out (or the capacity of one it did not); nil when the
// size does not fit there.
func (a *Allocator) resize(b []byte, size int) []byte {
	if cap(b) >= size {
		return b[:size:size]
	}
	if cap(b) == 0 {
		return nil
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	a.mu.Lock()
	back, ok := a.live[p]
	a.mu.Unlock()
	if !ok {
		return nil
	}
	off := int(p - uintptr(unsafe.Pointer(&back[0])))
	if size > 1<<(class(len(back)-align)+minShift) {
		return nil
	}
	return back[off : off+size : off+size]
}

// Free returns b's backing buffer to its class, or to the Go heap when
// the pool holds MaxIdleBytes already.
func (a *Allocator) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	a.mu.Lock()
	defer a.mu.Unlock()
	back, ok := a.live[p]
	if !ok {
		return
	}
	delete(a.live, p)
	if poison {
		for i := range back {
			back[i] = 0xa5
		}
	}
	if a.idle+len(back) > a.limit {
		return
	}
	c := class(len(back) - align)
	a.free[c] = append(a.free[c], back)
	a.idle += len(back)
}
