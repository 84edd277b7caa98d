package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// A Managed I/O config is the YAML that Apache Beam's
// Managed.write(Managed.ICEBERG) and Beam YAML's WriteToIceberg take
// (table, catalog_name, catalog_properties, ...). floe accepts it as a
// pipeline file so that a Dataflow job's sink can be replayed or replaced by
// floe without rewriting its config; docs/managed-io.md has the key table.
//
// Beam writes a PCollection that the job's code provides, so the config has
// no source. floe takes one from a `source:` mapping next to the Managed
// keys (the same schema as in floe pipeline files), from a ReadFromCsv,
// ReadFromParquet or ReadFromJson transform in a Beam YAML pipeline, or from
// the CLI through ParseManagedWith.

// managedFile holds the keys of Beam's Iceberg write config, plus floe's
// source and checkpoint, which a Managed I/O config cannot express.
type managedFile struct {
	Table                      string            `yaml:"table"`
	CatalogName                string            `yaml:"catalog_name"`
	CatalogProperties          map[string]string `yaml:"catalog_properties"`
	ConfigProperties           map[string]string `yaml:"config_properties"`
	Drop                       []string          `yaml:"drop"`
	Keep                       []string          `yaml:"keep"`
	Only                       string            `yaml:"only"`
	PartitionFields            []string          `yaml:"partition_fields"`
	TableProperties            map[string]string `yaml:"table_properties"`
	TriggeringFrequencySeconds int32             `yaml:"triggering_frequency_seconds"`

	// floe's additions. A dead-letter table takes the rows a template
	// cannot route and the records the source cannot read, as Beam's
	// error handling sends failed records to a dead-letter output.
	Source          Source `yaml:"source"`
	Checkpoint      string `yaml:"checkpoint"`
	DeadLetterTable string `yaml:"dead_letter_table"`
}

// managedKeys are the keys Beam defines; any one of them at the top level
// marks a file as a Managed I/O config, since no floe key is among them.
var managedKeys = []string{
	"table", "catalog_name", "catalog_properties", "config_properties", "drop", "keep", "only",
	"partition_fields", "table_properties", "triggering_frequency_seconds",
}

// floeOnlyKeys explain the floe pipeline keys that mean nothing in a Managed
// I/O config, where a plain "unknown key" would leave the user guessing.
var floeOnlyKeys = map[string]string{
	"catalog":         "set the catalog with catalog_name and catalog_properties",
	"sink":            "the table and its options are top-level keys here (table, partition_fields, table_properties, ...)",
	"trigger":         "set triggering_frequency_seconds for a streaming run, or leave it out to process the files present and exit",
	"on-bad-file":     "it has no equivalent here; use a floe pipeline file to set it",
	"allow-new-query": "use the --allow-new-query flag of floe run",
	"fail-on-empty":   "use the --fail-on-empty flag of floe run",
}

// beamSourceFormats are the Beam YAML read transforms floe can stand in for,
// with the floe format of each.
var beamSourceFormats = map[string]string{"ReadFromCsv": "csv", "ReadFromParquet": "parquet", "ReadFromJson": "json"}

// IsManaged reports whether data is a Managed I/O Iceberg write config or a
// Beam YAML pipeline, rather than a floe pipeline file. Parse and Load make
// the same decision; IsManaged lets the CLI choose ParseManagedWith instead.
// ${VAR} references are expanded from the environment first, as Parse does.
func IsManaged(data []byte) bool {
	expanded, probs := expandEnv(data, os.LookupEnv)
	if len(probs) > 0 {
		return false
	}
	root, probs := parseYAML(expanded)
	return len(probs) == 0 && managedForm(root) != ""
}

