// Package buildinfo says which build of floe runs: the version a release
// build was given, else what the Go toolchain recorded in the binary (the
// module's version, and the commit it was built from where go build
// stamped it). `floe version` prints it and every metrics endpoint serves
// it as floe_build_info.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// version and revision are set by release builds (-ldflags "-X
// github.com/floe-io/floe/internal/buildinfo.version=v1.2.0 -X ...revision=COMMIT"):
// go build records no commit in a git worktree or without -buildvcs.
var version, revision string

// Devel is the version of a build that was given none and whose module
// version the toolchain did not record (go build in a checkout without
// VCS stamping), as Go itself spells it.
const Devel = "(devel)"

// Info is one build's identity.
type Info struct {
	// Version is the release's (v1.2.0, v1.2.0-3-gabc1234-dirty), the
	// module's (v1.2.0 from go install, or a pseudo-version), or Devel.
	Version string
	// Revision is the commit built from; "" where it was not recorded.
	Revision string
	// Time is the commit's time; zero where it was not recorded.
	Time time.Time
	// Modified tells the tree had uncommitted changes.
	Modified bool
	// GoVersion is the toolchain's, go1.26.8.
	GoVersion string
}

// Read is the running binary's build.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(version, revision, bi)
}

// from reads a build's identity from the version and revision given at
// link time ("" for none) and what the toolchain recorded (nil where
// nothing was).
func from(linked, linkedRevision string, bi *debug.BuildInfo) Info {
	info := Info{Version: linked, GoVersion: runtime.Version()}
	if bi != nil {
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.Time, _ = time.Parse(time.RFC3339, s.Value)
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
		if info.Version == "" {
			info.Version = bi.Main.Version
		}
	}
	if linkedRevision != "" {
		info.Revision = linkedRevision
	}
	if info.Version == "" {
		info.Version = Devel
	}
	return info
}

// Collector is floe_build_info: a constant 1 labelled with the version,
// the revision ("unknown" where not recorded) and Go's version, as
// Prometheus's own exporters report theirs, so that a query can join it
// to any other series of the process.
func Collector() prometheus.Collector {
	info := Read()
	revision := info.Revision
	if revision == "" {
		revision = "unknown"
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "floe_build_info",
		Help:        "A constant 1 labelled with the version and revision floe was built from and the Go version it was built with.",
		ConstLabels: prometheus.Labels{"version": info.Version, "revision": revision, "goversion": info.GoVersion},
	})
	g.Set(1)
	return g
}
