package config_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/floe-io/floe/config"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*.err from the current output")

// setFixtureEnv gives the fixtures the environment they expect. The
// "undefined" names are set and then removed so that t.Setenv restores
// whatever the real environment had once the test ends.
func setFixtureEnv(t *testing.T) {
	t.Setenv("FLOE_TEST_LANDING", "/data/landing")
	t.Setenv("FLOE_TEST_NAMESPACE", "raw")
	t.Setenv("FLOE_TEST_EMPTY", "")
	for _, name := range []string{"FLOE_TEST_FORMAT", "FLOE_TEST_MAX_FILES", "FLOE_TEST_UNDEFINED", "FLOE_TEST_UNDEFINED_TOO", "FLOE_TEST_UNTERMINATED", "FLOE_TEST_UNSET_IN_COMMENT"} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
}

func fixtures(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/%s: %v", dir, err)
	}
	return files
}

func TestGoodFixtures(t *testing.T) {
	setFixtureEnv(t)
	for _, file := range fixtures(t, "good") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p, err := config.Load(file)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			// Defaults are complete, so validation after SetDefaults is
			// still clean and a second SetDefaults changes nothing.
			again := *p
			again.SetDefaults()
			if !reflect.DeepEqual(&again, p) {
				t.Errorf("SetDefaults is not idempotent:\n got %+v\nwant %+v", again, *p)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("Validate after Load: %v", err)
			}
		})
	}
}

// TestWalkerAgreesWithStrictDecoder guards the diagnostic walker: on valid
// files it must decode exactly what yaml.v3's strict decoder does, or the
// values validated when a file has errors would differ from the values used
// when it has none.
func TestWalkerAgreesWithStrictDecoder(t *testing.T) {
	setFixtureEnv(t)
	for _, file := range fixtures(t, "good") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), "${") {
				t.Skip("needs environment expansion first; covered by TestGoodFixtureValues")
			}
			walked, probs := config.WalkDecode(data)
			if len(probs) > 0 {
				t.Fatalf("walker problems: %v", probs)
			}
			var strict config.Pipeline
			dec := yaml.NewDecoder(strings.NewReader(string(data)))
			dec.KnownFields(true)
			if err := dec.Decode(&strict); err != nil {
				t.Fatalf("strict decode: %v", err)
			}
			if !reflect.DeepEqual(walked, &strict) {
				t.Errorf("walker and strict decoder disagree:\nwalker %+v\nstrict %+v", *walked, strict)
			}
		})
	}
}

