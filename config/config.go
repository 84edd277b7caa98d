// Package config loads and checks the pipeline file that `floe run
// PIPELINE.yaml` executes.
//
// The shape follows Prometheus and Pebble: plain structs with YAML tags,
// defaults filled in after decoding, then Validate. What differs is error
// reporting: every problem in a file (unknown keys, wrong types, missing or
// invalid values) is collected with its field path and line and returned at
// once as an *Error, so a user fixes a file in one pass instead of one rerun
// per mistake.
//
// The keys, their defaults and their documentation live in one table in
// spec.go. SetDefaults, the enum checks in Validate, the hints in "required"
// messages and the Markdown reference (docs/config.md) are all derived from
// it, so none of them can drift from the others.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Pipeline is one `floe run` job: read new files from Source, append them to
// the Sink table registered in Catalog, and record progress in Checkpoint.
type Pipeline struct {
	Catalog Catalog `yaml:"catalog"`
	Source  Source  `yaml:"source"`
	Sink    Sink    `yaml:"sink"`
	// Trigger is written as one scalar; see Trigger.
	Trigger Trigger `yaml:"trigger"`
	// Checkpoint is the directory that makes restarts exactly-once.
	Checkpoint string `yaml:"checkpoint"`
	// OnBadFile is "fail" or "quarantine".
	OnBadFile string `yaml:"on-bad-file"`
	// OnBadRecord is "fail" or "dead-letter": what becomes of one record
	// (a message, a line) that cannot be read as a row.
	OnBadRecord string `yaml:"on-bad-record"`
	// AllowNewQuery permits a new checkpoint against a table that already
	// holds another query's output from the same source.
	AllowNewQuery bool `yaml:"allow-new-query"`
	// FailOnEmpty makes a run that finds no new files an error.
	FailOnEmpty bool `yaml:"fail-on-empty"`
	// Maintenance runs between batches on the tables written.
	Maintenance Maintenance `yaml:"maintenance"`
	// Metrics serves the run's Prometheus metrics and health endpoints.
	Metrics Metrics `yaml:"metrics,omitempty"`
	// Warnings are notes from reading the file that do not stop the run,
	// such as Hadoop properties of a Managed I/O config that floe ignores;
	// the CLI prints them. They are not part of the file.
	Warnings []string `yaml:"-"`
	// Origins maps the floe keys a Managed I/O config's translation set
	// (source.options.start-snapshot-id) to the file's own keys
	// (from_snapshot) and their lines, so that an error found while the
	// pipeline runs can name the key the user wrote. They are not part
	// of the file.
	Origins map[string]KeyOrigin `yaml:"-"`
}

// KeyOrigin is the key of a translated file that set a floe key.
type KeyOrigin struct {
	File string // empty for a config parsed from text
	Key  string // e.g. from_snapshot
	Line int
}

// String names the key where the file has it: from_snapshot (r.yaml,
// line 6).
func (o KeyOrigin) String() string {
	switch {
	case o.File != "" && o.Line > 0:
		return fmt.Sprintf("%s (%s, line %d)", o.Key, o.File, o.Line)
	case o.Line > 0:
		return fmt.Sprintf("%s (line %d)", o.Key, o.Line)
	}
	return o.Key
}

// Metrics is where a run serves /metrics, /healthz and /readyz.
type Metrics struct {
	// Listen is the address, host:port; empty serves nothing.
	Listen string `yaml:"listen,omitempty"`
	// StaleAfter is how long /readyz waits for a batch or a poll of the
	// source to finish; 0 means 10 trigger intervals, at least 5 minutes.
	StaleAfter Duration `yaml:"stale-after,omitempty"`
}

// ReadyWithin is how long /readyz waits for the next batch or poll to
// finish before it says the query is stuck.
func (m Metrics) ReadyWithin(t Trigger) time.Duration {
	if m.StaleAfter > 0 {
		return time.Duration(m.StaleAfter)
	}
	return max(10*t.Interval, 5*time.Minute)
}

