package main_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// floe version prints what the toolchain recorded in the binary, as `go
// version -m` reads it: the module's version (a pseudo-version where go
// build stamped the commit, (devel) where it recorded none), the commit,
// and iceberg-go's version; the text and --json agree.
func TestVersionIsTheBuilds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out, err := exec.Command("go", "version", "-m", floeBin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	var mod, revision, iceberg string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Split(strings.TrimSpace(l), "\t")
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/floe-io/floe":
			mod = f[2]
		case len(f) >= 3 && f[0] == "dep" && f[1] == "github.com/apache/iceberg-go":
			iceberg = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			revision = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	if mod == "" || iceberg == "" {
		t.Fatalf("go version -m names no module or iceberg-go version:\n%s", out)
	}
	var v struct {
		Version, Revision, IcebergGo, Go string
	}
	if err := json.Unmarshal([]byte(e.OK("version", "--json").Stdout), &v); err != nil {
		t.Fatal(err)
	}
	if v.Version != mod || v.Revision != revision || v.IcebergGo != iceberg || !strings.HasPrefix(v.Go, "go1.") {
		t.Fatalf("floe version --json: %+v; the binary records version %s, revision %q, iceberg-go %s", v, mod, revision, iceberg)
	}
	text := e.OK("version").Stdout
	if !strings.HasPrefix(text, "floe "+mod+" (") || !strings.Contains(text, "iceberg-go "+iceberg) || !strings.Contains(text, revision) {
		t.Fatalf("floe version: %q; the binary records version %s, revision %q, iceberg-go %s", text, mod, revision, iceberg)
	}
}
