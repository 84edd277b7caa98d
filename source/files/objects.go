package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/storage"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"golang.org/x/sync/errgroup"

	"github.com/floe-io/floe/source"
)

// landedMtime is the metadata key an archived object keeps its landing
// modification time under: a copy is a new object with a new time, and the
// table's record of the input (record.go) names files by path, size and
// time, which a rebuilt checkpoint must find again in the archive.
const landedMtime = "floe-landed-mtime-ms"

// objectStore is a prefix of an object store (s3://, gs://, abfs://),
// reached through iceberg-go's IO with the catalog's properties and the
// usual environment, as the warehouse is. An object appears whole when its
// upload completes, so none is ever half written; what can happen is an
// object replaced under the same key, which its ETag tells.
type objectStore struct {
	bucket *blob.Bucket
	base   string // the URL of key "": scheme://authority/
	root   string // the landing prefix's URL, without a trailing "/"
	s3     bool   // the store is S3's API, whose reads take If-Match
}

// openObjects opens the object store holding the landing prefix root.
func openObjects(root string, props map[string]string) (*objectStore, error) {
	root = strings.TrimRight(root, "/")
	u, err := url.Parse(root)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: source path %s is not an object-store URL (scheme://bucket/prefix): %v", source.ErrConfig, root, err)
	}
	ctx := context.Background()
	fsys, err := icebergio.LoadFS(ctx, props, root)
	if err != nil {
		return nil, fmt.Errorf("%w: source path %s: %v; landing zones may be local paths or s3://, gs://, abfs:// and abfss:// prefixes, reached with the catalog's s3.*, gcs.* and adls.* properties", source.ErrConfig, root, err)
	}
	bfs, ok := fsys.(*blobfs.FileIO)
	if !ok {
		return nil, fmt.Errorf("%w: source path %s: the %s:// store cannot be listed; use a local path or an s3://, gs://, abfs:// or abfss:// prefix", source.ErrConfig, root, u.Scheme)
	}
	o := &objectStore{bucket: bfs.Bucket, base: objectBase(u.Scheme, root), root: root}
	var client *s3.Client
	o.s3 = o.bucket.As(&client)
	ok, err = o.bucket.IsAccessible(ctx)
	if err != nil {
		_ = o.bucket.Close()
		return nil, fmt.Errorf("%w: source path %s cannot be reached: %v; check the bucket, the endpoint (s3.endpoint) and the credentials", source.ErrConfig, root, err)
	}
	if !ok {
		_ = o.bucket.Close()
		return nil, fmt.Errorf("%w: source path %s: bucket %s does not exist; create it or fix source.path", source.ErrConfig, root, u.Host)
	}
	return o, nil
}

// objectBase is the URL of key "" of the store holding root: its scheme
// and authority, the bucket or, on Azure, container@account (which
// url.URL keeps apart as user information and host).
func objectBase(scheme, root string) string {
	authority, _, _ := strings.Cut(strings.TrimPrefix(root, scheme+"://"), "/")
	return scheme + "://" + authority + "/"
}

// key is the object key of a landing URL.
func (o *objectStore) key(p string) string { return strings.TrimPrefix(p, o.base) }

// prefix is the key prefix the landing objects share: "" or ending in "/".
func (o *objectStore) prefix() string {
	if k := o.key(o.root); k != "" && k != o.root {
		return k + "/"
	}
	return ""
}

func (o *objectStore) join(rel string) string { return o.root + "/" + rel }

func (o *objectStore) rel(p string) (string, error) {
	r, ok := strings.CutPrefix(p, o.root+"/")
	if !ok {
		return "", fmt.Errorf("%s is not under %s", p, o.root)
	}
	return r, nil
}

func (o *objectStore) close() error { return o.bucket.Close() }

func (o *objectStore) pinned() bool { return o.s3 }

