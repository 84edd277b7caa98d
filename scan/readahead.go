package scan

import (
	"context"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"
)

// A plan decodes manifests on one core for milliseconds; the first files
// it finds are read on the others meanwhile. Only small files a direct
// read takes, a few of them (a few decoded files stay within tens of MB),
// into Go's heap: what a scan never reads is then garbage, with no file
// left open and no buffer owed to the scan's allocator. (The scan
// benchmark's selective query finds its one file 56 entries into a
// manifest of 100.)
const (
	readAheadBytes = 4 << 20
	readAheadMax   = 4
)

// aheadRead is a file read ahead: once done is closed, handled tells
// whether it was read directly, into recs and then err.
type aheadRead struct {
	done    chan struct{}
	handled bool
	recs    []arrow.RecordBatch
	err     error
}

// readAhead starts reading task's file when the plan is read next, the
// read would be direct, the file is small, and fewer than readAheadMax
// (nor GOMAXPROCS) are.
func (r *tableReader) readAhead(ctx context.Context, task table.FileScanTask) {
	if !r.readsAhead || !r.direct(task) || task.File.FileSizeBytes() > readAheadBytes {
		return
	}
	path := task.File.FilePath()
	r.aheadMu.Lock()
	if r.ahead == nil {
		r.ahead = map[string]*aheadRead{}
	}
	if _, dup := r.ahead[path]; dup || r.aheadStarted >= min(readAheadMax, runtime.GOMAXPROCS(0)) {
		r.aheadMu.Unlock()
		return
	}
	r.aheadStarted++
	a := &aheadRead{done: make(chan struct{})}
	r.ahead[path] = a
	r.aheadMu.Unlock()
	go func() {
		defer close(a.done)
		a.handled = r.readDirect(ctx, task, memory.DefaultAllocator, func(rec arrow.RecordBatch, err error) bool {
			if err != nil {
				a.err = err
				return false
			}
			a.recs = append(a.recs, rec)
			return true
		})
	}()
}

// takeAhead hands over what was read ahead of the file at path, nil when
// nothing was.
func (r *tableReader) takeAhead(path string) *aheadRead {
	r.aheadMu.Lock()
	defer r.aheadMu.Unlock()
	a := r.ahead[path]
	delete(r.ahead, path)
	return a
}

// yield passes a's records on, then its error; the records yield does not
// take are released.
func (a *aheadRead) yield(yield func(arrow.RecordBatch, error) bool) {
	for i, rec := range a.recs {
		if !yield(rec, nil) {
			for _, rest := range a.recs[i+1:] {
				rest.Release()
			}
			return
		}
	}
	if a.err != nil {
		yield(nil, a.err)
	}
}
