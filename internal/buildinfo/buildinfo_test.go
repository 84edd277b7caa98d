package buildinfo

import (
	"runtime/debug"
	"testing"
	"time"
)

// The version given at link time wins; else the module version the
// toolchain recorded; Devel only where neither exists. The commit and its
// time come from the VCS stamp whatever the version's source, or from the
// link where go build recorded none.
func TestFrom(t *testing.T) {
	stamped := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "82ce29d0d5a4c1b2e3f405162738495a6b7c8d9e"},
		{Key: "vcs.time", Value: "2026-12-06T23:50:12Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	at := time.Date(2026, 12, 6, 23, 50, 12, 0, time.UTC)
	for _, c := range []struct {
		name     string
		linked   string
		revision string
		bi       *debug.BuildInfo
		want     Info
	}{
		{"release build", "v1.2.0", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: Devel}, Settings: stamped},
			Info{Version: "v1.2.0", Revision: "82ce29d0d5a4c1b2e3f405162738495a6b7c8d9e", Time: at, Modified: true, GoVersion: "go1.26.8"}},
		{"go install at a tag", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}},
			Info{Version: "v1.2.0", GoVersion: "go1.26.8"}},
		{"go build in a checkout", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261206235012-82ce29d0d5a4+dirty"}, Settings: stamped},
			Info{Version: "v0.0.0-20261206235012-82ce29d0d5a4+dirty", Revision: "82ce29d0d5a4c1b2e3f405162738495a6b7c8d9e", Time: at, Modified: true, GoVersion: "go1.26.8"}},
		{"no VCS stamp", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: Devel}},
			Info{Version: Devel, GoVersion: "go1.26.8"}},
		{"no module version recorded", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Settings: stamped[:2]},
			Info{Version: Devel, Revision: "82ce29d0d5a4c1b2e3f405162738495a6b7c8d9e", GoVersion: "go1.26.8"}},
		{"release build in a git worktree, which go build does not stamp", "v1.2.0-3-g82ce29d-dirty", "82ce29d0d5a4c1b2e3f405162738495a6b7c8d9e",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: Devel}},
			Info{Version: "v1.2.0-3-g82ce29d-dirty", Revision: "82ce29d0d5a4c1b2e3f405162738495a6b7c8d9e", GoVersion: "go1.26.8"}},
	} {
		if got := from(c.linked, c.revision, c.bi); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	if got := from("", "", nil); got.Version != Devel || got.GoVersion == "" {
		t.Errorf("no build information: got %+v, want version %s and Go's", got, Devel)
	}
}
