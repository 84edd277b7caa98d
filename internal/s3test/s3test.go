// Package s3test runs a real S3 server for tests: versitygw (the Versity S3
// Gateway) over a temporary posix directory, bound to 127.0.0.1 or to an
// address of the machine a test names.
//
// versitygw is used rather than an in-process fake because it checks
// request signatures and supports conditional writes and range reads, so a
// test that passes against it exercises the same client code paths as a run
// against AWS S3. Objects are plain files under [Server.Root], which lets a
// test assert what really reached storage.
//
// versitygw is an external binary, not a module dependency of floe. Start
// skips the test when it is not installed, unless FLOE_S3_INSTALL=1 asks it
// to install the pinned version with `go install` (see [InstallCommand]).
package s3test

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// Version is the versitygw release the tests are written against.
const Version = "v1.8.0"

// Package is versitygw's main package, for `go install`.
const Package = "github.com/versity/versitygw/cmd/versitygw"

// InstallCommand is the command that installs the pinned versitygw.
const InstallCommand = "go install " + Package + "@" + Version

// InstallEnv, set to 1, lets Start install versitygw when it is missing
// instead of skipping the test. It is opt-in because the install downloads
// and builds a large module (about two minutes).
const InstallEnv = "FLOE_S3_INSTALL"

// Region is the region the server is started with; S3 clients must sign
// for it or the server rejects their requests.
const Region = "us-east-1"

// Server is a running versitygw with one bucket.
type Server struct {
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:41234.
	Endpoint string
	// Addr is the host:port the server listens on.
	Addr string
	// AccessKey and SecretKey are the root credentials, random per server
	// so that a test can search output for the secret without false hits.
	AccessKey, SecretKey string
	// Region is the signing region (always [Region]).
	Region string
	// Bucket is a bucket created at start.
	Bucket string
	// Root is the posix directory the server stores buckets in: bucket B's
	// object K is the plain file Root/B/K.
	Root string

	cmd    *exec.Cmd
	log    *fixture.SyncBuffer
	exited chan struct{}
	once   sync.Once
}

// Start starts versitygw on a free 127.0.0.1 port with random root
// credentials and a temporary root directory, waits until it answers, and
// creates a bucket. The server is stopped when the test ends. Start skips
// the test when versitygw is not installed (see [InstallEnv]).
func Start(t testing.TB) *Server {
	t.Helper()
	return StartOn(t, "127.0.0.1")
}

// StartOn is Start on host, an address of this machine other than
// 127.0.0.1 (a fixture.NetLab's), so that processes in other network
// namespaces reach the server, and only through the network.
func StartOn(t testing.TB, host string) *Server {
	t.Helper()
	bin := findBinary(t)
	root := t.TempDir()
	var lastErr error
	// The free port is found by binding and releasing it, so another process
	// can take it before versitygw binds it; a few attempts cover that race.
	for attempt := 0; attempt < 3; attempt++ {
		s, err := start(bin, root, host)
		if err == nil {
			t.Cleanup(s.Stop)
			if err := s.CreateBucket("floe-test"); err != nil {
				t.Fatalf("s3test: create bucket: %v\nversitygw output:\n%s", err, s.log.String())
			}
			s.Bucket = "floe-test"
			return s
		}
		lastErr = err
	}
	t.Fatalf("s3test: start versitygw: %v", lastErr)
	return nil
}

// start launches one server on host and waits until it answers HTTP.
func start(bin, root, host string) (*Server, error) {
	port, err := freePort(host)
	if err != nil {
		return nil, err
	}
	s := &Server{
		Addr:      net.JoinHostPort(host, port),
		AccessKey: "FLOETEST" + strings.ToUpper(randomHex(6)),
		SecretKey: "floe-secret-" + randomHex(14),
		Region:    Region,
		Root:      root,
		log:       &fixture.SyncBuffer{},
		exited:    make(chan struct{}),
	}
	s.Endpoint = "http://" + s.Addr
	// The address is always given with its host: versitygw's default
	// listens on every interface, which a test must never do.
	s.cmd = exec.Command(bin, "--port", s.Addr, "--region", s.Region, "--quiet", "posix", root)
	// Credentials go through the environment rather than flags so that they
	// do not show in the process list.
	s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", bin, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()

	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("versitygw exited at start: %s", s.log.String())
		default:
		}
		// Any HTTP answer (an unsigned request gets 403) means it serves.
		if resp, err := client.Get(s.Endpoint + "/"); err == nil {
			resp.Body.Close()
			return s, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("versitygw did not answer on %s within 30s: %s", s.Addr, s.log.String())
}

// Stop kills the server and waits for it to exit. It is safe to call more
// than once; tests call it early to make the endpoint unreachable.
func (s *Server) Stop() {
	s.once.Do(func() {
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
		}
		<-s.exited
	})
}

// Output returns what the server printed, for diagnosing failures.
func (s *Server) Output() string { return s.log.String() }