// objectErr turns a missing object into fs.ErrNotExist, as a missing file.
func objectErr(op, p string, err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		err = fs.ErrNotExist
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

func (o *objectStore) stat(ctx context.Context, p string) (fileEntry, error) {
	a, err := o.bucket.Attributes(ctx, o.key(p))
	if err != nil {
		return fileEntry{}, objectErr("stat", p, err)
	}
	return fileEntry{Path: p, Size: a.Size, ModTime: a.ModTime.UnixMilli(), ETag: a.ETag}, nil
}

// listed is the entry of a listed object. The ETag comes from the
// listing where the store's answer has it, so no object costs a request
// of its own to be planned.
func (o *objectStore) listed(obj *blob.ListObject) fileEntry {
	e := fileEntry{Path: o.base + obj.Key, Size: obj.Size, ModTime: obj.ModTime.UnixMilli()}
	var s3o s3types.Object
	if obj.As(&s3o) {
		e.ETag = aws.ToString(s3o.ETag)
	}
	return e
}

// list lists the landing prefix: every object below it when recursive,
// else the objects directly in it, and the prefixes (directories) that
// hold the rest, which visit gets with isDir set. A listing after a path
// relative to the prefix starts there on stores whose listing can (S3's
// StartAfter, GCS's StartOffset); elsewhere the caller skips what sorts
// before it.
func (o *objectStore) list(ctx context.Context, recursive bool, after string, visit func(e fileEntry, isDir bool) error) error {
	opts := &blob.ListOptions{Prefix: o.prefix()}
	if !recursive {
		opts.Delimiter = "/"
	}
	if after != "" {
		start := o.prefix() + after
		opts.BeforeList = func(as func(any) bool) error {
			var in *s3.ListObjectsV2Input
			if as(&in) {
				in.StartAfter = aws.String(start)
				return nil
			}
			var q *storage.Query
			if as(&q) {
				q.StartOffset = start
			}
			return nil
		}
	}
	it := o.bucket.List(opts)
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if obj.IsDir {
			if err := visit(fileEntry{Path: o.base + strings.TrimSuffix(obj.Key, "/")}, true); err != nil {
				return err
			}
			continue
		}
		if strings.HasSuffix(obj.Key, "/") {
			continue // a directory marker, as consoles create
		}
		if err := visit(o.listed(obj), false); err != nil {
			return err
		}
	}
}

// ifMatch makes a read fail once the object is no longer the version
// planned, on stores whose reads take the condition (S3). Elsewhere the
// size and time of each read's answer are compared (see rangeReader).
func ifMatch(etag string) *blob.ReaderOptions {
	if etag == "" {
		return nil
	}
	return &blob.ReaderOptions{BeforeRead: func(as func(any) bool) error {
		var in *s3.GetObjectInput
		if as(&in) {
			in.IfMatch = aws.String(etag)
		}
		return nil
	}}
}

// readRetries are how many more times a read the store failed to serve
// (a server error, the connection lost) is sent, after the client's own
// attempts, waiting readRetryWait, then twice as long each time.
const (
	readRetries   = 3
	readRetryWait = 200 * time.Millisecond
)

// storeFailure is a read the object store failed to serve, not anything
// in the object: a batch it fails is tried again, and the object is never
// taken for a bad file.
type storeFailure struct{ err error }

func (e *storeFailure) Error() string { return e.err.Error() }
func (e *storeFailure) Unwrap() error { return e.err }

// serverSide tells a failure of the store or the way to it, which a later
// attempt may not meet, from an answer about the object.
func serverSide(err error) bool {
	switch gcerrors.Code(err) {
	case gcerrors.Internal, gcerrors.Unknown, gcerrors.DeadlineExceeded, gcerrors.ResourceExhausted:
		return true
	}
	return false
}

// rangeReader reads length bytes of e from off (length -1: to the end).
func (o *objectStore) rangeReader(ctx context.Context, e fileEntry, off, length int64) (*blob.Reader, error) {
	r, err := o.bucket.NewRangeReader(ctx, o.key(e.Path), off, length, ifMatch(e.ETag))
	for i, wait := 0, readRetryWait; err != nil && serverSide(err) && i < readRetries && ctx.Err() == nil; i, wait = i+1, wait*2 {
		select {
		case <-ctx.Done():
		case <-time.After(wait):
			r, err = o.bucket.NewRangeReader(ctx, o.key(e.Path), off, length, ifMatch(e.ETag))
		}
	}
	if err != nil && serverSide(err) {
		return nil, &storeFailure{objectErr("read", e.Path, err)}
	}
	if err != nil {
		if gcerrors.Code(err) == gcerrors.FailedPrecondition {
			return nil, &source.UnstableFileError{Path: e.Path, Reason: "replaced since it was listed (its ETag changed)"}
		}
		return nil, objectErr("read", e.Path, err)
	}
	if r.Size() != e.Size || (e.ETag == "" && r.ModTime().Unix() != time.UnixMilli(e.ModTime).Unix()) {
		_ = r.Close()
		return nil, &source.UnstableFileError{Path: e.Path, Reason: fmt.Sprintf("size %d -> %d since it was listed", e.Size, r.Size())}
	}
	return r, nil
}

