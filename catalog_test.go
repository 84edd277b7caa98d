package floe_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/floe-io/floe"
)

// The warehouse is --warehouse, else $FLOE_WAREHOUSE, else ./warehouse,
// made absolute so that table locations do not depend on the directory.
func TestResolveWarehouse(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv(floe.WarehouseEnv, "")
	if got, _ := floe.ResolveWarehouse(""); got != filepath.Join(dir, "warehouse") {
		t.Errorf("default = %q, want %q", got, filepath.Join(dir, "warehouse"))
	}
	t.Setenv(floe.WarehouseEnv, "from-env")
	if got, _ := floe.ResolveWarehouse(""); got != filepath.Join(dir, "from-env") {
		t.Errorf("with $FLOE_WAREHOUSE = %q", got)
	}
	if got, _ := floe.ResolveWarehouse("explicit"); got != filepath.Join(dir, "explicit") {
		t.Errorf("explicit = %q", got)
	}
	if got, _ := floe.ResolveWarehouse("s3://bucket/wh"); got != "s3://bucket/wh" {
		t.Errorf("URL = %q, want it unchanged", got)
	}
}

func TestParseIdent(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"events", "db.", ".t", "a..b"} {
		if _, err := floe.ParseIdent(bad); !errors.Is(err, floe.ErrConfig) {
			t.Errorf("ParseIdent(%q) = %v, want ErrConfig", bad, err)
		}
	}
	if id, err := floe.ParseIdent("a.b.t"); err != nil || len(id) != 3 {
		t.Errorf("ParseIdent(a.b.t) = %v, %v", id, err)
	}
}
