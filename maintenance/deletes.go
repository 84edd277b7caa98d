package maintenance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/commit"
)

// ErrConcurrentDeletes fails a rewrite or conversion whose rows another
// commit deleted meanwhile in a way it cannot carry over: committing it
// would bring the rows back. Running it again reads the new deletes.
var ErrConcurrentDeletes = errors.New("rows were deleted by a concurrent commit")

// liveDelete is a delete file of a snapshot with its data sequence number.
type liveDelete struct {
	file iceberg.DataFile
	seq  int64
}

// deleteKey names a delete file: a Puffin file holds the deletion vectors
// of several data files under one path.
func deleteKey(df iceberg.DataFile) string {
	if ref := df.ReferencedDataFile(); ref != nil {
		return df.FilePath() + "#" + *ref
	}
	return df.FilePath()
}

// liveDeletes lists the delete files of snap, by deleteKey.
func liveDeletes(fs icebergio.IO, snap *table.Snapshot) (map[string]liveDelete, error) {
	out := map[string]liveDelete{}
	if snap == nil {
		return out, nil
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("read manifest list %s: %w", snap.ManifestList, err)
	}
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			out[deleteKey(e.DataFile())] = liveDelete{file: e.DataFile(), seq: e.SequenceNum()}
		}
	}
	return out, nil
}

// partitionKey names a file's partition: its spec and values.
func partitionKey(df iceberg.DataFile) string {
	part := df.Partition()
	var key strings.Builder
	fmt.Fprintf(&key, "spec %d", df.SpecID())
	for _, id := range slices.Sorted(maps.Keys(part)) {
		fmt.Fprintf(&key, " %d=%v", id, part[id])
	}
	return key.String()
}

// newDVWriter writes deletion vectors into tbl's data directory.
func newDVWriter(fs icebergio.IO, md table.Metadata) (*dv.DVWriter, error) {
	wfs, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return nil, errors.New("the table's storage cannot be written to")
	}
	return dv.NewDVWriter(wfs, func(id int32) *iceberg.PartitionSpec { return md.PartitionSpecByID(int(id)) }), nil
}

// dvLocation is a new Puffin file's path, where iceberg-go writes its own.
func dvLocation(tbl *table.Table) string {
	return strings.TrimSuffix(tbl.Location(), "/") + "/data/" + uuid.NewString() + "-deletes.puffin"
}

// positions reads a deletion vector's deleted positions, ascending.
func positions(fs icebergio.IO, f iceberg.DataFile) ([]int64, error) {
	bm, err := dv.ReadDV(fs, f)
	if err != nil {
		return nil, fmt.Errorf("read deletion vector %s: %w", f.FilePath(), err)
	}
	var out []int64
	for p := range bm.Positions() {
		out = append(out, int64(p))
	}
	return out, nil
}

// carried is what a rewrite takes over from the deletes committed while it
// ran.
type carried struct {
	// replaced are the deletion vectors of rewritten files committed
	// meanwhile, and added their positions moved to the new files, with
	// the sequence number of the deletes they carry.
	replaced []iceberg.DataFile
	added    []liveDelete
	rows     int64
}

