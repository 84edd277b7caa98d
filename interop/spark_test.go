package interop_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/floe-io/floe/internal/canonical"
	"github.com/floe-io/floe/internal/fixture"
)

// Spark with Iceberg's Spark runtime reads what floe writes, through the
// catalog floe wrote it with. One Spark session (engines/spark_driver.py)
// serves every test of the package: starting one costs seconds. Tests
// without the installed engines skip (fail under FLOE_REQUIRE_ENGINES=1).

// sparkSession is the package's Spark driver process.
type sparkSession struct {
	mu       sync.Mutex
	cmd      *exec.Cmd
	in       io.WriteCloser
	out      *bufio.Reader
	stderr   *fixture.SyncBuffer
	sessions int
	err      error
}

// sparkCatalog is one Spark session of the driver's whose catalog `floe`
// is one test's catalog: the JDBC catalog reads only the rows of its own
// name, which the embedded warehouse writes as floe.
type sparkCatalog struct {
	s  *sparkSession
	id string
}

var (
	sparkOnce sync.Once
	spark     *sparkSession
	// sparkAll runs the Spark checks the default suite leaves out for time:
	// the article's scenario on v2 as well, and Spark on every state that
	// the upsert tests check.
	sparkAll = flag.Bool("spark-all", false, "run every Spark check, not only the default suite's")
)

// needSpark returns the package's Spark session, starting it on first use.
func needSpark(t *testing.T) *sparkSession {
	t.Helper()
	eng := fixture.NeedEngines(t)
	sparkOnce.Do(func() { spark = startSpark(eng) })
	if spark.err != nil {
		t.Fatalf("spark: %v", spark.err)
	}
	return spark
}

// optionalSpark is needSpark for checks that also run without the engines:
// nil when they are not installed (a failure under FLOE_REQUIRE_ENGINES=1).
func optionalSpark(t *testing.T) *sparkSession {
	t.Helper()
	if _, reason := fixture.FindEngines(); reason != "" && os.Getenv(fixture.RequireEnginesEnv) != "1" {
		t.Logf("Spark's check left out: %s", reason)
		return nil
	}
	return needSpark(t)
}

func startSpark(eng *fixture.Engines) *sparkSession {
	s := &sparkSession{stderr: &fixture.SyncBuffer{}}
	script, err := filepath.Abs(filepath.Join("engines", "spark_driver.py"))
	if err != nil {
		s.err = err
		return s
	}
	s.cmd = exec.Command(eng.Python(), append([]string{script}, eng.Jars("spark")...)...)
	// Python's datetimes of timestamptz values are in the process's zone.
	s.cmd.Env = append(os.Environ(), "TZ=UTC", "PYSPARK_PYTHON="+eng.Python())
	s.cmd.Stderr = s.stderr
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		s.err = err
		return s
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		s.err = err
		return s
	}
	s.out = bufio.NewReaderSize(stdout, 1<<20)
	if err := s.cmd.Start(); err != nil {
		s.err = fmt.Errorf("start %s: %w", script, err)
		return s
	}
	var ready struct {
		Ready   bool   `json:"ready"`
		Version string `json:"version"`
	}
	if err := s.read(&ready); err != nil || !ready.Ready {
		s.err = fmt.Errorf("spark session did not start: %v\n%s", err, s.tail())
		return s
	}
	fmt.Fprintf(os.Stderr, "interop: Spark %s with Iceberg's runtime started\n", ready.Version)
	return s
}

// stopSpark ends the session, if one started; TestMain calls it.
func stopSpark() {
	if spark == nil || spark.cmd == nil || spark.cmd.Process == nil {
		return
	}
	spark.in.Close()
	if err := spark.cmd.Wait(); err != nil {
		spark.cmd.Process.Kill()
	}
}

// tail is the end of what the driver printed to stderr, for a failure.
func (s *sparkSession) tail() string {
	b := s.stderr.String()
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return b
}