// managedForm returns "managed" for a Managed I/O config, "beam" for a Beam
// YAML pipeline and "" for anything else.
func managedForm(root *yaml.Node) string {
	if root == nil || root.Kind != yaml.MappingNode {
		return ""
	}
	form, misspeltRead, writeOnly := "", false, false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		switch {
		case k.Kind != yaml.ScalarNode:
		case k.Value == "pipeline":
			return "beam"
		case slices.Contains(managedReadKeys, k.Value):
			return "managed-read" // a key of the read config alone
		case slices.Contains(managedKeys, k.Value):
			form = "managed"
			writeOnly = writeOnly || slices.Contains(managedWriteOnlyKeys, k.Value)
		case slices.Contains(managedWriteOnlyKeys, k.Value):
			writeOnly = true // floe's additions, which a floe pipeline has too
		case slices.Contains(managedReadKeys, Closest(k.Value, allManagedKeys)):
			// A misspelt read key (from_snapshots): the file is a read
			// config, whose keys the error should then offer.
			misspeltRead = true
		}
	}
	if form == "managed" && misspeltRead && !writeOnly {
		return "managed-read"
	}
	return form
}

// managedWriteOnlyKeys are the keys of a write config that a read config
// lacks, floe's additions among them.
var managedWriteOnlyKeys = []string{"only", "partition_fields", "table_properties", "triggering_frequency_seconds",
	"source", "checkpoint", "dead_letter_table"}

// allManagedKeys are the keys of either config, which a misspelt key is
// matched against.
var allManagedKeys = slices.Concat(managedKeys, managedWriteOnlyKeys, managedReadKeys)

// ParseManaged reads a Managed I/O Iceberg write config, or a Beam YAML
// pipeline with one WriteToIceberg transform, into a valid Pipeline. The
// warnings name settings floe ignores, such as Hadoop properties it has no
// use for; they are also in the Pipeline's Warnings. Errors are an *Error,
// as from Parse, with paths in the file's own keys (table,
// catalog_properties["type"], ...).
func ParseManaged(data []byte) (*Pipeline, []string, error) {
	return ParseManagedWith(data, nil)
}

// ParseManagedWith is ParseManaged for the CLI: complete, when not nil, is
// called on the translated Pipeline before defaults and validation, so that
// flags such as --source and --format can supply what the file lacks and the
// result is still checked as a whole. Zero fields then count as unset.
func ParseManagedWith(data []byte, complete func(*Pipeline)) (*Pipeline, []string, error) {
	expanded, probs := expandEnv(data, os.LookupEnv)
	if len(probs) > 0 {
		return nil, nil, probs.err()
	}
	root, probs := parseYAML(expanded)
	if len(probs) > 0 {
		return nil, nil, probs.err()
	}
	return parseManaged(root, complete)
}

// LoadManaged is ParseManagedWith on a file; the *Error names the file.
func LoadManaged(path string, complete func(*Pipeline)) (*Pipeline, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read pipeline config: %w", err)
	}
	p, warnings, err := ParseManagedWith(data, complete)
	if e, ok := errors.AsType[*Error](err); ok {
		e.File = path
	}
	return p, warnings, err
}

func parseManaged(root *yaml.Node, complete func(*Pipeline)) (*Pipeline, []string, error) {
	t := &managedTranslation{w: newWalker()}
	switch managedForm(root) {
	case "beam":
		t.beam(root)
	case "managed":
		t.config = root
	case "managed-read":
		rt := &managedTranslation{w: newWalker()}
		t.icebergRead = rt.read(root)
		t.w.probs, t.probs, t.warnings = rt.w.probs, rt.probs, rt.warnings
	default:
		t.probs.add("", 0, "not a Managed I/O config: it has none of the keys %s", strings.Join(managedKeys, ", "))
		return nil, nil, t.probs.err()
	}
	if t.config == nil && t.icebergRead != nil {
		return t.readToConsole(complete)
	}
	if t.config == nil {
		return nil, nil, t.probs.err()
	}
	m := new(managedFile)
	t.decode(m)
	p := t.translate(m)
	if complete != nil {
		complete(p)
	}
	if p.Checkpoint == "" && p.Sink.Table != "" {
		p.Checkpoint = defaultCheckpoint(p.Sink.Table)
	}
	applyDefaults(p, func(path string) bool { return t.w.present[t.path(path)] })

	all := append(t.w.probs, t.probs...)
	if p.Source.Path == "" && p.Source.Format == "" && p.Source.Type != "iceberg" && !t.w.broken(t.path("source")) {
		msg := "the Managed I/O config names no source; add a `source:` mapping (path, format) next to its keys, or pass --source DIR --format csv to floe run"
		if t.unreadable != "" {
			msg += fmt.Sprintf(" (floe reads files, not the pipeline's %s)", t.unreadable)
		}
		all.add(t.path("source"), t.w.lineOf(t.path("source")), "%s", msg)
	}
	for _, vp := range p.validate() {
		switch {
		case (vp.Path == "source.path" || vp.Path == "source.format") && p.Source.Path == "" && p.Source.Format == "":
			continue // reported once, above
		case vp.Path == "checkpoint" && p.Sink.Table == "":
			continue // derived from the table, whose absence is reported
		}
		vp.Path = t.path(managedPath(vp.Path, t.typeKey))
		if t.w.broken(vp.Path) {
			continue
		}
		vp.Line = t.w.lineOf(vp.Path)
		all = append(all, vp)
	}
	if len(all) > 0 {
		return nil, nil, all.err()
	}
	p.Warnings = t.warnings
	return p, t.warnings, nil
}

