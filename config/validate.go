package config

import (
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Validate reports every problem with p as one *Error, or returns nil.
//
// Fields that have defaults may be left empty: they are checked as the
// default they stand for, so Validate gives the same answer before and after
// SetDefaults and works on a Pipeline built in Go.
func (p *Pipeline) Validate() error {
	return p.validate().err()
}

func (p *Pipeline) validate() problems {
	var ps problems

	ps.oneOf("catalog.type", p.Catalog.Type)
	if p.Catalog.Type == "rest" {
		if p.Catalog.URI == "" {
			ps.add("catalog.uri", 0, `required when catalog.type is "rest" (the REST catalog's URL, e.g. "http://localhost:8181")`)
		} else if u, err := url.Parse(p.Catalog.URI); err != nil || u.Scheme == "" || u.Host == "" {
			ps.add("catalog.uri", 0, `%q is not a URL; a REST catalog needs one such as "http://localhost:8181"`, p.Catalog.URI)
		}
	}
	if p.Catalog.Type == "hive" {
		if p.Catalog.URI == "" {
			ps.add("catalog.uri", 0, `required when catalog.type is "hive" (the Hive Metastore's Thrift URI, e.g. "thrift://localhost:9083")`)
		} else if u, err := url.Parse(p.Catalog.URI); err != nil || u.Scheme != "thrift" || u.Host == "" {
			ps.add("catalog.uri", 0, `%q is not a Thrift URI; a Hive Metastore is reached at one such as "thrift://localhost:9083"`, p.Catalog.URI)
		}
	}
	ps.propertyKeys("catalog.properties", p.Catalog.Properties)
	for _, k := range slices.Sorted(maps.Keys(p.Catalog.Properties)) {
		if err := CheckCatalogProperty(k); k != "" && err != nil {
			ps.add("catalog.properties."+k, 0, "%v", err)
		}
	}

	p.Source.validate(&ps)

	p.Sink.validate(&ps, p.OnBadRecord == "dead-letter")
	p.Maintenance.validate(&ps)
	if p.Source.Type == "iceberg" && p.Source.Table != "" && p.Source.Table == p.Sink.Table && !p.Sink.Console() {
		ps.add("sink.table", 0, "%q is also source.table, so each batch would read back the rows the batch before appended and write them again, "+
			"without end; write to another table", p.Sink.Table)
	}
	if files, bytes, rows := p.Source.ReadLimits(); p.Sink.Mode == "complete" && (files > 0 || bytes > 0 || rows > 0) {
		// Each complete-mode batch replaces the table: with a rate limit the
		// table would end up holding only the last slice of the input.
		limits := "source.max-files-per-trigger or source.max-bytes-per-trigger"
		if p.Source.Type == "iceberg" {
			limits = "source.options.streaming-max-files-per-micro-batch or source.options.streaming-max-rows-per-micro-batch"
		}
		ps.add("sink.mode", 0, "complete replaces the table with each batch, so it cannot be combined with %s (the table would hold only the last batch); remove the limit or use mode: append", limits)
	}

	switch t := p.Trigger; t.Kind {
	case "", TriggerAvailableNow, TriggerOnce:
		if t.Interval != 0 {
			ps.add("trigger", 0, "%s takes no interval; use processing-time=%s to run every %s", t.String(), formatDuration(t.Interval), formatDuration(t.Interval))
		}
	case TriggerProcessingTime:
		if t.Interval <= 0 {
			ps.add("trigger", 0, "processing-time needs an interval greater than zero, e.g. processing-time=1m")
		}
	default:
		ps.add("trigger", 0, "unknown trigger kind %q; use available-now, once or processing-time", t.Kind)
	}
	ps.required("checkpoint", p.Checkpoint)
	ps.oneOf("on-bad-file", p.OnBadFile)
	if p.OnBadFile == "quarantine" && p.Source.Type == "kafka" {
		// A part is a partition's range of messages: setting it aside would
		// drop the good messages with the bad one.
		ps.add("on-bad-file", 0, "quarantine sets a bad input file aside, but source.type kafka reads messages, and a message that cannot be read "+
			"stops the batch naming its topic, partition and offset; use on-bad-file: fail, and fix or skip the message at the producer "+
			"(or start past it with source.options.startingOffsets on a new checkpoint)")
	}
	ps.oneOf("on-bad-record", p.OnBadRecord)
	if p.OnBadRecord == "dead-letter" {
		switch {
		case p.Sink.Console():
			ps.add("on-bad-record", 0, "dead-letter writes bad records to sink.dead-letter-table, but the sink is the console; use on-bad-record: fail")
		case p.Sink.DeadLetterTable == "" && (p.Source.Type != "kafka" || p.Source.Options["deadLetterTopic"] == ""):
			ps.add("on-bad-record", 0, "dead-letter needs sink.dead-letter-table (--dead-letter-table), the table bad records go to, e.g. %s, "+
				"or with source.type kafka source.options.deadLetterTopic, a topic", deadLetterExample(p.Sink.Table))
		case p.Sink.DeadLetterTable != "" && p.Source.Options["deadLetterTopic"] != "":
			ps.add("on-bad-record", 0, "dead-letter sends bad records to one place: sink.dead-letter-table %s or source.options.deadLetterTopic %s; remove one",
				p.Sink.DeadLetterTable, p.Source.Options["deadLetterTopic"])
		case p.Source.Type == "iceberg":
			ps.add("on-bad-record", 0, "dead-letter sets aside records a source cannot read, but source.type iceberg reads the rows of table %s, which are all readable; use on-bad-record: fail", p.Source.Table)
		}
	}
	if dlt := p.Source.Options["deadLetterTopic"]; dlt != "" && p.Source.Type == "kafka" {
		switch {
		case p.OnBadRecord != "dead-letter":
			ps.add("source.options", 0, "deadLetterTopic is set, but on-bad-record is not dead-letter, so no record goes there; set on-bad-record: dead-letter, or remove it")
		case slices.Contains(SplitList(p.Source.Options["subscribe"]), dlt):
			ps.add("source.options", 0, "deadLetterTopic %s is also a topic the source subscribes to, so the query would read its own dead letters; name another topic", dlt)
		}
	}
	if p.OnBadFile == "quarantine" && p.Source.Type == "iceberg" {
		// The bad file would be a data file of the source table.
		ps.add("on-bad-file", 0, "quarantine moves a bad input file aside, but source.type iceberg reads the data files of table %s, "+
			"which are the table's, not floe's to move; use on-bad-file: fail and repair the table", p.Source.Table)
	}
	return ps
}

func (s *Sink) validate(ps *problems, badRecords bool) {
	ps.oneOf("sink.type", s.Type)
	if s.Console() {
		if s.Mode == "complete" {
			ps.add("sink.mode", 0, "complete replaces a table, and the console sink has none; use mode: append")
		}
		return
	}
	ps.required("sink.table", s.Table)
	if t := s.Table; t != "" {
		checkTableName(ps, "sink.table", t)
		if err := CheckTemplate(t); err != nil {
			ps.add("sink.table", 0, "%v", err)
		}
	}
	ps.oneOf("sink.mode", s.Mode)
	if s.Mode == "complete" && s.IsTemplate() {
		ps.add("sink.mode", 0, "complete replaces a table's contents with each batch, but a table template writes each batch to the tables its rows name, so tables the batch does not name would keep stale rows; use mode: append, or one pipeline per table")
	}
	s.checkUpsert(ps)
	ps.propertyKeys("sink.table-properties", s.TableProperties)
	for _, k := range slices.Sorted(maps.Keys(s.TableProperties)) {
		if err := CheckTableProperty(k, s.TableProperties[k]); err != nil {
			ps.add("sink.table-properties."+k, 0, "%v", err)
		}
	}
	ps.propertyKeys("sink.table-overrides", s.TableOverrides)
	for _, k := range slices.Sorted(maps.Keys(s.TableOverrides)) {
		if err := CheckTableProperty(k, s.TableOverrides[k]); err != nil {
			ps.add("sink.table-overrides."+k, 0, "%v", err)
		}
	}
	ps.propertyKeys("sink.snapshot-properties", s.SnapshotProperties)
	for i, f := range s.PartitionFields {
		if strings.TrimSpace(f) == "" {
			ps.add(fmt.Sprintf("sink.partition-fields[%d]", i), 0, "empty; write a column or a transform such as day(ts) or bucket(id, 16)")
		}
	}
	if s.FormatVersion != 0 && (s.FormatVersion < 1 || s.FormatVersion > 3) {
		ps.add("sink.format-version", 0, "%d is not an Iceberg format version; use 1, 2 or 3", s.FormatVersion)
	}
	if f := s.WriteFormat; f != "" && !strings.EqualFold(f, "parquet") {
		ps.add("sink.write-format", 0, "%q is not supported: floe writes Parquet data files only; remove the key or set it to parquet", f)
	}
	if s.TargetFileSizeBytes < 0 {
		ps.add("sink.target-file-size-bytes", 0, "%d is negative; use a size in bytes such as 134217728 (128 MiB)", s.TargetFileSizeBytes)
	}
	if s.MaxOpenFiles < 0 {
		ps.add("sink.max-open-files", 0, "%d is negative; use a positive limit such as 100", s.MaxOpenFiles)
	}
	var set []string
	if len(s.Keep) > 0 {
		set = append(set, "keep")
	}
	if len(s.Drop) > 0 {
		set = append(set, "drop")
	}
	if s.Only != "" {
		set = append(set, "only")
	}
	if len(set) > 1 {
		ps.add("sink."+set[1], 0, "%s and %s are mutually exclusive; keep one of them", strings.Join(set[:len(set)-1], ", "), set[len(set)-1])
	}
	ps.oneOf("sink.schema-evolution", s.SchemaEvolution)
	if v := s.FormatVersion; len(s.ColumnDefaults) > 0 && v != 0 && v < 3 {
		ps.add("sink.column-defaults", 0, "default values need format-version 3 tables (Iceberg's write-default and initial-default), but sink.format-version is %d; set it to 3, or remove the defaults", v)
	}
	ps.propertyKeys("sink.column-defaults", s.ColumnDefaults)
	if b := s.Branch; b != "" {
		switch {
		case strings.TrimSpace(b) != b || strings.ContainsAny(b, "/\n"):
			ps.add("sink.branch", 0, "%q is not a branch name; use a plain name such as audit", b)
		case s.Mode == "upsert":
			ps.add("sink.branch", 0, "mode upsert does not write to a branch yet: its deletes are found against main; use mode append, or write main")
		}
	}
	if d := s.DeadLetterTable; d != "" {
		if !s.IsTemplate() && !badRecords {
			ps.add("sink.dead-letter-table", 0, "set, but sink.table %q is not a template, so no row can lack a destination, and on-bad-record is not dead-letter; remove it, set on-bad-record: dead-letter, or use a template such as db.events_{region}", s.Table)
		} else if strings.Contains(d, "{") {
			ps.add("sink.dead-letter-table", 0, "%q is a template; the dead-letter table needs a fixed name such as db.events_dead_letter", d)
		} else {
			checkTableName(ps, "sink.dead-letter-table", d)
			if d == s.Table {
				ps.add("sink.dead-letter-table", 0, "%q is the sink's own table; name another, e.g. %s_dead_letters", d, d)
			}
		}
	}
}

// deadLetterExample suggests a dead-letter table beside table.
func deadLetterExample(table string) string {
	if table == "" || strings.Contains(table, "{") {
		return "db.dead_letters"
	}
	return table + "_dead_letters"
}

func checkTableName(ps *problems, key, t string) {
	parts := strings.Split(t, ".")
	switch {
	case len(parts) < 2:
		ps.add(key, 0, `%q has no namespace; write "<namespace>.<table>", e.g. "db.%s"`, t, t)
	case slices.Contains(parts, ""):
		ps.add(key, 0, `%q has an empty name between dots; write dot-separated names such as "db.events"`, t)
	}
}

// CheckTemplate checks the braces of a table template such as
// "db.events_{region}" or "db.{meta.kind}_events": each placeholder names a
// (possibly nested) column, and braces do not nest.
func CheckTemplate(t string) error {
	open := -1
	for i, r := range t {
		switch r {
		case '{':
			if open >= 0 {
				return fmt.Errorf("%q opens a placeholder inside another at offset %d; placeholders such as {region} do not nest", t, i)
			}
			open = i
		case '}':
			if open < 0 {
				return fmt.Errorf("%q closes a placeholder at offset %d that was never opened; write {column}", t, i)
			}
			name := t[open+1 : i]
			if strings.TrimSpace(name) == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
				return fmt.Errorf("%q has placeholder {%s}, which names no column; write {column} or {struct.field}", t, name)
			}
			open = -1
		}
	}
	if open >= 0 {
		return fmt.Errorf("%q leaves the placeholder at offset %d unclosed; write {column}", t, open)
	}
	return nil
}