// Catalog names the Iceberg catalog that owns the sink table.
type Catalog struct {
	// Type is "sql", "rest", "hadoop" or "glue".
	Type string `yaml:"type"`
	// Name is the catalog name given to iceberg-go.
	Name string `yaml:"name"`
	// URI is the database URI (sql) or endpoint (rest).
	URI string `yaml:"uri"`
	// Warehouse is the storage root for new tables. Empty is deliberately
	// not defaulted here: the caller falls back to $FLOE_WAREHOUSE and
	// then ./warehouse, and only it knows which of those applies.
	Warehouse string `yaml:"warehouse"`
	// Properties go to iceberg-go unchanged (s3.endpoint, credentials,
	// sql.dialect, ...), so new iceberg-go options need no floe release.
	Properties map[string]string `yaml:"properties"`
}

// Source describes the landing directory. The options mirror Spark's file
// source (maxFilesPerTrigger, latestFirst, maxFileAge, cleanSource, ...) so
// that users migrating from Spark find what they expect.
type Source struct {
	// Type is "files" (a landing directory) or "iceberg" (an Iceberg
	// table of the pipeline's catalog, read as a stream of appends).
	Type string `yaml:"type"`
	// Table is the Iceberg table to read when Type is "iceberg".
	Table string `yaml:"table,omitempty"`
	// Options are the iceberg source's read options, with Spark's names
	// and values verbatim (stream-from-timestamp,
	// streaming-max-files-per-micro-batch, ...).
	Options map[string]string `yaml:"options,omitempty"`
	// Filter, Keep and Drop shape what the iceberg source reads: a SQL-like
	// row filter (package filter) and the columns to read or leave out.
	Filter string   `yaml:"filter,omitempty"`
	Keep   []string `yaml:"keep,omitempty"`
	Drop   []string `yaml:"drop,omitempty"`
	// Changelog makes the iceberg source read the table's row-level
	// changes, snapshot by snapshot, instead of its appends.
	Changelog bool `yaml:"changelog,omitempty"`
	// Path is the directory or object-store prefix to read.
	Path string `yaml:"path"`
	// Format is "parquet", "csv", "json" (newline-delimited) or
	// "debezium-json" (Debezium change events, one a line).
	Format string `yaml:"format"`
	// Compression is how csv, json and debezium-json files are
	// compressed: "auto" (by extension), "none", "gzip", "zstd" or
	// "bzip2".
	Compression string `yaml:"compression,omitempty"`
	// Recursive also reads subdirectories of Path.
	Recursive bool `yaml:"recursive"`
	// Listing is "auto" (list only after the newest file seen while the
	// files' paths sort by arrival) or "full" (list everything each batch).
	Listing string `yaml:"listing,omitempty"`
	// MaxFilesPerTrigger caps the files per batch; 0 means no cap.
	MaxFilesPerTrigger int `yaml:"max-files-per-trigger"`
	// MaxBytesPerTrigger caps the bytes per batch; 0 means no cap.
	MaxBytesPerTrigger int64 `yaml:"max-bytes-per-trigger"`
	// LatestFirst takes the newest files first.
	LatestFirst bool `yaml:"latest-first"`
	// PathGlobFilter is a path.Match pattern applied to file names.
	PathGlobFilter string `yaml:"path-glob-filter"`
	// MaxFileAge ignores older files; 0 turns the limit off. In YAML an
	// omitted key means 7d but an explicit 0 means off, which is why Parse,
	// not SetDefaults, applies this default.
	MaxFileAge Duration `yaml:"max-file-age"`
	// MinFileAge skips files younger than this, for producers that do not
	// write atomically.
	MinFileAge Duration `yaml:"min-file-age"`
	// CleanSource is "off", "archive" or "delete".
	CleanSource string `yaml:"clean-source"`
	// ArchiveDir receives processed files when CleanSource is "archive".
	ArchiveDir string `yaml:"source-archive-dir"`
	// Schema, when set, fixes the columns of csv and json files.
	Schema []Column `yaml:"schema"`
	// CSV holds options that only the csv format reads.
	CSV CSVOptions `yaml:"csv"`
}

