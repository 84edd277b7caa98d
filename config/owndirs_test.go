package config_test

import (
	"strings"
	"testing"

	"github.com/floe-io/floe/config"
)

// On an object store, as on a disk, a landing prefix that would list the
// warehouse or the archive floe writes is refused; one beside them, or
// read without recursion, or holding them in a hidden prefix, is not.
func TestCheckOwnDirsOnObjectStores(t *testing.T) {
	for _, tc := range []struct {
		name, warehouse, archive string
		recursive                bool
		refused                  string
	}{
		{name: "warehouse beside", warehouse: "s3://b/wh", recursive: true},
		{name: "warehouse inside, recursive", warehouse: "s3://b/landing/wh/", recursive: true, refused: "catalog.warehouse"},
		{name: "warehouse inside, flat", warehouse: "s3://b/landing/wh"},
		{name: "warehouse hidden", warehouse: "s3://b/landing/_wh", recursive: true},
		{name: "warehouse is the landing prefix", warehouse: "s3://b/landing", refused: "is the landing directory"},
		{name: "archive inside", warehouse: "s3://b/wh", archive: "s3://b/landing/archive", refused: "source.source-archive-dir"},
		{name: "archive beside", warehouse: "s3://b/wh", archive: "s3://b/archive"},
		{name: "warehouse in another bucket", warehouse: "s3://c/landing/wh", recursive: true},
		{name: "local warehouse", warehouse: "/tmp/wh", recursive: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &config.Pipeline{Source: config.Source{Type: "files", Path: "s3://b/landing/", Recursive: tc.recursive}}
			if tc.archive != "" {
				p.Source.CleanSource, p.Source.ArchiveDir = "archive", tc.archive
			}
			err := p.CheckOwnDirs(map[string]string{"catalog.warehouse": tc.warehouse})
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Fatalf("got %v, want a refusal naming %q", err, tc.refused)
			}
		})
	}
}