func TestGoodFixtureValues(t *testing.T) {
	setFixtureEnv(t)
	tests := []struct {
		file  string
		check func(t *testing.T, p *config.Pipeline)
	}{
		{"minimal.yaml", func(t *testing.T, p *config.Pipeline) {
			want := config.Pipeline{
				Catalog: config.Catalog{Type: "sql", Name: "floe"},
				Source: config.Source{
					Type: "files", Path: "./landing/events", Format: "parquet",
					MaxFileAge:  config.Duration(7 * 24 * time.Hour),
					CleanSource: "off", Compression: "auto", Listing: "auto",
					CSV: config.CSVOptions{Delimiter: ",", Header: ptr(true)},
				},
				Sink: config.Sink{Type: "iceberg", Table: "db.events", Mode: "append", CreateTable: ptr(true), WriteFormat: "parquet",
					FanoutEnabled: ptr(true), CheckNullability: ptr(true), CheckOrdering: ptr(true), SchemaEvolution: "none"},
				Trigger:    config.Trigger{Kind: config.TriggerAvailableNow},
				Checkpoint: "./checkpoints/events",
				OnBadFile:  "fail", OnBadRecord: "fail",
				Maintenance: config.Maintenance{
					Enabled: ptr(true), Budget: config.Duration(10 * time.Second),
					ExpireSnapshots:   config.ExpireMaintenance{Enabled: ptr(true), MaxSnapshots: 25, RetainLast: 10},
					RewriteDataFiles:  config.RewriteMaintenance{Enabled: ptr(true), EveryCommits: 50, MinInputFiles: 5, DeleteRatioThreshold: 0.3},
					RewriteManifests:  config.ManifestMaintenance{Enabled: ptr(true), MaxManifests: 20},
					RemoveOrphanFiles: config.OrphanMaintenance{Enabled: ptr(true), Interval: config.Duration(24 * time.Hour), OlderThan: config.Duration(72 * time.Hour)},
				},
			}
			if !reflect.DeepEqual(*p, want) {
				t.Errorf("got  %+v\nwant %+v", *p, want)
			}
		}},
		{"full.yaml", func(t *testing.T, p *config.Pipeline) {
			s := p.Source
			check(t, "max-files-per-trigger", s.MaxFilesPerTrigger, 1000)
			check(t, "max-bytes-per-trigger", s.MaxBytesPerTrigger, int64(1<<30))
			check(t, "max-file-age", time.Duration(s.MaxFileAge), 14*24*time.Hour)
			check(t, "delimiter", s.CSV.Delimiter, "\t")
			check(t, "header", *s.CSV.Header, false)
			check(t, "create-table", *p.Sink.CreateTable, false)
			check(t, "trigger", p.Trigger, config.Trigger{Kind: config.TriggerProcessingTime, Interval: 90 * time.Second})
			check(t, "properties", p.Catalog.Properties["s3.path-style-access"], "true")
			check(t, "schema[1]", s.Schema[1], config.Column{Name: "amount", Type: "decimal(38, 9)"})
		}},
		{"env.yaml", func(t *testing.T, p *config.Pipeline) {
			check(t, "path", p.Source.Path, "/data/landing")
			check(t, "format", p.Source.Format, "json")
			check(t, "max-files-per-trigger", p.Source.MaxFilesPerTrigger, 50)
			check(t, "path-glob-filter", p.Source.PathGlobFilter, "price-$*#1.json")
			check(t, "table", p.Sink.Table, "raw.events")
			check(t, "cost", p.Sink.SnapshotProperties["cost"], "$5")
			check(t, "checkpoint", p.Checkpoint, "./checkpoints/events")
		}},
		{"streaming.yaml", func(t *testing.T, p *config.Pipeline) {
			check(t, "trigger", p.Trigger, config.Trigger{Kind: config.TriggerProcessingTime, Interval: 30 * time.Second})
			check(t, "max-file-age", p.Source.MaxFileAge, 0)
			check(t, "min-file-age", time.Duration(p.Source.MinFileAge), 36*time.Hour)
		}},
		{"merge.yaml", func(t *testing.T, p *config.Pipeline) {
			check(t, "path", p.Source.Path, "./landing/b")
			check(t, "format", p.Source.Format, "csv")
			check(t, "recursive", p.Source.Recursive, true)
			check(t, "delimiter", p.Source.CSV.Delimiter, ";")
			check(t, "snapshot-properties", p.Sink.SnapshotProperties, map[string]string{"owner": "ops", "tier": "gold", "job": "nightly", "empty": ""})
			check(t, "on-bad-file", p.OnBadFile, "fail")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, err := config.Load(filepath.Join("testdata", "good", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, p)
		})
	}
}

func check[T any](t *testing.T, what string, got T, want any) {
	t.Helper()
	w := reflect.ValueOf(want)
	if w.Type() != reflect.TypeFor[T]() && w.CanConvert(reflect.TypeFor[T]()) {
		w = w.Convert(reflect.TypeFor[T]())
	}
	if !reflect.DeepEqual(got, w.Interface()) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// TestBadFixtures compares the whole error text, because the text is the
// product: it is what a user reads to fix the file. Run with -update to
// rewrite the .err files after an intended change, then review the diff.
func TestBadFixtures(t *testing.T) {
	setFixtureEnv(t)
	for _, file := range fixtures(t, "bad") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := config.Parse(data)
			if err == nil {
				t.Fatalf("Parse succeeded, want an error; got %+v", *p)
			}
			if p != nil {
				t.Errorf("Parse returned a Pipeline with its error")
			}
			var cerr *config.Error
			if !errors.As(err, &cerr) || len(cerr.Problems) == 0 {
				t.Fatalf("error is %T, want *config.Error with problems: %v", err, err)
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

func TestLoad(t *testing.T) {
	setFixtureEnv(t)
	file := filepath.Join("testdata", "bad", "archive-without-dir.yaml")
	_, err := config.Load(file)
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("Load error is %T, want *config.Error", err)
	}
	if cerr.File != file || !strings.HasPrefix(err.Error(), "invalid pipeline config "+file+":\n") {
		t.Errorf("Load error does not name the file: %q", err)
	}

	_, err = config.Load(filepath.Join(t.TempDir(), "missing.yaml"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("Load of a missing file: %v, want a wrapped os.ErrNotExist naming the file", err)
	}
}

func TestEnvExpansion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		env      map[string]string
		want     string // checkpoint after expansion, or the error text
	}{
		{"plain", "${A}", map[string]string{"A": "x"}, "x"},
		{"default when unset", "${A:-d}", nil, "d"},
		{"default when empty", "${A:-d}", map[string]string{"A": ""}, "d"},
		{"empty without default", "x${A}y", map[string]string{"A": ""}, "xy"},
		{"set wins over default", "${A:-d}", map[string]string{"A": "v"}, "v"},
		{"empty default", "a${A:-}b", nil, "ab"},
		{"dollar escape", "$${A}", map[string]string{"A": "x"}, "${A}"},
		{"lone dollar", "a$b$", nil, "a$b$"},
		{"two refs", "${A}/${B}", map[string]string{"A": "x", "B": "y"}, "x/y"},
		{"no re-expansion", "${A}", map[string]string{"A": "${B}", "B": "no"}, "${B}"},
		{"# inside quotes is not a comment", "a #${NOPE}", nil, "line 2: undefined environment variable ${NOPE}; set it, or give a default with ${NOPE:-value}"},
		{"undefined", "${NOPE}", nil, "line 2: undefined environment variable ${NOPE}; set it, or give a default with ${NOPE:-value}"},
		{"bad name", "${1A}", nil, "line 2: invalid environment variable reference ${1A}; write ${NAME} or ${NAME:-default} with NAME made of letters, digits and _, or $${ for a literal ${"},
		{"unterminated", "${A", nil, "line 2: unterminated ${A\"; close it with }, or write $${ for a literal ${"},
		{"nested", "${A:-${B}}", nil, "line 2: nested reference in ${A:-${B}} is not supported; give a literal default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "source: {path: ./l, format: parquet}\ncheckpoint: \"" + tt.in + "\"\nsink: {table: db.t}\n"
			p, err := config.ParseEnv([]byte(src), tt.env)
			if err != nil {
				var cerr *config.Error
				if !errors.As(err, &cerr) || len(cerr.Problems) != 1 {
					t.Fatalf("want one problem, got %v", err)
				}
				if got := cerr.Problems[0].String(); got != tt.want {
					t.Errorf("got  %s\nwant %s", got, tt.want)
				}
				return
			}
			if p.Checkpoint != tt.want {
				t.Errorf("checkpoint = %q, want %q", p.Checkpoint, tt.want)
			}
		})
	}
}

// TestValidateBuiltInGo covers the path callers take when they build a
// Pipeline themselves: no lines, but the same paths and messages.
func TestValidateBuiltInGo(t *testing.T) {
	t.Parallel()
	p := &config.Pipeline{
		Source: config.Source{
			Path: "./l", Format: "csv",
			Schema: []config.Column{{Name: "a", Type: "long"}, {Name: "b", Type: "int"}, {Name: "c", Type: "varchar"}},
		},
		Sink:       config.Sink{Table: "db.t"},
		Trigger:    config.Trigger{Kind: config.TriggerProcessingTime},
		Checkpoint: "./c",
	}
	err := p.Validate()
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("Validate = %v, want *config.Error", err)
	}
	var paths []string
	for _, pr := range cerr.Problems {
		if pr.Line != 0 {
			t.Errorf("problem %v has a line, but a Go-built Pipeline has none", pr)
		}
		paths = append(paths, pr.Path)
	}
	if want := []string{"source.schema[2].type", "trigger"}; !slices.Equal(paths, want) {
		t.Errorf("problem paths = %q, want %q\n%v", paths, want, err)
	}

	p = &config.Pipeline{Source: config.Source{Path: "./l", Format: "json"}, Sink: config.Sink{Table: "db.t"}, Checkpoint: "./c"}
	if err := p.Validate(); err != nil {
		t.Errorf("Validate of a Pipeline without defaults: %v, want nil", err)
	}
	p.SetDefaults()
	if err := p.Validate(); err != nil {
		t.Errorf("Validate after SetDefaults: %v, want nil", err)
	}
	if p.Source.MaxFileAge != 0 || *p.Sink.CreateTable != true || p.Trigger.String() != "available-now" {
		t.Errorf("SetDefaults left %+v", *p)
	}
}