// managedTranslation carries the state of one translation: where the Managed
// config sits in the file (prefix, for a Beam YAML pipeline), and what was
// found wrong or ignored.
type managedTranslation struct {
	w *walker
	// config is the mapping holding the Managed keys; prefix is its path.
	config *yaml.Node
	prefix string
	// beamSource is a source taken from a Beam YAML read transform.
	beamSource *Source
	// icebergRead is a Managed I/O read: a ReadFromIceberg transform, or
	// the file itself when it is a read config.
	icebergRead *ManagedRead
	// readCatalogProps tells that the read gives catalog_properties;
	// readCatalogName is its catalog_name, if any.
	readCatalogProps bool
	readCatalogName  string
	// tableDefaults and tableOverrides are the catalog properties
	// table-default.KEY and table-override.KEY, by KEY.
	tableDefaults, tableOverrides map[string]string
	// typeKey is the catalog property that chose the catalog type
	// ("type" or "catalog-impl"), where catalog.type problems point.
	typeKey string
	// unreadable names the Beam read transforms floe cannot stand in for.
	unreadable string
	probs      problems
	warnings   []string
}

// path places a path of the Managed config within the file.
func (t *managedTranslation) path(p string) string { return joinPath(t.prefix, p) }

func (t *managedTranslation) warn(path, format string, args ...any) {
	path = t.path(path)
	t.warnings = append(t.warnings, Problem{Path: path, Line: t.w.lineOf(path), Message: fmt.Sprintf(format, args...)}.String())
}

func (t *managedTranslation) fail(path, format string, args ...any) {
	path = t.path(path)
	t.probs.add(path, t.w.lineOf(path), format, args...)
}

// decode walks the Managed mapping, with floe's own keys explained rather
// than just called unknown.
func (t *managedTranslation) decode(m *managedFile) {
	n := t.config
	if n.Kind == yaml.MappingNode {
		kept := &yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Column: n.Column}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if hint, ok := floeOnlyKeys[k.Value]; ok && k.Kind == yaml.ScalarNode {
				t.w.probs.add("", k.Line, "%q is a floe pipeline key, not a Managed I/O one (the file has Managed I/O keys such as table); %s", k.Value, hint)
				continue
			}
			kept.Content = append(kept.Content, k, n.Content[i+1])
		}
		n = kept
	}
	t.w.walk(n, t.prefix, reflect.ValueOf(m).Elem())
	// The floe keys were reported before the walk; decode problems are
	// in document order everywhere else.
	slices.SortStableFunc(t.w.probs, func(a, b Problem) int { return a.Line - b.Line })
}

