package main_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/fixture"
)

// restStream streams the landed files, one batch each, through the REST
// catalog at uri.
func (e *env) restStream(uri string, extra ...string) fixture.Result {
	e.T.Helper()
	args := e.StreamArgs("db.t", append([]string{"--catalog-type", "rest", "--catalog-uri", uri,
		"--trigger", "available-now", "--max-files-per-trigger", "1", "--maintenance=false"}, extra...)...)
	return e.Run(args...)
}

// A table commit through a REST catalog fails at its boundary: refused
// before the server saw it, or its answer lost after the server committed
// (a gateway's 504, a 500, a closed or reset connection, an answer held
// past the client's timeout). Once (times 1) floe's client sends the
// commit again with its Idempotency-Key and `floe serve` answers with the
// first outcome; four times in a row (past the client's resends) the
// outcome stays unknown and the committer finds the batch in the table.
// Either way the stream goes on, commits each batch once, and every row
// is in the table once, read by iceberg-go from the catalog behind the
// server.
func TestFaultRESTCommitAnswerLost(t *testing.T) {
	t.Parallel()
	faults := []fixture.Fault{fixture.Answer504, fixture.Answer500, fixture.DropAnswer, fixture.ResetAfter, fixture.HoldAnswer, fixture.Refuse503}
	for round := 0; round < *faultRounds; round++ {
		for _, fault := range faults {
			for _, times := range []int{1, 4} {
				t.Run(fmt.Sprintf("%s/times=%d/%d", fault, times, round), func(t *testing.T) {
					t.Parallel()
					e := newEnv(t)
					_, base := e.floeServe()
					proxy := fixture.NewFaultProxy(t, base)
					const files = 6
					n := 1 + round%files
					rule := &fixture.FaultRule{Match: fixture.IsTableCommit, N: n, Times: times, Fault: fault, Hold: time.Second}
					proxy.Add(rule)
					for i := 0; i < files; i++ {
						e.land(i)
					}
					r := e.restStream(proxy.URL, "-p", "rest.client.socket-timeout-ms=300")
					if r.Code != 0 {
						t.Fatalf("the stream failed on a lost commit answer: %s", r)
					}
					if got := proxy.Injected()[fault]; got != times {
						t.Fatalf("the proxy injected %d faults, want %d", got, times)
					}
					// The commit met by the fault was sent again with its key.
					if keys := proxy.Keys(rule); len(keys) <= n || keys[n-1] == "" || keys[n] != keys[n-1] {
						t.Fatalf("the commit after the fault was not sent again with its Idempotency-Key: keys %q", keys)
					}
					e.exactly("db.t", 100*files)
					if s := len(e.Snapshots("db.t")); s != files {
						t.Fatalf("db.t has %d snapshots, want one per batch, %d", s, files)
					}
					if want := fmt.Sprintf("%d rows, %d snapshots committed", 100*files, files); !strings.Contains(r.Stderr, want) {
						t.Fatalf("the summary does not say %q:\n%s", want, r.Stderr)
					}
					t.Logf("faults: %s=%d rows checked=%d lost=0 duplicated=0", fault, times, 100*files)
				})
			}
		}
	}
}

// killableServe is `floe serve` on a fixed port, killed (SIGKILL) and
// started again by a test.
type killableServe struct {
	e    *env
	addr string
	cmd  *exec.Cmd
	err  syncBuffer
}

func (e *env) killableServe() *killableServe {
	e.T.Helper()
	s := &killableServe{e: e, addr: fmt.Sprintf("127.0.0.1:%d", fixture.FreePort(e.T))}
	s.start()
	e.T.Cleanup(func() {
		if s.cmd != nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
	})
	return s
}

func (s *killableServe) url() string { return "http://" + s.addr }

