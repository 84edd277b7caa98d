package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/fixture"

	"github.com/floe-io/floe/internal/s3test"
)

// credMode says how a floe command gets its S3 credentials.
type credMode int

const (
	// credsEnv passes them as the standard AWS variables, the way a
	// deployment usually does.
	credsEnv credMode = iota
	// credsProps passes them as iceberg-go catalog properties (-p), with no
	// AWS variable set, to show the properties alone suffice.
	credsProps
)

// s3env is an e2e env whose warehouse is a bucket on a versitygw server,
// with the embedded SQLite catalog on local disk. It records the output of
// every command it runs so the test can check none of it holds the secret.
type s3env struct {
	*env
	srv       *s3test.Server
	warehouse string // s3://bucket/wh
	catalogDB string
	outputs   []capture
	// endpoint, when set, is the S3 endpoint floe is given instead of the
	// server's own (a proxy in front of it).
	endpoint string
}

// capture is one command's output, named for leak reports.
type capture struct{ what, text string }

func newS3Env(t *testing.T) *s3env {
	t.Helper()
	srv := s3test.Start(t)
	e := newEnv(t)
	return &s3env{env: e, srv: srv, warehouse: srv.URL("wh"), catalogDB: filepath.Join(e.Dir, "catalog.db")}
}

// catalogArgs are the flags that point floe at the S3 warehouse. The
// endpoint is the only S3 property every command needs: iceberg-go switches
// to path-style addressing by itself when s3.endpoint is set, and versitygw
// serves buckets only by path unless started with --virtual-domain.
func (s *s3env) catalogArgs(mode credMode, secret string) []string {
	endpoint := s.srv.Endpoint
	if s.endpoint != "" {
		endpoint = s.endpoint
	}
	args := []string{"--warehouse", s.warehouse, "--catalog-uri", s.catalogDB, "-p", "s3.endpoint=" + endpoint}
	if mode == credsProps {
		args = append(args, "-p", "s3.region="+s.srv.Region,
			"-p", "s3.access-key-id="+s.srv.AccessKey, "-p", "s3.secret-access-key="+secret)
	}
	return args
}

// floeS3 runs floe with the S3 catalog flags appended and credentials given
// as mode says, signing with secret.
func (s *s3env) floeS3(mode credMode, secret string, args ...string) fixture.Result {
	s.T.Helper()
	env := hermeticAWSEnv()
	if mode == credsEnv {
		env = append(env, "AWS_ACCESS_KEY_ID="+s.srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+secret, "AWS_REGION="+s.srv.Region)
	}
	full := append(append([]string{}, args...), s.catalogArgs(mode, secret)...)
	cmd := exec.Command(floeBin, full...)
	cmd.Dir = s.Dir
	cmd.Env = env
	o, err := fixture.Run(cmd)
	if err != nil {
		s.T.Fatalf("run floe %v: %v", args, err)
	}
	r := o
	// The name goes into failure messages, so it must not carry the secret
	// itself.
	what := strings.NewReplacer(s.srv.SecretKey, "<SECRET>", secret, "<SECRET>").Replace("floe " + strings.Join(args, " "))
	s.outputs = append(s.outputs, capture{what + " (stdout)", r.Stdout}, capture{what + " (stderr)", r.Stderr})
	return r
}

// ok is floeS3 with the right secret, failing the test unless floe exits 0.
func (s *s3env) ok(mode credMode, args ...string) fixture.Result {
	s.T.Helper()
	r := s.floeS3(mode, s.srv.SecretKey, args...)
	if r.Code != 0 {
		s.T.Fatalf("floe %s: %s", strings.Join(args, " "), r)
	}
	return r
}

func (s *s3env) stream(mode credMode, extra ...string) fixture.Result {
	s.T.Helper()
	args := []string{"stream", "--source", s.Landing, "--format", "parquet", "--table", "db.stream",
		"--checkpoint", s.Ckpt, "--trigger", "available-now", "--progress=json"}
	return s.ok(mode, append(args, extra...)...)
}

func (s *s3env) count(mode credMode) int64 {
	s.T.Helper()
	r := s.ok(mode, "scan", "db.stream", "--count")
	n, err := strconv.ParseInt(strings.TrimSpace(r.Stdout), 10, 64)
	if err != nil {
		s.T.Fatalf("scan --count printed %q", r.Stdout)
	}
	return n
}

func (s *s3env) snapshots(mode credMode) []fixture.Snapshot {
	s.T.Helper()
	r := s.ok(mode, "table", "snapshots", "db.stream", "--json")
	var out []fixture.Snapshot
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		s.T.Fatalf("snapshots --json: %v\n%s", err, r.Stdout)
	}
	return out
}