// Column is one column of an explicit source schema.
type Column struct {
	// Name is the column name in the file and the table.
	Name string `yaml:"name"`
	// Type is an Iceberg primitive type name such as "long" or
	// "decimal(10,2)".
	Type string `yaml:"type"`
	// Required makes the Iceberg column non-nullable.
	Required bool `yaml:"required"`
}

// CSVOptions controls CSV parsing.
type CSVOptions struct {
	// Delimiter is a single character; default ",".
	Delimiter string `yaml:"delimiter"`
	// Header is a pointer because its default is true, and a plain bool
	// could not tell "header: false" from an omitted key.
	Header *bool `yaml:"header"`
}

// Sink is the Iceberg table written to.
type Sink struct {
	// Type is "iceberg" (the table) or "console" (JSON lines on stdout,
	// for looking at a stream).
	Type string `yaml:"type"`
	// Table is "namespace.table"; nested namespaces add parts.
	Table string `yaml:"table"`
	// Mode is "append", "complete" or "upsert".
	Mode string `yaml:"mode"`
	// Upsert and CDC configure mode upsert.
	Upsert UpsertOptions `yaml:"upsert"`
	CDC    CDCOptions    `yaml:"cdc"`
	// CreateTable is a pointer for the same reason as CSVOptions.Header:
	// its default is true.
	CreateTable *bool `yaml:"create-table"`
	// TableProperties are set on a table floe creates.
	TableProperties map[string]string `yaml:"table-properties"`
	// TableOverrides are set on a table floe creates over TableProperties,
	// and on an existing table before floe first writes to it.
	TableOverrides map[string]string `yaml:"table-overrides,omitempty"`
	// SnapshotProperties are added to the summary of every commit.
	SnapshotProperties map[string]string `yaml:"snapshot-properties"`
	// PartitionFields is the partition spec of a table floe creates, one
	// transform per entry: "col", "bucket(col, 16)", "day(ts)", ...
	PartitionFields []string `yaml:"partition-fields,omitempty"`
	// PartitionSpecEvolution lets floe evolve an existing table's spec to
	// PartitionFields instead of stopping on a mismatch.
	PartitionSpecEvolution bool `yaml:"partition-spec-evolution,omitempty"`
	// IdentifierFields are the identifier (key) columns of a created table,
	// and the key of mode upsert.
	IdentifierFields []string `yaml:"identifier-fields,omitempty"`
	// FormatVersion is the Iceberg format version of a created table; 0
	// means 2, or 3 in mode upsert.
	FormatVersion int `yaml:"format-version"`
	// ColumnDefaults are default values of columns, by name, as text in
	// the column's type: the write-default (and initial-default) of a
	// column floe creates or adds by schema evolution.
	ColumnDefaults map[string]string `yaml:"column-defaults,omitempty"`
	// WriteFormat is the data file format; only "parquet" is supported.
	WriteFormat string `yaml:"write-format"`
	// FanoutEnabled keeps one open file per partition; off, rows are
	// grouped by partition within the batch first. A pointer because the
	// default is true.
	FanoutEnabled *bool `yaml:"fanout-enabled"`
	// TargetFileSizeBytes overrides write.target-file-size-bytes.
	TargetFileSizeBytes int64 `yaml:"target-file-size-bytes,omitempty"`
	// MaxOpenFiles overrides write.max-open-files.
	MaxOpenFiles int `yaml:"max-open-files,omitempty"`
	// Keep, Drop and Only select the input fields written (mutually
	// exclusive); Only writes one struct field's contents as the row.
	Keep []string `yaml:"keep,omitempty"`
	Drop []string `yaml:"drop,omitempty"`
	Only string   `yaml:"only,omitempty"`
	// CheckNullability refuses optional input columns for required table
	// columns (Spark's check-nullability); off, values are checked.
	CheckNullability *bool `yaml:"check-nullability"`
	// CheckOrdering refuses input columns in another order than the
	// table's (Spark's check-ordering).
	CheckOrdering *bool `yaml:"check-ordering"`
	// SchemaEvolution is "none" or "add-columns".
	SchemaEvolution string `yaml:"schema-evolution"`
	// DeadLetterTable receives the records on-bad-record: dead-letter sets
	// aside, or else rows whose table template value is null or
	// not a valid name; empty fails the batch instead.
	DeadLetterTable string `yaml:"dead-letter-table,omitempty"`
	// Branch is the branch batches commit to (Spark's branch write
	// option); empty is main.
	Branch string `yaml:"branch,omitempty"`
}