func TestErrorFormat(t *testing.T) {
	t.Parallel()
	e := &config.Error{Problems: []config.Problem{
		{Path: "sink.mode", Line: 3, Message: "bad"},
		{Path: "checkpoint", Message: "required"},
		{Line: 9, Message: "unknown key"},
	}}
	want := "invalid pipeline config:\n  - line 3: sink.mode: bad\n  - checkpoint: required\n  - line 9: unknown key"
	if e.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", e.Error(), want)
	}
}

func TestParseTrigger(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    config.Trigger
		str     string
		wantErr string
	}{
		{in: "available-now", want: config.Trigger{Kind: "available-now"}, str: "available-now"},
		{in: " once ", want: config.Trigger{Kind: "once"}, str: "once"},
		{in: "processing-time=1s", want: config.Trigger{Kind: "processing-time", Interval: time.Second}, str: "processing-time=1s"},
		{in: "1s", want: config.Trigger{Kind: "processing-time", Interval: time.Second}, str: "processing-time=1s"},
		{in: "90s", want: config.Trigger{Kind: "processing-time", Interval: 90 * time.Second}, str: "processing-time=1m30s"},
		{in: "1h0m", want: config.Trigger{Kind: "processing-time", Interval: time.Hour}, str: "processing-time=1h"},
		{in: "processing-time=1d", want: config.Trigger{Kind: "processing-time", Interval: 24 * time.Hour}, str: "processing-time=1d"},
		{in: "500ms", want: config.Trigger{Kind: "processing-time", Interval: 500 * time.Millisecond}, str: "processing-time=500ms"},
		{in: "", wantErr: `empty trigger; use available-now, once, processing-time=<duration> or a duration such as "1m"`},
		{in: "processing-time", wantErr: `trigger "processing-time" needs an interval; write e.g. "processing-time=1m" or just "1m"`},
		{in: "processing-time=0s", wantErr: `trigger interval "0s" must be greater than zero; for a single batch use "once" or "available-now"`},
		{in: "-1s", wantErr: `trigger interval "-1s" must be greater than zero; for a single batch use "once" or "available-now"`},
		{in: "processing-time=soon", wantErr: `bad trigger interval: invalid duration "soon": expected a number, e.g. "30s", "15m" or "7d"`},
		{in: "10", wantErr: `bad trigger interval: missing unit in duration "10"; add one of ns, us, ms, s, m, h, d, w (e.g. "10s")`},
		{in: "availablenow", wantErr: `unknown trigger "availablenow"; did you mean "available-now"? (use available-now, once, processing-time=<duration> or a duration such as "1m")`},
		{in: "continuous", wantErr: `unknown trigger "continuous"; use available-now, once, processing-time=<duration> or a duration such as "1m"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := config.ParseTrigger(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("err = %v\nwant  %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || got.String() != tt.str {
				t.Errorf("= %+v (%q), %v; want %+v (%q)", got, got.String(), err, tt.want, tt.str)
			}
			var flagValue config.Trigger
			if err := flagValue.Set(tt.in); err != nil || flagValue != tt.want {
				t.Errorf("Set = %+v, %v", flagValue, err)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    time.Duration
		str     string
		wantErr string
	}{
		{in: "0", want: 0, str: "0s"},
		{in: "1s", want: time.Second, str: "1s"},
		{in: "1h30m", want: 90 * time.Minute, str: "1h30m"},
		{in: "7d", want: 7 * 24 * time.Hour, str: "7d"},
		{in: "1w", want: 7 * 24 * time.Hour, str: "7d"},
		{in: "1d12h", want: 36 * time.Hour, str: "1d12h"},
		{in: "1.5d", want: 36 * time.Hour, str: "1d12h"},
		{in: "2w3d", want: 17 * 24 * time.Hour, str: "17d"},
		{in: "1d0h0m1ns", want: 24*time.Hour + 1, str: "1d1ns"},
		{in: "-1.5h", want: -90 * time.Minute, str: "-1h30m"},
		{in: "250ms", want: 250 * time.Millisecond, str: "250ms"},
		{in: "1µs", want: time.Microsecond, str: "1µs"},
		{in: ".5s", want: 500 * time.Millisecond, str: "500ms"},
		{in: "2562047h47m16.854775807s", want: 1<<63 - 1, str: "106751d23h47m16.854775807s"},
		{in: "", wantErr: `empty duration; write e.g. "30s", "15m" or "7d"`},
		{in: "10", wantErr: `missing unit in duration "10"; add one of ns, us, ms, s, m, h, d, w (e.g. "10s")`},
		{in: "7 days", wantErr: `unknown unit " days" in duration "7 days"; use ns, us, ms, s, m, h, d or w`},
		{in: "7y", wantErr: `unknown unit "y" in duration "7y"; use ns, us, ms, s, m, h, d or w`},
		{in: "d", wantErr: `invalid duration "d": expected a number, e.g. "30s", "15m" or "7d"`},
		{in: "-", wantErr: `invalid duration "-": a sign needs a number after it, e.g. "30s"`},
		{in: "100000w", wantErr: `duration "100000w" is too large; the limit is about 292 years`},
		{in: "2562047h47m16.854775808s", wantErr: `duration "2562047h47m16.854775808s" is too large; the limit is about 292 years`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := config.ParseDuration(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("err = %v\nwant  %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || config.Duration(got).String() != tt.str {
				t.Errorf("= %v (%q), %v; want %v (%q)", got, config.Duration(got).String(), err, tt.want, tt.str)
			}
		})
	}
}

// TestDurationMatchesGo checks the Go-syntax subset against time.ParseDuration
// itself, the behaviour users will expect.
func TestDurationMatchesGo(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1ns", "1.000000001s", "3h2m1.5s", "-0.5ms", "+10us", "1μs", "0.1h", "99999h", "1.9999999999999999999s"} {
		want, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := config.ParseDuration(s); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; time.ParseDuration gives %v", s, got, err, want)
		}
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	setFixtureEnv(t)
	p, err := config.Load(filepath.Join("testdata", "good", "full.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := config.Parse(out)
	if err != nil {
		t.Fatalf("re-parse of marshalled pipeline: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("round trip changed the pipeline:\n got %+v\nwant %+v", *back, *p)
	}
}

func TestExampleInReferenceParses(t *testing.T) {
	t.Parallel()
	p, err := config.ParseEnv([]byte(config.ExamplePipeline), nil)
	if err != nil {
		t.Fatalf("the reference's example does not parse: %v", err)
	}
	if p.Catalog.URI != "file:./catalog.db" {
		t.Errorf("catalog.uri = %q", p.Catalog.URI)
	}
}

// Spark's snapshot-property.<key> options are sink keys too.
func TestSnapshotPropertyKeys(t *testing.T) {
	t.Parallel()
	p, err := config.Parse([]byte(`source: {path: ./l, format: parquet}
sink:
  table: db.t
  snapshot-properties: {team: ingest}
  snapshot-property.job: nightly
  snapshot-property.owner: data-eng
checkpoint: ./c
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"team": "ingest", "job": "nightly", "owner": "data-eng"}
	if !reflect.DeepEqual(p.Sink.SnapshotProperties, want) {
		t.Fatalf("snapshot properties %v, want %v", p.Sink.SnapshotProperties, want)
	}
	_, err = config.Parse([]byte("source: {path: ./l, format: parquet}\nsink: {table: db.t, snapshot-propery.job: x}\ncheckpoint: ./c\n"))
	if err == nil || !strings.Contains(err.Error(), "snapshot-propery.job") {
		t.Fatalf("a misspelt key: %v", err)
	}
}