func (o *objectStore) open(ctx context.Context, e fileEntry, tail *tailCache) (object, error) {
	return &objectReader{store: o, ctx: ctx, entry: e, tail: tail}, nil
}

// tailWindow is how much of an object's end is fetched at once for its
// footer: the Parquet reader reads the footer's length, then the footer,
// and the column-chunk copy reads both again; on an object store each read
// is a request.
const tailWindow = 64 << 10

// tailCache holds an object's last tailWindow bytes, fetched once for all
// the readers of one part, and the part's last read that the store failed
// to serve: format readers (Parquet's) keep only the text of the errors
// they pass on, so the part asks here whether its failure was the
// store's.
type tailCache struct {
	mu     sync.Mutex
	off    int64
	b      []byte
	failed error
}

// note keeps err when it is a read the store failed to serve, and returns
// it.
func (c *tailCache) note(err error) error {
	var sf *storeFailure
	if c != nil && errors.As(err, &sf) {
		c.mu.Lock()
		c.failed = sf
		c.mu.Unlock()
	}
	return err
}

// storeFailed is the part's last read the store failed to serve, or nil.
func (c *tailCache) storeFailed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

// fill fetches e's tail unless it is held already.
func (c *tailCache) fill(ctx context.Context, o *objectStore, e fileEntry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.b != nil {
		return nil
	}
	off := max(0, e.Size-tailWindow)
	b := make([]byte, e.Size-off)
	if _, err := (&objectReader{store: o, ctx: ctx, entry: e}).fetchRange(b, off); err != nil {
		var sf *storeFailure
		if errors.As(err, &sf) {
			c.failed = sf
		}
		return err
	}
	c.b, c.off = b, off
	return nil
}

// prefetchTails fetches the tails of the parts a batch will read, a few at
// a time, while the writers read the parts before them.
func prefetchTails(ctx context.Context, o *objectStore, parts []*filePart) {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, p := range parts {
		g.Go(func() error {
			_ = p.tail.fill(ctx, o, p.entry) // a failure is met again, and reported, by the read
			return nil
		})
	}
	_ = g.Wait()
}

func (o *objectStore) remove(ctx context.Context, p string) error {
	if err := o.bucket.Delete(ctx, o.key(p)); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return objectErr("delete", p, err)
	}
	return nil
}

// archive copies the object to dst, only while it is the version
// ingested, keeping its landing time, then deletes it.
func (o *objectStore) archive(ctx context.Context, e fileEntry, dst string) error {
	if !strings.HasPrefix(dst, o.base) {
		return fmt.Errorf("the archive directory must be in the bucket of the landing zone (%s), as archiving is a copy inside it; set source.source-archive-dir to a prefix there", o.base)
	}
	opts := &blob.CopyOptions{BeforeCopy: func(as func(any) bool) error {
		var in *s3.CopyObjectInput
		if as(&in) {
			in.MetadataDirective = s3types.MetadataDirectiveReplace
			in.Metadata = map[string]string{landedMtime: strconv.FormatInt(e.ModTime, 10)}
			if e.ETag != "" {
				in.CopySourceIfMatch = aws.String(e.ETag)
			}
		}
		return nil
	}}
	if err := o.bucket.Copy(ctx, o.key(dst), o.key(e.Path), opts); err != nil {
		if gcerrors.Code(err) == gcerrors.FailedPrecondition {
			return fmt.Errorf("left %s alone: it was replaced after it was ingested", e.Path)
		}
		return objectErr("copy", e.Path, err)
	}
	return o.remove(ctx, e.Path)
}

// archivedMtime is the landing time an archived object keeps, or its own.
func archivedMtime(a *blob.Attributes) int64 {
	if v, ok := a.Metadata[landedMtime]; ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			return ms
		}
	}
	return a.ModTime.UnixMilli()
}