// UpsertOptions configure mode upsert.
type UpsertOptions struct {
	// OrderBy are the columns that order several changes to one key
	// within a batch, compared in turn; the greatest wins, input order
	// breaking ties. Empty: input order alone.
	OrderBy []string `yaml:"order-by,omitempty"`
	// KeyIndexBytes bounds the memory that keeps an integer key's values
	// from batch to batch.
	KeyIndexBytes int64 `yaml:"key-index-bytes,omitempty"`
}

// CDCOptions read change events: each row says whether it upserts or
// deletes its key.
type CDCOptions struct {
	// OpColumn names the column holding each row's operation code; empty
	// makes every row an upsert.
	OpColumn string `yaml:"op-column,omitempty"`
	// Ops maps operation codes to "upsert" or "delete"; codes absent here
	// take DefaultOps.
	Ops map[string]string `yaml:"ops,omitempty"`
	// WriteOpColumn writes the op column to the table too.
	WriteOpColumn bool `yaml:"write-op-column,omitempty"`
}

// Upserts reports whether the sink merges each batch by key.
func (s *Sink) Upserts() bool { return s.Mode == "upsert" }

// CDC operations, the values of CDCOptions.Ops.
const (
	OpUpsert = "upsert"
	OpDelete = "delete"
)

// DefaultOps are the operation codes understood without configuration:
// Debezium's (c create, r snapshot read, u update, d delete) and AWS
// DMS's (I, U, D).
var DefaultOps = map[string]string{
	"c": OpUpsert, "r": OpUpsert, "u": OpUpsert, "d": OpDelete,
	"I": OpUpsert, "U": OpUpsert, "D": OpDelete,
}

// OpCodes is DefaultOps with Ops applied.
func (c *CDCOptions) OpCodes() map[string]string {
	out := maps.Clone(DefaultOps)
	maps.Copy(out, c.Ops)
	return out
}

// Console reports whether the sink prints rows instead of writing a table.
func (s *Sink) Console() bool { return s.Type == "console" }

// Fanout reports whether the fanout writer is on (the default).
func (s *Sink) Fanout() bool { return s.FanoutEnabled == nil || *s.FanoutEnabled }

// NullabilityChecked reports whether check-nullability is on (the default).
func (s *Sink) NullabilityChecked() bool { return s.CheckNullability == nil || *s.CheckNullability }

// OrderingChecked reports whether check-ordering is on (the default).
func (s *Sink) OrderingChecked() bool { return s.CheckOrdering == nil || *s.CheckOrdering }

// IsTemplate reports whether Table routes rows to tables named by their
// values, as in "db.events_{region}".
func (s *Sink) IsTemplate() bool { return strings.Contains(s.Table, "{") }

// Load reads and parses a pipeline file. A returned *Error carries the file
// name, so messages from a run with several pipelines say which one is bad.
func Load(path string) (*Pipeline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read pipeline config: %w", err)
	}
	p, err := Parse(data)
	if e, ok := errors.AsType[*Error](err); ok {
		e.File = path
	}
	return p, err
}

