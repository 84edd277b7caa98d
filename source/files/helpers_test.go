package files_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/s3test"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/files"
)

// landingDir is a landing directory and a source reading it, driven as
// the engine drives it.
type landingDir struct {
	t     *testing.T
	dir   string
	state string
	cfg   config.Source
	src   *files.Files
	start source.Offset
	// srv holds the landing zone when it is a prefix of a bucket, dir
	// its URL, key its key.
	srv *s3test.Server
	key string
}

func newLanding(t *testing.T, cfg config.Source) *landingDir {
	t.Helper()
	root := t.TempDir()
	cfg.Type, cfg.Path = "files", filepath.Join(root, "landing")
	if cfg.Format == "" {
		cfg.Format = "csv"
	}
	if err := os.MkdirAll(cfg.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	l := &landingDir{t: t, dir: cfg.Path, state: filepath.Join(root, "state"), cfg: cfg}
	l.open()
	l.start = l.src.InitialOffset()
	return l
}

// newObjectLanding is newLanding with the landing zone a prefix of the
// server's bucket, reached with the catalog properties a user passes.
func newObjectLanding(t *testing.T, srv *s3test.Server, cfg config.Source) *landingDir {
	t.Helper()
	key := "landing/" + strings.ReplaceAll(t.Name(), "/", "-")
	cfg.Type, cfg.Path = "files", srv.URL(key)
	if cfg.Format == "" {
		cfg.Format = "csv"
	}
	l := &landingDir{t: t, dir: cfg.Path, state: filepath.Join(t.TempDir(), "state"), cfg: cfg, srv: srv, key: key}
	l.open()
	l.start = l.src.InitialOffset()
	return l
}

// open (re)opens the source over the same state.
func (l *landingDir) open() {
	l.t.Helper()
	env := source.Env{StateDir: l.state}
	if l.srv != nil {
		env.Properties = l.srv.Properties()
	}
	s, err := source.New(l.cfg, env)
	if err != nil {
		l.t.Fatal(err)
	}
	l.src = s.(*files.Files)
}

// write lands a file (through a hidden temporary file) and returns its
// path.
func (l *landingDir) write(name, content string) string {
	l.t.Helper()
	if l.srv != nil {
		if err := l.srv.Put(l.key+"/"+name, []byte(content)); err != nil {
			l.t.Fatal(err)
		}
		return l.dir + "/" + name
	}
	p := filepath.Join(l.dir, name)
	if err := fixture.Land(p, []byte(content)); err != nil {
		l.t.Fatal(err)
	}
	return p
}

// local is the file that holds a landing file: itself, or the object's
// file in the server's posix root, whose time is the object's.
func (l *landingDir) local(p string) string {
	if l.srv != nil {
		return l.srv.ObjectPath(l.key + strings.TrimPrefix(p, l.dir))
	}
	return p
}

// writeAged lands a file modified age ago.
func (l *landingDir) writeAged(name, content string, age time.Duration) string {
	l.t.Helper()
	p := l.write(name, content)
	setAge(l.t, l.local(p), age)
	return p
}

// writeAt lands a file modified at a given time.
func (l *landingDir) writeAt(name, content string, at time.Time) string {
	l.t.Helper()
	p := l.write(name, content)
	if err := os.Chtimes(l.local(p), at, at); err != nil {
		l.t.Fatal(err)
	}
	return p
}

// setAge sets a file's modification time age ago.
func setAge(t *testing.T, p string, age time.Duration) {
	t.Helper()
	at := time.Now().Add(-age)
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

// plan plans, reads and commits the next batch and returns its parts; nil
// when nothing is new.
func (l *landingDir) plan(limit source.ReadLimit) []source.Part {
	l.t.Helper()
	ctx := l.t.Context()
	end, err := l.src.LatestOffset(ctx, l.start, limit)
	if err != nil {
		l.t.Fatal(err)
	}
	if bytes.Equal(end, l.start) {
		return nil
	}
	parts, err := l.src.Read(ctx, l.start, end)
	if err != nil {
		l.t.Fatal(err)
	}
	if err := l.src.Commit(ctx, end); err != nil {
		l.t.Fatal(err)
	}
	l.start = end
	return parts
}

// names plans the next batch and returns its files relative to the
// landing directory, in planning order.
func (l *landingDir) names(limit source.ReadLimit) []string {
	l.t.Helper()
	var out []string
	for _, p := range l.plan(limit) {
		rel, err := filepath.Rel(l.dir, p.Name())
		if err != nil {
			l.t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// onePart lands one file and returns the part planned for it.
func onePart(t *testing.T, cfg config.Source, name, content string) (source.Part, string) {
	t.Helper()
	l := newLanding(t, cfg)
	p := l.write(name, content)
	parts := l.plan(source.ReadLimit{})
	if len(parts) != 1 {
		t.Fatalf("planned %d parts for one file", len(parts))
	}
	return parts[0], p
}

// table is what a part read: its schema, and each column's values.
type table struct {
	schema *arrow.Schema
	cols   map[string][]any
}

// readPart reads a whole part.
func readPart(t *testing.T, p source.Part) (table, error) {
	t.Helper()
	rdr, err := p.Open(context.Background())
	if err != nil {
		return table{}, err
	}
	defer rdr.Release()
	tb := table{schema: rdr.Schema(), cols: map[string][]any{}}
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for _, f := range rec.Schema().Fields() {
			tb.cols[f.Name] = append(tb.cols[f.Name], fixture.Column(rec, f.Name)...)
		}
	}
	return tb, rdr.Err()
}

// badFile fails unless err is a *source.BadFileError naming path.
func badFile(t *testing.T, err error, path string) *source.BadFileError {
	t.Helper()
	var bf *source.BadFileError
	if !errors.As(err, &bf) || !errors.Is(err, source.ErrBadInput) {
		t.Fatalf("got %v (%T), want a *source.BadFileError", err, err)
	}
	if bf.Path != path {
		t.Fatalf("the error names %s, want %s", bf.Path, path)
	}
	return bf
}

func fieldNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }
