package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Managed I/O write config of Dataflow's documentation, with a table
// template and partition_fields, runs as it is; floe's source is attached
// with --source and --format.
func TestManagedIOConfigRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	landing, err := filepath.Abs("../../examples/quickstart/landing")
	if err != nil {
		t.Fatal(err)
	}
	cfg := `table: db.orders_{category}
catalog_name: floe
catalog_properties:
  type: jdbc
  uri: jdbc:sqlite:` + filepath.Join(e.Warehouse, "catalog.db") + `
  warehouse: ` + e.Warehouse + `
config_properties:
  fs.s3a.fast.upload: "true"
drop: [gift]
partition_fields:
  - day(ordered_at)
  - category
table_properties:
  write.parquet.compression-codec: zstd
triggering_frequency_seconds: 60
`
	path := filepath.Join(e.Dir, "managed.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// A streaming trigger runs until stopped; --trigger once ends the test.
	r := e.Run("run", path, "--checkpoint", e.Ckpt, "--trigger", "once")
	if r.Code != 2 || !strings.Contains(r.Stderr, "source") {
		t.Fatalf("without a source: want a usage error naming it, got %s", r)
	}
	r = e.OK("run", path, "--source", landing, "--format", "csv", "--checkpoint", e.Ckpt, "--trigger", "once")
	if !strings.Contains(r.Stderr, "fs.s3a.fast.upload") {
		t.Errorf("the ignored Hadoop property is not reported:\n%s", r.Stderr)
	}
	var total int64
	for _, cat := range []string{"books", "games", "garden", "music", "tools"} {
		name := "db.orders_" + cat
		d := e.describe(name)
		if got := d.columns(); strings.Contains(strings.Join(got, ","), "gift") {
			t.Errorf("%s keeps the dropped column: %v", name, got)
		}
		if d.Properties["write.parquet.compression-codec"] != "zstd" {
			t.Errorf("%s lacks its table property: %v", name, d.Properties)
		}
		days := map[any]bool{}
		for _, f := range e.files(name) {
			if f.Partition["category"] != cat {
				t.Errorf("%s holds a file of partition %v", name, f.Partition)
			}
			days[f.Partition["ordered_at_day"]] = true
		}
		if len(days) < 2 {
			t.Errorf("%s: files of %d days, want one per day ordered", name, len(days))
		}
		total += e.Count(name)
	}
	if total != 60 {
		t.Fatalf("%d rows across the category tables, want the quickstart's 60", total)
	}
}

// A table partitioned otherwise than partition-fields says stops the run,
// unless partition-spec-evolution evolves it; old files keep their spec.
func TestPartitionSpecMismatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.spec", "--checkpoint", e.Ckpt, "--partition-fields", "bucket(id, 4)")
	e.WriteIDs("b.parquet", 100, 100)
	args := []string{"stream", "--source", e.Landing, "--format", "parquet", "--table", "db.spec", "--checkpoint", e.Ckpt, "--partition-fields", "truncate(id, 50)"}
	r := e.Run(args...)
	if r.Code != 2 && r.Code != 1 || !strings.Contains(r.Stderr, "bucket(id, 4)") || !strings.Contains(r.Stderr, "truncate(id, 50)") || !strings.Contains(r.Stderr, "partition-spec-evolution") {
		t.Fatalf("want an error naming both specs and the option, got %s", r)
	}
	e.OK(append(args, "--partition-spec-evolution")...)
	if n := e.Count("db.spec"); n != 200 {
		t.Fatalf("%d rows, want 200", n)
	}
	specs := map[string]int{}
	for _, f := range e.files("db.spec") {
		for k := range f.Partition {
			specs[k]++
		}
	}
	if specs["id_bucket"] == 0 || specs["id_trunc"] == 0 {
		t.Fatalf("files by partition field: %v; want files of both specs", specs)
	}
}

// The clustered writer (no fanout) writes the same rows, one file per
// partition.
func TestClusteredWriter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writePartitioned(t, e.Landing, 3, 10_000, 20, 10, 3)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.clustered", "--checkpoint", e.Ckpt,
		"--partition-fields", "p", "--fanout=false", "--trigger", "once")
	files := e.files("db.clustered")
	seen := map[any]bool{}
	for _, f := range files {
		if seen[f.Partition["p"]] {
			t.Fatalf("two files for partition %v", f.Partition)
		}
		seen[f.Partition["p"]] = true
	}
	if len(seen) != 20 {
		t.Fatalf("%d partitions, want 20", len(seen))
	}
	if ids := e.IDs("db.clustered"); len(ids) != 30_000 {
		t.Fatalf("%d ids, want 30000", len(ids))
	}
}

func TestWriteFormatRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 10)
	path := filepath.Join(e.Dir, "p.yaml")
	text := "source: {path: " + e.Landing + ", format: parquet}\nsink: {table: db.orc, write-format: orc}\ncheckpoint: " + e.Ckpt + "\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.Run("run", path)
	if r.Code != 2 || !strings.Contains(r.Stderr, "write-format") || !strings.Contains(r.Stderr, "Parquet") {
		t.Fatalf("want a configuration error naming write-format, got %s", r)
	}
}