func (t *managedTranslation) translate(m *managedFile) *Pipeline {
	cat := t.catalog(m)
	// The catalog's table-default.KEY gives way to table_properties, as
	// in Iceberg's catalogs; its table-override.KEY does not.
	props := m.TableProperties
	if len(t.tableDefaults) > 0 {
		props = maps.Clone(t.tableDefaults)
		maps.Copy(props, m.TableProperties)
	}
	p := &Pipeline{
		Catalog: cat,
		Source:  m.Source,
		Sink: Sink{
			Table:           m.Table,
			TableProperties: props,
			TableOverrides:  t.tableOverrides,
			PartitionFields: m.PartitionFields,
			Keep:            m.Keep,
			Drop:            m.Drop,
			Only:            m.Only,
		},
		Checkpoint: m.Checkpoint,
	}
	if t.beamSource != nil {
		if t.w.present[t.path("source")] {
			t.fail("source", "set, but the pipeline's read transform already gives the source; remove one of them")
		}
		p.Source = *t.beamSource
	}
	if r := t.icebergRead; r != nil {
		if t.w.present[t.path("source")] {
			t.fail("source", "set, but the pipeline's ReadFromIceberg transform already gives the source; remove one of them")
		}
		p.Source = r.source()
		t.stream(r, p)
		const one = "a floe pipeline reads and writes through one catalog; give both transforms the same catalog_name and catalog_properties, or leave them out of ReadFromIceberg"
		switch {
		case t.readCatalogProps && !reflect.DeepEqual(r.Catalog, p.Catalog):
			t.fail("catalog_properties", "differs from the ReadFromIceberg transform's catalog, but %s", one)
		case !t.readCatalogProps && t.readCatalogName != "" && t.readCatalogName != p.Catalog.Name:
			t.fail("catalog_name", "%q differs from the ReadFromIceberg transform's %q, but %s", p.Catalog.Name, t.readCatalogName, one)
		}
	}
	if d := m.DeadLetterTable; d != "" {
		p.Sink.DeadLetterTable = d
		if p.Source.Type != "iceberg" {
			p.OnBadRecord = "dead-letter"
		}
	}
	if tf := t.path("triggering_frequency_seconds"); t.w.present[tf] && !t.w.broken(tf) {
		if s := m.TriggeringFrequencySeconds; s <= 0 {
			t.fail("triggering_frequency_seconds", "%d is not a positive number of seconds; remove the key to process the files present and exit", s)
		} else {
			p.Trigger = Trigger{Kind: TriggerProcessingTime, Interval: time.Duration(s) * time.Second}
		}
	}
	return p
}

// catalogImpls maps the Java catalog classes of catalog-impl to floe
// catalog types; "" marks the ones floe cannot open.
var catalogImpls = map[string]string{
	"org.apache.iceberg.jdbc.JdbcCatalog":     "sql",
	"org.apache.iceberg.rest.RESTCatalog":     "rest",
	"org.apache.iceberg.hadoop.HadoopCatalog": "hadoop",
	"org.apache.iceberg.aws.glue.GlueCatalog": "glue",
	"org.apache.iceberg.hive.HiveCatalog":     "hive",
	"org.apache.iceberg.nessie.NessieCatalog": "",
}

// catalogTypes maps Iceberg's catalog type names to floe's; "" marks the
// ones floe cannot open.
var catalogTypes = map[string]string{"jdbc": "sql", "rest": "rest", "hadoop": "hadoop", "glue": "glue", "hive": "hive", "nessie": ""}

const supportedCatalogs = "floe supports type jdbc (floe's sql catalog: SQLite, PostgreSQL, MySQL or MariaDB), rest, hadoop, glue and hive"

// catalog translates catalog_name, catalog_properties and config_properties.
func (t *managedTranslation) catalog(m *managedFile) Catalog {
	c := Catalog{Name: m.CatalogName}
	props := m.CatalogProperties
	if props == nil {
		// No catalog at all: floe's embedded catalog, as in a floe file
		// without catalog. Beam would need one; floe has a default.
		c.Properties = t.hadoopProperties(m.ConfigProperties, nil)
		return c
	}
	cp := func(k string) string { return fmt.Sprintf("catalog_properties[%q]", k) }
	typ, hasType := props["type"]
	impl, hasImpl := props["catalog-impl"]
	switch {
	case hasType && hasImpl:
		t.fail(cp("catalog-impl"), "set together with type, which Iceberg refuses too; keep one of them")
	case hasType:
		t.typeKey = "type"
		lower := strings.ToLower(strings.TrimSpace(typ))
		ft, known := catalogTypes[lower]
		switch {
		case known && ft != "":
			c.Type = ft
		case known:
			t.fail(cp("type"), "%s", unsupportedCatalog(lower))
		default:
			names := []string{"jdbc", "rest", "hadoop", "glue", "hive"}
			if hint := Closest(lower, names); hint != "" {
				t.fail(cp("type"), "unknown catalog type %q; did you mean %q? (%s)", typ, hint, supportedCatalogs)
			} else {
				t.fail(cp("type"), "unknown catalog type %q; %s", typ, supportedCatalogs)
			}
		}
	case hasImpl:
		t.typeKey = "catalog-impl"
		ft, known := catalogImpls[strings.TrimSpace(impl)]
		switch {
		case known && ft != "":
			c.Type = ft
		case strings.Contains(impl, "Nessie"):
			t.fail(cp("catalog-impl"), "%s", unsupportedCatalog("nessie"))
		default:
			t.fail(cp("catalog-impl"), "%q is a Java catalog class floe cannot load; %s (or catalog-impl org.apache.iceberg.jdbc.JdbcCatalog, .rest.RESTCatalog, .hadoop.HadoopCatalog, .aws.glue.GlueCatalog, .hive.HiveCatalog)", impl, supportedCatalogs)
		}
	default:
		t.fail("catalog_properties", "names no catalog type, and Iceberg would then open a Hive catalog; add the type: hive (with uri: thrift://HOST:9083), jdbc, rest, hadoop or glue")
	}

	c.Properties = map[string]string{}
	for k, v := range props {
		switch k {
		case "type", "catalog-impl":
		case "uri":
			c.URI = t.catalogURI(c.Type, v)
		case "warehouse":
			if scheme, _, ok := strings.Cut(v, "://"); ok && (scheme == "hdfs" || scheme == "viewfs") {
				t.fail(cp(k), "%q is on HDFS, which floe cannot reach (iceberg-go has no HDFS file IO); use a local directory or s3://, gs:// or abfs:// storage", v)
			}
			c.Warehouse = v
		case "io-impl":
			t.warn(cp(k), "ignored: iceberg-go chooses the file IO from the warehouse's scheme (s3://, gs://, abfs://, local)")
		default:
			if key, ok := tablePropertyKey(k, "table-default."); ok {
				t.tableDefaults = setEntry(t.tableDefaults, key, v)
			} else if key, ok := tablePropertyKey(k, "table-override."); ok {
				t.tableOverrides = setEntry(t.tableOverrides, key, v)
			} else {
				c.Properties[k] = v
			}
		}
	}
	// Java's S3FileIO spelling; iceberg-go has the inverse property.
	if v, ok := props["s3.path-style-access"]; ok {
		if b, err := strconv.ParseBool(v); err == nil {
			if _, set := props["s3.force-virtual-addressing"]; !set {
				c.Properties["s3.force-virtual-addressing"] = strconv.FormatBool(!b)
			}
		}
	}
	c.Properties = t.hadoopProperties(m.ConfigProperties, c.Properties)
	if len(c.Properties) == 0 {
		c.Properties = nil
	}
	return c
}

// tablePropertyKey is KEY of a catalog property PREFIX KEY.
func tablePropertyKey(k, prefix string) (string, bool) {
	key, ok := strings.CutPrefix(k, prefix)
	return key, ok && key != ""
}

