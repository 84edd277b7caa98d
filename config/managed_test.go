package config_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/config"
)

// TestManagedTranslation maps each Managed I/O key on its own, so a change
// to one mapping shows up as exactly one failing case.
func TestManagedTranslation(t *testing.T) {
	t.Parallel()
	const src = "\nsource: {path: ./l, format: csv}\n"
	tests := []struct {
		name     string
		yaml     string
		check    func(t *testing.T, p *config.Pipeline)
		warnings []string
	}{
		{"table and defaults", "table: db.events", func(t *testing.T, p *config.Pipeline) {
			check(t, "sink.table", p.Sink.Table, "db.events")
			check(t, "catalog", p.Catalog, config.Catalog{Type: "sql", Name: "floe"})
			check(t, "trigger", p.Trigger, config.Trigger{Kind: config.TriggerAvailableNow})
			check(t, "checkpoint", p.Checkpoint, "checkpoints/db.events")
			check(t, "mode", p.Sink.Mode, "append")
		}, nil},
		{"template table checkpoint", "table: db.events_{region}_{meta.kind}", func(t *testing.T, p *config.Pipeline) {
			check(t, "checkpoint", p.Checkpoint, "checkpoints/db.events_region_meta.kind")
			check(t, "template", p.Sink.IsTemplate(), true)
		}, nil},
		{"catalog_name", "table: db.t\ncatalog_name: lake", func(t *testing.T, p *config.Pipeline) {
			check(t, "name", p.Catalog.Name, "lake")
		}, nil},
		{"type jdbc sqlite", "table: db.t\ncatalog_properties: {type: JDBC, uri: 'jdbc:sqlite:/data/cat.db', warehouse: /data/wh, jdbc.user: u}", func(t *testing.T, p *config.Pipeline) {
			check(t, "catalog", p.Catalog, config.Catalog{Type: "sql", Name: "floe", URI: "file:/data/cat.db", Warehouse: "/data/wh", Properties: map[string]string{"jdbc.user": "u"}})
		}, nil},
		{"jdbc sqlite file uri", "table: db.t\ncatalog_properties: {type: jdbc, uri: 'jdbc:sqlite:file:cat.db?cache=shared'}", func(t *testing.T, p *config.Pipeline) {
			check(t, "uri", p.Catalog.URI, "file:cat.db?cache=shared")
		}, nil},
		{"type rest", "table: db.t\ncatalog_properties: {type: rest, uri: 'http://localhost:8181', token: x}", func(t *testing.T, p *config.Pipeline) {
			check(t, "catalog", p.Catalog, config.Catalog{Type: "rest", Name: "floe", URI: "http://localhost:8181", Properties: map[string]string{"token": "x"}})
		}, nil},
		{"type hadoop", "table: db.t\ncatalog_properties: {type: hadoop, warehouse: 's3a://b/wh'}", func(t *testing.T, p *config.Pipeline) {
			check(t, "type", p.Catalog.Type, "hadoop")
			check(t, "warehouse", p.Catalog.Warehouse, "s3a://b/wh")
		}, nil},
		{"type glue", "table: db.t\ncatalog_properties: {type: glue, warehouse: 's3://b/wh', client.region: eu-west-1}", func(t *testing.T, p *config.Pipeline) {
			check(t, "type", p.Catalog.Type, "glue")
			check(t, "properties", p.Catalog.Properties, map[string]string{"client.region": "eu-west-1"})
		}, nil},
		{"catalog-impl classes", "table: db.t\ncatalog_properties: {catalog-impl: org.apache.iceberg.aws.glue.GlueCatalog}", func(t *testing.T, p *config.Pipeline) {
			check(t, "type", p.Catalog.Type, "glue")
		}, nil},
		{"catalog-impl hadoop", "table: db.t\ncatalog_properties: {catalog-impl: org.apache.iceberg.hadoop.HadoopCatalog, warehouse: /wh}", func(t *testing.T, p *config.Pipeline) {
			check(t, "type", p.Catalog.Type, "hadoop")
		}, nil},
		{"catalog-impl jdbc", "table: db.t\ncatalog_properties: {catalog-impl: org.apache.iceberg.jdbc.JdbcCatalog}", func(t *testing.T, p *config.Pipeline) {
			check(t, "type", p.Catalog.Type, "sql")
		}, nil},
		{"s3 path style in catalog properties", "table: db.t\ncatalog_properties: {type: hadoop, s3.path-style-access: 'true'}", func(t *testing.T, p *config.Pipeline) {
			check(t, "properties", p.Catalog.Properties, map[string]string{"s3.path-style-access": "true", "s3.force-virtual-addressing": "false"})
		}, nil},
		{"io-impl ignored", "table: db.t\ncatalog_properties:\n  type: hadoop\n  io-impl: org.apache.iceberg.aws.s3.S3FileIO", func(t *testing.T, p *config.Pipeline) {
			check(t, "properties", p.Catalog.Properties, map[string]string(nil))
		}, []string{`line 4: catalog_properties["io-impl"]: ignored: iceberg-go chooses the file IO from the warehouse's scheme (s3://, gs://, abfs://, local)`}},
		{"hadoop s3a properties", "table: db.t\nconfig_properties:\n  fs.s3a.endpoint: http://minio:9000\n  fs.s3a.access.key: a\n  fs.s3a.secret.key: s\n  fs.s3a.session.token: tok\n  fs.s3a.endpoint.region: us-east-1\n  fs.s3a.path.style.access: 'TRUE'", func(t *testing.T, p *config.Pipeline) {
			check(t, "properties", p.Catalog.Properties, map[string]string{
				"s3.endpoint": "http://minio:9000", "s3.access-key-id": "a", "s3.secret-access-key": "s",
				"s3.session-token": "tok", "s3.region": "us-east-1", "s3.force-virtual-addressing": "false",
			})
		}, nil},
		{"virtual addressing", "table: db.t\nconfig_properties: {fs.s3a.path.style.access: false}", func(t *testing.T, p *config.Pipeline) {
			check(t, "properties", p.Catalog.Properties, map[string]string{"s3.force-virtual-addressing": "true"})
		}, nil},
		{"other hadoop properties warn", "table: db.t\nconfig_properties:\n  fs.s3a.fast.upload: 'true'\n  fs.defaultFS: hdfs://nn", func(t *testing.T, p *config.Pipeline) {
			check(t, "properties", p.Catalog.Properties, map[string]string(nil))
		}, []string{
			`line 3: config_properties["fs.s3a.fast.upload"]: ignored Hadoop property fs.s3a.fast.upload: floe has no Hadoop configuration and maps only fs.s3a.access.key, fs.s3a.endpoint, fs.s3a.endpoint.region, fs.s3a.path.style.access, fs.s3a.secret.key, fs.s3a.session.token`,
			`line 4: config_properties["fs.defaultFS"]: ignored Hadoop property fs.defaultFS: floe has no Hadoop configuration and maps only fs.s3a.access.key, fs.s3a.endpoint, fs.s3a.endpoint.region, fs.s3a.path.style.access, fs.s3a.secret.key, fs.s3a.session.token`,
		}},
		{"catalog properties win over hadoop", "table: db.t\ncatalog_properties: {type: rest, uri: 'http://c', s3.endpoint: 'http://a'}\nconfig_properties:\n  fs.s3a.endpoint: http://b", func(t *testing.T, p *config.Pipeline) {
			check(t, "endpoint", p.Catalog.Properties["s3.endpoint"], "http://a")
		}, []string{`line 4: config_properties["fs.s3a.endpoint"]: ignored Hadoop property fs.s3a.endpoint: catalog_properties sets s3.endpoint, which takes precedence`}},
		{"keep", "table: db.t\nkeep: [a, b.c]", func(t *testing.T, p *config.Pipeline) {
			check(t, "keep", p.Sink.Keep, []string{"a", "b.c"})
		}, nil},
		{"drop", "table: db.t\ndrop: [a]", func(t *testing.T, p *config.Pipeline) {
			check(t, "drop", p.Sink.Drop, []string{"a"})
		}, nil},
		{"only", "table: db.t\nonly: payload", func(t *testing.T, p *config.Pipeline) {
			check(t, "only", p.Sink.Only, "payload")
		}, nil},
		{"partition_fields", "table: db.t\npartition_fields: [region, day(ts), 'bucket(id, 16)', 'truncate(name, 4)', void(x)]", func(t *testing.T, p *config.Pipeline) {
			check(t, "partition", p.Sink.PartitionFields, []string{"region", "day(ts)", "bucket(id, 16)", "truncate(name, 4)", "void(x)"})
		}, nil},
		{"table_properties", "table: db.t\ntable_properties: {write.format.default: parquet, commit.retry.num-retries: 10}", func(t *testing.T, p *config.Pipeline) {
			check(t, "table properties", p.Sink.TableProperties, map[string]string{"write.format.default": "parquet", "commit.retry.num-retries": "10"})
		}, nil},
		{"triggering_frequency_seconds", "table: db.t\ntriggering_frequency_seconds: 90", func(t *testing.T, p *config.Pipeline) {
			check(t, "trigger", p.Trigger, config.Trigger{Kind: config.TriggerProcessingTime, Interval: 90 * time.Second})
		}, nil},
		{"checkpoint", "table: db.t\ncheckpoint: /var/lib/floe/t", func(t *testing.T, p *config.Pipeline) {
			check(t, "checkpoint", p.Checkpoint, "/var/lib/floe/t")
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, warnings, err := config.ParseManaged([]byte(tt.yaml + src))
			if err != nil {
				t.Fatal(err)
			}
			check(t, "source", p.Source.Path, "./l")
			tt.check(t, p)
			if !slices.Equal(warnings, tt.warnings) {
				t.Errorf("warnings:\n got %q\nwant %q", warnings, tt.warnings)
			}
			if !slices.Equal(p.Warnings, warnings) {
				t.Errorf("Pipeline.Warnings = %q, want the returned warnings", p.Warnings)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("Validate of the translation: %v", err)
			}
		})
	}
}