// start starts the server and waits until it answers.
func (s *killableServe) start() {
	s.e.T.Helper()
	s.cmd = s.e.Command(floeBin, nil, "serve", "--listen", s.addr)
	s.cmd.Stderr = &s.err
	if err := s.cmd.Start(); err != nil {
		s.e.T.Fatal(err)
	}
	fixture.WaitFor(s.e.T, 30*time.Second, "floe serve at "+s.addr, func() bool {
		resp, err := http.Get(s.url() + "/v1/config")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func (s *killableServe) kill() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// `floe serve` killed (-9) ten times while streams commit through it, and
// started again on its port after a moment. A stream that fails while the
// server is away is run once more; every stream that ends, the first time
// or the second, leaves every row landed so far in the table once, read by
// iceberg-go from the catalog behind the server. No run may exit 0 with a
// row missing.
func TestFaultRESTServerKilled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.killableServe()
	kills := 10 * *faultRounds
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 7))
	t.Logf("seed %d", seed)
	landed, killed, reruns := 0, 0, 0
	for killed < kills {
		for i := 0; i < 8; i++ {
			e.land(landed)
			landed++
		}
		stopKilling := make(chan struct{})
		done := make(chan int)
		go func() {
			n := 0
			defer func() { done <- n }()
			for killed+n < kills {
				select {
				case <-stopKilling:
					return
				case <-time.After(time.Duration(20+rng.IntN(200)) * time.Millisecond):
				}
				srv.kill()
				n++
				time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
				srv.start()
			}
		}()
		r := e.restStream(srv.url())
		close(stopKilling)
		killed += <-done
		if r.Code != 0 {
			reruns++
			if r = e.restStream(srv.url()); r.Code != 0 {
				t.Fatalf("the stream failed again with the server up: %s", r)
			}
		}
		if d := fixture.Exact(e.TableIDs("db.t"), 0, int64(100*landed)); d != "" {
			t.Fatalf("after %d kills: %s; the stream's last run: %s\nfloe serve: %s", killed, d, r, srv.err.String())
		}
	}
	t.Logf("faults: serve-kill-9=%d reruns=%d rows checked=%d lost=0 duplicated=0", killed, reruns, 100*landed)
}

// A commit to the sql catalog on PostgreSQL whose answer is lost after the
// server committed: the connection closes (drop-answer), a connection
// failure is reported (answer-500), or the answer comes after a second
// (hold-answer), each on the table's creation (the first catalog commit)
// and on a batch's commit (the third). The committer finds what landed in
// the table; every row is in the table once, read by iceberg-go.
func TestFaultSQLCommitAnswerLost(t *testing.T) {
	t.Parallel()
	pg := fixture.PostgresServer(t)
	u, err := url.Parse(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	db := 0
	for round := 0; round < *faultRounds; round++ {
		for _, fault := range []fixture.Fault{fixture.DropAnswer, fixture.Answer500, fixture.HoldAnswer} {
			for _, n := range []int{1, 3} {
				db++
				schema := fmt.Sprintf("c%d", db)
				t.Run(fmt.Sprintf("%s/commit=%d/%d", fault, n, round), func(t *testing.T) {
					e := newEnv(t)
					proxy := fixture.NewPGFaultProxy(t, u.Host, n, 1, fault, time.Second)
					via := *u
					via.Host = proxy.Addr
					// Each subtest has a catalog of its own, by name.
					cat := []string{"--catalog-uri", "jdbc:" + via.String(), "--catalog-name", schema}
					const files = 5
					for i := 0; i < files; i++ {
						e.land(i)
					}
					args := e.StreamArgs("db.t", append(cat, "--trigger", "available-now", "--max-files-per-trigger", "1", "--maintenance=false")...)
					r := e.Run(args...)
					if r.Code != 0 {
						t.Fatalf("the stream failed on a lost commit answer: %s", r)
					}
					if got := proxy.Injected(); got != 1 {
						t.Fatalf("the proxy injected %d faults, want 1", got)
					}
					ids := readIDsFrom(t, config.Catalog{URI: "jdbc:" + pg.URL, Name: schema, Warehouse: e.Warehouse}, "db.t")
					if d := fixture.Exact(ids, 0, 100*files); d != "" {
						t.Fatalf("db.t: %s\n%s", d, r)
					}
					if want := fmt.Sprintf("%d rows, %d snapshots committed", 100*files, files); !strings.Contains(r.Stderr, want) {
						t.Fatalf("the summary does not say %q:\n%s", want, r.Stderr)
					}
					t.Logf("faults: sql-%s=1 rows checked=%d lost=0 duplicated=0", fault, 100*files)
				})
			}
		}
	}
}

// readIDsFrom counts the ids of table in the catalog cfg opens, read by
// iceberg-go's scan.
func readIDsFrom(t *testing.T, cfg config.Catalog, table string) map[int64]int {
	t.Helper()
	ctx := context.Background()
	cat, err := catalogs.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The catalog's connections go back to the server, whose slots the
	// long run would use up.
	if c, ok := cat.(catalog.Closer); ok {
		defer c.Close()
	}
	ids, err := fixture.ReadIDs(ctx, cat, table, "id")
	if err != nil {
		t.Fatalf("read ids of %s: %v", table, err)
	}
	return ids
}

// A compaction whose commit answer is lost, past the REST client's resends
// (times=4): the rewrite finds its own snapshot in the table, by the id it
// marks it with, instead of staging the rewrite again over files it
// already replaced (which would fail and delete the new files the table
// now references). The table keeps every row once, in fewer files.
func TestFaultRESTRewriteAnswerLost(t *testing.T) {
	t.Parallel()
	for round := 0; round < *faultRounds; round++ {
		for _, fault := range []fixture.Fault{fixture.Answer504, fixture.DropAnswer} {
			t.Run(fmt.Sprintf("%s/%d", fault, round), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				_, base := e.floeServe()
				const files = 6
				for i := 0; i < files; i++ {
					e.land(i)
				}
				if r := e.restStream(base); r.Code != 0 {
					t.Fatal(r)
				}
				proxy := fixture.NewFaultProxy(t, base)
				proxy.Add(&fixture.FaultRule{Match: fixture.IsTableCommit, N: 1, Times: 4, Fault: fault})
				r := e.Run("maintain", "rewrite-data-files", "db.t", "--catalog-type", "rest", "--catalog-uri", proxy.URL, "--json")
				if r.Code != 0 {
					t.Fatalf("the rewrite failed on a lost commit answer: %s", r)
				}
				if got := proxy.Injected()[fault]; got != 4 {
					t.Fatalf("the proxy injected %d faults, want 4", got)
				}
				e.exactly("db.t", 100*files)
				if n := len(e.files("db.t")); n != 1 {
					t.Fatalf("db.t has %d data files after the rewrite, want 1", n)
				}
				t.Logf("faults: rewrite-%s=4 rows checked=%d lost=0 duplicated=0", fault, 100*files)
			})
		}
	}
}