func (s *Source) validate(ps *problems) {
	ps.oneOf("source.type", s.Type)
	switch s.Type {
	case "iceberg":
		s.validateIceberg(ps)
		return
	case "kafka":
		s.validateKafka(ps)
		return
	}
	if s.Table != "" {
		ps.add("source.table", 0, "set, but source.type is %q; table is only read by type: iceberg; remove it, or set type: iceberg", s.typeName())
	}
	if len(s.Options) > 0 {
		ps.add("source.options", 0, "set, but source.type is %q; options are only read by type: iceberg; remove them, or set type: iceberg", s.typeName())
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"filter", s.Filter != ""}, {"keep", len(s.Keep) > 0}, {"drop", len(s.Drop) > 0}, {"changelog", s.Changelog}} {
		if k.set {
			ps.add("source."+k.key, 0, "set, but source.type is %q; %s is only read by type: iceberg; shape the rows written with sink.keep, sink.drop or sink.only instead", s.typeName(), k.key)
		}
	}
	ps.required("source.path", s.Path)
	ps.required("source.format", s.Format)
	ps.oneOf("source.format", s.Format)
	if s.MaxFilesPerTrigger < 0 {
		ps.add("source.max-files-per-trigger", 0, "%d is negative; use a positive limit, or 0 for none", s.MaxFilesPerTrigger)
	}
	if s.MaxBytesPerTrigger < 0 {
		ps.add("source.max-bytes-per-trigger", 0, "%d is negative; use a positive limit, or 0 for none", s.MaxBytesPerTrigger)
	}
	if g := s.PathGlobFilter; g != "" {
		if strings.Contains(g, "/") {
			ps.add("source.path-glob-filter", 0, "%q contains /, but the filter is matched against file names only; put directories in source.path", g)
		} else if _, err := path.Match(g, ""); err != nil {
			// path.Match checks the whole pattern even when the name
			// does not match, so "" is enough to find syntax errors.
			ps.add("source.path-glob-filter", 0, "%q is not a valid pattern (check its [ ] brackets and \\ escapes); see Go's path.Match for the syntax", g)
		}
	}
	if s.MaxFileAge < 0 {
		ps.add("source.max-file-age", 0, "%s is negative; use a positive age such as 7d, or 0 for no limit", s.MaxFileAge)
	}
	if s.MinFileAge < 0 {
		ps.add("source.min-file-age", 0, "%s is negative; use a positive age such as 30s, or 0 to read files at once", s.MinFileAge)
	}
	if s.MinFileAge > 0 && s.MaxFileAge > 0 && s.MinFileAge >= s.MaxFileAge {
		ps.add("source.min-file-age", 0, "%s is not less than source.max-file-age (%s), so no file could ever be read; lower it or raise max-file-age", s.MinFileAge, s.MaxFileAge)
	}

	ps.oneOf("source.compression", s.Compression)
	ps.oneOf("source.listing", s.Listing)
	if s.Format == "parquet" && s.Compression != "" && s.Compression != "auto" {
		ps.add("source.compression", 0, "set to %q, but Parquet files compress inside and are read as they are; remove this key", s.Compression)
	}

	ps.oneOf("source.clean-source", s.CleanSource)
	switch {
	case s.CleanSource == "archive" && s.ArchiveDir == "":
		ps.add("source.source-archive-dir", 0, "required (%s)", specFor("source.source-archive-dir").required)
	case s.CleanSource != "archive" && s.ArchiveDir != "":
		cs := s.CleanSource
		if cs == "" {
			cs = specFor("source.clean-source").def
		}
		ps.add("source.source-archive-dir", 0, "set, but source.clean-source is %q, so nothing would be archived; set clean-source: archive, or remove this key", cs)
	case s.ArchiveDir != "" && s.Path != "" && within(s.ArchiveDir, s.Path):
		ps.add("source.source-archive-dir", 0, "%q is inside source.path %q, so archived files would be read again; choose a directory outside it", s.ArchiveDir, s.Path)
	}

	if len(s.Schema) > 0 && s.Format == "parquet" {
		ps.add("source.schema", 0, "not used with parquet, whose files carry their own schema; remove it")
	}
	if len(s.Schema) > 0 && s.Format == "avro" {
		ps.add("source.schema", 0, "not used with avro, whose container files carry their writer schema; remove it")
	}
	if s.Format == "avro" && s.Compression != "" && s.Compression != "auto" {
		ps.add("source.compression", 0, "set to %q, but Avro container files compress their blocks inside and are read as they are; remove this key", s.Compression)
	}
	if len(s.Schema) > 0 && s.Format == "debezium-json" {
		ps.add("source.schema", 0, "not used with debezium-json, whose events carry their own schema (schemas.enable=true) or have it inferred; remove it")
	}
	seen := map[string]int{}
	for i, c := range s.Schema {
		p := fmt.Sprintf("source.schema[%d]", i)
		ps.required(p+".name", c.Name)
		if c.Name != "" {
			if j, dup := seen[c.Name]; dup {
				ps.add(p+".name", 0, "duplicate column %q, also source.schema[%d]; column names must be unique", c.Name, j)
			} else {
				seen[c.Name] = i
			}
		}
		ps.required(p+".type", c.Type)
		if c.Type != "" {
			if err := checkIcebergType(c.Type); err != nil {
				ps.add(p+".type", 0, "%v", err)
			}
		}
		if c.Type == "variant" && s.Format == "csv" {
			ps.add(p+".type", 0, "variant is read from JSON values, not CSV fields; use string, or format json")
		}
	}

	if d := s.CSV.Delimiter; d != "" {
		switch r, _ := utf8.DecodeRuneInString(d); {
		case utf8.RuneCountInString(d) != 1:
			ps.add("source.csv.delimiter", 0, `%q must be exactly one character, e.g. "," or ";" (write "\t" in double quotes for tab)`, d)
		case r == '"' || r == '\r' || r == '\n' || r == utf8.RuneError:
			ps.add("source.csv.delimiter", 0, "%q cannot separate fields, since CSV uses it for quoting or line breaks; choose another character", d)
		}
	}
	if s.CSV.Header != nil && !*s.CSV.Header && s.Format == "csv" && len(s.Schema) == 0 {
		ps.add("source.schema", 0, "required when source.csv.header is false: headerless CSV files have no column names, so list the columns in file order")
	}
}

