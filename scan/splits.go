package scan

import "github.com/apache/iceberg-go/table"

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