// Parse turns the text of a pipeline file into a valid Pipeline. A Managed
// I/O Iceberg config or a Beam YAML pipeline is translated as ParseManaged
// does; its warnings are in the Pipeline's Warnings.
//
// For a floe pipeline file, Parse expands ${VAR} and ${VAR:-default}
// references, decodes strictly (unknown keys are errors), fills defaults and
// validates. Any failure is an *Error listing
// every problem found, decoding problems first; the Pipeline is then nil.
//
// Problems with ${VAR} references are reported on their own, before any
// decoding: until they are fixed, what the rest of the file means is not
// known, and guessing would report phantom errors.
func Parse(data []byte) (*Pipeline, error) {
	return parse(data, os.LookupEnv, nil)
}

// LoadWith is Load for the CLI: complete, when not nil, is called on the
// decoded Pipeline before defaults and validation, so that flags can supply
// or override what the file says and the result is still checked as a
// whole.
func LoadWith(path string, complete func(*Pipeline)) (*Pipeline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read pipeline config: %w", err)
	}
	p, err := parse(data, os.LookupEnv, complete)
	if e, ok := errors.AsType[*Error](err); ok {
		e.File = path
	}
	if p != nil {
		for k, o := range p.Origins {
			o.File = path
			p.Origins[k] = o
		}
	}
	return p, err
}

func parse(data []byte, lookup func(string) (string, bool), complete func(*Pipeline)) (*Pipeline, error) {
	expanded, probs := expandEnv(data, lookup)
	if len(probs) > 0 {
		return nil, probs.err()
	}

	root, probs := parseYAML(expanded)
	if len(probs) > 0 {
		return nil, probs.err()
	}
	if managedForm(root) != "" {
		p, _, err := parseManaged(root, complete)
		return p, err
	}
	if foldSnapshotProperties(root) || foldSparkOptions(root) {
		// The strict decoder below reads text: give it the folded tree.
		if expanded, probs = marshalNode(root); len(probs) > 0 {
			return nil, probs.err()
		}
	}

	// The walker decodes as well as diagnoses, so that when there are
	// decode problems the fields that did decode can still be validated
	// and every problem is reported in one go.
	w := newWalker()
	p := new(Pipeline)
	if root != nil {
		w.walk(root, "", reflectValueOf(p))
	}
	if len(w.probs) == 0 {
		// With a clean walk, the library's own strict decoder is the
		// authority on the result; it also catches anything the walker
		// may have missed.
		strict := new(Pipeline)
		dec := yaml.NewDecoder(bytes.NewReader(expanded))
		dec.KnownFields(true)
		if err := dec.Decode(strict); err != nil && err != io.EOF {
			return nil, yamlErrorProblems(err).err()
		}
		p = strict
	}

	if complete != nil {
		complete(p)
	}
	applyDefaults(p, func(path string) bool { return w.present[path] })

	all := w.probs
	for _, vp := range p.validate() {
		if w.broken(vp.Path) {
			// Already reported as a decode problem; a second
			// "required" for the same field is only noise.
			continue
		}
		vp.Line = w.lineOf(vp.Path)
		all = append(all, vp)
	}
	if len(all) > 0 {
		return nil, all.err()
	}
	return p, nil
}

// SnapshotPropertyPrefix spells one snapshot property as a sink key, as
// Spark's write option does: "snapshot-property.job: nightly".
const SnapshotPropertyPrefix = "snapshot-property."

// foldSnapshotProperties moves sink keys spelt as Spark's
// snapshot-property.<key> options into sink.snapshot-properties, creating
// that mapping when needed; it reports whether it changed the tree.
func foldSnapshotProperties(root *yaml.Node) bool {
	sink := mappingValue(root, "sink")
	if sink == nil || sink.Kind != yaml.MappingNode {
		return false
	}
	var moved []*yaml.Node
	kept := sink.Content[:0:0]
	for i := 0; i+1 < len(sink.Content); i += 2 {
		k := sink.Content[i]
		if k.Kind == yaml.ScalarNode && strings.HasPrefix(k.Value, SnapshotPropertyPrefix) && len(k.Value) > len(SnapshotPropertyPrefix) {
			key := *k
			key.Value = strings.TrimPrefix(k.Value, SnapshotPropertyPrefix)
			moved = append(moved, &key, sink.Content[i+1])
			continue
		}
		kept = append(kept, k, sink.Content[i+1])
	}
	if len(moved) == 0 {
		return false
	}
	sink.Content = kept
	props := mappingValue(sink, "snapshot-properties")
	if props == nil || props.Kind != yaml.MappingNode {
		props = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: moved[0].Line, Column: moved[0].Column}
		sink.Content = append(sink.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "snapshot-properties", Line: moved[0].Line}, props)
	}
	props.Content = append(props.Content, moved...)
	return true
}