func setEntry(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

func unsupportedCatalog(typ string) string {
	switch typ {
	case "nessie":
		return "Nessie catalogs are not supported by floe directly; " + supportedCatalogs +
			", and Nessie serves the Iceberg REST API at <nessie-url>/iceberg, so use type: rest with that uri"
	}
	return fmt.Sprintf("%q catalogs are not supported by floe; %s", typ, supportedCatalogs)
}

// catalogURI turns a JDBC URI into what floe's sql catalog opens: a SQLite
// database file, or a PostgreSQL, MySQL or MariaDB URI, which the catalog
// takes as it is; other catalog types take the URI as it is.
func (t *managedTranslation) catalogURI(typ, uri string) string {
	if typ != "sql" {
		return uri
	}
	path := `catalog_properties["uri"]`
	db, ok := strings.CutPrefix(uri, "jdbc:sqlite:")
	switch {
	case ok && (db == "" || strings.Contains(db, ":memory:") || strings.Contains(db, "mode=memory")):
		t.fail(path, "%q is an in-memory database, which loses the catalog's tables when floe exits; give a file, e.g. jdbc:sqlite:./warehouse/catalog.db", uri)
	case ok:
		if strings.HasPrefix(db, "file:") {
			return db
		}
		return "file:" + db
	case strings.HasPrefix(uri, "jdbc:"):
		driver, _, _ := strings.Cut(strings.TrimPrefix(uri, "jdbc:"), ":")
		switch driver {
		case "postgresql", "mysql", "mariadb":
			return uri
		}
		t.fail(path, "%q needs the %s JDBC driver, but floe's sql catalog opens SQLite, PostgreSQL, MySQL and MariaDB databases; use jdbc:sqlite:PATH, jdbc:postgresql://HOST:PORT/DB or jdbc:mysql://HOST:PORT/DB, or a rest catalog in front of that database", uri, driver)
	default:
		t.fail(path, "%q is not a JDBC URI; a jdbc catalog's uri is jdbc:sqlite:PATH (e.g. jdbc:sqlite:./warehouse/catalog.db), jdbc:postgresql://HOST:PORT/DB or jdbc:mysql://HOST:PORT/DB", uri)
	}
	return ""
}

// hadoopS3A maps the S3A settings of a Hadoop Configuration to iceberg-go's
// S3 properties; floe has no Hadoop, so these are all it can use.
var hadoopS3A = map[string]string{
	"fs.s3a.endpoint":          "s3.endpoint",
	"fs.s3a.access.key":        "s3.access-key-id",
	"fs.s3a.secret.key":        "s3.secret-access-key",
	"fs.s3a.session.token":     "s3.session-token",
	"fs.s3a.endpoint.region":   "s3.region",
	"fs.s3a.path.style.access": "s3.force-virtual-addressing",
}

// hadoopProperties adds config_properties to the catalog properties props,
// which win: they are the ones Iceberg's own S3 client would use.
func (t *managedTranslation) hadoopProperties(conf, props map[string]string) map[string]string {
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	// Warnings in file order, so the CLI prints them as the file reads.
	slices.SortFunc(keys, func(a, b string) int {
		return t.w.lineOf(t.path(hadoopPath(a))) - t.w.lineOf(t.path(hadoopPath(b)))
	})
	mapped := slices.Sorted(maps.Keys(hadoopS3A))
	for _, k := range keys {
		v := conf[k]
		target, ok := hadoopS3A[k]
		if !ok {
			t.warn(hadoopPath(k), "ignored Hadoop property %s: floe has no Hadoop configuration and maps only %s", k, strings.Join(mapped, ", "))
			continue
		}
		if k == "fs.s3a.path.style.access" {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				t.fail(hadoopPath(k), "%q is not a boolean; write true or false", v)
				continue
			}
			v = strconv.FormatBool(!b) // path style is virtual addressing off
		}
		if props == nil {
			props = map[string]string{}
		}
		if old, set := props[target]; set {
			if old != v {
				t.warn(hadoopPath(k), "ignored Hadoop property %s: catalog_properties sets %s, which takes precedence", k, target)
			}
			continue
		}
		props[target] = v
	}
	return props
}

func hadoopPath(k string) string { return fmt.Sprintf("config_properties[%q]", k) }

// managedPath maps a floe pipeline path, as Validate reports it, to the
// Managed I/O key it came from.
func managedPath(p, typeKey string) string {
	if typeKey == "" {
		typeKey = "type"
	}
	for _, r := range []struct{ floe, managed string }{
		{"catalog.type", fmt.Sprintf("catalog_properties[%q]", typeKey)},
		{"catalog.uri", `catalog_properties["uri"]`},
		{"catalog.warehouse", `catalog_properties["warehouse"]`},
		{"catalog.name", "catalog_name"},
		{"catalog.properties", "catalog_properties"},
		{"sink.table-properties", "table_properties"},
		{"sink.table-overrides", `catalog_properties["table-override.*"]`},
		{"sink.partition-fields", "partition_fields"},
		{"sink.dead-letter-table", "dead_letter_table"},
		{"sink.table", "table"},
		{"sink.keep", "keep"},
		{"sink.drop", "drop"},
		{"sink.only", "only"},
		{"trigger", "triggering_frequency_seconds"},
	} {
		if rest, ok := strings.CutPrefix(p, r.floe); ok && (rest == "" || rest[0] == '[' || rest[0] == '.') {
			return r.managed + rest
		}
	}
	return p
}