// The branch is sink.branch, or Spark's spark.wap.branch as a sink key;
// upserts to a branch are refused.
func TestBranchKeys(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"branch", "spark.wap.branch"} {
		p, err := config.Parse([]byte("source: {path: ./l, format: parquet}\nsink: {table: db.t, " + key + ": audit}\ncheckpoint: ./c\n"))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if p.Sink.Branch != "audit" {
			t.Fatalf("%s: sink.branch = %q, want audit", key, p.Sink.Branch)
		}
	}
	_, err := config.Parse([]byte("source: {path: ./l, format: parquet}\nsink: {table: db.t, branch: audit, mode: upsert, identifier-fields: [id]}\ncheckpoint: ./c\n"))
	if err == nil || !strings.Contains(err.Error(), "sink.branch") {
		t.Fatalf("upsert to a branch: %v", err)
	}
}

// A hive catalog needs the metastore's Thrift URI.
func TestHiveCatalogURI(t *testing.T) {
	for yaml, want := range map[string]string{
		"catalog: {type: hive}\n":                            `catalog.uri: required when catalog.type is "hive"`,
		"catalog: {type: hive, uri: \"http://ms:9083\"}\n":   `"http://ms:9083" is not a Thrift URI`,
		"catalog: {type: hive, uri: \"thrift://ms:9083\"}\n": "",
	} {
		_, err := config.Parse([]byte(yaml + "source: {path: ./l, format: csv}\nsink: {table: db.t}\ncheckpoint: ck\n"))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", yaml, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: error %v, want %q", yaml, err, want)
		}
	}
}
