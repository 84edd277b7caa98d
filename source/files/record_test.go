package files_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/files"
)

// ingest plans the next batch as the engine does and returns the account
// after it, given the one before.
func (l *landingDir) ingest(prev map[string]string) (map[string]string, source.Offset) {
	l.t.Helper()
	ctx := l.t.Context()
	end, err := l.src.LatestOffset(ctx, l.start, source.ReadLimit{MaxFiles: 1})
	if err != nil || bytes.Equal(end, l.start) {
		l.t.Fatalf("nothing planned: %v", err)
	}
	in, err := l.src.BatchInput(prev, l.start, end)
	if err != nil {
		l.t.Fatal(err)
	}
	if err := l.src.Commit(ctx, end); err != nil {
		l.t.Fatal(err)
	}
	l.start = end
	return in, end
}

// The account follows the log; the log checks against it; a lost log is
// rebuilt from the landing directory exactly when its files are the ones
// the account names, and refused, saying which way they differ, when not.
func TestInputAccountChecksAndRebuildsTheLog(t *testing.T) {
	t.Parallel()
	base := time.Now().Add(-time.Hour)
	setup := func(t *testing.T) (*landingDir, map[string]string, source.Offset) {
		l := newLanding(t, config.Source{})
		var in map[string]string
		var end source.Offset
		for i, name := range []string{"a.csv", "b.csv", "c.csv"} {
			l.writeAt(name, "id\n1\n", base.Add(time.Duration(i)*time.Minute))
			in, end = l.ingest(in)
		}
		if in["total"] != "3" || in["files"] != "1" || !strings.HasSuffix(in["watermark"], "c.csv") {
			t.Fatalf("account after three files: %v", in)
		}
		if err := l.src.CheckInput(in, nil, end); err != nil {
			t.Fatalf("an intact log fails its check: %v", err)
		}
		return l, in, end
	}
	rebuild := func(t *testing.T, l *landingDir, in map[string]string, end source.Offset) error {
		if err := os.RemoveAll(l.state); err != nil {
			t.Fatal(err)
		}
		l.open()
		if err := l.src.CheckInput(in, nil, end); err == nil {
			t.Fatal("a lost log passes its check")
		}
		return l.src.RebuildInput(t.Context(), in, end)
	}

	t.Run("exact", func(t *testing.T) {
		t.Parallel()
		l, in, end := setup(t)
		l.writeAt("d.csv", "id\n1\n", base.Add(10*time.Minute))
		if err := rebuild(t, l, in, end); err != nil {
			t.Fatal(err)
		}
		l.open()
		if err := l.src.CheckInput(in, nil, end); err != nil {
			t.Fatalf("the rebuilt log fails its check: %v", err)
		}
		if got := l.names(source.ReadLimit{}); len(got) != 1 || got[0] != "d.csv" {
			t.Fatalf("after the rebuild the next batch is %v, want only d.csv", got)
		}
	})
	for _, c := range []struct {
		name   string
		change func(l *landingDir)
		want   string
	}{
		{"deleted", func(l *landingDir) { _ = os.Remove(filepath.Join(l.dir, "b.csv")) }, "deleted, moved or changed"},
		{"late with an older time", func(l *landingDir) { l.writeAt("aa.csv", "id\n1\n", base.Add(30*time.Second)) }, "older modification times"},
		{"rewritten", func(l *landingDir) {
			p := filepath.Join(l.dir, "b.csv")
			st, _ := os.Stat(p)
			_ = os.WriteFile(p, []byte("id\n2\n"), 0o644)
			_ = os.Chtimes(p, st.ModTime().Add(time.Millisecond), st.ModTime().Add(time.Millisecond))
		}, "not the same"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l, in, end := setup(t)
			c.change(l)
			err := rebuild(t, l, in, end)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("rebuild: %v; want a refusal naming %q", err, c.want)
			}
		})
	}
}

var _ source.Recorder = (*files.Files)(nil)

// A log batch planned again after the offsets entry that planned it was
// lost (the engine plans from the start it knows, and the source rewrites
// the newest log batch) holds more files than the batch the table
// committed: the check names the difference instead of taking the new
// file as committed.
func TestLogBatchWrittenAgainIsRefused(t *testing.T) {
	t.Parallel()
	base := time.Now().Add(-time.Hour)
	l := newLanding(t, config.Source{})
	l.writeAt("a.csv", "id\n1\n", base)
	start := l.start
	in, end := l.ingest(nil)
	if err := l.src.CheckInput(in, start, end); err != nil {
		t.Fatalf("an intact log fails its check: %v", err)
	}
	l.writeAt("b.csv", "id\n2\n", base.Add(time.Minute))
	again, err := l.src.LatestOffset(t.Context(), start, source.ReadLimit{})
	if err != nil || !bytes.Equal(again, end) {
		t.Fatalf("planned again from the start: end %s (%v), want the same log batch %s", again, err, end)
	}
	err = l.src.CheckInput(in, start, end)
	if err == nil || !strings.Contains(err.Error(), "lists 2 files in log batches 0 to 0, and the table records 1") {
		t.Fatalf("a log batch written again after its commit passes the check: %v", err)
	}
}