// ObjectPath returns the file that holds key in the server's bucket.
func (s *Server) ObjectPath(key string) string {
	return filepath.Join(s.Root, s.Bucket, filepath.FromSlash(key))
}

// URL returns the s3:// URL of key in the server's bucket.
func (s *Server) URL(key string) string {
	return "s3://" + s.Bucket + "/" + strings.TrimPrefix(key, "/")
}

// CreateBucket creates a bucket with a signed PUT request.
func (s *Server) CreateBucket(name string) error { return s.put("/"+name, nil) }

// Do sends a path-style request signed with the root credentials (AWS
// Signature Version 4). It is hand-written on the standard library so that
// floe's module does not need an S3 client as a direct dependency.
// path must be already escaped and carry no query.
func (s *Server) Do(method, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(method, s.Endpoint+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	signV4(req, body, s.AccessKey, s.SecretKey, s.Region, time.Now().UTC())
	return (&http.Client{Timeout: 30 * time.Second}).Do(req)
}

// signV4 adds a SigV4 Authorization header for service s3. Only host,
// x-amz-content-sha256 and x-amz-date are signed, which S3 accepts.
func signV4(req *http.Request, body []byte, accessKey, secretKey, region string, now time.Time) {
	amzDate := now.Format("20060102T150405Z")
	day := now.Format("20060102")
	payloadHash := hexSHA256(body)
	req.Header.Set("X-Amz-Date", amzDate)
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	const signed = "host;x-amz-content-sha256;x-amz-date"
	path := req.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	canonical := strings.Join([]string{
		req.Method,
		path,
		req.URL.RawQuery,
		"host:" + req.URL.Host,
		"x-amz-content-sha256:" + payloadHash,
		"x-amz-date:" + amzDate,
		"",
		signed,
		payloadHash,
	}, "\n")
	scope := day + "/" + region + "/s3/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hexSHA256([]byte(canonical))
	key := []byte("AWS4" + secretKey)
	for _, part := range []string{day, region, "s3", "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	sig := hex.EncodeToString(hmacSHA256(key, toSign))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+accessKey+"/"+scope+", SignedHeaders="+signed+", Signature="+sig)
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

func freePort(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

// findBinary looks for versitygw on PATH, then in GOBIN and GOPATH/bin
// (where `go install` puts it, often not on PATH); it installs it when
// InstallEnv asks for that, and skips the test otherwise.
func findBinary(t testing.TB) string {
	t.Helper()
	if bin := lookBinary(); bin != "" {
		return bin
	}
	if os.Getenv(InstallEnv) != "1" {
		t.Skipf("s3test: versitygw not found on PATH or in $(go env GOPATH)/bin; install it with `%s`, or set %s=1 to let the test install it", InstallCommand, InstallEnv)
	}
	t.Logf("s3test: installing versitygw: %s", InstallCommand)
	cmd := exec.Command("go", "install", Package+"@"+Version)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("s3test: %s: %v\n%s", InstallCommand, err, out)
	}
	if bin := lookBinary(); bin != "" {
		return bin
	}
	t.Fatalf("s3test: %s succeeded but versitygw is not in GOBIN or GOPATH/bin", InstallCommand)
	return ""
}

func lookBinary() string {
	if bin, err := exec.LookPath("versitygw"); err == nil {
		return bin
	}
	var dirs []string
	if out, err := exec.Command("go", "env", "GOBIN").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); d != "" {
			dirs = append(dirs, d)
		}
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, d := range filepath.SplitList(strings.TrimSpace(string(out))) {
			dirs = append(dirs, filepath.Join(d, "bin"))
		}
	}
	for _, d := range dirs {
		bin := filepath.Join(d, "versitygw")
		if st, err := os.Stat(bin); err == nil && !st.IsDir() {
			return bin
		}
	}
	return ""
}

// Properties are the catalog properties that reach the server with its
// root credentials, as a floe command's -p flags would give them.
func (s *Server) Properties() map[string]string {
	return map[string]string{"s3.endpoint": s.Endpoint, "s3.region": s.Region,
		"s3.access-key-id": s.AccessKey, "s3.secret-access-key": s.SecretKey}
}

// Put uploads an object to the server's bucket, as a producer would.
func (s *Server) Put(key string, body []byte) error { return s.PutIn(s.Bucket, key, body) }

// PutIn uploads an object to another bucket of the server.
func (s *Server) PutIn(bucket, key string, body []byte) error {
	return s.put("/"+bucket+"/"+escapeKey(key), body)
}

// put sends a signed PUT of body to path and fails unless it succeeds.
func (s *Server) put(path string, body []byte) error {
	resp, err := s.Do(http.MethodPut, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s: %s: %s", path, resp.Status, msg)
	}
	return nil
}

// escapeKey percent-encodes a key as SigV4's canonical URI does: every
// byte but the unreserved ones and "/".
func escapeKey(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
