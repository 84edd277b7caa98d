package config_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/config"
)

// Every sink key has a command-line flag (docs/writes.md promises one), and
// the flags are consistent: one name per key, and a map key without a flag
// of its own rides on another map key's KEY=VALUE flag.
func TestFlagsCoverSinkKeys(t *testing.T) {
	byName := map[string]config.Flag{}
	for _, f := range config.Flags() {
		if f.Prefix != "" {
			continue
		}
		if other, dup := byName[f.Name]; dup {
			t.Errorf("flag --%s is the flag of both %s and %s", f.Name, other.Key, f.Key)
		}
		byName[f.Name] = f
	}
	specs := config.Specs()
	section := func(path string) bool {
		for _, o := range specs {
			if strings.HasPrefix(o.Path, path+".") {
				return true
			}
		}
		return false
	}
	for _, s := range specs {
		if !strings.HasPrefix(s.Path, "sink.") || section(s.Path) {
			continue
		}
		f, ok := config.FlagFor(s.Path)
		if !ok {
			t.Errorf("sink key %s has no flag; give its spec entry one", s.Path)
			continue
		}
		if f.Prefix != "" {
			carrier, ok := byName[f.Name]
			if !ok || carrier.Kind != config.FlagMap || f.Kind != config.FlagMap {
				t.Errorf("%s rides on -%s %sKEY=VALUE, which is not a map key's flag", s.Path, f.Name, f.Prefix)
			}
		}
	}
	ref := config.Reference()
	for _, f := range config.Flags() {
		if !strings.Contains(ref, "- Flag: `"+f.Spelling()+"`") {
			t.Errorf("the reference does not show %s's flag %s", f.Key, f.Spelling())
		}
	}
}

// SetKey reads each kind of value as the command line spells it, into the
// field the YAML key fills.
func TestSetKey(t *testing.T) {
	var p config.Pipeline
	for _, kv := range [][2]string{
		{"sink.table", "db.events"},
		{"sink.fanout-enabled", "false"},
		{"sink.format-version", "3"},
		{"sink.target-file-size-bytes", "1048576"},
		{"source.max-file-age", "2d"},
		{"trigger", "1m"},
		{"sink.partition-fields", "day(ts), bucket(id, 16)"},
		{"sink.partition-fields", "region"},
		{"sink.table-properties", "write.format.default=parquet"},
		{"catalog.properties", "s3.endpoint=http://x=y"},
		{"fail-on-empty", "true"},
	} {
		if err := p.SetKey(kv[0], kv[1]); err != nil {
			t.Fatalf("SetKey(%s, %s): %v", kv[0], kv[1], err)
		}
	}
	want := config.Pipeline{FailOnEmpty: true}
	off := false
	want.Sink = config.Sink{Table: "db.events", FanoutEnabled: &off, FormatVersion: 3, TargetFileSizeBytes: 1 << 20,
		PartitionFields:  []string{"day(ts)", "bucket(id, 16)", "region"},
		TableProperties:  map[string]string{"write.format.default": "parquet"},
		IdentifierFields: nil}
	want.Source.MaxFileAge = config.Duration(48 * time.Hour)
	want.Trigger = config.Trigger{Kind: config.TriggerProcessingTime, Interval: time.Minute}
	want.Catalog.Properties = map[string]string{"s3.endpoint": "http://x=y"}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got  %+v\nwant %+v", p, want)
	}

	for _, c := range []struct{ key, value, err string }{
		{"sink.max-open-files", "many", `"many" is not a whole number`},
		{"sink.check-ordering", "maybe", `"maybe" is not a boolean`},
		{"source.min-file-age", "10", "missing unit"},
		{"trigger", "availble-now", "available-now"},
		{"catalog.properties", "s3.secret-access-key:hunter2", "takes KEY=VALUE"},
		{"source.schema", "x", `column "x" has no type`},
		{"source.schema", "id long primary", "only NOT NULL may follow it"},
	} {
		err := p.SetKey(c.key, c.value)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("SetKey(%s, %q) = %v, want an error containing %q", c.key, c.value, err, c.err)
		}
		if err != nil && c.key == "catalog.properties" && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error repeats a property that may be a secret: %v", err)
		}
	}
}

func TestSplitList(t *testing.T) {
	for in, want := range map[string][]string{
		"a,b":                        {"a", "b"},
		" id , bucket(id, 16) ,":     {"id", "bucket(id, 16)"},
		"truncate(s, 4),day(ts)":     {"truncate(s, 4)", "day(ts)"},
		"":                           nil,
		"meta.kind":                  {"meta.kind"},
		"bucket(id, 2)), region":     {"bucket(id, 2))", "region"},
		"((a, b), c), d":             {"((a, b), c)", "d"},
		"unbalanced(a, b, c":         {"unbalanced(a, b, c"},
		"x,,y":                       {"x", "y"},
		"write.format.default=a,b=c": {"write.format.default=a", "b=c"},
	} {
		if got := config.SplitList(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitList(%q) = %q, want %q", in, got, want)
		}
	}
}

// A default whose zero means something else applies to a key the command
// line did not give, and not to one it gave as zero.
func TestSetFlagDefaults(t *testing.T) {
	var p config.Pipeline
	p.SetFlagDefaults(func(string) bool { return false })
	if p.Source.MaxFileAge != config.Duration(7*24*time.Hour) || p.Sink.Mode != "append" || !p.Sink.Fanout() || p.Trigger.Kind != config.TriggerAvailableNow {
		t.Errorf("defaults: %+v", p)
	}
	var given config.Pipeline
	if err := given.SetKey("source.max-file-age", "0"); err != nil {
		t.Fatal(err)
	}
	given.SetFlagDefaults(func(key string) bool { return key == "source.max-file-age" })
	if given.Source.MaxFileAge != 0 {
		t.Errorf("--max-file-age 0 became %v", given.Source.MaxFileAge)
	}
}
