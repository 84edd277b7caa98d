package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManagedReadErrorsNameTheFilesKeys checks the errors of Managed I/O
// read configs: a misspelt read key is told as one (with the read keys and
// the key meant, and no complaint about a missing source, which only a
// write config needs), and errors found while the read runs or is
// translated name the file's keys with their lines, never the floe keys
// they became.
func TestManagedReadErrorsNameTheFilesKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	startTable(e, 0, 1)
	catalog := "catalog_properties:\n  type: jdbc\n  uri: jdbc:sqlite:" + filepath.Join(e.Warehouse, "catalog.db") + "\n  warehouse: " + e.Warehouse + "\n"
	write := func(name, content string) string {
		path := filepath.Join(e.Dir, name+".yaml")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, c := range []struct {
		name, content string
		want          []string
		not           []string
	}{
		{
			name: "misspelt", content: "table: db.events\n" + catalog + "from_snapshots: 1\n",
			want: []string{`line 6: unknown key "from_snapshots"`, `did you mean "from_snapshot"?`, "the keys of a Managed I/O read config are", "starting_strategy"},
			not:  []string{"names no source", "dead_letter_table"},
		},
		{
			name: "missing-snapshot", content: "table: db.events\n" + catalog + "from_snapshot: 123456\n",
			want: []string{"from_snapshot (", "missing-snapshot.yaml, line 6) 123456 is not a snapshot", "floe table snapshots db.events"},
			not:  []string{"start-snapshot-id", "source.options"},
		},
		{
			name: "missing-table", content: "table: db.nope\n" + catalog + "from_snapshot: 1\n",
			want: []string{"check table (", "missing-table.yaml, line 1)"},
			not:  []string{"source.table", "--source-table"},
		},
		{
			name: "bounded", content: "table: db.events\n" + catalog + "to_snapshot: 5\n",
			want: []string{"line 6: to_snapshot: a floe query reads the table's appends without end"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := write(c.name, c.content)
			r := e.Run("run", path, "--checkpoint", filepath.Join(e.Dir, "ck-"+c.name))
			if r.Code == 0 {
				t.Fatalf("want a failure, got %s", r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, r.Stderr)
				}
			}
			for _, n := range c.not {
				if strings.Contains(r.Stderr, n) {
					t.Errorf("stderr contains %q:\n%s", n, r.Stderr)
				}
			}
		})
	}
}