func TestManagedDetection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want bool
	}{
		{"managed", "table: db.t\ncatalog_name: c", true},
		{"managed without table", "catalog_properties: {type: rest}", true},
		{"managed with floe keys", "table: db.t\nsink: {table: db.t}", true},
		{"beam yaml", "pipeline:\n  transforms: []", true},
		{"floe", "source: {path: ./l, format: csv}\nsink: {table: db.t}\ncheckpoint: ./c", false},
		{"floe with a stray key", "sink: {table: db.t}\ntabel: x", false},
		{"empty", "", false},
		{"list", "- table", false},
		{"bad yaml", "table: [", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := config.IsManaged([]byte(tt.yaml)); got != tt.want {
				t.Errorf("IsManaged = %v, want %v", got, tt.want)
			}
		})
	}

	// Parse and Load dispatch on the same decision.
	p, err := config.Parse([]byte("table: db.t\nsource: {path: ./l, format: csv}\nconfig_properties: {x: y}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Sink.Table != "db.t" || len(p.Warnings) != 1 {
		t.Errorf("Parse of a Managed I/O config: table %q, warnings %q", p.Sink.Table, p.Warnings)
	}
	p, err = config.Load(filepath.Join("testdata", "managed", "beam.yaml"))
	if err != nil || p.Sink.Table != "db.orders" {
		t.Errorf("Load of a Beam YAML pipeline: %v, %+v", err, p)
	}
	_, err = config.Load(filepath.Join("testdata", "managed", "bad-jdbc.yaml"))
	if e, ok := errors.AsType[*config.Error](err); !ok || e.File == "" {
		t.Errorf("Load error %v does not name the file", err)
	}
}

