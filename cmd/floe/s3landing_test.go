package main_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/floe-io/floe/internal/fixture"
)

// putIDs uploads a Parquet file of n rows with ids from first to key in
// the server's bucket, as a producer writing to a landing prefix does.
func (s *s3env) putIDs(key string, first, n int64) {
	s.T.Helper()
	p := filepath.Join(s.T.TempDir(), "ids.parquet")
	if err := fixture.WriteIDFile(p, first, n); err != nil {
		s.T.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		s.T.Fatal(err)
	}
	if err := s.srv.Put(key, b); err != nil {
		s.T.Fatal(err)
	}
}

// ids scans table and returns its ids, failing on a duplicate.
func (s *s3env) ids(table string) map[int64]bool {
	s.T.Helper()
	r := s.ok(credsEnv, "scan", table, "--output-format", "csv")
	seen := map[int64]bool{}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n")[1:] {
		id, err := strconv.ParseInt(strings.SplitN(l, ",", 2)[0], 10, 64)
		if err != nil {
			s.T.Fatalf("scan printed %q", l)
		}
		if seen[id] {
			s.T.Fatalf("id %d appears twice in %s", id, table)
		}
		seen[id] = true
	}
	return seen
}

// The article scenario with both the landing zone and the warehouse on S3
// (versitygw): three objects make one snapshot, a re-run adds nothing, a
// fourth makes a second; clean-source archives by copy and delete; a lost
// checkpoint is rebuilt from the table's record and the archive, and the
// stream goes on without reading an object twice.
func TestS3LandingArticleScenario(t *testing.T) {
	t.Parallel()
	s := newS3Env(t)
	src, archive := s.srv.URL("landing/events/"), s.srv.URL("archive/events")
	for i := range int64(3) {
		s.putIDs(fmt.Sprintf("landing/events/part-%d.parquet", i), i*1000, 1000)
	}
	args := []string{"stream", "--source", src, "--format", "parquet", "--table", "db.events",
		"--checkpoint", s.Ckpt, "--trigger", "available-now", "--progress=json", "--clean-source", "archive", "--source-archive-dir", archive}
	checkProgressJSON(t, s.ok(credsEnv, args...), 1)
	if n := len(s.ids("db.events")); n != 3000 {
		t.Fatalf("rows after the first run = %d, want 3000", n)
	}
	checkProgressJSON(t, s.ok(credsProps, args...), 0)
	s.putIDs("landing/events/part-3.parquet", 3000, 1000)
	checkProgressJSON(t, s.ok(credsEnv, args...), 1)
	r := s.ok(credsEnv, "table", "snapshots", "db.events", "--json")
	if n := strings.Count(r.Stdout, `"operation"`); n != 2 {
		t.Fatalf("%d snapshots after the fourth object, want 2:\n%s", n, r.Stdout)
	}
	if n := len(s.ids("db.events")); n != 4000 {
		t.Fatalf("rows after the fourth object = %d, want 4000", n)
	}
	for i := range 4 {
		name := fmt.Sprintf("events/part-%d.parquet", i)
		if _, err := os.Stat(s.srv.ObjectPath("landing/" + name)); !os.IsNotExist(err) {
			t.Errorf("%s is still in the landing prefix after clean-source archive: %v", name, err)
		}
		if _, err := os.Stat(s.srv.ObjectPath("archive/" + name)); err != nil {
			t.Errorf("%s is not in the archive prefix: %v", name, err)
		}
	}

	// The checkpoint is lost; the table's record and the archive rebuild it.
	if err := os.RemoveAll(s.Ckpt); err != nil {
		t.Fatal(err)
	}
	s.ok(credsEnv, append([]string{"checkpoint", "rebuild"}, args[1:]...)...)
	s.putIDs("landing/events/part-4.parquet", 4000, 1000)
	checkProgressJSON(t, s.ok(credsEnv, args...), 1)
	ids := s.ids("db.events")
	for id := range int64(5000) {
		if !ids[id] {
			t.Fatalf("id %d is missing after the rebuild", id)
		}
	}
	if len(ids) != 5000 {
		t.Fatalf("%d rows after the rebuild, want 5000", len(ids))
	}
}