// carryDeletes moves the deletion vectors committed for rewritten files
// since the rewrite read them (in live, not in before) to the positions
// their rows have in the new files: a group rewritten in order keeps its
// rows' order, so a row's new position is its old one, less the rows
// deleted before it, plus the rows of the files before it. Equality
// deletes need nothing (the new files keep the starting sequence number);
// any other delete of rewritten rows fails with ErrConcurrentDeletes.
func carryDeletes(ctx context.Context, fs icebergio.IO, cur *table.Table, done []groupDone, live, before map[string]liveDelete) (carried, error) {
	var c carried
	rewritten := map[string]bool{}
	partitions := map[string]bool{}
	for _, d := range done {
		for _, f := range d.result.OldDataFiles {
			rewritten[f.FilePath()] = true
			partitions[partitionKey(f)] = true
		}
	}
	conflict := func(format string, args ...any) (carried, error) {
		return c, commit.Final(fmt.Errorf("%w: %s; run the rewrite again, it reads the new deletes", ErrConcurrentDeletes, fmt.Sprintf(format, args...)))
	}
	byFile := map[string][]liveDelete{}
	for _, k := range slices.Sorted(maps.Keys(live)) {
		if _, ok := before[k]; ok {
			continue
		}
		d := live[k]
		f := d.file
		ref := f.ReferencedDataFile()
		switch {
		case f.ContentType() == iceberg.EntryContentEqDeletes:
		case table.IsDeletionVector(f) && ref != nil:
			if rewritten[*ref] {
				byFile[*ref] = append(byFile[*ref], d)
			}
		case ref != nil:
			if rewritten[*ref] {
				return conflict("position delete file %s deletes rows of rewritten data file %s", f.FilePath(), *ref)
			}
		case partitions[partitionKey(f)]:
			return conflict("position delete file %s deletes rows in the partition rewritten (%s)", f.FilePath(), partitionKey(f))
		}
	}
	if len(byFile) == 0 {
		return c, nil
	}
	w, err := newDVWriter(fs, cur.Metadata())
	if err != nil {
		return c, err
	}
	seqOf := map[string]int64{}
	for _, d := range done {
		moved, err := d.carry(fs, byFile, w, seqOf)
		if err != nil {
			return conflict("%v", err)
		}
		c.rows += moved
		for _, t := range d.group.Tasks {
			for _, ld := range byFile[t.File.FilePath()] {
				c.replaced = append(c.replaced, ld.file)
			}
		}
	}
	files, err := w.Flush(ctx, dvLocation(cur))
	if err != nil {
		return c, fmt.Errorf("write carried deletion vectors: %w", err)
	}
	for _, f := range files {
		c.added = append(c.added, liveDelete{file: f, seq: seqOf[*f.ReferencedDataFile()]})
	}
	return c, nil
}

// carry adds to w the new positions of the rows of d's files that the
// deletion vectors byFile delete and d's rewrite did not; it returns how
// many rows it moved.
func (d groupDone) carry(fs icebergio.IO, byFile map[string][]liveDelete, w *dv.DVWriter, seqOf map[string]int64) (int64, error) {
	if !slices.ContainsFunc(d.group.Tasks, func(t table.FileScanTask) bool { return len(byFile[t.File.FilePath()]) > 0 }) {
		return 0, nil
	}
	if !d.lineage {
		return 0, fmt.Errorf("deletion vectors were added for files of partition %s, whose rewrite does not keep row order", partitionName(d.group))
	}
	// Rows of each file the rewrite kept, and where they start in the
	// group's output.
	skipped := make([][]int64, len(d.group.Tasks))
	starts := make([]int64, len(d.group.Tasks))
	var rows int64
	for i, t := range d.group.Tasks {
		if len(t.DeleteFiles) > 0 || len(t.EqualityDeleteFiles) > 0 {
			return 0, fmt.Errorf("deletion vectors were added for files of partition %s, whose rewrite applied position or equality delete files", partitionName(d.group))
		}
		for _, f := range t.DeletionVectorFiles {
			ps, err := positions(fs, f)
			if err != nil {
				return 0, err
			}
			skipped[i] = ps
		}
		starts[i] = rows
		rows += t.File.Count() - int64(len(skipped[i]))
	}
	var written int64
	for _, f := range d.result.NewDataFiles {
		written += f.Count()
	}
	if written != rows {
		return 0, fmt.Errorf("the rewrite of partition %s wrote %d rows, not the %d it read", partitionName(d.group), written, rows)
	}
	var moved int64
	for i, t := range d.group.Tasks {
		for _, ld := range byFile[t.File.FilePath()] {
			ps, err := positions(fs, ld.file)
			if err != nil {
				return 0, err
			}
			for _, p := range ps {
				below, gone := slices.BinarySearch(skipped[i], p)
				if gone {
					continue // deleted before the rewrite read the file
				}
				at := starts[i] + p - int64(below)
				for _, nf := range d.result.NewDataFiles {
					if at < nf.Count() {
						if err := w.AddPosition(nf.FilePath(), at, nf.SpecID(), nf.Partition()); err != nil {
							return 0, err
						}
						seqOf[nf.FilePath()] = max(seqOf[nf.FilePath()], ld.seq)
						break
					}
					at -= nf.Count()
				}
				moved++
			}
		}
	}
	return moved, nil
}