func TestManagedFixtures(t *testing.T) {
	tests := []struct {
		file     string
		want     config.Pipeline
		warnings []string
	}{
		{"full.yaml", config.Pipeline{
			Catalog: config.Catalog{Type: "rest", Name: "prod", URI: "https://catalog.example.com/api", Warehouse: "s3://bucket/warehouse",
				Properties: map[string]string{
					"credential": "id:secret", "s3.path-style-access": "true", "s3.force-virtual-addressing": "false",
					"s3.endpoint": "http://minio:9000", "s3.access-key-id": "AKIA", "s3.secret-access-key": "secret", "s3.region": "eu-west-1",
				}},
			Source: config.Source{Type: "files", Path: "s3://bucket/landing/events/", Format: "json", MaxFilesPerTrigger: 500,
				MaxFileAge: config.Duration(7 * 24 * time.Hour), CleanSource: "off", Compression: "auto", Listing: "auto", CSV: config.CSVOptions{Delimiter: ",", Header: ptr(true)}},
			Sink: config.Sink{Type: "iceberg", Table: "analytics.events", Mode: "append", CreateTable: ptr(true), TableProperties: map[string]string{"format-version": "2"},
				PartitionFields: []string{"hour(ts)", "bucket(id, 16)"}, WriteFormat: "parquet", FanoutEnabled: ptr(true),
				Keep: []string{"id", "ts", "payload.kind"}, CheckNullability: ptr(true), CheckOrdering: ptr(true), SchemaEvolution: "none"},
			Trigger:    config.Trigger{Kind: config.TriggerProcessingTime, Interval: time.Minute},
			Checkpoint: "/var/lib/floe/events",
			OnBadFile:  "fail", OnBadRecord: "fail",
		}, []string{
			`line 8: catalog_properties["io-impl"]: ignored: iceberg-go chooses the file IO from the warehouse's scheme (s3://, gs://, abfs://, local)`,
			`line 16: config_properties["fs.s3a.fast.upload"]: ignored Hadoop property fs.s3a.fast.upload: floe has no Hadoop configuration and maps only fs.s3a.access.key, fs.s3a.endpoint, fs.s3a.endpoint.region, fs.s3a.path.style.access, fs.s3a.secret.key, fs.s3a.session.token`,
		}},
		{"beam.yaml", config.Pipeline{
			Catalog: config.Catalog{Type: "hadoop", Name: "lake", Warehouse: "gs://bucket/warehouse"},
			Source: config.Source{Type: "files", Path: "gs://bucket/landing/orders/", PathGlobFilter: "*.csv", Format: "csv",
				MaxFileAge: config.Duration(7 * 24 * time.Hour), CleanSource: "off", Compression: "auto", Listing: "auto", CSV: config.CSVOptions{Delimiter: ",", Header: ptr(true)}},
			Sink: config.Sink{Type: "iceberg", Table: "db.orders", Mode: "append", CreateTable: ptr(true), WriteFormat: "parquet", FanoutEnabled: ptr(true),
				CheckNullability: ptr(true), CheckOrdering: ptr(true), SchemaEvolution: "none"},
			Trigger:    config.Trigger{Kind: config.TriggerProcessingTime, Interval: 30 * time.Second},
			Checkpoint: "checkpoints/db.orders",
			OnBadFile:  "fail", OnBadRecord: "fail",
		}, []string{"ignored the pipeline's other transforms: floe writes the source's rows as they are, shaped only by keep, drop and only"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, warnings, err := config.LoadManaged(filepath.Join("testdata", "managed", tt.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Warnings = tt.warnings
			var defaults config.Pipeline
			defaults.SetDefaults()
			tt.want.Maintenance = defaults.Maintenance
			if !reflect.DeepEqual(*p, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *p, tt.want)
			}
			if !slices.Equal(warnings, tt.warnings) {
				t.Errorf("warnings:\n got %q\nwant %q", warnings, tt.warnings)
			}
		})
	}
}

// TestManagedBadFixtures compares whole error texts, as TestBadFixtures
// does; -update rewrites the .err files.
func TestManagedBadFixtures(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("testdata", "managed", "bad-*.yaml"))
	files = append(files, filepath.Join("testdata", "managed", "no-source.yaml"))
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, _, err := config.ParseManaged(data)
			if err == nil {
				t.Fatalf("ParseManaged succeeded, want an error; got %+v", *p)
			}
			if _, ok := errors.AsType[*config.Error](err); !ok {
				t.Fatalf("error is %T, want *config.Error: %v", err, err)
			}
			// Parse dispatches, so it reports the same.
			if _, perr := config.Parse(data); perr == nil || perr.Error() != err.Error() {
				t.Errorf("Parse reports\n%v\nParseManaged\n%v", perr, err)
			}
			errFile := strings.TrimSuffix(file, ".yaml") + ".err"
			got := err.Error() + "\n"
			if *update {
				if err := os.WriteFile(errFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(errFile)
			if err != nil {
				t.Fatalf("%v (run go test ./config -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("error text differs from %s\n--- got:\n%s--- want:\n%s", errFile, got, want)
			}
		})
	}
}