func (s *Source) typeName() string {
	if s.Type == "" {
		return specFor("source.type").def
	}
	return s.Type
}

// icebergOptions are the read options the iceberg source understands,
// with Spark's names.
var icebergOptions = optionNames(icebergSourceOptions)

// ReadLimits are the per-batch limits the source's configuration sets:
// max-files-per-trigger and max-bytes-per-trigger for files, the
// streaming-max-*-per-micro-batch options for iceberg. Zero is no limit.
// DefaultKafkaBatchBytes is the byte budget of a Kafka batch when
// source.options.maxBytesPerTrigger is not set: the messages' bytes and
// their overhead in memory, which keeps a batch's peak memory bounded
// whatever the backlog (docs/kafka.md, "Batch size and memory").
const DefaultKafkaBatchBytes = 256 << 20

// ReadLimits are the source's limits on a batch: those it sets, and for
// Kafka the default byte budget, except in mode complete, where a batch
// must take the whole backlog (each replaces the table).
func (p *Pipeline) ReadLimits() (maxFiles int, maxBytes, maxRows int64) {
	maxFiles, maxBytes, maxRows = p.Source.ReadLimits()
	if _, set := p.Source.Options["maxBytesPerTrigger"]; p.Source.Type == "kafka" && !set && p.Sink.Mode != "complete" {
		maxBytes = DefaultKafkaBatchBytes
	}
	return maxFiles, maxBytes, maxRows
}

