package files

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/floe-io/floe/source"
)

// The file source's account of a query's input, recorded in every batch
// snapshot (docs/format/checkpoint.md): the batch's file count and digest,
// and for everything planned so far the count, the digest and the
// watermark, the greatest (modification time, path). A digest is the XOR
// of a hash of each file's path, size and modification time: it does not
// depend on order, so the batch's and the query's so far combine in O(1).
const (
	inputFiles       = "files"
	inputDigest      = "digest"
	inputTotal       = "total"
	inputTotalDigest = "total-digest"
	inputWatermark   = "watermark"
)

var _ source.Recorder = (*Files)(nil)

type digest [16]byte

func (d *digest) add(f fileEntry) {
	h := sha256.New()
	var n [16]byte
	binary.BigEndian.PutUint64(n[:8], uint64(f.Size))
	binary.BigEndian.PutUint64(n[8:], uint64(f.ModTime))
	h.Write([]byte(f.Path))
	h.Write([]byte{0})
	h.Write(n[:])
	sum := h.Sum(nil)
	for i := range d {
		d[i] ^= sum[i]
	}
}

func (d digest) String() string { return hex.EncodeToString(d[:]) }

func parseDigest(s string) (digest, error) {
	var d digest
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(d) {
		return d, fmt.Errorf("digest %q is not 32 hex digits", s)
	}
	copy(d[:], b)
	return d, nil
}

// watermark is the greatest (modification time, path) planned so far.
type watermark struct {
	ms   int64
	path string
}

func (w watermark) less(f fileEntry) bool {
	return w.ms < f.ModTime || (w.ms == f.ModTime && w.path < f.Path)
}

func (w watermark) String() string {
	if w.path == "" {
		return ""
	}
	return strconv.FormatInt(w.ms, 10) + " " + w.path
}

func parseWatermark(s string) (watermark, error) {
	if s == "" {
		return watermark{ms: -1 << 63}, nil
	}
	ms, p, ok := strings.Cut(s, " ")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil {
		return watermark{}, fmt.Errorf("watermark %q is not \"<mtime ms> <path>\"", s)
	}
	return watermark{ms: n, path: p}, nil
}

// account is the input the query has covered, as the record states it.
type account struct {
	total  int64
	digest digest
	wm     watermark
}

func parseAccount(in map[string]string) (account, error) {
	var a account
	var err error
	if a.total, err = strconv.ParseInt(in[inputTotal], 10, 64); err != nil {
		return a, fmt.Errorf("the record's file count %q is not a number", in[inputTotal])
	}
	if a.digest, err = parseDigest(in[inputTotalDigest]); err != nil {
		return a, err
	}
	a.wm, err = parseWatermark(in[inputWatermark])
	return a, err
}

func (a *account) add(f fileEntry) {
	a.total++
	a.digest.add(f)
	if a.wm.less(f) {
		a.wm = watermark{ms: f.ModTime, path: f.Path}
	}
}

// BatchInput is the account after batch (start, end]. Without a previous
// account (the query's first batch, or one written before records were)
// the query's files so far come from the log.
func (s *Files) BatchInput(prev map[string]string, start, end source.Offset) (map[string]string, error) {
	batch, err := s.batchFiles(start, end)
	if err != nil {
		return nil, err
	}
	st, err := decode(start)
	if err != nil {
		return nil, err
	}
	var a account
	if prev != nil {
		if a, err = parseAccount(prev); err != nil {
			return nil, err
		}
	} else {
		a = s.log.account(st.LogOffset)
	}
	var d digest
	for _, f := range batch {
		d.add(f)
		a.add(f)
	}
	return map[string]string{
		inputFiles:       strconv.Itoa(len(batch)),
		inputDigest:      d.String(),
		inputTotal:       strconv.FormatInt(a.total, 10),
		inputTotalDigest: a.digest.String(),
		inputWatermark:   a.wm.String(),
	}, nil
}

// CheckInput verifies that the log holds every log batch up to the
// committed end, the files the table's account names for the batch
// (start, end] while its log batches are not compacted, and, when
// max-file-age has not let entries go, exactly the files of the account
// so far.
func (s *Files) CheckInput(input map[string]string, start, end source.Offset) error {
	en, err := decode(end)
	if err != nil {
		return err
	}
	if s.log.last < 0 && en.LogOffset >= 0 {
		return fmt.Errorf("the file source log %s is empty or gone, but the committed batches read up to log batch %d", s.log.dir, en.LogOffset)
	}
	if s.log.last < en.LogOffset {
		return fmt.Errorf("the file source log %s ends at log batch %d, but the committed batches read up to log batch %d: its newer entries were deleted", s.log.dir, s.log.last, en.LogOffset)
	}
	for n := s.log.compact + 1; n <= en.LogOffset; n++ {
		if _, ok := s.log.batches[n]; !ok {
			return fmt.Errorf("the file source log %s lacks log batch %d (file %s), which a committed batch read", s.log.dir, n, filepath.Join(s.log.dir, strconv.FormatInt(n, 10)))
		}
	}
	if input == nil {
		return nil
	}
	if err := s.checkBatch(input, start, en); err != nil {
		return err
	}
	if s.cfg.MaxFileAge > 0 {
		return nil
	}
	want, err := parseAccount(input)
	if err != nil {
		return err
	}
	got := s.log.account(en.LogOffset)
	if got.total != want.total || got.digest != want.digest {
		return fmt.Errorf("the file source log %s lists %d files up to log batch %d, and the table records %d (digest %s, the log's %s): the log is not the one the table's batches were planned from", s.log.dir, got.total, en.LogOffset, want.total, want.digest, got.digest)
	}
	return nil
}