// TestParseManagedWith is the CLI's path: flags supply the source the file
// lacks, and the result is validated with them.
func TestParseManagedWith(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "managed", "no-source.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := config.ParseManagedWith(data, func(p *config.Pipeline) {
		p.Source.Path, p.Source.Format = "./landing", "csv"
	})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "source", p.Source.Path, "./landing")
	check(t, "catalog", p.Catalog, config.Catalog{Type: "sql", Name: "local", URI: "file:./catalog.db"})
	check(t, "checkpoint", p.Checkpoint, "checkpoints/db.events")

	_, _, err = config.ParseManagedWith(data, func(p *config.Pipeline) {
		p.Source.Path, p.Source.Format = "./landing", "xml"
	})
	if err == nil || !strings.Contains(err.Error(), `source.format: "xml" is not allowed`) {
		t.Errorf("a bad flag value is not validated: %v", err)
	}
}

func TestManagedExampleParses(t *testing.T) {
	t.Parallel()
	p, err := config.Load(filepath.Join("..", "examples", "managed-io.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	check(t, "table", p.Sink.Table, "db.orders_{category}")
	check(t, "partition", p.Sink.PartitionFields, []string{"day(ordered_at)", "category"})
	check(t, "catalog", p.Catalog.Type, "sql")
	check(t, "source", p.Source.Path, "examples/quickstart/landing")
	if len(p.Warnings) > 0 {
		t.Errorf("the example has warnings: %q", p.Warnings)
	}
}

// TestManagedDocExample keeps the example in docs/managed-io.md parsing.
func TestManagedDocExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "managed-io.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/managed-io.md has no yaml block")
	}
	p, _, err := config.ParseManaged([]byte(block))
	if err != nil {
		t.Fatalf("the example in docs/managed-io.md: %v", err)
	}
	check(t, "table", p.Sink.Table, "db.events_{region}")
	check(t, "partition", p.Sink.PartitionFields, []string{"day(ts)", "region"})
}

