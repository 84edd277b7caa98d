package main

import (
	"context"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/floe-io/floe/config"
)

func init() {
	helps["stream"] = commandHelp{
		usage: "stream (--source DIR --format parquet|csv|json|debezium-json|avro | --source-table TABLE [-o KEY=VALUE ...] | " +
			"--source-type kafka -o kafka.bootstrap.servers=HOST:PORT -o subscribe=TOPIC [--format " + strings.Join(config.KafkaFormats, "|") + "]) " +
			"(--table TABLE | --sink console) --checkpoint DIR [flags]",
		about: "Run a pipeline configured by flags instead of a file: every pipeline key that has a flag " +
			"(docs/config.md) is one here, with the key's name, type and default. Read a landing directory (--source), " +
			"the appends of an Iceberg table (--source-table) or Kafka topics (--source-type kafka), write a table (--table, which may be a template " +
			"such as db.events_{region}) or the console, and record progress in --checkpoint. " +
			"Exits 3 when --fail-on-empty is given and there was no input. " +
			"--source is a local directory or an object store prefix (s3://, gs://, abfs://, abfss://).",
		options: []optionList{
			{"Write options, with any source (-o KEY=VALUE, Spark's names)", config.WriteOptions()},
			{"Read options of --source-table (-o KEY=VALUE, Spark's Iceberg source names)", config.SourceOptions("iceberg")},
			{"Read options of --source-type kafka (-o KEY=VALUE, Spark's Kafka source names, docs/kafka.md)", config.SourceOptions("kafka")},
		},
		examples: []example{
			{"Drain a landing directory's backlog into a table, then stop.",
				"floe stream --source landing/ --format parquet --table db.events --checkpoint ckpt/events"},
			{"Keep running: a batch a minute, at most 100 files each.",
				"floe stream --source landing/ --format csv --table db.events --checkpoint ckpt/events --trigger 1m --max-files-per-trigger 100"},
			{"Partition the table floe creates, and set a table property on it.",
				"floe stream ... --partition-fields 'day(ts),bucket(id, 16)' -p table-default.write.parquet.compression-codec=zstd"},
			{"Iceberg to Iceberg: read another table's appends, filtered, ten files a batch.",
				"floe stream --source-table db.events --table db.events_eu --checkpoint ckpt/eu --filter \"region = 'eu'\" -o streaming-max-files-per-micro-batch=10"},
			{"Kafka to Iceberg: a topic's JSON messages, everything there at the start, then stop.",
				"floe stream --source-type kafka -o kafka.bootstrap.servers=localhost:9092 -o subscribe=events --format json --table db.events --checkpoint ckpt/events"},
			{"Tag every snapshot with the job that made it.",
				"floe stream ... -o snapshot-property.job=nightly"},
			{"An S3 warehouse with the embedded catalog kept locally.",
				"floe stream ... --warehouse s3://bucket/wh --catalog-uri ./catalog.db -p s3.endpoint=http://127.0.0.1:7070 -p s3.region=us-east-1"},
		},
	}
}

func cmdStream(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, rf, err := streamConfig("stream", args, stderr)
	if err != nil {
		return err
	}
	return runPipeline(ctx, cfg, rf, stdout, stderr)
}

// streamConfig reads a pipeline given as flags, for command name.
func streamConfig(name string, args []string, stderr io.Writer) (*config.Pipeline, runFlags, error) {
	fs, rf := streamFlags(name, stderr)
	pos, err := fs.parse(args)
	if err != nil {
		return nil, *rf, err
	}
	if len(pos) > 0 {
		return nil, *rf, usagef("%s takes no positional arguments (got %q); see floe %s --help", name, pos[0], name)
	}
	var cfg config.Pipeline
	if err := fs.apply(&cfg); err != nil {
		return nil, *rf, err
	}
	if err := readFlags(&cfg); err != nil {
		return nil, *rf, err
	}
	cfg.SetFlagDefaults(fs.isGiven)
	if err := cfg.Validate(); err != nil {
		return nil, *rf, err
	}
	return &cfg, *rf, nil
}