// ReadLimits are the limits the source's settings give a batch.
func (s *Source) ReadLimits() (maxFiles int, maxBytes, maxRows int64) {
	switch s.Type {
	case "kafka":
		n, _ := strconv.ParseInt(strings.TrimSpace(s.Options["maxOffsetsPerTrigger"]), 10, 64)
		b, _ := strconv.ParseInt(strings.TrimSpace(s.Options["maxBytesPerTrigger"]), 10, 64)
		return 0, max(b, 0), max(n, 0)
	case "iceberg":
	default:
		return s.MaxFilesPerTrigger, s.MaxBytesPerTrigger, 0
	}
	num := func(k string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSpace(s.Options[k]), 10, 64)
		return max(n, 0)
	}
	return int(num("streaming-max-files-per-micro-batch")), 0, num("streaming-max-rows-per-micro-batch")
}

// kafkaOptions are the options the kafka source understands besides the
// client's kafka.* settings, with Spark's names.
var kafkaOptions = optionNames(kafkaSourceOptions)

// validateKafka checks a source of type kafka: the brokers, exactly one
// way to choose topics, none of the landing-directory keys, and the
// options' value forms. The offsets' JSON is checked by the source.
func (s *Source) validateKafka(ps *problems) {
	for _, k := range []struct {
		key string
		set bool
	}{{"path", s.Path != ""}, {"table", s.Table != ""}, {"filter", s.Filter != ""}, {"keep", len(s.Keep) > 0}, {"drop", len(s.Drop) > 0}, {"changelog", s.Changelog},
		{"max-files-per-trigger", s.MaxFilesPerTrigger != 0}, {"max-bytes-per-trigger", s.MaxBytesPerTrigger != 0}} {
		if k.set {
			hint := ""
			if strings.HasPrefix(k.key, "max-") {
				hint = " (the batch limit is source.options.maxOffsetsPerTrigger)"
			}
			ps.add("source."+k.key, 0, "set, but source.type is kafka, which reads the topics source.options names; remove %s%s", k.key, hint)
		}
	}
	switch {
	case strings.TrimSpace(s.Options["objectNotifications"]) != "":
		switch s.Format {
		case "parquet", "csv", "json", "debezium-json", "avro":
		default:
			ps.add("source.format", 0, "%q is not a file format: with source.options.objectNotifications the messages announce objects, which are read as source.format; use parquet, csv, json, debezium-json or avro", s.Format)
		}
	case s.Format == "", slices.Contains(KafkaFormats, s.Format):
	default:
		ps.add("source.format", 0, "%q is not a kafka message format; use kafka (Spark's key, value, topic, ... columns), json, debezium-json, avro, debezium-avro, protobuf or json-schema (or, for a topic of S3 event notifications announcing %s objects, set source.options.objectNotifications: s3)", s.Format, s.Format)
	}
	if registryFormat(s.Format) && strings.TrimSpace(s.Options["objectNotifications"]) == "" {
		if u := strings.TrimSpace(s.Options["schema.registry.url"]); !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			ps.add("source.options.schema.registry.url", 0, "required with source.format %s: the Confluent Schema Registry's address, e.g. \"http://registry:8081\"; got %q", s.Format, u)
		}
	} else {
		for _, k := range []string{"schema.registry.url", "schema.registry.basic.auth.user.info"} {
			if _, ok := s.Options[k]; ok {
				ps.add("source.options."+k, 0, "only read with source.format avro, debezium-avro, protobuf or json-schema; remove it")
			}
		}
	}
	if len(s.Schema) > 0 && s.Format != "json" {
		ps.add("source.schema", 0, "only read with source.format json, which types the values' columns; remove it")
	}
	if strings.TrimSpace(s.Options["kafka.bootstrap.servers"]) == "" {
		ps.add("source.options.kafka.bootstrap.servers", 0, "required with source.type kafka: the brokers, e.g. \"broker1:9092,broker2:9092\"")
	}
	var topics []string
	for _, k := range []string{"subscribe", "subscribePattern", "assign"} {
		if strings.TrimSpace(s.Options[k]) != "" {
			topics = append(topics, k)
		}
	}
	if len(topics) != 1 {
		ps.add("source.options", 0, "give exactly one of subscribe (a comma list of topics), subscribePattern (a regular expression) and assign (JSON such as {\"events\":[0,1]}); got %d", len(topics))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Options)) {
		v := strings.TrimSpace(s.Options[k])
		p := "source.options." + k
		switch k {
		case "maxOffsetsPerTrigger":
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
				ps.add(p, 0, "%q is not valid; use a positive whole number of messages", v)
			}
		case "maxBytesPerTrigger":
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				ps.add(p, 0, "%q is not valid; use a whole number of bytes, e.g. \"536870912\" for 512 MiB, or \"0\" for no limit", v)
			}
		case "startingTimestamp":
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				ps.add(p, 0, "%q is not valid; use epoch milliseconds, e.g. \"1700000000000\"", v)
			}
		case "failOnDataLoss", "includeHeaders":
			if b := strings.ToLower(v); b != "true" && b != "false" {
				ps.add(p, 0, "%q is not valid; use \"true\" or \"false\"", v)
			}
		case "schema.registry.basic.auth.user.info":
			if !strings.Contains(v, ":") {
				ps.add(p, 0, "must be user:password, as the registry's basic auth takes it")
			}
		case "objectNotifications":
			if v != "s3" {
				ps.add(p, 0, "%q is not a kind of notification; use s3 (S3 event notifications, as S3 through SQS, SNS or EventBridge, MinIO and Ceph RGW publish them)", v)
			}
		case "objectNotifications.dedupMessages":
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				ps.add(p, 0, "%q is not valid; use a number of messages, e.g. \"100000\"", v)
			}
		case "subscribe", "subscribePattern", "assign", "startingOffsets", "endingOffsets", "schema.registry.url", "controlTopic", "stateTable", "deadLetterTopic":
		default:
			if strings.HasPrefix(k, "kafka.") {
				continue
			}
			if hint := Closest(k, kafkaOptions); hint != "" {
				ps.add(p, 0, "unknown kafka source option; did you mean %q? (known: %s, and kafka.* client settings)", hint, strings.Join(kafkaOptions, ", "))
			} else {
				ps.add(p, 0, "unknown kafka source option (known: %s, and kafka.* client settings)", strings.Join(kafkaOptions, ", "))
			}
		}
	}
	if s.Options["startingTimestamp"] != "" && s.Options["startingOffsets"] != "" {
		ps.add("source.options.startingTimestamp", 0, "set with startingOffsets; give one of them (startingTimestamp wins in Spark, which surprises)")
	}
}