// checkBatch compares the files of the batch (start, end] with the
// count and digest the table records for it. A log batch written again
// after the offsets entry that planned it was lost (the source takes a
// newest log batch no offsets entry names for one it may rewrite) holds
// more files than the batch the table committed.
func (s *Files) checkBatch(input map[string]string, start source.Offset, en offset) error {
	if start == nil || input[inputDigest] == "" {
		return nil
	}
	st, err := decode(start)
	if err != nil {
		return err
	}
	if st.LogOffset >= en.LogOffset || st.LogOffset+1 <= s.log.compact {
		// A rebuilt checkpoint's batch, or log batches folded together.
		return nil
	}
	files, err := s.log.files(st.LogOffset, en.LogOffset)
	if err != nil {
		return err
	}
	var d digest
	for _, f := range files {
		d.add(f)
	}
	if strconv.Itoa(len(files)) != input[inputFiles] || d.String() != input[inputDigest] {
		return fmt.Errorf("the file source log %s lists %d files in log batches %d to %d, and the table records %s for that batch (digest %s, the log's %s): the log was written again after the batch was committed", s.log.dir, len(files), st.LogOffset+1, en.LogOffset, input[inputFiles], input[inputDigest], d)
	}
	return nil
}

// RebuildInput remakes the log from the landing directory: the files at
// or before the recorded watermark (archived ones included, at their
// landing path) must be exactly the recorded count and digest, since any
// other set would re-read or skip a file. They go into one compact entry
// at the committed end's log batch.
func (s *Files) RebuildInput(ctx context.Context, input map[string]string, end source.Offset) error {
	en, err := decode(end)
	if err != nil {
		return err
	}
	want, err := parseAccount(input)
	if err != nil {
		return err
	}
	if s.log.last >= 0 {
		return fmt.Errorf("the file source log %s is not empty; rebuild starts from an empty log", s.log.dir)
	}
	cands, _, _, err := s.list(ctx, "", nil)
	s.warns = nil
	if err != nil {
		return err
	}
	if s.cfg.CleanSource == "archive" && s.cfg.ArchiveDir != "" {
		archived, err := s.archived(ctx)
		if err != nil {
			return err
		}
		cands = append(cands, archived...)
	}
	var got account
	got.wm.ms = -1 << 63
	var files []fileEntry
	later := 0
	for _, f := range cands {
		if want.wm.less(f) {
			later++
			continue
		}
		got.add(f)
		files = append(files, f)
	}
	switch {
	case got.total == want.total && got.digest == want.digest:
	case got.total < want.total:
		return fmt.Errorf("%d files of %s are at or before the recorded watermark (%s), but the table records %d: files the query ingested were deleted, moved or changed since (clean-source: delete removes them), so which files were read cannot be told", got.total, s.dir, want.wm, want.total)
	case got.total > want.total:
		return fmt.Errorf("%d files of %s are at or before the recorded watermark (%s), but the table records %d: some arrived after the files planned with them, with older modification times, or were skipped by max-file-age, so which files were read cannot be told", got.total, s.dir, want.wm, want.total)
	default:
		return fmt.Errorf("the %d files of %s at or before the recorded watermark (%s) are as many as the table records, but not the same (digest %s, the table's %s): a file was replaced or changed since it was ingested", got.total, s.dir, want.wm, got.digest, want.digest)
	}
	return s.log.restore(en.LogOffset, files)
}

// archived lists the files clean-source moved into the archive directory,
// at the landing paths they were ingested from (a rename keeps the size
// and modification time).
func (s *Files) archived(ctx context.Context) ([]fileEntry, error) {
	if o, ok := s.store.(*objectStore); ok {
		return s.archivedObjects(ctx, o)
	}
	var out []fileEntry
	root := s.cfg.ArchiveDir
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, fileEntry{Path: filepath.Join(s.dir, rel), Size: info.Size(), ModTime: info.ModTime().UnixMilli()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list archive directory %s: %w", root, err)
	}
	return out, nil
}

// archivedObjects lists the objects clean-source copied into the archive
// prefix, at their landing paths and with the landing time each keeps.
func (s *Files) archivedObjects(ctx context.Context, o *objectStore) ([]fileEntry, error) {
	root := strings.TrimRight(s.cfg.ArchiveDir, "/")
	if !strings.HasPrefix(root, o.base) {
		return nil, nil // refused by clean-source: nothing was archived there
	}
	arch := &objectStore{bucket: o.bucket, base: o.base, root: root}
	var out []fileEntry
	err := arch.list(ctx, true, "", func(e fileEntry, _ bool) error {
		a, err := o.bucket.Attributes(ctx, o.key(e.Path))
		if err != nil {
			return objectErr("stat", e.Path, err)
		}
		rel, err := arch.rel(e.Path)
		if err != nil {
			return err
		}
		out = append(out, fileEntry{Path: o.join(rel), Size: a.Size, ModTime: archivedMtime(a), ETag: a.ETag})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list archive prefix %s: %w", root, err)
	}
	return out, nil
}
