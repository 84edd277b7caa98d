package main_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// A value its column's type cannot hold is bad input naming the file, the
// line, the column, the value, the type and the fix, whether the type was
// declared in source.schema or is the table's: a timestamp with a zone in a
// timestamp column (as Spark refuses one in TIMESTAMP_NTZ) says to declare
// it timestamptz or to drop the zone.
func TestValueErrorNamesColumnAndFix(t *testing.T) {
	t.Parallel()
	const zoned = "2026-09-01T00:00:00Z"
	cases := []struct {
		name, format, file, content string
		schema                      string // --schema, or "" for the table's
		want                        []string
	}{
		{
			name: "json declared zoned", format: "json", file: "a.json",
			content: `{"id":1,"ts":"` + zoned + `"}` + "\n", schema: "id long, ts timestamp",
			want: []string{"line 1", `column "ts" is declared timestamp (without time zone) in source.schema`, `"` + zoned + `"`, "declare the column timestamptz", "remove the zone"},
		},
		{
			name: "csv declared zoned", format: "csv", file: "a.csv",
			content: "id,ts\n1,2026-09-01T00:00:00\n2," + zoned + "\n", schema: "id long, ts timestamp",
			want: []string{"line 3", `column "ts" is declared timestamp (without time zone) in source.schema`, `"` + zoned + `"`, "declare the column timestamptz", "remove the zone"},
		},
		{
			name: "json declared timestamptz without zone", format: "json", file: "a.json",
			content: `{"id":1,"ts":"2026-09-01T00:00:00"}` + "\n", schema: "id long, ts timestamptz",
			want: []string{"line 1", `column "ts" is declared timestamptz (with time zone)`, "names no zone", "add a zone to the values", "declare the column timestamp"},
		},
		{
			name: "json declared long", format: "json", file: "a.json",
			content: `{"id":1}` + "\n" + `{"id":"abc"}` + "\n", schema: "id long",
			want: []string{"line 2", `column "id" is declared long in source.schema, but the value "abc" cannot be read as long`},
		},
		{
			name: "csv declared long", format: "csv", file: "a.csv",
			content: "id\n1\nabc\n", schema: "id long",
			want: []string{"line 3", `column "id" is declared long in source.schema, but the value "abc" cannot be read as long`},
		},
		{
			name: "json table zoned", format: "json", file: "b.json",
			content: `{"id":2,"ts":"` + zoned + `"}` + "\n",
			want:    []string{"line 1", `the table's column "ts" is timestamp (without time zone)`, `"` + zoned + `"`, "remove the zone", "a table whose column is timestamptz"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			args := []string{"stream", "--source", e.Landing, "--format", c.format, "--table", "db.t", "--checkpoint", e.Ckpt, "--trigger", "available-now"}
			if c.schema == "" {
				// The table has the column as timestamp from a first file.
				writeFile(t, filepath.Join(e.Landing, "a.json"), []byte(`{"id":1,"ts":"2026-09-01T00:00:00"}`+"\n"))
				e.OK(append(args, "--schema", "id long, ts timestamp")...)
			} else {
				args = append(args, "--schema", c.schema)
			}
			bad := filepath.Join(e.Landing, c.file)
			writeFile(t, bad, []byte(c.content))
			r := e.Run(args...)
			if r.Code != 1 {
				t.Fatalf("want exit 1, got %s", r)
			}
			for _, w := range append([]string{bad}, c.want...) {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, r.Stderr)
				}
			}
		})
	}
}
