package files_test

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/avro/ocf"
	"golang.org/x/sync/errgroup"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/s3test"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/files"
)

// upload puts every file of a local landing directory into the server's
// bucket under key, and points the pipeline at that prefix instead.
func (d *pipelineDir) upload(srv *s3test.Server, key string) {
	d.t.Helper()
	err := filepath.WalkDir(d.landing, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(d.landing, p)
		return srv.Put(key+"/"+filepath.ToSlash(rel), b)
	})
	if err != nil {
		d.t.Fatal(err)
	}
	d.source, d.props = srv.URL(key), srv.Properties()
}

// Every format lands from a prefix of a bucket on a real S3 server
// (versitygw) the same rows, of the same types, as from a local directory.
func TestObjectLandingLandsAsItsLocalTwin(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	for _, tc := range []struct {
		name, format string
		land         func(t *testing.T, dir string)
	}{
		{"csv", "csv", func(t *testing.T, dir string) { landCompressed(t, dir, "events.csv", "") }},
		{"json.gz", "json", func(t *testing.T, dir string) { landCompressed(t, dir, "events.json", "gzip") }},
		{"csv.zst", "csv", func(t *testing.T, dir string) { landCompressed(t, dir, "events.csv", "zstd") }},
		{"json.bz2", "json", func(t *testing.T, dir string) { landCompressed(t, dir, "events.json", "bzip2") }},
		{"avro", "avro", func(t *testing.T, dir string) {
			writeAvro(t, filepath.Join(dir, "a.avro"), 0, 3_000, ocf.DeflateCodec(6))
		}},
		{"parquet", "parquet", func(t *testing.T, dir string) {
			writeParquetTwin(t, filepath.Join(dir, "a.parquet"), 0, 3_000)
			writeParquetTwin(t, filepath.Join(dir, "b.parquet"), 3_000, 500)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			local := newPipelineDir(t)
			tc.land(t, local.landing)
			local.mustStream(config.Source{Format: tc.format}, "db.t")
			want, wantFields := local.rows("db.t"), local.fields("db.t")
			if len(want) == 0 {
				t.Fatal("the local twin landed no rows")
			}
			d := newPipelineDir(t)
			tc.land(t, d.landing)
			d.upload(srv, "twins/"+tc.name)
			d.mustStream(config.Source{Format: tc.format}, "db.t")
			d.sameTable("db.t", want, wantFields)
			// A second run finds nothing new.
			d.mustStream(config.Source{Format: tc.format}, "db.t")
			d.sameTable("db.t", want, wantFields)
		})
	}
}