func (s *sparkSession) read(v any) error {
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("spark driver ended: %w", err)
	}
	return json.Unmarshal(line, v)
}

// call sends one request and decodes the answer into v.
func (s *sparkSession) call(req map[string]any, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("spark driver: %w\n%s", err, s.tail())
	}
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("spark driver ended: %w\n%s", err, s.tail())
	}
	var status struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		Trace string `json:"trace"`
	}
	if err := json.Unmarshal(line, &status); err != nil {
		return fmt.Errorf("spark driver answered %q: %w", line, err)
	}
	if !status.OK {
		return fmt.Errorf("spark: %s", status.Error)
	}
	if v == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	return dec.Decode(v)
}

// jdbcCatalog registers the embedded warehouse's SQLite catalog (the JDBC
// catalog's schema, catalog name "floe") in Spark and returns the name
// Spark knows it by.
func (s *sparkSession) jdbcCatalog(t *testing.T, warehouse string) *sparkCatalog {
	t.Helper()
	return s.catalog(t, map[string]string{
		"type":                "jdbc",
		"uri":                 "jdbc:sqlite:" + filepath.Join(warehouse, "catalog.db"),
		"jdbc.schema-version": "V1",
		"warehouse":           warehouse,
	})
}

// restCatalog registers a REST catalog (floe serve) in Spark.
func (s *sparkSession) restCatalog(t *testing.T, uri string, props map[string]string) *sparkCatalog {
	t.Helper()
	p := map[string]string{"type": "rest", "uri": uri}
	for k, v := range props {
		p[k] = v
	}
	return s.catalog(t, p)
}

func (s *sparkSession) catalog(t *testing.T, props map[string]string) *sparkCatalog {
	t.Helper()
	s.mu.Lock()
	s.sessions++
	id := fmt.Sprintf("s%d", s.sessions)
	s.mu.Unlock()
	// Each read sees the catalog's newest metadata: tests write between reads.
	props["cache-enabled"] = "false"
	if err := s.call(map[string]any{"op": "catalog", "session": id, "props": props}, nil); err != nil {
		t.Fatal(err)
	}
	return &sparkCatalog{s: s, id: id}
}

// sql runs a statement in Spark.
func (c *sparkCatalog) sql(t *testing.T, stmt string) {
	t.Helper()
	if err := c.s.call(map[string]any{"op": "sql", "session": c.id, "sql": stmt}, nil); err != nil {
		t.Fatalf("%s\n%v", stmt, err)
	}
}

// rows runs a query in Spark and returns its rows in floe's jsonl form.
func (c *sparkCatalog) rows(t *testing.T, query string) []map[string]any {
	t.Helper()
	var got struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := c.s.call(map[string]any{"op": "rows", "session": c.id, "sql": query}, &got); err != nil {
		t.Fatalf("%s\n%v", query, err)
	}
	return got.Rows
}

// script runs a Python file of engines/ in the session, with args.
func (c *sparkCatalog) script(t *testing.T, name string, args map[string]any, result any) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("engines", name))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Result json.RawMessage `json:"result"`
	}
	if err := c.s.call(map[string]any{"op": "script", "session": c.id, "path": path, "args": args}, &got); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if result != nil {
		if err := json.Unmarshal(got.Result, result); err != nil {
			t.Fatalf("%s result %s: %v", name, got.Result, err)
		}
	}
}

// sparkRefuses tells why Spark cannot load a table of these fields, if it
// cannot: Spark has no type for Iceberg's time, and Iceberg's Spark runtime
// refuses a table with such a column, even where a query leaves it out.
func sparkRefuses(fields []canonical.Field) string {
	for _, f := range fields {
		if hasTime(f.Type) {
			return "column " + f.Name + " holds Iceberg's time type, which Iceberg's Spark runtime refuses to load"
		}
	}
	return ""
}