// validateIceberg checks a source of type iceberg: a table, none of the
// landing-directory keys, and options with Spark's names and value forms.
func (s *Source) validateIceberg(ps *problems) {
	ps.required("source.table", s.Table)
	if s.Path != "" {
		ps.add("source.path", 0, "set, but source.type is iceberg, which reads source.table, not a directory; remove path")
	}
	if s.Format != "" {
		ps.add("source.format", 0, "set, but source.type is iceberg, whose data files carry their own format; remove format")
	}
	if len(s.Keep) > 0 && len(s.Drop) > 0 {
		ps.add("source.drop", 0, "keep and drop are mutually exclusive; keep one of them")
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"max-files-per-trigger", s.MaxFilesPerTrigger != 0}, {"max-bytes-per-trigger", s.MaxBytesPerTrigger != 0}} {
		if k.set {
			ps.add("source."+k.key, 0, "set, but source.type is iceberg, whose limits are the options streaming-max-files-per-micro-batch and streaming-max-rows-per-micro-batch")
		}
	}
	keys := make([]string, 0, len(s.Options))
	for k := range s.Options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := s.Options[k]
		p := "source.options." + k
		switch k {
		case "stream-from-timestamp", "start-snapshot-timestamp", "start-snapshot-id", "streaming-max-files-per-micro-batch", "streaming-max-rows-per-micro-batch",
			"streaming-snapshot-polling-interval-ms", "async-queue-preload-file-limit", "async-queue-preload-row-limit":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			start := k == "stream-from-timestamp" || k == "start-snapshot-timestamp" || k == "start-snapshot-id"
			if err != nil || n < 0 || (n == 0 && !start) {
				what := "a positive whole number"
				switch k {
				case "stream-from-timestamp", "start-snapshot-timestamp":
					what = "epoch milliseconds, e.g. \"1700000000000\""
				case "start-snapshot-id":
					what = "a snapshot id (floe table snapshots TABLE lists them)"
				}
				ps.add(p, 0, "%q is not valid; use %s", v, what)
			}
		case "starting-strategy":
			if !slices.Contains(icebergStartingStrategies, strings.ToUpper(strings.TrimSpace(v))) {
				ps.add(p, 0, "%q is not valid; use one of %s", v, strings.Join(icebergStartingStrategies, ", "))
			}
		case "streaming-skip-overwrite-snapshots", "streaming-skip-delete-snapshots", "streaming-skip-expired-snapshots", "async-micro-batch-planning-enabled":
			if b := strings.ToLower(strings.TrimSpace(v)); b != "true" && b != "false" {
				ps.add(p, 0, "%q is not valid; use \"true\" or \"false\"", v)
			}
		default:
			if hint := Closest(k, icebergOptions); hint != "" {
				ps.add(p, 0, "unknown iceberg source option; did you mean %q? (known: %s)", hint, strings.Join(icebergOptions, ", "))
			} else {
				ps.add(p, 0, "unknown iceberg source option (known: %s)", strings.Join(icebergOptions, ", "))
			}
		}
	}
}

