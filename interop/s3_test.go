package interop_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/s3test"

	"github.com/floe-io/floe/internal/canonical"
)

// checkerRun is one run of check.mjs: what it printed and, when it exited
// 0, each reader's stats.
type checkerRun struct {
	fixture.Result
	stats map[string]Stats
}

// runCheckerEnv runs check.mjs with args and the given environment (nil:
// the test's own). Unlike runChecker it returns the output even on success,
// so that tests can inspect stderr (CHECK_S3_LOG) and search it for secrets.
func runCheckerEnv(t *testing.T, env []string, args ...string) checkerRun {
	t.Helper()
	cmd := exec.Command("node", append([]string{"check.mjs"}, args...)...)
	cmd.Env = env
	o, err := fixture.Run(cmd)
	if err != nil {
		t.Fatalf("run node check.mjs %v: %v", args, err)
	}
	r := checkerRun{Result: o}
	if o.Code != 0 {
		return r
	}
	if err := json.Unmarshal([]byte(o.Stdout), &r.stats); err != nil {
		t.Fatalf("check.mjs printed %q: %v", o.Stdout, err)
	}
	return r
}

// s3World is an interop env whose warehouse is a bucket on a versitygw
// server, with floe's embedded SQLite catalog on local disk (as in
// cmd/floe/s3_test.go).
type s3World struct {
	*env
	srv       *s3test.Server
	warehouse string // s3://bucket/wh
	catalogDB string
}

// awsEnv is the test's environment with every AWS setting of the machine
// removed, the shared config files and EC2 metadata off, and the server's
// credentials signing with secret added: only what the test passes reaches
// floe's SDK or the checker.
func (s *s3World) awsEnv(secret string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "FLOE_WAREHOUSE=") || strings.HasPrefix(kv, "CHECK_") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull,
		"AWS_ACCESS_KEY_ID="+s.srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+secret, "AWS_REGION="+s.srv.Region)
}