// hermeticAWSEnv is the test's environment without any AWS setting of the
// machine it runs on (credentials, profile, region, endpoint), and with the
// shared config files and the EC2 metadata service switched off, so that
// only what the test passes reaches the SDK.
func hermeticAWSEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "FLOE_WAREHOUSE=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull)
}

// checkProgressJSON asserts --progress=json wrote want JSON lines (one
// per batch) on stderr.
func checkProgressJSON(t *testing.T, r fixture.Result, want int) {
	t.Helper()
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("--progress=json line %q: %v", line, err)
		}
		n++
	}
	if n != want {
		t.Fatalf("--progress=json wrote %d JSON progress lines, want %d:\n%s", n, want, r)
	}
}

// The article scenario with the warehouse on S3 (versitygw): three files
// make one snapshot, a re-run adds nothing, a fourth file makes a second;
// the inspection commands read the S3 warehouse; the data files are really
// in the bucket. Credentials come from the AWS variables for some commands
// and from -p properties for others. Finally, a wrong secret and a stopped
// endpoint fail with a clear error, and the secret shows nowhere: in no
// output, checkpoint file, catalog database or object.
func TestS3ArticleScenario(t *testing.T) {
	t.Parallel()
	s := newS3Env(t)
	for i := int64(0); i < 3; i++ {
		s.WriteIDs("part-"+string(rune('0'+i))+".parquet", i*1000, 1000)
	}

	checkProgressJSON(t, s.stream(credsEnv), 1)
	if n := s.count(credsProps); n != 3000 {
		t.Fatalf("rows after first run = %d, want 3000", n)
	}
	snaps := s.snapshots(credsEnv)
	if len(snaps) != 1 || snaps[0].Operation != "append" || snaps[0].Summary["floe.batch-id"] != "0" {
		t.Fatalf("snapshots = %+v, want one append of batch 0", snaps)
	}

	// --verbose, so that debug logging is covered by the leak check too.
	checkProgressJSON(t, s.stream(credsProps, "--verbose"), 0)
	if n, sn := s.count(credsEnv), len(s.snapshots(credsProps)); n != 3000 || sn != 1 {
		t.Fatalf("after re-run: %d rows, %d snapshots; want 3000 and 1", n, sn)
	}

	s.WriteIDs("part-3.parquet", 3000, 1000)
	checkProgressJSON(t, s.stream(credsEnv), 1)
	if n, sn := s.count(credsProps), len(s.snapshots(credsEnv)); n != 4000 || sn != 2 {
		t.Fatalf("after a fourth file: %d rows, %d snapshots; want 4000 and 2", n, sn)
	}
	r := s.ok(credsProps, "scan", "db.stream", "--output-format", "csv")
	if lines := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(lines) != 4001 {
		t.Fatalf("scan csv: %d lines, want a header and 4000 rows", len(lines))
	}

	// Data files: recorded as s3:// URLs in the warehouse, and present,
	// with the recorded size, as plain files in versitygw's root.
	r = s.ok(credsEnv, "table", "files", "db.stream", "--json")
	var files []struct {
		Path        string `json:"file_path"`
		RecordCount int64  `json:"record_count"`
		SizeBytes   int64  `json:"file_size_in_bytes"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &files); err != nil {
		t.Fatalf("table files --json: %v\n%s", err, r.Stdout)
	}
	var rows int64
	prefix := s.warehouse + "/"
	for _, f := range files {
		if !strings.HasPrefix(f.Path, prefix) {
			t.Fatalf("data file %s is not under %s", f.Path, prefix)
		}
		st, err := os.Stat(s.srv.ObjectPath(strings.TrimPrefix(f.Path, "s3://"+s.srv.Bucket+"/")))
		if err != nil {
			t.Fatalf("data file %s is not in the bucket: %v", f.Path, err)
		}
		if st.Size() != f.SizeBytes {
			t.Fatalf("data file %s: %d bytes in the bucket, %d recorded", f.Path, st.Size(), f.SizeBytes)
		}
		rows += f.RecordCount
	}
	if len(files) == 0 || rows != 4000 {
		t.Fatalf("data files %+v hold %d rows, want 4000", files, rows)
	}
	r = s.ok(credsProps, "table", "describe", "db.stream", "--json")
	var desc struct {
		Location         string `json:"location"`
		MetadataLocation string `json:"metadata_location"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &desc); err != nil {
		t.Fatalf("table describe --json: %v\n%s", err, r.Stdout)
	}
	if !strings.HasPrefix(desc.Location, prefix) || !strings.HasPrefix(desc.MetadataLocation, prefix) {
		t.Fatalf("table location %q, metadata %q: want both under %s", desc.Location, desc.MetadataLocation, prefix)
	}
	if _, err := os.Stat(s.srv.ObjectPath(strings.TrimPrefix(desc.MetadataLocation, "s3://"+s.srv.Bucket+"/"))); err != nil {
		t.Fatalf("current metadata file is not in the bucket: %v", err)
	}

	// A wrong secret: the server refuses the signature, and floe says so.
	wrong := "wrong-" + s.srv.SecretKey[len(s.srv.SecretKey)/2:]
	for _, mode := range []credMode{credsEnv, credsProps} {
		r = s.floeS3(mode, wrong, "scan", "db.stream", "--count")
		if r.Code == 0 || !strings.Contains(r.Stderr, "SignatureDoesNotMatch") {
			t.Errorf("scan with a wrong secret (mode %d): want a failure naming SignatureDoesNotMatch, got %s", mode, r)
		}
		checkNoSecret(t, "wrong secret run", r.Stdout+r.Stderr, wrong)
		t.Logf("scan with a wrong secret (mode %d) says: %s", mode, strings.TrimSpace(r.Stderr))
	}
	s.WriteIDs("part-4.parquet", 4000, 1000)
	r = s.floeS3(credsEnv, wrong, "stream", "--source", s.Landing, "--format", "parquet", "--table", "db.stream",
		"--checkpoint", s.Ckpt, "--trigger", "available-now", "--progress=json")
	if r.Code == 0 || !strings.Contains(r.Stderr, "SignatureDoesNotMatch") {
		t.Errorf("stream with a wrong secret: want a failure naming SignatureDoesNotMatch, got %s", r)
	}
	checkNoSecret(t, "wrong secret stream", r.Stdout+r.Stderr, wrong)
	t.Logf("stream with a wrong secret says: %s", strings.TrimSpace(r.Stderr))
	// The failed run planned batch 2 but could not commit it; with the
	// right secret the next run commits it once.
	checkProgressJSON(t, s.stream(credsProps), 1)
	if n, sn := s.count(credsEnv), len(s.snapshots(credsProps)); n != 5000 || sn != 3 {
		t.Fatalf("after the failed run and a retry: %d rows, %d snapshots; want 5000 and 3", n, sn)
	}

	// Half a key pair: iceberg-go names the missing property.
	r = s.floeS3(credsEnv, s.srv.SecretKey, "scan", "db.stream", "--count", "-p", "s3.secret-access-key="+s.srv.SecretKey)
	if r.Code == 0 || !strings.Contains(r.Stderr, "s3.access-key-id") {
		t.Errorf("scan with s3.secret-access-key alone: want a failure naming s3.access-key-id, got %s", r)
	}

	// A stopped endpoint: floe fails naming the address it could not reach.
	s.srv.Stop()
	r = s.floeS3(credsProps, s.srv.SecretKey, "scan", "db.stream", "--count", "-p", "s3.connect-timeout=2s")
	if r.Code == 0 || !strings.Contains(r.Stderr, s.srv.Addr) || !strings.Contains(r.Stderr, "connection refused") {
		t.Errorf("scan against a stopped endpoint: want a failure naming %s and connection refused, got %s", s.srv.Addr, r)
	}
	t.Logf("scan against a stopped endpoint says: %s", strings.TrimSpace(r.Stderr))

	// Secret hygiene: every command's output, every local file floe wrote
	// (checkpoint, catalog database with its WAL) and every object.
	for _, c := range s.outputs {
		checkNoSecret(t, c.what, c.text, s.srv.SecretKey)
	}
	for _, dir := range []string{s.Dir, s.srv.Root} {
		for rel, content := range fixture.Tree(t, dir) {
			checkNoSecret(t, filepath.Join(dir, rel), content, s.srv.SecretKey)
		}
	}
	if _, err := os.Stat(s.catalogDB); err != nil {
		t.Fatalf("catalog database %s: %v", s.catalogDB, err)
	}
}

// checkNoSecret fails the test, saying where, if text holds secret.
func checkNoSecret(t *testing.T, where, text, secret string) {
	t.Helper()
	i := strings.Index(text, secret)
	if i < 0 {
		return
	}
	from, to := max(0, i-120), min(len(text), i+len(secret)+40)
	t.Errorf("the S3 secret key leaks in %s: …%s…", where, strings.ReplaceAll(text[from:to], secret, "<SECRET>"))
}

// The S3 warehouse with the SQLite catalog needs a local catalog database,
// and floe says so instead of failing somewhere inside iceberg-go.
func TestS3WarehouseNeedsCatalogURI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.Run("table", "list", "--warehouse", "s3://bucket/wh")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--catalog-uri") {
		t.Fatalf("want exit 2 naming --catalog-uri, got %s", r)
	}
}
