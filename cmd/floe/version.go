package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	"github.com/floe-io/floe/internal/buildinfo"
)

func init() {
	helps["version"] = commandHelp{
		usage: "version [--json]",
		about: "Print floe's version, the commit it was built from and that commit's time where the build recorded them, " +
			"the iceberg-go version it was built with, and Go's. A release build's version is the one it was given " +
			"(git describe of its commit); otherwise it is the module's, as go install or go build recorded it.",
		examples: []example{
			{"The versions, e.g. for a bug report.", "floe version"},
			{"As JSON, for scripts.", "floe version --json"},
		},
	}
}

// versionJSON is `floe version --json`.
type versionJSON struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	IcebergGo string `json:"icebergGo"`
	Go        string `json:"go"`
}

func cmdVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	// The catalog flags are accepted, unlisted, for scripts that pass them
	// to every command.
	var cf catalogFlags
	cf.register(fs)
	cf.registerPathPrefix(fs)
	fs.hide(catalogFlagNames()...)
	asJSON := fs.Bool("json", false, "Print JSON.")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	info := buildinfo.Read()
	v := versionJSON{Version: info.Version, Revision: info.Revision, Modified: info.Modified, IcebergGo: icebergGoVersion(), Go: info.GoVersion}
	if !info.Time.IsZero() {
		v.Time = info.Time.UTC().Format(time.RFC3339)
	}
	if *asJSON {
		return writeJSON(stdout, v)
	}
	var built []string
	if v.Revision != "" {
		commit := "commit " + v.Revision
		if v.Modified {
			commit += " with uncommitted changes"
		}
		built = append(built, commit)
	}
	if v.Time != "" {
		built = append(built, "committed "+v.Time)
	}
	built = append(built, "iceberg-go "+v.IcebergGo, v.Go)
	fmt.Fprintf(stdout, "floe %s (%s)\n", v.Version, strings.Join(built, ", "))
	return nil
}

func icebergGoVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/apache/iceberg-go" {
				return d.Version
			}
		}
	}
	return "unknown"
}