// The phases of a commit a kill (exit 137 in the test build) can stop
// floe at: after its files and manifests are written and before the
// catalog sees the commit; after the catalog made the commit and before
// its answer reached floe; after the table commit and before the
// checkpoint recorded the batch.
var commitPhases = []struct{ name, env string }{
	{"files-written", "FLOE_TEST_CRASH_IN_CATALOG_COMMIT"},
	{"catalog-acted", "FLOE_TEST_CRASH_AFTER_CATALOG_COMMIT"},
	{"before-checkpoint", "FLOE_TEST_CRASH_AFTER_TABLE_COMMITS"},
}

// floe killed at each phase of the Nth commit of a run, appending and in
// mode upsert on format-version 3 (deletion vectors) and 2 (equality
// deletes), then run again: the table holds every row once, or every key
// once with its last value, read by iceberg-go.
func TestFaultKillAtCommitPhases(t *testing.T) {
	t.Parallel()
	for round := 0; round < *faultRounds; round++ {
		for _, phase := range commitPhases {
			for _, mode := range []string{"append", "upsert-v3", "upsert-v2"} {
				t.Run(fmt.Sprintf("%s/%s/%d", phase.name, mode, round), func(t *testing.T) {
					t.Parallel()
					e := newEnv(t)
					nth := 1 + round%3
					crash := []string{fmt.Sprintf("%s=%d", phase.env, nth)}
					batches, rows := int64(0), 0
					if mode == "append" {
						args := e.StreamArgs("db.t", "--max-files-per-trigger", "1", "--maintenance=false")
						for i := 0; i < 4; i++ {
							e.land(i)
						}
						if r := e.RunEnv(floeBin, crash, args...); r.Code != 137 {
							t.Fatalf("want the run killed at commit %d, got %s", nth, r)
						}
						e.OK(args...)
						e.exactly("db.t", 400)
						batches, rows = 4, 400
					} else {
						g := fixture.NewCDCGen(uint64(round*31+len(phase.name)), 2000)
						args := e.upsertArgs("--format-version", mode[len(mode)-1:], "--max-files-per-trigger", "1", "--maintenance=false")
						for i := 0; i < 4; i++ {
							g.File(t, e.Landing, 300)
						}
						if r := e.RunEnv(floeBin, crash, args...); r.Code != 137 {
							t.Fatalf("want the run killed at commit %d, got %s", nth, r)
						}
						e.OK(args...)
						if d := fixture.DiffOracle(e.TableKeyed("db.t", "id", "v"), g.Oracle); d != "" {
							t.Fatalf("after a kill at %s of commit %d: %s", phase.name, nth, d)
						}
						batches, rows = 4, len(g.Oracle)
					}
					seen := map[string]int{}
					for _, s := range e.Snapshots("db.t") {
						if b := s.Summary["floe.batch-id"]; b != "" {
							seen[b]++
						}
					}
					if int64(len(seen)) != batches {
						t.Fatalf("the table holds batches %v, want %d batches", seen, batches)
					}
					for b, n := range seen {
						if n != 1 {
							t.Fatalf("batch %s is in %d snapshots", b, n)
						}
					}
					t.Logf("faults: kill-%s-%s=1 rows checked=%d lost=0 duplicated=0", phase.name, mode, rows)
				})
			}
		}
	}
}
