package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// The sql catalog on PostgreSQL and on MariaDB servers started on
// 127.0.0.1 from Debian's packages, named the way Spark's JDBC catalog
// names them: the article scenario, table list and describe, and two
// writers committing to one table at once. No SQLite database is made.
func TestSQLCatalogServers(t *testing.T) {
	t.Parallel()
	for _, db := range []struct {
		name  string
		start func(testing.TB) string
	}{{"postgres", fixture.Postgres}, {"mariadb", fixture.MariaDB}} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.catalogScenario([]string{"--catalog-uri", "jdbc:" + db.start(t)})
			if _, err := os.Stat(filepath.Join(e.Warehouse, "catalog.db")); err == nil {
				t.Fatal("an SQLite catalog database was made beside the server's catalog")
			}
		})
	}
}

// catalogScenario is the article scenario on the catalog the flags in cat
// open: a stream run three times over growing input (exactly once, one
// snapshot per batch with new files), scan, table list and describe, then
// two writers committing to one table at once.
func (e *env) catalogScenario(cat []string) {
	t := e.T
	t.Helper()
	run := func(args ...string) string {
		t.Helper()
		return e.OK(append(args, cat...)...).Stdout
	}
	count := func(table string) int64 {
		t.Helper()
		n, err := strconv.ParseInt(strings.TrimSpace(run("scan", table, "--count")), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	snapshots := func(table string) []fixture.Snapshot {
		t.Helper()
		var out []fixture.Snapshot
		if err := json.Unmarshal([]byte(run("table", "snapshots", table, "--json")), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	stream := func() { t.Helper(); run(e.StreamArgs("db.stream", "--trigger", "available-now")...) }

	for i := int64(0); i < 3; i++ {
		e.WriteIDs(fmt.Sprintf("part-%d.parquet", i), i*1000, 1000)
	}
	stream()
	if n, s := count("db.stream"), snapshots("db.stream"); n != 3000 || len(s) != 1 || s[0].Summary["floe.batch-id"] != "0" {
		t.Fatalf("after the first run: %d rows, snapshots %+v; want 3000 rows in one snapshot of batch 0", n, s)
	}
	stream()
	if n, s := count("db.stream"), len(snapshots("db.stream")); n != 3000 || s != 1 {
		t.Fatalf("after a re-run: %d rows, %d snapshots; want 3000 and 1", n, s)
	}
	e.WriteIDs("part-3.parquet", 3000, 1000)
	stream()
	if n, s := count("db.stream"), len(snapshots("db.stream")); n != 4000 || s != 2 {
		t.Fatalf("after a fourth file: %d rows, %d snapshots; want 4000 and 2", n, s)
	}
	r := run("scan", "db.stream", "--output-format", "csv")
	if lines := strings.Count(strings.TrimSpace(r), "\n"); lines != 4000 {
		t.Fatalf("scan printed %d rows, want 4000", lines)
	}
	if list := run("table", "list"); !strings.Contains(list, "db.stream") {
		t.Fatalf("table list lacks db.stream:\n%s", list)
	}
	if desc := run("table", "describe", "db.stream"); !strings.Contains(desc, "id") || !strings.Contains(desc, "long") {
		t.Fatalf("table describe lacks the id column:\n%s", desc)
	}

	// Two writers on one table: every row of both lands once.
	var cmds []*exec.Cmd
	var errs []*syncBuffer
	dirs := []string{filepath.Join(e.Dir, "landing-a"), filepath.Join(e.Dir, "landing-b")}
	for i, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		var stderr syncBuffer
		errs = append(errs, &stderr)
		cmds = append(cmds, e.startFloe(&stderr, append([]string{"stream", "--source", d, "--format", "parquet", "--table", "db.shared",
			"--checkpoint", filepath.Join(e.Dir, "ckpt-"+strconv.Itoa(i)), "--trigger", "200ms", "--maintenance=false"}, cat...)...))
	}
	defer func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
		}
	}()
	var total int64
	for n := 0; n < 6; n++ {
		for _, d := range dirs {
			if err := fixture.WriteIDFile(filepath.Join(d, fmt.Sprintf("f-%02d.parquet", n)), total, 500); err != nil {
				t.Fatal(err)
			}
			total += 500
		}
		time.Sleep(150 * time.Millisecond)
	}
	fixture.WaitFor(t, 60*time.Second, "every file of both writers", func() bool {
		r := e.Run(append([]string{"scan", "db.shared", "--count"}, cat...)...)
		return r.Code == 0 && strings.TrimSpace(r.Stdout) == strconv.FormatInt(total, 10)
	})
	for i, c := range cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
		if code := exitCode(c.Wait()); code != 0 {
			t.Fatalf("writer %d exited %d:\n%s", i, code, errs[i].String())
		}
	}
	ids := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(run("scan", "db.shared", "--output-format", "csv")), "\n")[1:] {
		ids[strings.SplitN(l, ",", 2)[0]] = true
	}
	if int64(len(ids)) != total {
		t.Fatalf("%d distinct ids in db.shared, want %d", len(ids), total)
	}
	queries := map[string]bool{}
	for _, s := range snapshots("db.shared") {
		queries[s.Summary["floe.query-id"]] = true
	}
	if len(queries) != 2 {
		t.Fatalf("db.shared's snapshots come from %d queries, want 2", len(queries))
	}
}

// A database server that does not answer is named in the error, without
// its password, with what to check.
func TestSQLCatalogUnreachable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	for _, uri := range []string{"jdbc:postgresql://127.0.0.1:1/floe?user=floe&password=s3cret", "mysql://floe:s3cret@127.0.0.1:1/floe"} {
		r := e.Run(e.StreamArgs("db.t", "--trigger", "once", "--catalog-uri", uri)...)
		if r.Code == 0 || !strings.Contains(r.Stderr, "127.0.0.1:1") || strings.Contains(r.Stderr, "s3cret") || !strings.Contains(r.Stderr, "database server") {
			t.Fatalf("%s: want a failure naming the server without its password, got %s", uri, r)
		}
	}
}

// catalog.type hive opens iceberg-go's Hive Metastore catalog; no metastore
// runs here, so what is tested is the way there: a metastore that does not
// answer is named by its URI, and the run fails without writing anything.
func TestHiveCatalogUnreachable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	r := e.Run(e.StreamArgs("db.t", "--trigger", "once", "--catalog-type", "hive", "--catalog-uri", "thrift://127.0.0.1:1")...)
	if r.Code == 0 || !strings.Contains(r.Stderr, "thrift://127.0.0.1:1") || !strings.Contains(r.Stderr, "Hive Metastore") {
		t.Fatalf("want a failure naming the metastore's URI, got %s", r)
	}
	if _, err := os.Stat(e.Ckpt); err == nil {
		if entries, _ := os.ReadDir(filepath.Join(e.Ckpt, "commits")); len(entries) > 0 {
			t.Fatalf("the failed run recorded commits: %v", entries)
		}
	}
}
