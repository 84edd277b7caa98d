package checkpoint_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/floe-io/floe/internal/checkpoint"
)

// FaultFS fails the nth operation of the kind chosen and no other: a write
// failed leaves nothing, a sync failed leaves the file written, and both
// say which operation failed.
func TestFaultFSFailsTheNthOperation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		op   checkpoint.Op
		// kept is whether the file failed on lies on disk afterwards;
		// syncs counts the syncs of the three writes.
		kept  bool
		syncs int
	}{{"write", checkpoint.OpWrite, false, 2}, {"sync", checkpoint.OpSync, true, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			f := checkpoint.NewFaultFS(checkpoint.OS)
			f.FailAt(tc.op, 2)
			var errs []error
			for _, name := range []string{"a", "b", "c"} {
				errs = append(errs, f.WriteFile(filepath.Join(dir, name), []byte(name)))
			}
			if errs[0] != nil || errs[2] != nil {
				t.Fatalf("operations other than the 2nd %s failed: %v", tc.name, errs)
			}
			if !errors.Is(errs[1], checkpoint.ErrInjected) {
				t.Fatalf("the 2nd %s: %v, want the injected fault", tc.name, errs[1])
			}
			if want := tc.name + " " + filepath.Join(dir, "b"); f.Injected() != want {
				t.Errorf("Injected() = %q, want %q", f.Injected(), want)
			}
			_, err := os.Stat(filepath.Join(dir, "b"))
			if kept := err == nil; kept != tc.kept {
				t.Errorf("after the %s of b failed, b on disk: %v, want %v", tc.name, kept, tc.kept)
			}
			if w, s := f.Count(checkpoint.OpWrite), f.Count(checkpoint.OpSync); w != 3 || s != tc.syncs {
				t.Errorf("counted %d writes and %d syncs, want 3 and %d", w, s, tc.syncs)
			}
		})
	}
}