// SparkSinkOptions are Spark's spellings of sink keys, taken as sink keys
// in the YAML and as -o NAME=VALUE on the command line: the branch write
// option, and the session setting of write-audit-publish.
var SparkSinkOptions = map[string]string{"branch": "sink.branch", "spark.wap.branch": "sink.branch"}

// foldSparkOptions renames sink keys spelt as Spark's options to floe's
// key; it reports whether it changed the tree.
func foldSparkOptions(root *yaml.Node) bool {
	sink := mappingValue(root, "sink")
	if sink == nil || sink.Kind != yaml.MappingNode {
		return false
	}
	changed := false
	for i := 0; i+1 < len(sink.Content); i += 2 {
		k := sink.Content[i]
		if key, ok := SparkSinkOptions[k.Value]; ok && k.Kind == yaml.ScalarNode && "sink."+k.Value != key {
			k.Value = strings.TrimPrefix(key, "sink.")
			changed = true
		}
	}
	return changed
}

func marshalNode(n *yaml.Node) ([]byte, problems) {
	b, err := yaml.Marshal(n)
	if err != nil {
		return nil, yamlErrorProblems(err)
	}
	return b, nil
}

// parseYAML returns the document's top node, or nil for an empty file.
func parseYAML(data []byte) (*yaml.Node, problems) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err == io.EOF {
		return nil, nil
	} else if err != nil {
		return nil, annotateTabs(data, yamlErrorProblems(err))
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		return nil, annotateTabs(data, yamlErrorProblems(err))
	default:
		var probs problems
		probs.add("", extra.Line, "a second YAML document starts here; a pipeline file holds exactly one pipeline, so move it to its own file")
		return nil, probs
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlErrorProblems turns yaml.v3's errors, which put the line inside the
// text, into Problems with the line as a field.
func yamlErrorProblems(err error) problems {
	var msgs []string
	if te, ok := errors.AsType[*yaml.TypeError](err); ok {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	var probs problems
	for _, m := range msgs {
		line := 0
		if sub := yamlLineRE.FindStringSubmatch(m); sub != nil {
			line, _ = strconv.Atoi(sub[1])
			m = sub[2]
		}
		probs.add("", line, "invalid YAML: %s", strings.TrimPrefix(m, "yaml: "))
	}
	return probs
}

// annotateTabs adds the likely fix to yaml.v3's opaque complaint about tab
// indentation, the most common syntax error in hand-written YAML.
func annotateTabs(data []byte, probs problems) problems {
	lines := bytes.Split(data, []byte("\n"))
	for i, p := range probs {
		if p.Line < 1 || !strings.Contains(p.Message, "cannot start any token") {
			continue
		}
		for _, l := range lines[max(0, p.Line-2):min(len(lines), p.Line+1)] {
			if bytes.HasPrefix(bytes.TrimLeft(l, " "), []byte("\t")) {
				probs[i].Message += " (YAML indentation must use spaces, not tabs)"
				break
			}
		}
	}
	return probs
}

// SetDefaults fills every unset field that has a default, taking the values
// from the same table that generates docs/config.md. "Unset" means the zero
// value, so SetDefaults is idempotent and works on a Pipeline built in Go.
//
// Source.MaxFileAge is the exception: its zero value means "no age limit",
// so SetDefaults cannot tell it from unset and leaves it alone. Parse gives
// it the 7-day default when the key is omitted; Go code building a Pipeline
// sets it explicitly.
func (p *Pipeline) SetDefaults() {
	applyDefaults(p, nil)
}
