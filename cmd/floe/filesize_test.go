package main_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/fixture"
)

var partSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "p", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "payload", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// writePartitioned writes files of rows [first, first+n) whose p is drawn
// from [0, parts) at random (so every record touches many partitions), with
// a random payload of the given length that compresses poorly.
func writePartitioned(t *testing.T, dir string, files int, rowsPerFile int64, parts int64, payload int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	buf := make([]byte, payload)
	for f := range files {
		b := array.NewRecordBuilder(memory.DefaultAllocator, partSchema)
		ids := b.Field(0).(*array.Int64Builder)
		ps := b.Field(1).(*array.Int64Builder)
		pl := b.Field(2).(*array.StringBuilder)
		first := int64(f) * rowsPerFile
		for id := first; id < first+rowsPerFile; id++ {
			ids.Append(id)
			ps.Append(rng.Int64N(parts))
			for i := range buf {
				buf[i] = alphabet[rng.IntN(len(alphabet))]
			}
			pl.Append(string(buf))
		}
		rec := b.NewRecordBatch()
		b.Release()
		err := fixture.WriteParquet(filepath.Join(dir, fmt.Sprintf("part-%03d.parquet", f)), rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
}

type dataFile struct {
	Path      string         `json:"file_path"`
	Rows      int64          `json:"record_count"`
	Size      int64          `json:"file_size_in_bytes"`
	Partition map[string]any `json:"partition"`
}

func (e *env) files(table string) []dataFile {
	e.T.Helper()
	out := e.OK("table", "files", table, "--json").Stdout
	var fs []dataFile
	if err := json.Unmarshal([]byte(out), &fs); err != nil {
		e.T.Fatalf("table files --json: %v\n%s", err, out)
	}
	return fs
}

type batchProgress struct {
	NumInputRows int64 `json:"numInputRows"`
	Sink         struct {
		DataFiles     int `json:"numDataFiles"`
		PeakOpenFiles int `json:"peakOpenFiles"`
	} `json:"sink"`
}

func batchProgresses(t *testing.T, stderr string) []batchProgress {
	t.Helper()
	var out []batchProgress
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var p batchProgress
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("progress line %q: %v", l, err)
		}
		out = append(out, p)
	}
	return out
}

// 1,000 partitions in one batch with write.max-open-files 64: every row
// arrives, at most 64 files are open at once, and peak memory does not grow
// with the partition count (200 partitions vs 1,000, same rows).
func TestManyPartitionsBoundedMemory(t *testing.T) {
	t.Parallel()
	const rows = 400_000
	peaks := map[int64]int64{}
	for _, parts := range []int64{200, 1000} {
		e := newEnv(t)
		writePartitioned(t, e.Landing, 4, rows/4, parts, 40, uint64(parts))
		r := e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.many", "--checkpoint", e.Ckpt,
			"--partition-fields", "p", "-p", "table-default.write.max-open-files=64",
			"-p", "table-default.floe.write.buffer-bytes=8388608", "--progress", "json", "--trigger", "once")
		prog := batchProgresses(t, r.Stderr)
		if len(prog) != 1 || prog[0].NumInputRows != rows {
			t.Fatalf("progress %+v, want one batch of %d rows", prog, rows)
		}
		if open := prog[0].Sink.PeakOpenFiles; open < 1 || open > 64 {
			t.Fatalf("%d partitions: %d files open at once, want at most 64", parts, open)
		}
		if ids := e.IDs("db.many"); len(ids) != rows {
			t.Fatalf("%d partitions: %d distinct ids, want %d", parts, len(ids), rows)
		}
		files := e.files("db.many")
		seen := map[float64]bool{}
		for _, f := range files {
			seen[f.Partition["p"].(float64)] = true
		}
		if int64(len(seen)) != parts {
			t.Fatalf("%d partitions written, want %d", len(seen), parts)
		}
		peaks[parts] = r.MaxRSS
		t.Logf("%d partitions: %d files (%.1f per partition), peak %d open, peak RSS %.1f MiB",
			parts, len(files), float64(len(files))/float64(parts), prog[0].Sink.PeakOpenFiles, float64(r.MaxRSS)/(1<<20))
	}
	if peaks[200] > 0 && float64(peaks[1000]) > 1.5*float64(peaks[200]) {
		t.Fatalf("peak RSS grew from %d MiB (200 partitions) to %d MiB (1,000 partitions)", peaks[200]>>20, peaks[1000]>>20)
	}
}

// write.target-file-size-bytes 32 MiB on ~200 MB of one partition: every
// file but the last is within 0.75-1.25x of the target.
func TestTargetFileSize(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 200 MB")
	}
	e := newEnv(t)
	// 2.2M rows of 120 random characters: ~200 MB encoded.
	writePartitioned(t, e.Landing, 11, 200_000, 1, 120, 7)
	const target = 32 << 20
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.sized", "--checkpoint", e.Ckpt,
		"--partition-fields", "p", "--target-file-size-bytes", fmt.Sprint(target), "--trigger", "once")
	files := e.files("db.sized")
	var total int64
	var sizes []string
	small := 0
	for _, f := range files {
		total += f.Size
		sizes = append(sizes, fmt.Sprintf("%.1f", float64(f.Size)/(1<<20)))
		if r := float64(f.Size) / target; r < 0.75 || r > 1.25 {
			small++
			if r > 1.25 {
				t.Errorf("file %s is %.2fx the target", filepath.Base(f.Path), r)
			}
		}
	}
	t.Logf("%d files, %.0f MiB in all, sizes (MiB): %s", len(files), float64(total)/(1<<20), strings.Join(sizes, " "))
	if total < 180<<20 {
		t.Fatalf("only %d MiB written; the test needs ~200 MB", total>>20)
	}
	if small > 1 {
		t.Fatalf("%d files outside 0.75-1.25x of the target, want at most the last", small)
	}
}
