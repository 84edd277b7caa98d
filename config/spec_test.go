package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/floe-io/floe/config"
)

// TestSpecCoversEveryKey keeps the spec table and the structs in step: a key
// added to a struct without a spec entry would be accepted but undocumented,
// and a spec entry without a field would document a key that is rejected.
func TestSpecCoversEveryKey(t *testing.T) {
	t.Parallel()
	var specPaths []string
	for _, s := range config.Specs() {
		specPaths = append(specPaths, s.Path)
		if s.Doc == "" {
			t.Errorf("spec %s has no description", s.Path)
		}
		if s.Default != "" && strings.Contains(s.Path, "[]") && s.Default != "false" {
			t.Errorf("spec %s: SetDefaults does not apply defaults inside lists", s.Path)
		}
		if s.Default != "" && s.Required != "" {
			t.Errorf("spec %s is both required and defaulted", s.Path)
		}
	}
	structPaths := config.StructPaths()
	for _, p := range structPaths {
		if !slices.Contains(specPaths, p) {
			t.Errorf("key %s has no entry in the spec table (spec.go)", p)
		}
	}
	for _, p := range specPaths {
		if !slices.Contains(structPaths, p) {
			t.Errorf("spec entry %s matches no struct field", p)
		}
	}
}

func TestReferenceUpToDate(t *testing.T) {
	t.Parallel()
	file := filepath.Join("..", "docs", "config.md")
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v; run `go run ./cmd/floe-configdoc > docs/config.md` from the module root", err)
	}
	if string(got) != config.Reference() {
		t.Errorf("%s is stale; run `go run ./cmd/floe-configdoc > docs/config.md` from the module root", file)
	}
}

func TestReferenceDocumentsEveryKey(t *testing.T) {
	t.Parallel()
	ref := config.Reference()
	for _, s := range config.Specs() {
		if !strings.Contains(ref, "### `"+s.Path+"`") {
			t.Errorf("reference has no section for %s", s.Path)
		}
	}
}
