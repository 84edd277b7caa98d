package files

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/source"
)

// planOne lands one file and returns the part the source plans for it.
func planOne(t *testing.T, cfg config.Source, name string, write func(path string) error) *filePart {
	t.Helper()
	dir := t.TempDir()
	cfg.Type, cfg.Path = "files", filepath.Join(dir, "landing")
	if err := write(filepath.Join(cfg.Path, name)); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	end, err := s.LatestOffset(ctx, s.InitialOffset(), source.ReadLimit{})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := s.Read(ctx, s.InitialOffset(), end)
	if err != nil || len(parts) != 1 {
		t.Fatalf("Read: %d parts, %v; want the one file", len(parts), err)
	}
	if pp, ok := parts[0].(*parquetPart); ok {
		return pp.filePart
	}
	return parts[0].(*filePart)
}

// A part derives its schema from the file once, however often and in
// whatever order Schema and Open are called, and Schema is what the
// reader reports.
func TestPartDerivesSchemaOnce(t *testing.T) {
	no := false
	idSchema := []config.Column{{Name: "id", Type: "long"}, {Name: "v", Type: "string"}}
	cases := []struct {
		name  string
		cfg   config.Source
		write func(path string) error
	}{
		{"parquet", config.Source{Format: "parquet"}, func(p string) error { return fixture.WriteIDFile(p, 0, 10) }},
		{"csv inferred", config.Source{Format: "csv"}, func(p string) error { return fixture.Land(p, fixture.IDCSV(0, 10, ',', true)) }},
		{"csv header and schema", config.Source{Format: "csv", Schema: idSchema}, func(p string) error {
			return fixture.Land(p, []byte("v,id\nx,1\ny,2\n"))
		}},
		{"csv headerless", config.Source{Format: "csv", CSV: config.CSVOptions{Header: &no}}, func(p string) error {
			return fixture.Land(p, fixture.IDCSV(0, 10, ',', false))
		}},
		{"json inferred", config.Source{Format: "json"}, func(p string) error { return fixture.Land(p, fixture.IDJSON(0, 10)) }},
		{"json schema", config.Source{Format: "json", Schema: idSchema}, func(p string) error { return fixture.Land(p, fixture.IDJSON(0, 10)) }},
	}
	for _, tc := range cases {
		for _, schemaFirst := range []bool{true, false} {
			name := tc.name + "/open first"
			if schemaFirst {
				name = tc.name + "/schema first"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				p := planOne(t, tc.cfg, "f", tc.write)
				ctx := t.Context()
				var first any
				calls := []string{"open", "schema", "schema", "open"}
				if schemaFirst {
					calls = []string{"schema", "open", "schema", "open"}
				}
				for _, call := range calls {
					if call == "schema" {
						s, err := p.Schema(ctx)
						if err != nil {
							t.Fatal(err)
						}
						if first == nil {
							first = s
						} else if !s.Equal(p.schema) {
							t.Fatalf("Schema changed between calls: %v, then %v", p.schema, s)
						}
						continue
					}
					rdr, err := p.Open(ctx)
					if err != nil {
						t.Fatal(err)
					}
					got := rdr.Schema()
					n := 0
					for rdr.Next() {
						n += int(rdr.RecordBatch().NumRows())
					}
					err = rdr.Err()
					rdr.Release()
					if err != nil || n == 0 {
						t.Fatalf("read %d rows, %v", n, err)
					}
					s, err := p.Schema(ctx)
					if err != nil || !s.Equal(got) {
						t.Fatalf("Schema %v (%v), the reader's %v", s, err, got)
					}
				}
				if p.derived != 1 {
					t.Fatalf("the schema was derived from the file %d times, want once", p.derived)
				}
			})
		}
	}
}

// Open reads a Parquet file with the footer Schema parsed: a footer that
// is unreadable by then (here overwritten, size and time kept) is not
// parsed again.
func TestParquetOpenKeepsFooter(t *testing.T) {
	t.Parallel()
	p := planOne(t, config.Source{Format: "parquet"}, "f.parquet", func(path string) error { return fixture.WriteIDFile(path, 0, 100) })
	ctx := t.Context()
	if _, err := p.Schema(ctx); err != nil {
		t.Fatal(err)
	}
	path := p.entry.Path
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The file ends with the footer, its length (4 bytes) and "PAR1".
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	clear(data[len(data)-8-n : len(data)-8])
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.UnixMilli(p.entry.ModTime)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	rdr, err := p.Open(ctx)
	if err != nil {
		t.Fatalf("Open after Schema parsed the footer again: %v", err)
	}
	defer rdr.Release()
	ids, err := fixture.Int64s(rdr, "id")
	if err != nil || len(ids) != 100 || ids[99] != 99 {
		t.Fatalf("read %d ids, %v; want 0..99", len(ids), err)
	}
	// A part that has not parsed the footer finds it unreadable.
	fresh := &filePart{entry: p.entry, cfg: p.cfg}
	if _, err := fresh.Open(ctx); err == nil {
		t.Fatal("a fresh part read the file with the overwritten footer; the test proves nothing")
	}
}

// The pipeline asks a part for its schema, then reads it. Before parts
// kept their schema it opened each part twice, inferring a CSV file twice:
// "two opens" is that cost, "schema then open" today's.
func BenchmarkCSVSchemaThenRead(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "f.csv")
	if err := fixture.Land(path, fixture.IDCSV(0, 200_000, ',', true)); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	entry := fileEntry{Path: path, Size: st.Size(), ModTime: st.ModTime().UnixMilli()}
	cfg := config.Source{Type: "files", Path: dir, Format: "csv"}
	read := func(b *testing.B, p *filePart) {
		rdr, err := p.Open(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		for rdr.Next() {
		}
		if err := rdr.Err(); err != nil {
			b.Fatal(err)
		}
		rdr.Release()
	}
	b.Run("two opens", func(b *testing.B) {
		for b.Loop() {
			rdr, err := (&filePart{entry: entry, cfg: cfg}).Open(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			rdr.Release()
			read(b, &filePart{entry: entry, cfg: cfg})
		}
	})
	b.Run("schema then open", func(b *testing.B) {
		for b.Loop() {
			p := &filePart{entry: entry, cfg: cfg}
			if _, err := p.Schema(b.Context()); err != nil {
				b.Fatal(err)
			}
			read(b, p)
		}
	})
}