// objectReader reads one object: front to back through one request, and
// at offsets through a ranged request each, so that a column-chunk copy
// fetches only the chunks it copies.
type objectReader struct {
	store *objectStore
	ctx   context.Context
	entry fileEntry
	tail  *tailCache
	pos   int64

	mu    sync.Mutex   // guards the stream of reads at offsets
	seq   *blob.Reader // that stream, now at seqAt
	seqAt int64
	body  *blob.Reader // the front-to-back read, from the position it was opened at
}

func (r *objectReader) Read(p []byte) (int, error) {
	if r.pos >= r.entry.Size {
		return 0, io.EOF
	}
	if r.body == nil {
		b, err := r.store.rangeReader(r.ctx, r.entry, r.pos, -1)
		if err != nil {
			return 0, r.tail.note(err)
		}
		r.body = b
	}
	n, err := r.body.Read(p)
	r.pos += int64(n)
	if err != nil && err != io.EOF {
		_ = r.body.Close()
		r.body = nil
		err = r.tail.note(&storeFailure{fmt.Errorf("read %s: %w", r.entry.Path, err)})
	}
	return n, err
}

func (r *objectReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.entry.Size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.entry.Size-off)
	if r.tail != nil && off >= r.entry.Size-tailWindow {
		if err := r.tail.fill(r.ctx, r.store, r.entry); err != nil {
			return 0, err
		}
		copy(p[:want], r.tail.b[off-r.tail.off:])
		if want < int64(len(p)) {
			return int(want), io.EOF
		}
		return int(want), nil
	}
	var (
		n   int
		err error
	)
	if want >= streamFrom && off+want < r.entry.Size {
		n, err = r.stream(p[:want], off)
	} else {
		n, err = r.fetchRange(p[:want], off)
	}
	if err == nil && int64(n) < int64(len(p)) {
		err = io.EOF
	}
	return n, err
}

// streamFrom is the size from which reads at offsets go through one
// stream: the Parquet readers and the column-chunk copy read a file's
// chunks one after the other, and one request per chunk leaves the
// connection idle between them.
const streamFrom = 64 << 10

// stream reads len(p) bytes at off from the stream the read before left
// there, or from a new one to the object's end; a stream dropped early
// has carried at most its buffers' worth more than was read.
func (r *objectReader) stream(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seq != nil && r.seqAt != off {
		_ = r.seq.Close()
		r.seq = nil
	}
	if r.seq == nil {
		b, err := r.store.rangeReader(r.ctx, r.entry, off, -1)
		if err != nil {
			return 0, r.tail.note(err)
		}
		r.seq, r.seqAt = b, off
	}
	n, err := io.ReadFull(r.seq, p)
	r.seqAt += int64(n)
	if err != nil {
		_ = r.seq.Close()
		r.seq = nil
		// The range is within the object's known size: a short body is
		// the connection's failure.
		err = r.tail.note(&storeFailure{fmt.Errorf("read %s at offset %d: %w", r.entry.Path, off, err)})
	}
	return n, err
}

// fetchRange reads len(p) bytes from off in one request.
func (r *objectReader) fetchRange(p []byte, off int64) (int, error) {
	b, err := r.store.rangeReader(r.ctx, r.entry, off, int64(len(p)))
	if err != nil {
		return 0, r.tail.note(err)
	}
	n, err := io.ReadFull(b, p)
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		err = r.tail.note(&storeFailure{fmt.Errorf("read %s at offset %d: %w", r.entry.Path, off, err)})
	}
	return n, err
}

func (r *objectReader) Seek(offset int64, whence int) (int64, error) {
	pos := offset
	switch whence {
	case io.SeekCurrent:
		pos += r.pos
	case io.SeekEnd:
		pos += r.entry.Size
	}
	if pos < 0 {
		return r.pos, fmt.Errorf("seek %s to %d: before the start", r.entry.Path, pos)
	}
	if pos != r.pos && r.body != nil {
		_ = r.body.Close()
		r.body = nil
	}
	r.pos = pos
	return pos, nil
}

func (r *objectReader) Close() error {
	var err error
	if r.body != nil {
		err = r.body.Close()
		r.body = nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seq != nil {
		err = errors.Join(err, r.seq.Close())
		r.seq = nil
	}
	return err
}