// within reports whether dir is base or below it. Both may be URLs
// ("s3://b/x"); path.Clean treats them alike, which is all a prefix check
// needs.
func within(dir, base string) bool {
	d, b := path.Clean(dir), path.Clean(base)
	return d == b || strings.HasPrefix(d, strings.TrimSuffix(b, "/")+"/")
}

// required reports an empty field, with the spec's hint on what to write.
func (ps *problems) required(path, v string) {
	if v == "" {
		ps.add(path, 0, "required (%s)", specFor(path).required)
	}
}

// oneOf checks an enum against the spec's allowed values. Empty passes: it
// means the default.
func (ps *problems) oneOf(path, v string) {
	allowed := specFor(path).allowed
	if v == "" || slices.Contains(allowed, v) {
		return
	}
	list := strings.Join(allowed, ", ")
	if hint := Closest(v, allowed); hint != "" {
		ps.add(path, 0, "%q is not allowed; did you mean %q? (one of: %s)", v, hint, list)
		return
	}
	ps.add(path, 0, "%q is not allowed; use one of: %s", v, list)
}

func (ps *problems) propertyKeys(path string, m map[string]string) {
	if _, ok := m[""]; ok {
		ps.add(path, 0, "has an empty property name; every entry needs a name before the colon")
	}
}