// landCompressed writes a testdata file under codec into dir.
func landCompressed(t *testing.T, dir, plain, codec string) {
	t.Helper()
	name, b := compressed(t, plain, codec)
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The listing options mean on a prefix what they mean on a directory:
// recursion (and the warning without it), the glob filter, hidden names,
// min-file-age and max-file-age.
func TestObjectLandingListingOptions(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	t.Run("recursive", func(t *testing.T) {
		l := newObjectLanding(t, srv, config.Source{})
		l.write("a.csv", "id\n1\n")
		l.write("day=1/b.csv", "id\n2\n")
		l.write("day=1/deep/c.csv", "id\n3\n")
		l.write("_temporary/d.csv", "id\n4\n")
		l.write(".e.csv.crc", "x")
		if got := l.names(source.ReadLimit{}); !slices.Equal(got, []string{"a.csv"}) {
			t.Fatalf("without recursion: %v, want [a.csv]", got)
		}
		if w := strings.Join(l.src.Warnings(), "\n"); !strings.Contains(w, "1 prefix below "+l.dir+" holds") || !strings.Contains(w, "--recursive") {
			t.Fatalf("warnings %q do not name the unread prefix and --recursive", w)
		}
		l.cfg.Recursive = true
		l.open()
		if got := sorted(l.names(source.ReadLimit{})); !slices.Equal(got, []string{"day=1/b.csv", "day=1/deep/c.csv"}) {
			t.Fatalf("recursive: %v, want the two files below day=1 and none hidden", got)
		}
	})
	t.Run("glob", func(t *testing.T) {
		l := newObjectLanding(t, srv, config.Source{PathGlobFilter: "*.csv", Recursive: true})
		l.write("a.csv", "id\n1\n")
		l.write("x/b.json", `{"id":2}`)
		l.write("x/c.csv", "id\n3\n")
		if got := sorted(l.names(source.ReadLimit{})); !slices.Equal(got, []string{"a.csv", "x/c.csv"}) {
			t.Fatalf("glob *.csv: %v", got)
		}
	})
	t.Run("ages", func(t *testing.T) {
		l := newObjectLanding(t, srv, config.Source{MinFileAge: config.Duration(time.Hour), MaxFileAge: config.Duration(24 * time.Hour)})
		l.writeAged("old.csv", "id\n1\n", 3*time.Hour)
		l.write("young.csv", "id\n2\n")
		if got := l.names(source.ReadLimit{}); !slices.Equal(got, []string{"old.csv"}) {
			t.Fatalf("min-file-age 1h: %v, want only the file landed 3h ago", got)
		}
		l.writeAged("ancient.csv", "id\n3\n", 30*24*time.Hour)
		l.writeAged("later.csv", "id\n4\n", 2*time.Hour)
		if got := l.names(source.ReadLimit{}); !slices.Equal(got, []string{"later.csv"}) {
			t.Fatalf("max-file-age 24h: %v, want later.csv only", got)
		}
		if w := strings.Join(l.src.Warnings(), "\n"); !strings.Contains(w, "ancient.csv") || !strings.Contains(w, "max-file-age") {
			t.Fatalf("warnings %q do not name the file max-file-age ignores", w)
		}
	})
	t.Run("limits", func(t *testing.T) {
		l := newObjectLanding(t, srv, config.Source{})
		for i, n := range []string{"a.csv", "b.csv", "c.csv"} {
			l.writeAt(n, "id\n1\n", time.Now().Add(time.Duration(i-10)*time.Minute))
		}
		if got := l.names(source.ReadLimit{MaxFiles: 2}); !slices.Equal(got, []string{"a.csv", "b.csv"}) {
			t.Fatalf("max 2 files, oldest first: %v", got)
		}
		if got := l.names(source.ReadLimit{MaxFiles: 2}); !slices.Equal(got, []string{"c.csv"}) {
			t.Fatalf("the rest: %v", got)
		}
		for i, n := range []string{"d.csv", "e.csv", "f.csv"} {
			l.writeAt(n, "id\n12345\n", time.Now().Add(time.Duration(i-5)*time.Minute))
		}
		if got := l.names(source.ReadLimit{MaxBytes: 18}); !slices.Equal(got, []string{"d.csv", "e.csv"}) {
			t.Fatalf("max 18 bytes of 9-byte objects: %v, want the two that reach it", got)
		}
	})
}

// An object replaced under its key is never ingested torn or twice: one
// replaced after it was planned fails its read as unstable (its ETag
// changed, though its size did not), one replaced after it was ingested
// is named in a warning and not read again.
func TestObjectReplacedInPlace(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	l := newObjectLanding(t, srv, config.Source{})
	p := l.write("a.csv", "id\n1\n")
	parts := l.plan(source.ReadLimit{})
	if len(parts) != 1 {
		t.Fatalf("planned %d parts", len(parts))
	}
	l.write("a.csv", "id\n2\n")
	_, err := readPart(t, parts[0])
	var ue *source.UnstableFileError
	if !errors.As(err, &ue) || ue.Path != p || errors.Is(err, source.ErrBadInput) {
		t.Fatalf("reading an object replaced since it was planned: %v (%T), want an UnstableFileError naming it, not a bad file", err, err)
	}
	if got := l.names(source.ReadLimit{}); len(got) != 0 {
		t.Fatalf("the replaced object was planned again: %v", got)
	}
	if w := strings.Join(l.src.Warnings(), "\n"); !strings.Contains(w, p+" changed after it was ingested") {
		t.Fatalf("warnings %q do not name the replaced object", w)
	}
}

// A Parquet object without its footer is not one still being uploaded
// (an object store shows an object only once whole): it is planned at
// once, and reading it reports it as a bad file to quarantine, as a
// corrupt CSV object is.
func TestObjectBadFiles(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	dir := t.TempDir()
	writeParquetTwin(t, filepath.Join(dir, "a.parquet"), 0, 100)
	b, err := os.ReadFile(filepath.Join(dir, "a.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	// Each in a prefix of its own (the subtest's name): in one, the JSON
	// source would plan the Parquet object too, first when it landed a
	// second earlier.
	t.Run("parquet", func(t *testing.T) {
		l := newObjectLanding(t, srv, config.Source{Format: "parquet"})
		p := l.write("cut.parquet", string(b[:len(b)-8]))
		parts := l.plan(source.ReadLimit{})
		if len(parts) != 1 {
			t.Fatalf("a footer-less Parquet object: %d parts planned, want 1 at once", len(parts))
		}
		_, err := readPart(t, parts[0])
		badFile(t, err, p)
	})
	t.Run("json", func(t *testing.T) {
		l := newObjectLanding(t, srv, config.Source{Format: "json"})
		p := l.write("bad.json", "{\"id\": 1}\n{not json\n")
		parts := l.plan(source.ReadLimit{})
		if len(parts) != 1 {
			t.Fatalf("a malformed JSON object: %d parts planned, want 1", len(parts))
		}
		_, err := readPart(t, parts[0])
		if bf := badFile(t, err, p); !strings.Contains(bf.Error(), "line 2") {
			t.Fatalf("a malformed JSON object: %v", err)
		}
	})
}

// clean-source deletes committed objects, or archives them by a copy
// that keeps their landing time (which the table's record names), then a
// delete; an object replaced since it was ingested is left alone.
func TestObjectCleanSource(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	t.Run("delete", func(t *testing.T) {
		l := newObjectLanding(t, srv, config.Source{CleanSource: "delete"})
		a := l.write("a.csv", "id\n1\n")
		l.plan(source.ReadLimit{})
		if _, err := os.Stat(l.local(a)); !os.IsNotExist(err) {
			t.Fatalf("a.csv is still in the bucket after its batch committed: %v", err)
		}
	})
	t.Run("archive", func(t *testing.T) {
		archive := srv.URL("archive/" + strings.ReplaceAll(t.Name(), "/", "-"))
		l := newObjectLanding(t, srv, config.Source{CleanSource: "archive", ArchiveDir: archive, Recursive: true})
		landed := time.Now().Add(-time.Hour).Truncate(time.Second)
		a := l.writeAt("x/a.csv", "id\n1\n", landed)
		b := l.write("b.csv", "id\n2\n")
		parts := l.plan(source.ReadLimit{MaxFiles: 1})
		if len(parts) != 1 || parts[0].Name() != a {
			t.Fatalf("planned %v, want x/a.csv", parts)
		}
		l.write("b.csv", "id\n3\n") // replaced before its batch: read as it is then
		l.plan(source.ReadLimit{})
		for _, p := range []string{a, b} {
			if _, err := os.Stat(l.local(p)); !os.IsNotExist(err) {
				t.Fatalf("%s is still in the landing prefix: %v", p, err)
			}
		}
		moved := srv.ObjectPath(strings.TrimPrefix(archive, "s3://"+srv.Bucket+"/") + "/x/a.csv")
		got, err := os.ReadFile(moved)
		if err != nil || string(got) != "id\n1\n" {
			t.Fatalf("the archived x/a.csv holds %q, %v", got, err)
		}
		resp, err := srv.Do(http.MethodHead, "/"+srv.Bucket+"/"+strings.TrimPrefix(archive, "s3://"+srv.Bucket+"/")+"/x/a.csv", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if kept := resp.Header.Get("X-Amz-Meta-Floe-Landed-Mtime-Ms"); kept != strconv.FormatInt(landed.UnixMilli(), 10) {
			t.Fatalf("the archived object keeps landing time %q, want %d (%s)", kept, landed.UnixMilli(), resp.Header)
		}
	})
	t.Run("changed", func(t *testing.T) {
		l := newObjectLanding(t, srv, config.Source{CleanSource: "delete"})
		a := l.write("a.csv", "id\n1\n")
		end, err := l.src.LatestOffset(t.Context(), l.start, source.ReadLimit{})
		if err != nil {
			t.Fatal(err)
		}
		l.write("a.csv", "id\n9\n")
		if err := l.src.Commit(t.Context(), end); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(l.local(a)); err != nil {
			t.Fatalf("an object replaced after it was ingested was deleted: %v", err)
		}
		if w := strings.Join(l.src.Warnings(), "\n"); !strings.Contains(w, "left "+a+" alone") {
			t.Fatalf("warnings %q do not say the object was left alone", w)
		}
	})
}

// A landing prefix in a bucket that does not exist, or behind a wrong
// secret, is a configuration error naming the path and the fix.
func TestObjectLandingUnreachable(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	props := srv.Properties()
	_, err := source.New(config.Source{Type: "files", Format: "csv", Path: "s3://no-such-bucket/landing"}, source.Env{StateDir: t.TempDir(), Properties: props})
	if !errors.Is(err, source.ErrConfig) || !strings.Contains(err.Error(), "s3://no-such-bucket/landing") || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a missing bucket: %v", err)
	}
	props["s3.secret-access-key"] = "wrong"
	_, err = source.New(config.Source{Type: "files", Format: "csv", Path: srv.URL("landing")}, source.Env{StateDir: t.TempDir(), Properties: props})
	if !errors.Is(err, source.ErrConfig) || !strings.Contains(err.Error(), srv.URL("landing")) || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("a wrong secret: %v", err)
	}
}

// A bad object is quarantined as a bad file is: its bytes are copied into
// the checkpoint's quarantine directory and the object deleted, while the
// good objects of the batch land.
func TestObjectQuarantine(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	d := newPipelineDir(t)
	d.land("good.json", "{\"id\": 1}\n{\"id\": 2}\n")
	d.land("bad.json", "{\"id\": 3}\n{not json\n")
	d.upload(srv, "quarantine")
	err := d.run(&config.Pipeline{Source: config.Source{Format: "json"}, Sink: config.Sink{Table: "db.t"}, OnBadFile: "quarantine"})
	if err != nil {
		t.Fatal(err)
	}
	if rows := d.rows("db.t"); len(rows) != 2 {
		t.Fatalf("%d rows landed, want the good object's 2: %v", len(rows), rows)
	}
	got, err := os.ReadFile(filepath.Join(d.ckpt, "quarantine", "bad.json"))
	if err != nil || string(got) != "{\"id\": 3}\n{not json\n" {
		t.Fatalf("the quarantined copy holds %q, %v", got, err)
	}
	if _, err := os.Stat(srv.ObjectPath("quarantine/bad.json")); !os.IsNotExist(err) {
		t.Fatalf("the bad object is still in the bucket: %v", err)
	}
}

var s3Objects = flag.Int("s3-objects", 2500, "objects in the landing prefix of TestObjectLandingManyObjects (the long run: 100000)")

// A prefix of thousands of objects (many listing pages) lands each object
// once over batches of up to 1,000, listing incrementally once the keys
// have shown they sort by arrival; -s3-objects 100000 makes it 100k.
func TestObjectLandingManyObjects(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	l := newObjectLanding(t, srv, config.Source{Recursive: true})
	n := *s3Objects
	g, _ := errgroup.WithContext(t.Context())
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			return srv.Put(fmt.Sprintf("%s/day=%04d/part-%07d.csv", l.key, i/1000, i), fmt.Appendf(nil, "id\n%d\n", i))
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	// The puts ran in parallel; the objects arrive in the order of their
	// keys, as a producer's do, by their times.
	base := time.Now().Add(-time.Hour)
	for i := range n {
		at := base.Add(time.Duration(i) * time.Millisecond)
		if err := os.Chtimes(l.local(fmt.Sprintf("%s/day=%04d/part-%07d.csv", l.dir, i/1000, i)), at, at); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	start := time.Now()
	batches := 0
	for {
		names := l.names(source.ReadLimit{MaxFiles: 1000})
		if len(names) == 0 {
			break
		}
		batches++
		for _, name := range names {
			if seen[name] {
				t.Fatalf("%s planned twice", name)
			}
			seen[name] = true
		}
	}
	if len(seen) != n {
		t.Fatalf("%d of %d objects planned", len(seen), n)
	}
	t.Logf("%d objects planned in %d batches in %v; the next listing starts after %q", n, batches, time.Since(start), files.NextListing(l.src))
	if files.NextListing(l.src) == "" {
		t.Fatal("the listing is still full after the keys came in order")
	}
}
