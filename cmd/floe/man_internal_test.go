package main

import (
	"testing"
	"time"

	"github.com/floe-io/floe/internal/buildinfo"
)

// The man page is dated by the commit the build was made from, else by
// its version, never by the day it is printed.
func TestManDate(t *testing.T) {
	at := time.Date(2026, 12, 6, 23, 50, 12, 0, time.FixedZone("CET", 3600))
	if got := manDate(buildinfo.Info{Version: "v1.2.0", Time: at}); got != "2026-12-06" {
		t.Errorf("a build of a commit at %v: man page dated %q, want 2026-12-06", at, got)
	}
	for _, v := range []string{"v1.2.0", "v0.0.0-20261206235012-82ce29d0d5a4", buildinfo.Devel} {
		if got := manDate(buildinfo.Info{Version: v}); got != v {
			t.Errorf("a build of version %s with no commit time: man page dated %q", v, got)
		}
	}
}