func TestManagedRead(t *testing.T) {
	t.Parallel()
	r, err := config.ParseManagedRead([]byte(`table: db.events
catalog_name: floe
catalog_properties:
  type: hadoop
  warehouse: /data/wh
config_properties:
  fs.s3a.endpoint: http://127.0.0.1:9000
filter: "id > 5 AND status = 'ACTIVE'"
keep: [id, status]
`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Table != "db.events" || r.Catalog.Type != "hadoop" || r.Catalog.Warehouse != "/data/wh" ||
		r.Catalog.Properties["s3.endpoint"] != "http://127.0.0.1:9000" || r.Filter != "id > 5 AND status = 'ACTIVE'" ||
		len(r.Keep) != 2 {
		t.Fatalf("translated %+v", r)
	}
	for _, c := range []struct{ text, want string }{
		{"catalog_name: x\n", "table"},
		{"table: db.t\nkeep: [a]\ndrop: [b]\n", "mutually exclusive"},
		{"table: db.t\nfliter: a = 1\n", `did you mean "filter"`},
	} {
		if _, err := config.ParseManagedRead([]byte(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// TestManagedIcebergRead covers Managed I/O reads in pipeline files: a
// Beam YAML ReadFromIceberg feeding WriteToIceberg, ReadFromIceberg alone,
// and a bare read config (told by its filter key).
func TestManagedIcebergRead(t *testing.T) {
	t.Parallel()
	const cat = "catalog_properties: {type: jdbc, uri: 'jdbc:sqlite:/d/cat.db', warehouse: /d/wh}"
	pipeline := func(read, write string) string {
		s := "pipeline:\n  transforms:\n    - type: ReadFromIceberg\n      config: {" + read + "}\n"
		if write != "" {
			s += "    - type: WriteToIceberg\n      input: ReadFromIceberg\n      config: {" + write + "}\n"
		}
		return s
	}
	type read struct {
		Type, Table, Filter string
		Keep                []string
	}
	wantSource := read{"iceberg", "db.in", "id > 5", []string{"id"}}
	readOf := func(s config.Source) read { return read{s.Type, s.Table, s.Filter, s.Keep} }
	t.Run("read and write", func(t *testing.T) {
		p, _, err := config.ParseManaged([]byte(pipeline("table: db.in, filter: 'id > 5', keep: [id]", "table: db.out, "+cat)))
		if err != nil {
			t.Fatal(err)
		}
		check(t, "source", readOf(p.Source), wantSource)
		check(t, "sink", p.Sink.Table, "db.out")
		check(t, "catalog", p.Catalog.URI, "file:/d/cat.db")
	})
	t.Run("same catalog on both sides", func(t *testing.T) {
		if _, _, err := config.ParseManaged([]byte(pipeline("table: db.in, "+cat, "table: db.out, "+cat))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("catalog name alone", func(t *testing.T) {
		if _, _, err := config.ParseManaged([]byte(pipeline("table: db.in, catalog_name: lake", "table: db.out, catalog_name: lake, "+cat))); err != nil {
			t.Fatalf("the write's catalog_name on the read: %v", err)
		}
		_, _, err := config.ParseManaged([]byte(pipeline("table: db.in, catalog_name: other", "table: db.out, catalog_name: lake, "+cat)))
		if err == nil || !strings.Contains(err.Error(), "catalog_name") || !strings.Contains(err.Error(), "one catalog") {
			t.Fatalf("another catalog_name on the read: got %v, want an error at catalog_name", err)
		}
	})
	t.Run("catalogs differ", func(t *testing.T) {
		_, _, err := config.ParseManaged([]byte(pipeline("table: db.in, catalog_properties: {type: rest, uri: 'http://h:8181'}", "table: db.out, "+cat)))
		if err == nil || !strings.Contains(err.Error(), "one catalog") {
			t.Fatalf("got %v, want an error saying floe reads and writes through one catalog", err)
		}
	})
	t.Run("read alone prints", func(t *testing.T) {
		p, _, err := config.ParseManaged([]byte(pipeline("table: db.in, filter: 'id > 5', keep: [id], "+cat, "")))
		if err != nil {
			t.Fatal(err)
		}
		check(t, "source", readOf(p.Source), wantSource)
		check(t, "sink", p.Sink.Type, "console")
		check(t, "checkpoint", p.Checkpoint, "checkpoints/db.in.console")
		check(t, "catalog", p.Catalog.URI, "file:/d/cat.db")
	})
	t.Run("bare read config", func(t *testing.T) {
		p, _, err := config.ParseManaged([]byte("table: db.in\nfilter: 'id > 5'\nkeep: [id]\n" + cat + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, "source", readOf(p.Source), wantSource)
		check(t, "sink", p.Sink.Type, "console")
	})
	t.Run("read errors name the transform", func(t *testing.T) {
		_, _, err := config.ParseManaged([]byte(pipeline("filter: 'id > 5', keep: [id], drop: [v]", "table: db.out")))
		if err == nil || !strings.Contains(err.Error(), "pipeline.transforms[0].config.table") || !strings.Contains(err.Error(), "mutually exclusive") {
			t.Fatalf("got %v, want errors at pipeline.transforms[0].config for the missing table and keep with drop", err)
		}
	})
}

// A jdbc catalog on PostgreSQL or MySQL keeps its JDBC URI and the
// jdbc.user and jdbc.password properties, which floe's sql catalog opens.
func TestManagedJDBCServer(t *testing.T) {
	for _, uri := range []string{"jdbc:postgresql://db:5432/iceberg", "jdbc:mysql://db:3306/iceberg"} {
		p, _, err := config.ParseManaged([]byte("table: db.events\nsource: {path: ./landing, format: csv}\ncatalog_properties:\n  type: jdbc\n  uri: " + uri + "\n  jdbc.user: floe\n  jdbc.password: pw\n"))
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if p.Catalog.Type != "sql" || p.Catalog.URI != uri || p.Catalog.Properties["jdbc.user"] != "floe" || p.Catalog.Properties["jdbc.password"] != "pw" {
			t.Errorf("%s: catalog %+v", uri, p.Catalog)
		}
	}
}

// A Hive catalog, by type or by Iceberg's class, keeps its Thrift URI.
func TestManagedHive(t *testing.T) {
	for _, kind := range []string{"type: hive", "catalog-impl: org.apache.iceberg.hive.HiveCatalog"} {
		p, _, err := config.ParseManaged([]byte("table: db.events\nsource: {path: ./landing, format: csv}\ncatalog_properties:\n  " + kind + "\n  uri: thrift://metastore:9083\n  warehouse: s3://bucket/wh\n"))
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if p.Catalog.Type != "hive" || p.Catalog.URI != "thrift://metastore:9083" || p.Catalog.Warehouse != "s3://bucket/wh" {
			t.Errorf("%s: catalog %+v", kind, p.Catalog)
		}
	}
}

// Beam's start keys become the Iceberg source's start options, with
// Beam's defaults: latest for a streaming read, earliest for a batch one.
func TestManagedReadStartKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		keys        string
		want        map[string]string
		incremental string
	}{
		{"", nil, ""},
		{"streaming: true\n", map[string]string{"starting-strategy": "INCREMENTAL_FROM_LATEST_SNAPSHOT"}, "streaming"},
		{"streaming: true\nstarting_strategy: earliest\n", nil, "streaming"},
		{"starting_strategy: LATEST\n", map[string]string{"starting-strategy": "INCREMENTAL_FROM_LATEST_SNAPSHOT"}, "starting_strategy"},
		{"starting_strategy: earliest\n", nil, "starting_strategy"},
		{"from_snapshot: 42\n", map[string]string{"start-snapshot-id": "42"}, "from_snapshot"},
		{"streaming: true\nfrom_snapshot: 42\n", map[string]string{"start-snapshot-id": "42"}, "streaming"},
		{"streaming: true\nfrom_timestamp: 7\n", map[string]string{"stream-from-timestamp": "7"}, "streaming"},
	} {
		r, err := config.ParseManagedRead([]byte("table: db.t\n" + c.keys))
		if err != nil {
			t.Fatalf("%q: %v", c.keys, err)
		}
		if !maps.Equal(r.Options, c.want) || r.Incremental != c.incremental {
			t.Errorf("%q: options %v, incremental %q; want %v, %q", c.keys, r.Options, r.Incremental, c.want, c.incremental)
		}
	}
}

// TestManagedMisspeltReadKey: a file with the keys of both configs and an
// unknown key closest to a read key is a read config, so that its one
// problem suggests the read key and lists the read keys; a file with a key
// of the write config alone stays a write config.
func TestManagedMisspeltReadKey(t *testing.T) {
	t.Parallel()
	_, err := config.Parse([]byte("table: db.t\nfrom_snapshots: 1\n"))
	var e *config.Error
	if !errors.As(err, &e) || len(e.Problems) != 1 {
		t.Fatalf("got %v, want one problem", err)
	}
	if p := e.Problems[0]; p.Line != 2 || !strings.Contains(p.Message, `did you mean "from_snapshot"?`) ||
		!strings.Contains(p.Message, "poll_interval_seconds") || strings.Contains(p.Message, "dead_letter_table") {
		t.Errorf("problem %q, want one at line 2 suggesting from_snapshot and listing the read keys", p)
	}
	_, err = config.Parse([]byte("table: db.t\npartition_fields: [a]\nfiltr: a = 1\n"))
	if err == nil || !strings.Contains(err.Error(), "names no source") {
		t.Errorf("a write config with a misspelt key: %v, want it read as a write config", err)
	}
}