var checkpointUnsafeRE = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultCheckpoint derives a checkpoint directory from the table, since a
// Managed I/O config has no key for one: "db.events_{region}" gets
// "checkpoints/db.events_region". Relative, like the quickstart's, so it
// lives beside the run.
func defaultCheckpoint(table string) string {
	name := strings.Trim(checkpointUnsafeRE.ReplaceAllString(strings.NewReplacer("{", "", "}", "").Replace(table), "_"), "_.")
	if name == "" {
		return ""
	}
	return "checkpoints/" + name
}

// beam finds the one WriteToIceberg transform of a Beam YAML pipeline, and
// a source in a read transform floe can stand in for.
func (t *managedTranslation) beam(root *yaml.Node) {
	pipeline := mappingValue(root, "pipeline")
	if pipeline == nil || pipeline.Kind != yaml.MappingNode {
		t.probs.add("pipeline", root.Line, "a Beam YAML pipeline is a mapping with a transforms list")
		return
	}
	var transforms []*yaml.Node
	var paths []string
	if list := mappingValue(pipeline, "transforms"); list != nil && list.Kind == yaml.SequenceNode {
		for i, n := range list.Content {
			transforms = append(transforms, resolveAlias(n))
			paths = append(paths, fmt.Sprintf("pipeline.transforms[%d]", i))
		}
	}
	// The chain form puts the first and last transforms under their own keys.
	for _, key := range []string{"source", "sink"} {
		if n := mappingValue(pipeline, key); n != nil {
			transforms = append(transforms, n)
			paths = append(paths, "pipeline."+key)
		}
	}
	var writes, reads, icebergReads []int
	var others []string
	for i, n := range transforms {
		typ := ""
		if tn := mappingValue(n, "type"); tn != nil && tn.Kind == yaml.ScalarNode {
			typ = tn.Value
		}
		switch {
		case typ == "WriteToIceberg":
			writes = append(writes, i)
		case typ == "ReadFromIceberg":
			icebergReads = append(icebergReads, i)
		case beamSourceFormats[typ] != "":
			reads = append(reads, i)
		case strings.HasPrefix(typ, "Read"):
			others = append(others, fmt.Sprintf("%s (line %d)", typ, n.Line))
		}
	}
	switch {
	case len(icebergReads) > 1:
		t.probs.add(paths[icebergReads[1]], transforms[icebergReads[1]].Line, "the Beam YAML pipeline reads from more than one transform, but a floe pipeline has one source; keep one")
		return
	case len(icebergReads) == 1 && len(reads) > 0:
		t.probs.add(paths[reads[0]], transforms[reads[0]].Line, "the Beam YAML pipeline reads from ReadFromIceberg and from files, but a floe pipeline has one source; keep one")
		return
	case len(icebergReads) == 1:
		at := paths[icebergReads[0]]
		cfg := mappingValue(transforms[icebergReads[0]], "config")
		if cfg == nil {
			t.probs.add(at, transforms[icebergReads[0]].Line, "the ReadFromIceberg transform has no config; give it table and catalog_properties")
			return
		}
		rt := &managedTranslation{w: newWalker(), prefix: at + ".config"}
		rt.w.lines[rt.prefix] = cfg.Line
		t.icebergRead = rt.read(cfg)
		t.readCatalogProps = mappingValue(cfg, "catalog_properties") != nil
		if n := mappingValue(cfg, "catalog_name"); n != nil && n.Kind == yaml.ScalarNode {
			t.readCatalogName = n.Value
		}
		t.w.probs = append(t.w.probs, rt.w.probs...)
		t.probs = append(t.probs, rt.probs...)
		t.warnings = append(t.warnings, rt.warnings...)
	}
	switch len(writes) {
	case 0:
		if t.icebergRead != nil {
			return // the rows go to the console (see readToConsole)
		}
		t.probs.add("pipeline", root.Line, "the Beam YAML pipeline has no WriteToIceberg transform, so there is no table for floe to write")
		return
	case 1:
	default:
		t.probs.add("pipeline", transforms[writes[1]].Line, "the Beam YAML pipeline has %d WriteToIceberg transforms, but a floe pipeline writes one table; split it into one file per table", len(writes))
		return
	}
	write := transforms[writes[0]]
	t.prefix = paths[writes[0]] + ".config"
	t.config = mappingValue(write, "config")
	if t.config == nil {
		t.probs.add(paths[writes[0]], write.Line, "the WriteToIceberg transform has no config; give it table and catalog_properties")
		return
	}
	t.w.lines[t.prefix] = t.config.Line
	switch {
	case len(reads) == 1:
		t.beamSource = t.beamRead(transforms[reads[0]], paths[reads[0]])
	case len(reads) > 1:
		t.probs.add(paths[reads[1]], transforms[reads[1]].Line, "the Beam YAML pipeline reads from more than one transform, but a floe pipeline has one source; keep one")
	case len(others) > 0:
		t.unreadable = strings.Join(others, ", ")
		t.warnings = append(t.warnings, fmt.Sprintf("ignored the pipeline's read transform %s: floe reads files, from ReadFromCsv, ReadFromParquet or ReadFromJson, an Iceberg table from ReadFromIceberg, or a source: mapping in the WriteToIceberg config", t.unreadable))
	}
	if len(transforms) > len(writes)+len(reads)+len(icebergReads)+len(others) {
		t.warnings = append(t.warnings, "ignored the pipeline's other transforms: floe writes the source's rows as they are, shaped only by keep, drop and only")
	}
}

