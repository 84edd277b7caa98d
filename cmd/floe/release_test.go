package main_test

import (
	"bufio"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var releaseBuild = flag.Bool("release-build", false, "TestReleaseBuild runs scripts/release.sh for this machine's platform (minutes on a cold cache: every package again, trimmed and with cgo off; seconds on a warm one)")

// releaseScript runs scripts/release.sh from the repository root with the
// environment variables vars.
func releaseScript(t *testing.T, vars ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join("scripts", "release.sh"))
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), vars...)
	out, err := cmd.CombinedOutput()
	return string(out), exitCode(err)
}

// make release runs the script, and the script refuses a version or a
// platform it cannot name a binary by with exit 2, naming it, before it
// builds anything.
func TestReleaseTargetAndBadInput(t *testing.T) {
	t.Parallel()
	target := exec.Command("make", "-n", "release")
	target.Dir = filepath.Join("..", "..")
	if out, err := target.CombinedOutput(); err != nil || !strings.Contains(string(out), "scripts/release.sh") {
		t.Fatalf("make -n release: %v\n%s", err, out)
	}
	dist := t.TempDir()
	for _, c := range []struct {
		vars []string
		want string
	}{
		{[]string{"VERSION=v1.2.0 beta"}, "VERSION=v1.2.0 beta is not a version"},
		{[]string{"VERSION=../v1"}, "VERSION=../v1 is not a version"},
		{[]string{"PLATFORMS=linux/amd64 linux"}, "platform linux is not GOOS/GOARCH"},
	} {
		out, code := releaseScript(t, append(c.vars, "DIST="+dist)...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", c.vars, code, c.want, out)
		}
	}
	if left, _ := os.ReadDir(dist); len(left) != 0 {
		t.Errorf("a refused release left %d files in its dist directory", len(left))
	}
}

// With -release-build: the script builds this platform's binary, named by
// the version git describe gives, static (no dynamic loader, no shared
// library), stripped of symbols and DWARF, reporting that version and the
// commit; SHA256SUMS names it with its digest.
func TestReleaseBuild(t *testing.T) {
	if !*releaseBuild {
		t.Skip("builds every package again, trimmed and with cgo off; run with -release-build")
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = filepath.Join("..", "..")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	version, revision := git("describe", "--tags", "--always", "--dirty"), git("rev-parse", "HEAD")
	dist := t.TempDir()
	if out, code := releaseScript(t, "DIST="+dist, "PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH); code != 0 {
		t.Fatalf("scripts/release.sh exited %d:\n%s", code, out)
	}
	name := "floe-" + version + "-" + runtime.GOOS + "-" + runtime.GOARCH
	bin := filepath.Join(dist, name)

	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("the binary has a %v program header: it is not static", p.Type)
			}
		}
		for _, s := range f.Sections {
			if s.Name == ".symtab" || strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
				t.Errorf("the binary has section %s: it is not stripped", s.Name)
			}
		}
	}

	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version --json: %v", name, err)
	}
	var v struct{ Version, Revision string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if v.Version != version || v.Revision != revision {
		t.Errorf("%s reports version %q, revision %q; git says %q, %q", name, v.Version, v.Revision, version, revision)
	}

	sums, err := os.Open(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer sums.Close()
	var lines []string
	for sc := bufio.NewScanner(sums); sc.Scan(); {
		lines = append(lines, sc.Text())
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256(b)
	if want := hex.EncodeToString(digest[:]) + "  " + name; len(lines) != 1 || lines[0] != want {
		t.Errorf("SHA256SUMS holds %q, want the one line %q", lines, want)
	}
}
