package files_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/s3test"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/files"
)

// landDated lands files [from, to) under day=D/part-N.csv, 10 a day, each
// a second newer than the one before.
func (l *landingDir) landDated(from, to int, base time.Time) []string {
	l.t.Helper()
	var names []string
	for i := from; i < to; i++ {
		name := fmt.Sprintf("day=%04d/part-%05d.csv", i/10, i)
		l.writeAt(name, fmt.Sprintf("id\n%d\n", i), base.Add(time.Duration(i)*time.Second))
		names = append(names, name)
	}
	return names
}

// Paths that sort by arrival are listed incrementally once enough new
// files came in their order: a batch then lists only after the last file
// handled, so a late file under an earlier path waits for the next full
// listing (an hour on), which reads it and turns incremental listing off
// for the run, with a warning.
func TestAutoListingFollowsArrivalOrder(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"local", "s3"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			cfg := config.Source{Recursive: true}
			var l *landingDir
			if store == "s3" {
				l = newObjectLanding(t, s3test.Start(t), cfg)
			} else {
				l = newLanding(t, cfg)
			}
			base := time.Now().Add(-time.Hour)
			want := l.landDated(0, 30, base)
			var got []string
			for range 6 {
				got = append(got, l.names(source.ReadLimit{MaxFiles: 5})...)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("planned %v, want %v", got, want)
			}
			if after := files.NextListing(l.src); after != "day=0002/part-00029.csv" {
				t.Fatalf("after 30 files in arrival order the next listing starts after %q, want the last file", after)
			}
			more := l.landDated(30, 35, base)
			if got := l.names(source.ReadLimit{}); !slices.Equal(got, more) {
				t.Fatalf("incremental listing planned %v, want %v", got, more)
			}
			if _, m := l.src.Metrics(l.start); m["listing"] != "incremental" {
				t.Fatalf("the batch's progress metrics are %v, want listing incremental", m)
			}
			l.writeAt("day=0001/part-00015b.csv", "id\n99\n", base.Add(time.Minute))
			if got := l.names(source.ReadLimit{}); len(got) != 0 {
				t.Fatalf("incremental listing planned %v, files sorting before the last one handled", got)
			}
			now := time.Now().Add(fullListingEvery())
			files.SetClock(l.src, func() time.Time { return now })
			if got := l.names(source.ReadLimit{}); !slices.Equal(got, []string{"day=0001/part-00015b.csv"}) {
				t.Fatalf("the hourly full listing planned %v, want the late file", got)
			}
			if _, m := l.src.Metrics(l.start); m["listing"] != "full" {
				t.Fatalf("the batch's progress metrics are %v, want listing full", m)
			}
			if w := strings.Join(l.src.Warnings(), "\n"); !strings.Contains(w, "day=0001/part-00015b.csv arrived after files whose paths sort after it") {
				t.Fatalf("warnings %q do not name the late file", w)
			}
			if after := files.NextListing(l.src); after != "" {
				t.Fatalf("after a late file the next listing starts after %q, want a full listing", after)
			}
		})
	}
}

func fullListingEvery() time.Duration { return time.Hour + time.Minute }

// Random names never pass for arrival order: every batch lists in full.
func TestAutoListingStaysFullOnRandomNames(t *testing.T) {
	t.Parallel()
	l := newLanding(t, config.Source{})
	base := time.Now().Add(-time.Hour)
	rng := rand.New(rand.NewPCG(1, 2))
	total := 0
	for b := range 10 {
		for i := range 5 {
			l.writeAt(fmt.Sprintf("%016x.csv", rng.Uint64()), "id\n1\n", base.Add(time.Duration(b*5+i)*time.Second))
		}
		total += len(l.names(source.ReadLimit{}))
		if after := files.NextListing(l.src); after != "" {
			t.Fatalf("after batch %d of random names the next listing starts after %q", b, after)
		}
	}
	if total != 50 {
		t.Fatalf("planned %d files of 50", total)
	}
}

// A hard link, landed after its file was read under a path that sorts
// earlier, is read once: an incremental walk that meets a linked file
// lists in full, which finds both names of the one file.
func TestAutoListingReadsALinkedFileOnce(t *testing.T) {
	t.Parallel()
	l := newLanding(t, config.Source{Recursive: true})
	base := time.Now().Add(-time.Hour)
	l.landDated(0, 30, base)
	for range 3 {
		l.names(source.ReadLimit{MaxFiles: 10})
	}
	if files.NextListing(l.src) == "" {
		t.Fatal("incremental listing did not start")
	}
	if err := os.Link(filepath.Join(l.dir, "day=0000/part-00000.csv"), filepath.Join(l.dir, "day=0002/z.csv")); err != nil {
		t.Fatal(err)
	}
	if got := l.names(source.ReadLimit{}); len(got) != 0 {
		t.Fatalf("a hard link to a file read already was planned: %v", got)
	}
	if files.NextListing(l.src) != "" {
		t.Fatal("incremental listing goes on in a landing directory with linked files")
	}
}

// On S3 an incremental listing asks the server for the keys after the
// last one handled (StartAfter), so its answers do not grow with the
// objects already read.
func TestObjectAutoListingStartsAfter(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	proxy := fixture.NewFaultProxy(t, srv.Endpoint)
	proxy.KeepHost = true
	l := newObjectLanding(t, srv, config.Source{Recursive: true})
	l.src.Close()
	props := srv.Properties()
	props["s3.endpoint"] = proxy.URL
	src, err := source.New(l.cfg, source.Env{StateDir: l.state, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	l.src = src.(*files.Files)
	base := time.Now().Add(-time.Hour)
	l.landDated(0, 60, base)
	for range 3 {
		l.names(source.ReadLimit{MaxFiles: 20})
	}
	before := proxy.Requests(func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Query().Has("list-type") })
	bytes := proxy.AnswerBytes(func(*http.Request) bool { return true })
	more := l.landDated(60, 62, base)
	if got := l.names(source.ReadLimit{}); !slices.Equal(got, more) {
		t.Fatalf("planned %v, want %v", got, more)
	}
	queries := proxy.Queries(func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Query().Has("list-type") })[before:]
	if len(queries) != 1 || queries[0].Get("start-after") != l.key+"/day=0005/part-00059.csv" {
		t.Fatalf("the batch listed with %v; want one listing starting after the last key read", queries)
	}
	if got := proxy.AnswerBytes(func(*http.Request) bool { return true }) - bytes; got > 4096 {
		t.Fatalf("the incremental listing's answer took %d bytes, as if it listed the 60 objects read", got)
	}
}