// streamFlags are the flags of a pipeline given whole as flags.
func streamFlags(name string, stderr io.Writer) (*flagSet, *runFlags) {
	fs := newFlagSet(name, stderr)
	rf := &runFlags{}
	rf.register(fs)
	// Every other key that has a flag: stream is the pipeline file as flags.
	bound := append(slices.Clone(catalogKeys), runKeys...)
	for _, f := range config.Flags() {
		if !slices.Contains(bound, f.Key) {
			fs.key(f.Key)
		}
	}
	fs.note("format", "Landing files take the formats below; with --source-type kafka it is the messages' format: kafka "+
		"(the default: Spark's key, value, topic, ... columns), json, debezium-json, avro, debezium-avro, protobuf or json-schema (docs/kafka.md).")
	fs.values("format", config.KafkaFormats...)
	fs.alias("partition-field", "partition-fields", "--partition-fields", nil)
	fs.alias("table-property", "p", "-p table-default.KEY=VALUE", func(v string) string { return "table-default." + v })
	fs.alias("snapshot-property", "o", "-o snapshot-property.KEY=VALUE", func(v string) string { return config.SnapshotPropertyPrefix + v })
	fs.alias("no-fanout", "fanout", "--fanout=false", negate)
	return fs, rf
}

// readFlags makes --source-table an iceberg source, with the -o options
// and --filter, and --keep and --drop pushed into the read: columns that
// are not written are not read either. A table template routes rows before
// keep and drop, by columns they may leave out, so with one they stay on
// the sink.
func readFlags(cfg *config.Pipeline) error {
	src := &cfg.Source
	if src.Type == "kafka" {
		return nil
	}
	if src.Table == "" {
		if len(src.Options) > 0 {
			k := slices.Sorted(maps.Keys(src.Options))[0]
			if f := flagFor(k); f != "" {
				return usagef("-o %s=%s is not an option of a landing directory; give it as the flag %s=%s",
					k, shownOption(k, src.Options[k]), f, src.Options[k])
			}
			return usagef("-o %s=%s is a read option of --source-table, but the source is a landing directory; with one, -o takes only the write options %s",
				k, shownOption(k, src.Options[k]), landingOptions())
		}
		if src.Filter != "" {
			return usagef("--filter %q filters the rows read with --source-table, but the source is a landing directory, whose files are read whole; remove it", src.Filter)
		}
		return nil
	}
	if src.Path != "" || src.Format != "" {
		return usagef("give --source-table or --source with --format, not both")
	}
	src.Type = "iceberg"
	if !cfg.Sink.IsTemplate() {
		src.Keep, src.Drop = cfg.Sink.Keep, cfg.Sink.Drop
		cfg.Sink.Keep, cfg.Sink.Drop = nil, nil
	}
	return nil
}

// flagFor is the flag most likely meant by an option name in Spark's
// spelling (maxFilesPerTrigger: --max-files-per-trigger), "" for none.
func flagFor(option string) string {
	var names []string
	for _, f := range config.Flags() {
		if f.Prefix == "" && len(f.Name) > 1 {
			names = append(names, f.Name)
		}
	}
	if hint := config.Closest(option, names); hint != "" {
		return "--" + hint
	}
	return ""
}

// landingOptions lists the -o options a landing directory takes: Spark's
// write options.
func landingOptions() string {
	opts := []string{config.SnapshotPropertyPrefix + "KEY=VALUE"}
	for _, k := range slices.Sorted(maps.Keys(config.SparkSinkOptions)) {
		opts = append(opts, k+"=NAME")
	}
	return strings.Join(opts, ", ")
}

// shownOption is an option's value as an error may show it: a value whose
// name says it is a secret is not shown.
func shownOption(key, value string) string {
	k := strings.ToLower(key)
	for _, s := range []string{"password", "secret", "token", "jaas", "credential", "auth"} {
		if strings.Contains(k, s) {
			return "(not shown)"
		}
	}
	return value
}
