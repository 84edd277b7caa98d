package scan

import (
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// WholeFiles turns a plan's tasks into one task per data file. iceberg-go
// splits a Parquet file larger than read.split.target-size (128 MiB) into
// tasks of its row groups, which reads a file faster; what counts files,
// or rewrites them, must see each file once, whole.
func WholeFiles(tasks []table.FileScanTask) []table.FileScanTask {
	out := tasks[:0:0]
	at := map[string]int{}
	for _, t := range tasks {
		path := t.File.FilePath()
		if _, seen := at[path]; seen {
			continue
		}
		at[path] = len(out)
		t.Start, t.Length = 0, t.File.FileSizeBytes()
		out = append(out, t)
	}
	return out
}

// splitTask cuts a whole-file task of a Parquet file larger than target
// into tasks of consecutive row groups of about target bytes each, by the
// file's split offsets (where its row groups start), as iceberg-go's plan
// does: the read then spreads one large file over several cores. A file
// whose offsets are missing or out of order stays whole.
func splitTask(task table.FileScanTask, target int64) []table.FileScanTask {
	f := task.File
	size := f.FileSizeBytes()
	offsets := f.SplitOffsets()
	if f.FileFormat() != iceberg.ParquetFile || target <= 0 || size <= target || len(offsets) < 2 {
		return []table.FileScanTask{task}
	}
	for i, o := range offsets {
		if o < 0 || o >= size || (i > 0 && o <= offsets[i-1]) {
			return []table.FileScanTask{task}
		}
	}
	var out []table.FileScanTask
	cut := func(start, end int64) {
		t := task
		t.Start, t.Length = start, end-start
		out = append(out, t)
	}
	// A task starts at 0, covering the file's header, and takes row groups
	// while it stays within target; a row group that would take it past
	// target starts the next task.
	start := int64(0)
	for i := 1; i < len(offsets); i++ {
		end := size
		if i+1 < len(offsets) {
			end = offsets[i+1]
		}
		if end-start > target {
			cut(start, offsets[i])
			start = offsets[i]
		}
	}
	cut(start, size)
	return out
}