// floe runs floe against the S3 warehouse and fails the test unless it
// exits 0. The secret comes through the environment, never argv.
func (s *s3World) floe(args ...string) fixture.Result {
	s.T.Helper()
	full := append(append([]string{}, args...), "--warehouse", s.warehouse, "--catalog-uri", s.catalogDB,
		"-p", "s3.endpoint="+s.srv.Endpoint, "-p", "s3.region="+s.srv.Region)
	cmd := exec.Command(floeBin, full...)
	cmd.Dir = s.Dir
	cmd.Env = s.awsEnv(s.srv.SecretKey)
	r, err := fixture.Run(cmd)
	if err != nil {
		s.T.Fatalf("run floe %v: %v", args, err)
	}
	if r.Code != 0 {
		s.T.Fatalf("floe %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// noSecret fails the test, saying where, if text holds secret.
func noSecret(t *testing.T, where, text, secret string) {
	t.Helper()
	if i := strings.Index(text, secret); i >= 0 {
		from, to := max(0, i-120), min(len(text), i+len(secret)+40)
		t.Errorf("the S3 secret key leaks in %s: …%s…", where, strings.ReplaceAll(text[from:to], secret, "<SECRET>"))
	}
}

// The article scenario on an S3 warehouse, read back by the checker over
// S3: floe streams three Parquet files of 1,000 rows into a table whose
// warehouse is a versitygw bucket; check.mjs, given only the s3:// metadata
// location and --s3-endpoint, reads it with icebird (signed ranged GETs
// through its fetch shim) and DuckDB (signed GETs of the data files), and
// both must agree with floe's own scan of the S3 warehouse. No local path
// of the bucket is handed to the checker, so everything it reads went over
// HTTP with a SigV4 signature that versitygw checked.
func TestS3CheckerReadsWarehouse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := s3test.Start(t)
	s := &s3World{env: e, srv: srv, warehouse: srv.URL("wh"), catalogDB: filepath.Join(e.Dir, "catalog.db")}
	for i := int64(0); i < 3; i++ {
		if err := fixture.WriteIDFile(filepath.Join(e.Landing, fmt.Sprintf("part-%d.parquet", i)), i*1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	var floeOut strings.Builder
	record := func(r fixture.Result) fixture.Result { floeOut.WriteString(r.Stdout + r.Stderr); return r }
	record(s.floe(e.StreamArgs("db.t")...))

	var ti tableInfo
	r := record(s.floe("table", "describe", "db.t", "--json"))
	if err := json.Unmarshal([]byte(r.Stdout), &ti); err != nil {
		t.Fatalf("table describe --json: %v\n%s", err, r.Stdout)
	}
	if prefix := s.warehouse + "/"; !strings.HasPrefix(ti.MetadataLocation, prefix) {
		t.Fatalf("metadata location %q is not under %s", ti.MetadataLocation, prefix)
	}
	st, err := canonical.ParseType(ti.Schema)
	if err != nil {
		t.Fatalf("table schema: %v", err)
	}
	r = record(s.floe("scan", "db.t", "--output-format", "jsonl"))
	want, err := statsFromJSONL(st.Fields, []byte(r.Stdout), nil)
	if err != nil {
		t.Fatalf("floe scan jsonl: %v", err)
	}
	if want.Rows != 3000 || want.Sums["id"] != "4498500" || want.NonNull["id"] != 3000 {
		t.Fatalf("floe's own scan: %+v; want 3000 rows with ids 0..2999", want)
	}
	var files []struct {
		Path string `json:"file_path"`
	}
	r = record(s.floe("table", "files", "db.t", "--json"))
	if err := json.Unmarshal([]byte(r.Stdout), &files); err != nil || len(files) == 0 {
		t.Fatalf("table files --json: %v\n%s", err, r.Stdout)
	}

	env := append(s.awsEnv(srv.SecretKey), "CHECK_S3_LOG=1")
	c := runCheckerEnv(t, env, ti.MetadataLocation, "--s3-endpoint", srv.Endpoint)
	noSecret(t, "the checker's output", c.Stdout+c.Stderr, srv.SecretKey)
	if c.Code != 0 {
		t.Fatalf("check.mjs over S3: %s", c.Result)
	}
	if err := compareStats(want, c.stats); err != nil {
		t.Fatalf("%v\n(rerun with CHECK_DUMP=1 to print every reader's canonical rows)", err)
	}
	// The S3 request log shows that both readers fetched every data file
	// from the endpoint: icebird (hyparquet) by range, which the server must
	// answer with 206 (a 200 would mean the Range header was lost), and the
	// DuckDB path whole.
	log := c.Stderr
	for _, f := range files {
		key := strings.TrimPrefix(f.Path, "s3://")
		if !regexp.MustCompile(`(?m)^s3: GET ` + regexp.QuoteMeta(key) + ` bytes=\d+-\d* -> 206$`).MatchString(log) {
			t.Errorf("no ranged S3 GET answered 206 for data file %s (icebird); checker log:\n%s", f.Path, log)
		}
		if !strings.Contains(log, "s3: GET "+key+" -> 200\n") {
			t.Errorf("no whole-object S3 GET of data file %s (DuckDB path); checker log:\n%s", f.Path, log)
		}
	}
	t.Logf("over S3: %d rows, checksum %s — floe, icebird and DuckDB agree (%d S3 requests)", want.Rows, want.Checksum, strings.Count(log, "s3: "))

	// A wrong secret: versitygw refuses the signature and the checker fails
	// naming why, without printing either secret.
	wrong := "wrong-" + srv.SecretKey[len(srv.SecretKey)/2:]
	c = runCheckerEnv(t, s.awsEnv(wrong), ti.MetadataLocation, "--s3-endpoint", srv.Endpoint)
	if c.Code == 0 || !strings.Contains(c.Stderr, "SignatureDoesNotMatch") {
		t.Errorf("checker with a wrong secret: want a failure naming SignatureDoesNotMatch, got %s", c.Result)
	}
	noSecret(t, "the checker's output with a wrong secret", c.Stdout+c.Stderr, wrong)
	noSecret(t, "the checker's output with a wrong secret", c.Stdout+c.Stderr, srv.SecretKey)

	// Without --s3-endpoint the checker has nowhere to send s3:// requests
	// (icebird would go to AWS) and says how to fix that.
	c = runCheckerEnv(t, s.awsEnv(srv.SecretKey), ti.MetadataLocation)
	if c.Code == 0 || !strings.Contains(c.Stderr, "--s3-endpoint") {
		t.Errorf("checker without --s3-endpoint: want a failure naming --s3-endpoint, got %s", c.Result)
	}
	noSecret(t, "floe's output", floeOut.String(), srv.SecretKey)
}