// beamRead takes a file source from a Beam read transform. Beam's path is a
// file pattern ("gs://b/in/*.csv"); floe reads a directory, so a pattern in
// the last part becomes path-glob-filter.
func (t *managedTranslation) beamRead(n *yaml.Node, at string) *Source {
	typ := mappingValue(n, "type").Value
	cfg := mappingValue(n, "config")
	pn := mappingValue(cfg, "path")
	if pn == nil || pn.Kind != yaml.ScalarNode || pn.Value == "" {
		t.probs.add(at+".config.path", n.Line, "the %s transform has no path, so floe does not know which files to read", typ)
		return nil
	}
	src := &Source{Path: pn.Value, Format: beamSourceFormats[typ]}
	dir, file := pn.Value, ""
	if i := strings.LastIndexByte(pn.Value, '/'); i >= 0 {
		dir, file = pn.Value[:i+1], pn.Value[i+1:]
	}
	if strings.ContainsAny(file, "*?[") || strings.Contains(file, ".") {
		// A pattern, or one file ("in/orders.csv"): read its directory,
		// filtered to the names it matches.
		src.Path, src.PathGlobFilter = dir, file
	}
	if strings.ContainsAny(src.Path, "*?[") {
		t.probs.add(at+".config.path", pn.Line, "%q has a pattern in a directory name, but floe reads one directory; pattern only the file name, e.g. gs://bucket/landing/*.csv", pn.Value)
		return nil
	}
	return src
}

// mappingValue returns the value of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil {
		return nil
	}
	n = resolveAlias(n)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return resolveAlias(n.Content[i+1])
		}
	}
	return nil
}

// readToConsole makes a Managed I/O read with no write (a read config run
// by itself, or a Beam YAML pipeline with ReadFromIceberg alone) a
// pipeline that prints the table's rows as JSON lines, as Beam's
// LogForTesting would.
func (t *managedTranslation) readToConsole(complete func(*Pipeline)) (*Pipeline, []string, error) {
	r := t.icebergRead
	p := &Pipeline{Catalog: r.Catalog, Source: r.source(), Sink: Sink{Type: "console"}}
	t.stream(r, p)
	if complete != nil {
		complete(p)
	}
	if p.Checkpoint == "" && r.Table != "" {
		p.Checkpoint = defaultCheckpoint(r.Table) + ".console"
	}
	applyDefaults(p, func(string) bool { return false })
	all := append(t.w.probs, t.probs...)
	if len(all) == 0 {
		for _, vp := range p.validate() {
			all = append(all, vp)
		}
	}
	if len(all) > 0 {
		return nil, nil, all.err()
	}
	p.Warnings = t.warnings
	return p, t.warnings, nil
}