// SIGKILL at random moments while floe lands objects from S3 into an S3
// warehouse, then restarts: every row ends up in the table exactly once.
func TestFaultS3LandingKill(t *testing.T) {
	t.Parallel()
	s := newS3Env(t)
	const files, rows = 24, 500
	for i := range int64(files) {
		s.putIDs(fmt.Sprintf("landing/f-%03d.parquet", i), i*rows, rows)
	}
	args := []string{"stream", "--source", s.srv.URL("landing"), "--format", "parquet", "--table", "db.crash",
		"--checkpoint", s.Ckpt, "--trigger", "available-now", "--max-files-per-trigger", "2"}
	killed := append(append([]string{}, args...), s.catalogArgs(credsProps, s.srv.SecretKey)...)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	kills, runs := 0, 0
	for kills < 4**faultRounds && runs < 40 {
		runs++
		if s.runOrKill(time.Duration(200+rng.IntN(600))*time.Millisecond, killed...) {
			kills++
		}
	}
	s.ok(credsProps, args...)
	ids := s.ids("db.crash")
	for id := range int64(files * rows) {
		if !ids[id] {
			t.Fatalf("after %d kills: id %d is missing", kills, id)
		}
	}
	if len(ids) != files*rows {
		t.Fatalf("after %d kills: %d rows, want %d", kills, len(ids), files*rows)
	}
	t.Logf("%d kills in %d runs; %d rows exactly once", kills, runs, files*rows)
}

// Copy-eligible Parquet objects land through ranged reads: the bytes read
// from the landing prefix (counted by a proxy in front of the server) are
// about the bytes of the objects, not a multiple of them.
func TestS3LandingRangedReads(t *testing.T) {
	t.Parallel()
	s := newS3Env(t)
	proxy := fixture.NewFaultProxy(t, s.srv.Endpoint)
	proxy.KeepHost = true
	s.endpoint = proxy.URL
	const files, rows = 4, 400_000
	var input int64
	for i := range int64(files) {
		p := filepath.Join(s.Landing, fmt.Sprintf("big-%d.parquet", i))
		if err := fixture.WriteIDFile(p, i*rows, rows); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		input += int64(len(b))
		if err := s.srv.Put(fmt.Sprintf("landing/big-%d.parquet", i), b); err != nil {
			t.Fatal(err)
		}
	}
	// With row groups of 16 MiB, a file's are copied from 512 KiB on.
	r := s.ok(credsProps, "stream", "--source", s.srv.URL("landing"), "--format", "parquet", "--table", "db.remote",
		"--checkpoint", s.Ckpt, "--trigger", "available-now", "-p", "table-default.write.parquet.row-group-size-bytes=16777216", "--verbose")
	read := proxy.AnswerBytes(func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/landing/")
	})
	// The chunks were copied: the table's data files hold the input's
	// column chunks, byte for byte as many.
	var copied, chunks int64
	for i := range files {
		chunks += chunkBytes(t, filepath.Join(s.Landing, fmt.Sprintf("big-%d.parquet", i)))
	}
	for _, f := range s.dataFiles("db.remote") {
		copied += chunkBytes(t, s.srv.ObjectPath(strings.TrimPrefix(f, "s3://"+s.srv.Bucket+"/")))
	}
	if copied != chunks {
		t.Fatalf("the data files hold %d bytes of column chunks, the input %d: the chunks were not copied\n%s", copied, chunks, r.Stderr)
	}
	t.Logf("read %d bytes from the landing prefix to copy %d bytes of column chunks (%.4f×) out of %d bytes of input",
		read, copied, float64(read)/float64(copied), input)
	if read > copied*11/10 {
		t.Fatalf("read %d bytes to copy %d: more than 1.1×", read, copied)
	}
	if n := len(s.ids("db.remote")); n != files*rows {
		t.Fatalf("%d rows landed, want %d", n, files*rows)
	}
}

// chunkBytes is the stored size of a Parquet file's column chunks.
func chunkBytes(t *testing.T, path string) int64 {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	var n int64
	for _, rg := range pf.MetaData().RowGroups {
		for _, c := range rg.Columns {
			n += c.MetaData.TotalCompressedSize
		}
	}
	return n
}

