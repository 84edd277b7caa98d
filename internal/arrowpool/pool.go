// Package arrowpool is an Arrow memory allocator that hands freed buffers
// out again, so that a read which allocates and releases the same sizes
// batch after batch stops paying the Go heap (allocation, zeroing of fresh
// pages, collection) for each of them.
package arrowpool

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

const (
	// minShift: smaller buffers come from the Go heap and are not pooled;
	// keeping them costs more than allocating them.
	minShift = 12
	// maxShift: larger buffers are not pooled either, so that a rare huge
	// batch does not stay resident.
	maxShift = 27
	align    = 64
)

// Allocator pools buffers by power-of-two capacity class. Free accepts
// only buffers it handed out (their address is recorded), so a double
// release or a foreign buffer is ignored rather than handed out twice.
type Allocator struct {
	classes [maxShift - minShift + 1]sync.Pool
	mu      sync.Mutex
	live    map[uintptr][]byte // handed out: aligned address → backing slice
}

// New returns an empty pool.
func New() *Allocator { return &Allocator{live: map[uintptr][]byte{}} }

var _ memory.Allocator = (*Allocator)(nil)

func class(size int) int {
	if size <= 1<<minShift {
		return 0
	}
	return bits.Len(uint(size-1)) - minShift
}

// Allocate returns size zeroed bytes aligned to 64.
func (a *Allocator) Allocate(size int) []byte {
	c := class(size)
	if c >= len(a.classes) || size < 1<<(minShift-1) {
		return memory.DefaultAllocator.Allocate(size)
	}
	var back []byte
	if p, ok := a.classes[c].Get().(*[]byte); ok {
		back = *p
		clear(back[:size+align])
	} else {
		back = make([]byte, (1<<(c+minShift))+align)
	}
	shift := int(-uintptr(unsafe.Pointer(&back[0])) & (align - 1))
	buf := back[shift : shift+size : shift+1<<(c+minShift)]
	a.mu.Lock()
	a.live[uintptr(unsafe.Pointer(&buf[0]))] = back
	a.mu.Unlock()
	return buf
}

// Reallocate grows b in place when its class allows, else moves it.
func (a *Allocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		old := len(b)
		b = b[:size]
		clear(b[min(old, size):])
		return b
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free returns b's backing buffer to its class.
func (a *Allocator) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	a.mu.Lock()
	back, ok := a.live[p]
	delete(a.live, p)
	a.mu.Unlock()
	if !ok {
		return
	}
	c := class(len(back) - align)
	a.classes[c].Put(&back)
}