func hasTime(t *canonical.Type) bool {
	switch t.Kind {
	case "time":
		return true
	case "struct":
		for _, f := range t.Fields {
			if hasTime(f.Type) {
				return true
			}
		}
	case "list":
		return hasTime(t.Elem)
	case "map":
		return hasTime(t.Key) || hasTime(t.Values)
	}
	return false
}

// selectList quotes fields for Spark SQL.
func selectList(fields []canonical.Field) string {
	var cols []string
	for _, f := range fields {
		cols = append(cols, "`"+strings.ReplaceAll(f.Name, "`", "``")+"`")
	}
	return strings.Join(cols, ", ")
}

// sparkJSONL turns Spark's rows into jsonl, which statsFromJSONL reads as
// it reads floe's scan.
func sparkJSONL(t *testing.T, rows []map[string]any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// sparkTable names a floe table (db.t) in the session's catalog.
func sparkTable(table string) string {
	var parts []string
	for _, p := range strings.Split(table, ".") {
		parts = append(parts, "`"+p+"`")
	}
	return "floe." + strings.Join(parts, ".")
}

// sparkCheck compares Spark's stats of table, read through the embedded
// warehouse's catalog, with floe's scan over the columns Spark can read.
func (e *env) sparkCheck(table string, ti tableInfo) {
	e.T.Helper()
	if e.sparkOff {
		return
	}
	if why := sparkRefuses(ti.fields); why != "" {
		e.T.Logf("Spark's check of %s left out: %s", table, why)
		return
	}
	s := optionalSpark(e.T)
	if s == nil {
		return
	}
	e.sparkCompare(e.sparkCatalog(s), sparkTable(table), table, ti)
}

// sparkCatalog is the env's warehouse catalog in Spark, registered once.
func (e *env) sparkCatalog(s *sparkSession) *sparkCatalog {
	e.T.Helper()
	if e.spark == nil {
		e.spark = s.jdbcCatalog(e.T, e.Warehouse)
	}
	return e.spark
}

// sparkRows reads table through the env's catalog in Spark and returns its
// canonical rows (the columns Spark can read), as check.mjs --rows does.
func (e *env) sparkRows(s *sparkSession, table string, fields []canonical.Field) []map[string]any {
	e.T.Helper()
	rows := e.sparkCatalog(s).rows(e.T, "SELECT "+selectList(fields)+" FROM "+sparkTable(table))
	out := make([]map[string]any, 0, len(rows))
	for i, r := range rows {
		c := map[string]any{}
		for _, f := range fields {
			v, err := canonical.Value(r[f.Name], f.Type)
			if err != nil {
				e.T.Fatalf("spark row %d of %s, column %s: %v", i, table, f.Name, err)
			}
			c[f.Name] = v
		}
		out = append(out, c)
	}
	return out
}

// sparkCompare reads sparkName in Spark and compares it with floe's scan of
// table.
func (e *env) sparkCompare(c *sparkCatalog, sparkName, table string, ti tableInfo) Stats {
	e.T.Helper()
	fields := ti.fields
	rows := c.rows(e.T, "SELECT "+selectList(fields)+" FROM "+sparkName)
	got, err := statsFromJSONL(fields, sparkJSONL(e.T, rows), nil)
	if err != nil {
		e.T.Fatalf("spark rows of %s: %v", sparkName, err)
	}
	r := e.OK("scan", table, "--output-format", "jsonl")
	want, err := statsFromJSONL(fields, []byte(r.Stdout), nil)
	if err != nil {
		e.T.Fatalf("floe scan jsonl: %v", err)
	}
	if err := compareStats(want, map[string]Stats{"spark": got}, "spark"); err != nil {
		e.T.Fatalf("%s: %v", sparkName, err)
	}
	e.T.Logf("%s: %d rows, checksum %s — Spark agrees with floe", sparkName, got.Rows, got.Checksum)
	return got
}
