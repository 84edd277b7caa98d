package s3test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// The helper's own check: a signed PUT and GET round-trip through the
// server, the object is a plain file under Root, and a request signed with
// the wrong secret is refused (so the server really checks signatures).
func TestServer(t *testing.T) {
	t.Parallel()
	s := Start(t)
	resp, err := s.Do(http.MethodPut, "/"+s.Bucket+"/a/b.txt", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT object: %s", resp.Status)
	}
	if b, err := os.ReadFile(s.ObjectPath("a/b.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("object file: %q, %v", b, err)
	}
	resp, err = s.Do(http.MethodGet, "/"+s.Bucket+"/a/b.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" {
		t.Fatalf("GET object = %q (%s)", b, resp.Status)
	}

	req, _ := http.NewRequest(http.MethodGet, s.Endpoint+"/"+s.Bucket+"/a/b.txt", nil)
	signV4(req, nil, s.AccessKey, "wrong", s.Region, time.Now().UTC())
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "SignatureDoesNotMatch") {
		t.Fatalf("wrong secret: %s %s, want 403 SignatureDoesNotMatch", resp.Status, b)
	}

	s.Stop()
	if _, err := s.Do(http.MethodGet, "/", nil); err == nil {
		t.Fatal("server still answers after Stop")
	}
}