var icebergPrimitives = []string{
	"boolean", "int", "long", "float", "double", "date", "time",
	"timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary", "variant",
}

// typeAliases maps names from SQL, Spark, Arrow and Go that people reach for
// first to their Iceberg equivalents; the edit-distance suggestion alone
// would never get from "bigint" to "long".
var typeAliases = map[string]string{
	"bool": "boolean", "integer": "int", "int32": "int", "smallint": "int", "tinyint": "int",
	"bigint": "long", "int64": "long", "float32": "float", "real": "float",
	"float64": "double", "varchar": "string", "text": "string", "char": "string",
	"bytes": "binary", "varbinary": "binary", "datetime": "timestamp",
	"timestamp_ntz": "timestamp", "timestamp_ltz": "timestamptz", "timestamp_tz": "timestamptz",
}

// checkIcebergType accepts the Iceberg primitive type names, with decimal
// parameters checked against Iceberg's limits, since a bad type found only
// when the table is created would fail a run long after the config loaded.
func checkIcebergType(t string) error {
	if slices.Contains(icebergPrimitives, t) {
		return nil
	}
	if rest, ok := strings.CutPrefix(t, "decimal"); ok && strings.HasPrefix(strings.TrimSpace(rest), "(") {
		return checkDecimal(t, strings.TrimSpace(rest))
	}
	lower := strings.ToLower(strings.TrimSpace(t))
	if lower == "decimal" {
		return fmt.Errorf("%q needs a precision and scale, e.g. \"decimal(10,2)\"", t)
	}
	var hint string
	switch {
	case lower != t && checkIcebergType(lower) == nil:
		hint = lower // Iceberg type names are lower case
	case typeAliases[lower] != "":
		hint = typeAliases[lower]
	default:
		hint = Closest(t, icebergPrimitives)
	}
	list := strings.Join(icebergPrimitives, ", ") + ", decimal(P,S)"
	if hint != "" {
		return fmt.Errorf("unknown type %q; did you mean %q? (Iceberg types: %s)", t, hint, list)
	}
	return fmt.Errorf("unknown type %q; use an Iceberg type: %s", t, list)
}