// A Managed I/O read config, with its filter and keep, is what floe scan
// reads; flags still override it.
func TestManagedIOReadConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.WriteIDs("a.parquet", 0, 100)
	e.OK("stream", "--source", e.Landing, "--format", "parquet", "--table", "db.read", "--checkpoint", e.Ckpt)
	cfg := `table: db.read
catalog_name: floe
catalog_properties:
  type: jdbc
  uri: jdbc:sqlite:` + filepath.Join(e.Warehouse, "catalog.db") + `
  warehouse: ` + e.Warehouse + `
filter: "id >= 90 AND v LIKE 'v9%'"
keep: [id]
`
	path := filepath.Join(e.Dir, "read.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := e.OK("scan", path, "--output-format", "csv").Stdout
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "id" || len(lines) != 11 {
		t.Fatalf("scan of the read config printed %q, want the 10 ids 90-99 alone", out)
	}
	if n := strings.TrimSpace(e.OK("scan", path, "--count", "--filter", "id < 10").Stdout); n != "10" {
		t.Fatalf("--filter over the config's: %s rows, want 10", n)
	}

	// floe run prints what the read config selects, once per checkpoint.
	r := e.OK("run", path, "--checkpoint", filepath.Join(e.Dir, "ck-console"))
	if got := strings.Count(r.Stdout, "\n"); got != 10 || !strings.Contains(r.Stdout, `{"id":95}`) {
		t.Fatalf("floe run of the read config printed:\n%s\nwant the 10 rows of ids 90-99, id alone", r.Stdout)
	}
	if r = e.OK("run", path, "--checkpoint", filepath.Join(e.Dir, "ck-console")); r.Stdout != "" {
		t.Fatalf("second run printed %q, want nothing new", r.Stdout)
	}

	// A Beam YAML pipeline reading the table and writing another.
	beam := `pipeline:
  transforms:
    - type: ReadFromIceberg
      config:
        table: db.read
        filter: "id < 50"
        drop: [v]
    - type: WriteToIceberg
      input: ReadFromIceberg
      config:
        table: db.copy
        catalog_properties:
          type: jdbc
          uri: jdbc:sqlite:` + filepath.Join(e.Warehouse, "catalog.db") + `
          warehouse: ` + e.Warehouse + `
`
	path = filepath.Join(e.Dir, "copy.yaml")
	if err := os.WriteFile(path, []byte(beam), 0o644); err != nil {
		t.Fatal(err)
	}
	e.OK("run", path, "--checkpoint", filepath.Join(e.Dir, "ck-copy"))
	out = e.OK("scan", "db.copy", "--output-format", "csv").Stdout
	if lines = strings.Split(strings.TrimSpace(out), "\n"); lines[0] != "id" || len(lines) != 51 {
		t.Fatalf("db.copy holds %q, want ids 0-49 without v", out)
	}
}

// A Managed I/O template routes values Iceberg and Beam take as names
// (eu-west) and sends what cannot name a table to the file's dead-letter
// table; a read config takes Beam's streaming and range keys.
func TestManagedIOTemplateValuesAndReadKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeRegions(t, filepath.Join(e.Landing, "a.parquet"), 0, 20, func(id int64) (string, bool, bool) {
		switch {
		case id == 3:
			return "eu.west", false, true
		case id%2 == 0:
			return "eu-west", false, true
		}
		return "us-east", false, true
	})
	catalog := `catalog_properties:
  type: jdbc
  uri: jdbc:sqlite:` + filepath.Join(e.Warehouse, "catalog.db") + `
  warehouse: ` + e.Warehouse + `
`
	write := filepath.Join(e.Dir, "write.yaml")
	if err := os.WriteFile(write, []byte("table: db.events_{region}\ndead_letter_table: db.unrouted\n"+catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	e.OK("run", write, "--source", e.Landing, "--format", "parquet", "--checkpoint", e.Ckpt)
	if a, b, d := e.Count("db.events_eu-west"), e.Count("db.events_us-east"), e.Count("db.unrouted"); a != 10 || b != 9 || d != 1 {
		t.Fatalf("eu-west %d, us-east %d, dead letters %d rows; want 10, 9 and 1 (eu.west is two name parts)", a, b, d)
	}

	read := filepath.Join(e.Dir, "read.yaml")
	body := "table: db.events_eu-west\nstreaming: true\npoll_interval_seconds: 5\nfrom_timestamp: 0\n" + catalog
	if err := os.WriteFile(read, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.OK("run", read, "--checkpoint", filepath.Join(e.Dir, "ck-read"), "--trigger", "once")
	if got := strings.Count(r.Stdout, "\n"); got != 10 {
		t.Fatalf("the streaming read printed %d rows, want 10:\n%s", got, r.Stdout)
	}
	// floe scan takes to_snapshot as time travel.
	first := e.Snapshots("db.events_eu-west")[0].SnapshotID
	writeRegions(t, filepath.Join(e.Landing, "b.parquet"), 100, 4, func(int64) (string, bool, bool) { return "eu-west", false, true })
	e.OK("run", write, "--source", e.Landing, "--format", "parquet", "--checkpoint", e.Ckpt)
	body = fmt.Sprintf("table: db.events_eu-west\nto_snapshot: %d\n%s", first, catalog)
	if err := os.WriteFile(read, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := strings.TrimSpace(e.OK("scan", read, "--count").Stdout); n != "10" || e.Count("db.events_eu-west") != 14 {
		t.Fatalf("scan to_snapshot %d counted %s rows, want 10 of the table's 14", first, n)
	}
	for _, c := range []struct{ key, want string }{
		{"to_snapshot: 1\n", "floe scan"},
		{"starting_strategy: earliest\nfrom_timestamp: 0\n", "starting_strategy"},
	} {
		if err := os.WriteFile(read, []byte("table: db.events_eu-west\nstreaming: true\n"+c.key+catalog), 0o644); err != nil {
			t.Fatal(err)
		}
		r := e.Run("run", read, "--checkpoint", filepath.Join(e.Dir, "ck-refused"), "--trigger", "once")
		if r.Code != 2 || !strings.Contains(r.Stderr, strings.SplitN(c.key, ":", 2)[0]) || !strings.Contains(r.Stderr, c.want) {
			t.Fatalf("%s: want exit 2 naming the key and %q, got %s", strings.TrimSpace(c.key), c.want, r)
		}
	}
}