// dataFiles lists the paths of a table's data files.
func (s *s3env) dataFiles(table string) []string {
	s.T.Helper()
	r := s.ok(credsEnv, "table", "files", table, "--json")
	var files []struct {
		Path string `json:"file_path"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &files); err != nil {
		s.T.Fatalf("table files --json: %v\n%s", err, r.Stdout)
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

// The landing prefix's server failing around floe's requests loses and
// duplicates nothing: reads answered 500 (the server never sent the
// bytes) and a clean-source delete whose answer is lost after the object
// was deleted. Every run exits 0 with every row once, and the objects
// end up deleted.
func TestS3LandingServerFaults(t *testing.T) {
	t.Parallel()
	s := newS3Env(t)
	proxy := fixture.NewFaultProxy(t, s.srv.Endpoint)
	proxy.KeepHost = true
	s.endpoint = proxy.URL
	landingGet := func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/landing/") && !r.URL.Query().Has("list-type")
	}
	proxy.Add(&fixture.FaultRule{Match: landingGet, N: 1, Times: 5, Fault: fixture.Answer500})
	proxy.Add(&fixture.FaultRule{Match: func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/landing/")
	}, N: 1, Fault: fixture.DropAnswer})
	args := []string{"stream", "--source", s.srv.URL("landing"), "--format", "parquet", "--table", "db.faults",
		"--checkpoint", s.Ckpt, "--trigger", "available-now", "--max-files-per-trigger", "2", "--clean-source", "delete"}
	for i := range int64(6) {
		s.putIDs(fmt.Sprintf("landing/f-%d.parquet", i), i*100, 100)
	}
	s.ok(credsProps, args...)
	s.ok(credsProps, args...)
	if got := proxy.Injected(); got[fixture.Answer500] == 0 || got[fixture.DropAnswer] != 1 {
		t.Fatalf("faults injected: %v", got)
	}
	ids := s.ids("db.faults")
	for id := range int64(600) {
		if !ids[id] {
			t.Fatalf("id %d is missing", id)
		}
	}
	if len(ids) != 600 {
		t.Fatalf("%d rows, want 600", len(ids))
	}
	for i := range 6 {
		if _, err := os.Stat(s.srv.ObjectPath(fmt.Sprintf("landing/f-%d.parquet", i))); !os.IsNotExist(err) {
			t.Errorf("landing/f-%d.parquet is still in the bucket: %v", i, err)
		}
	}
}

// A landing object the server will not serve (500s past every retry) is
// the store's failure, not a bad file: with on-bad-file: quarantine the
// run fails naming it and sets nothing aside, and once the server serves
// again every row lands once.
func TestS3LandingServerDownIsNotABadFile(t *testing.T) {
	t.Parallel()
	s := newS3Env(t)
	proxy := fixture.NewFaultProxy(t, s.srv.Endpoint)
	proxy.KeepHost = true
	s.endpoint = proxy.URL
	var down atomic.Bool
	down.Store(true)
	proxy.Add(&fixture.FaultRule{Match: func(r *http.Request) bool {
		return down.Load() && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/landing/") && !r.URL.Query().Has("list-type")
	}, N: 1, Times: 1 << 30, Fault: fixture.Answer500})
	s.putIDs("landing/f-0.parquet", 0, 200)
	args := []string{"stream", "--source", s.srv.URL("landing"), "--format", "parquet", "--table", "db.down",
		"--checkpoint", s.Ckpt, "--trigger", "available-now", "--on-bad-file", "quarantine"}
	r := s.floeS3(credsProps, s.srv.SecretKey, args...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "the object store failed to serve it, not the file") || strings.Contains(r.Stderr, "quarantine") {
		t.Fatalf("a landing object the server will not serve: want exit 1 naming the store's failure and nothing quarantined, got %s", r)
	}
	down.Store(false)
	s.ok(credsProps, args...)
	if ids := s.ids("db.down"); len(ids) != 200 {
		t.Fatalf("%d rows once the server serves again, want 200", len(ids))
	}
}