func checkDecimal(t, params string) error {
	const form = `write decimal(P,S) with precision P from 1 to 38 and scale S from 0 to P, e.g. "decimal(10,2)"`
	inner, ok := strings.CutSuffix(params, ")")
	if !ok {
		return fmt.Errorf("%q is missing its closing parenthesis; %s", t, form)
	}
	ps, ss, ok := strings.Cut(strings.TrimPrefix(inner, "("), ",")
	if !ok {
		return fmt.Errorf("%q needs both precision and scale; %s", t, form)
	}
	p, err1 := strconv.Atoi(strings.TrimSpace(ps))
	s, err2 := strconv.Atoi(strings.TrimSpace(ss))
	switch {
	case err1 != nil || err2 != nil:
		return fmt.Errorf("%q has a precision or scale that is not a whole number; %s", t, form)
	case p < 1 || p > 38:
		return fmt.Errorf("%q has precision %d, outside 1 to 38; %s", t, p, form)
	case s < 0 || s > p:
		return fmt.Errorf("%q has scale %d, outside 0 to its precision %d; %s", t, s, p, form)
	}
	return nil
}

// checkUpsert checks the options of mode upsert, and that they are not
// given without it.
func (s *Sink) checkUpsert(ps *problems) {
	if !s.Upserts() {
		if len(s.Upsert.OrderBy) > 0 {
			ps.add("sink.upsert.order-by", 0, "orders changes to a key in mode upsert; set mode: upsert or remove it")
		}
		if s.CDC.OpColumn != "" {
			ps.add("sink.cdc.op-column", 0, "names the operation of each change in mode upsert; set mode: upsert or remove it")
		}
		return
	}
	if s.IsTemplate() {
		ps.add("sink.mode", 0, "upsert merges into one table, but %s is a table template; name one table, or use mode: append", s.Table)
	}
	if s.Console() {
		ps.add("sink.mode", 0, "upsert merges into a table, and the console sink has none; use mode: append")
	}
	for i, k := range s.IdentifierFields {
		if strings.TrimSpace(k) == "" {
			ps.add(fmt.Sprintf("sink.identifier-fields[%d]", i), 0, "empty; name a key column")
		}
	}
	if s.FormatVersion == 1 {
		ps.add("sink.format-version", 0, "upsert deletes rows, which format-version 1 cannot record; use 3 (deletion vectors) or 2 (equality deletes)")
	}
	if s.Upsert.KeyIndexBytes < 0 {
		ps.add("sink.upsert.key-index-bytes", 0, "%d is negative; use a size in bytes such as 268435456 (256 MiB), or 0 for the default", s.Upsert.KeyIndexBytes)
	}
	for _, code := range slices.Sorted(maps.Keys(s.CDC.Ops)) {
		if op := s.CDC.Ops[code]; op != OpUpsert && op != OpDelete {
			ps.add("sink.cdc.ops."+code, 0, "%q is not an operation; use upsert or delete", op)
		}
	}
	if s.CDC.OpColumn != "" && slices.Contains(s.IdentifierFields, s.CDC.OpColumn) {
		ps.add("sink.cdc.op-column", 0, "%s is also a key column; name the column that holds the operation code", s.CDC.OpColumn)
	}
}

// KafkaFormats are the formats of source.format with source.type kafka:
// kafka, the default, is Spark's columns (key, value, topic, ...).
var KafkaFormats = []string{"kafka", "json", "debezium-json", "avro", "debezium-avro", "protobuf", "json-schema"}

// registryFormat tells the Kafka formats whose values are in the
// Confluent wire format, their schemas in a schema registry.
func registryFormat(f string) bool {
	return f == "avro" || f == "debezium-avro" || f == "protobuf" || f == "json-schema"
}
