package serve

import (
	"path"
	"strings"
	"testing"
)

// Locations are read as iceberg-go's file IO reads them: one place however
// it is spelled, and a refusal for what could name two.
func TestParsePlace(t *testing.T) {
	same := [][]string{
		{"/wh/t", "/wh/t/", "/wh//t", "file:///wh/t", "file:/wh/t", "FILE:///wh/t/", "file://localhost/wh/t", "file:///wh/%74"},
		{"s3://b/wh/t", "s3a://b/wh/t", "s3n://b/wh/t/", "S3://b/wh/t"},
		{"/wh/a%20b", "file:///wh/a%2520b"},
	}
	for _, group := range same {
		want, err := parsePlace(group[0])
		if err != nil {
			t.Fatalf("%s: %v", group[0], err)
		}
		for _, loc := range group[1:] {
			if got, err := parsePlace(loc); err != nil || got != want {
				t.Errorf("%s reads as %v (%v), want %v as %s does", loc, got, err, want, group[0])
			}
		}
	}
	for _, loc := range []string{
		"", "wh/t", "./wh", "/wh/../etc", "/wh/./t", "file:///wh/%2E%2E/etc", "file://host/wh", "file:wh/t",
		"/wh/a\x00b", "file:///wh/a%00b", "s3://b/wh//t", "s3://b/wh/../x", "s3:/b/wh", "s3://", "s3://b/k?x=1", "file:///wh?x",
	} {
		if p, err := parsePlace(loc); err == nil {
			t.Errorf("%q reads as %v, want a refusal", loc, p)
		}
	}
	wh, _ := parsePlace("/wh")
	for loc, inside := range map[string]bool{"/wh/t": true, "/wh": false, "/wh-2/t": false, "/WH/t": false, "s3://wh/t": false, "/": false} {
		p, err := parsePlace(loc)
		if err != nil {
			t.Fatal(err)
		}
		if p.inside(wh) != inside {
			t.Errorf("%s inside /wh: %v, want %v", loc, !inside, inside)
		}
	}
}

// Whatever parsePlace accepts is a clean rooted path that spells itself.
func FuzzParsePlace(f *testing.F) {
	for _, s := range []string{"/wh/t", "file:///wh/%2e%2E", "s3://b/k", "file://localhost//a//b/", "a:b/c", "/a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		p, err := parsePlace(loc)
		if err != nil {
			return
		}
		if !strings.HasPrefix(p.path, "/") || path.Clean(p.path) != p.path || strings.Contains("/"+p.path+"/", "/../") {
			t.Fatalf("%q reads as %#v", loc, p)
		}
		if again, err := parsePlace(p.String()); p.store == "file" && (err != nil || again != p) {
			t.Fatalf("%q reads as %v, which reads back as %v (%v)", loc, p, again, err)
		}
	})
}
