package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// fieldSpec documents one key. The table below is the single source for
// defaults (SetDefaults), enum checks and "required" hints (Validate) and
// docs/config.md (Reference); key names and types come from the struct
// tags, and a test checks the two agree key for key.
type fieldSpec struct {
	// path is the dotted key path; "[]" stands for any list element.
	path string
	// typ overrides the type shown in the docs, which is otherwise
	// derived from the Go type.
	typ string
	// def is the default in YAML spelling, applied by SetDefaults to a
	// zero field. Empty means no default.
	def string
	// defNote explains the default, e.g. what 0 means.
	defNote string
	// required, when set, makes the key mandatory and is the hint in
	// the error: what to write there.
	required string
	// zeroIsValue marks a default that only Parse applies, and only to
	// an omitted key, because the field's zero value means something
	// (max-file-age: 0 is "no limit"). SetDefaults cannot tell an
	// explicit zero from an unset field, so it leaves these alone.
	zeroIsValue bool
	// allowed lists the accepted values of an enum.
	allowed []string
	doc     string
	// flag is the key's spelling on the command line, without dashes:
	// floe stream takes every key that has one, floe run a few. The CLI
	// generates the flag, its value type, default and help from this
	// entry, and the reference shows it.
	flag string
	// flagPrefix, for a map key, is the prefix its entries take in the
	// KEY=VALUE flag named by flag, as Iceberg and Spark spell them:
	// -p table-default.KEY=VALUE.
	flagPrefix string
	// flagArg names the flag's value in help and docs where the type's
	// generic name ("N", "DURATION", the key's name) says too little.
	flagArg string
}

var specs = []fieldSpec{
	{path: "catalog", doc: "The Iceberg catalog that owns the sink table."},
	{path: "source", doc: "The landing files to read."},
	{path: "sink", doc: "The Iceberg table to write."},
	{path: "maintenance", doc: "Table maintenance between batches (docs/maintenance.md); on by default."},
	{path: "metrics", doc: "The run's Prometheus metrics and health endpoints (docs/operations.md); off by default."},
	{
		path: "metrics.listen", flag: "metrics-listen", flagArg: "ADDR", defNote: "none: nothing is served",
		doc: "Serve Prometheus metrics at `http://ADDR/metrics`, with `/healthz` (the process answers) and `/readyz` " +
			"(503 while a failed batch is being retried, or when no batch or poll has finished for `stale-after`), " +
			"e.g. `127.0.0.1:9249`; `:0` takes any free port and names it on stderr.",
	},
	{
		path: "metrics.stale-after", flag: "metrics-stale-after", flagArg: "DURATION", defNote: "10 trigger intervals, at least 5m",
		doc: "`/readyz` answers 503 when no batch and no poll of the source has finished for this long: a batch that hangs " +
			"(a catalog or object store that stopped answering without an error). Set it above your longest batch.",
	},
	{path: "maintenance.expire-snapshots", doc: "When to expire snapshots, and what to keep."},
	{path: "maintenance.rewrite-data-files", doc: "When to compact small data files."},
	{path: "maintenance.rewrite-manifests", doc: "When to merge manifests."},
	{path: "maintenance.remove-orphan-files", doc: "When to remove orphan files."},
	{
		path: "trigger", flag: "trigger", def: "available-now",
		allowed: []string{"available-now", "once", "processing-time=<duration>", "<duration>"},
		doc: "When batches run. `available-now` processes every file present when the run starts, " +
			"in as many batches as the per-trigger limits require, then exits: the mode for cron jobs and orchestrators. " +
			"`once` processes them as a single batch, ignoring `max-files-per-trigger` and `max-bytes-per-trigger`. " +
			"`processing-time=1m`, or just `1m`, keeps running and starts a batch every interval. " +
			"The `--trigger` flag of `floe run` takes the same spellings.",
	},
	{
		path: "checkpoint", flag: "checkpoint", flagArg: "DIR",
		required: `a directory where floe records its progress, e.g. "./checkpoints/events"`,
		doc: "Directory where floe records which files it has committed to the table. " +
			"It is what lets a restarted run carry on without losing or duplicating rows, so keep it between runs " +
			"and give every pipeline its own.",
	},
	{
		path: "on-bad-file", flag: "on-bad-file", def: "fail", allowed: []string{"fail", "quarantine"},
		doc: "What to do with a file that cannot be read or converted. `fail` stops the run before the batch commits, " +
			"so the table is unchanged and the file is retried next time. `quarantine` sets the file aside, records why, " +
			"and carries on with the rest; not with `source.type: iceberg`, whose files are the source table's.",
	},
	{
		path: "on-bad-record", flag: "on-bad-record", def: "fail", allowed: []string{"fail", "dead-letter"},
		doc: "What to do with one record that cannot be read as a row: a Kafka message that is not valid JSON, whose schema id the registry " +
			"does not know or whose value does not fit its column, a line of a CSV or JSON-lines file that is malformed or does not fit. " +
			"`fail` stops the batch naming the record, so nothing of it is committed. `dead-letter` writes the record to " +
			"`sink.dead-letter-table` instead, in the same batch and exactly once: its raw bytes, key, topic/partition/offset or file/line, " +
			"the error and the time, while the batch's good records go on. A file that cannot be read at all stays `on-bad-file`'s.",
	},
	{
		path: "allow-new-query", flag: "allow-new-query", def: "false",
		doc: "Allow a new checkpoint to write a table that already holds snapshots of another floe query reading the same source. " +
			"Off by default because the new query has no record of what the old one ingested and would ingest the same files again, " +
			"duplicating their rows; turn it on only when a second copy is intended (or the table was truncated). " +
			"It also makes a missing checkpoint of a Kafka or Iceberg-table source a new query instead of the one the table records, " +
			"which the run would otherwise resume (docs/format/checkpoint.md, \"A lost checkpoint\").",
	},
	{
		path: "fail-on-empty", flag: "fail-on-empty", def: "false",
		doc: "Exit with an error when a run finds no new files. For scheduled jobs, where an empty landing directory " +
			"usually means the producer upstream has failed.",
	},

	{
		path: "maintenance.enabled", flag: "maintenance", def: "true",
		doc: "Run table maintenance between batches, on every table the pipeline writes: expire snapshots, merge " +
			"manifests, compact small files, remove orphan files, each when its triggers fire. See docs/maintenance.md.",
	},
	{path: "maintenance.budget", def: "10s", doc: "Most time one maintenance run takes between two batches; a task still running then is abandoned and tried again later."},
	{path: "maintenance.expire-snapshots.enabled", def: "true", doc: "Expire snapshots automatically."},
	{path: "maintenance.expire-snapshots.max-snapshots", def: "25", defNote: "0: no count trigger", doc: "The most snapshots the table holds: the commit that reaches it is followed by an expiry down to retain-last."},
	{path: "maintenance.expire-snapshots.every-commits", defNote: "0: off", doc: "Also expire every this many commits."},
	{path: "maintenance.expire-snapshots.interval", defNote: "0: off", doc: "Also expire at least this often."},
	{path: "maintenance.expire-snapshots.retain-last", def: "10", doc: "Newest snapshots an expiry keeps. The newest snapshot of every floe query writing the table, and the snapshots after it, are always kept: its restart needs them to skip batches already committed."},
	{path: "maintenance.expire-snapshots.older-than", defNote: "0: any age beyond retain-last", doc: "Keep snapshots younger than this too (time travel)."},
	{path: "maintenance.rewrite-data-files.enabled", def: "true", doc: "Compact small data files, and files with many rows deleted, automatically (binpack)."},
	{path: "maintenance.rewrite-data-files.every-commits", def: "50", defNote: "0: off", doc: "Plan a compaction every this many commits; it runs when a partition has min-input-files small files."},
	{path: "maintenance.rewrite-data-files.interval", defNote: "0: off", doc: "Also plan one at least this often."},
	{path: "maintenance.rewrite-data-files.target-file-size-bytes", defNote: "0: the table's write.target-file-size-bytes", doc: "Size of the compacted files."},
	{path: "maintenance.rewrite-data-files.min-input-files", def: "5", doc: "Fewest small files in a partition worth compacting together."},
	{path: "maintenance.rewrite-data-files.delete-ratio-threshold", def: "0.3", doc: "Compact as soon as this fraction of the table's rows is deleted by position (deletion vectors, position deletes: an upsert stream's), rewriting the files with at least this fraction deleted, alone if need be (Iceberg's delete-ratio-threshold), so that reads do not keep paying for deleted rows."},
	{path: "maintenance.rewrite-data-files.delete-file-threshold", defNote: "0: off, Iceberg's default", doc: "Also rewrite, when compacting, every data file that at least this many delete files apply to (Iceberg's delete-file-threshold; 1 applies every equality delete)."},
	{path: "maintenance.rewrite-manifests.enabled", def: "true", doc: "Merge manifests automatically."},
	{path: "maintenance.rewrite-manifests.max-manifests", def: "20", defNote: "0: no count trigger", doc: "The most manifests the current snapshot holds (each append adds one): the commit that reaches it is followed by a merge."},
	{path: "maintenance.rewrite-manifests.every-commits", defNote: "0: off", doc: "Also merge every this many commits."},
	{path: "maintenance.rewrite-manifests.interval", defNote: "0: off", doc: "Also merge at least this often."},
	{path: "maintenance.remove-orphan-files.enabled", def: "true", doc: "Remove orphan files (left by killed writers) automatically."},
	{path: "maintenance.remove-orphan-files.interval", def: "24h", doc: "How often to look for orphan files."},
	{path: "maintenance.remove-orphan-files.older-than", def: "3d", doc: "Only files older than this are orphans, as in Spark: younger ones may belong to a commit in progress."},
	{
		path: "catalog.type", flag: "catalog-type", def: "sql", allowed: []string{"sql", "rest", "hadoop", "glue", "hive"},
		doc: "Catalog implementation. `sql` keeps the catalog in a SQL database (SQLite unless `uri` names a PostgreSQL, MySQL or MariaDB server) " +
			"and needs no server; `rest` talks to an Iceberg REST catalog; `hadoop` keeps table metadata directly in the warehouse directory; " +
			"`glue` uses the AWS Glue Data Catalog, configured from the usual AWS environment; " +
			"`hive` talks to a Hive Metastore over Thrift (`uri: thrift://HOST:9083`, required).",
	},
	{
		path: "catalog.name", flag: "catalog-name", def: "floe",
		doc: "Name the catalog is opened under. An `sql` catalog stores it with every table it records, " +
			"so pipelines that share a catalog database must use the same name to see the same tables.",
	},
	{
		path: "catalog.uri", flag: "catalog-uri",
		doc: "Where the catalog is: for `sql`, the database: an SQLite file (e.g. `file:catalog.db`), or a PostgreSQL, MySQL or MariaDB server " +
			"(`postgresql://HOST:5432/DB`, `mysql://HOST:3306/DB`, with or without Spark's `jdbc:` prefix; the user and password in the URI, " +
			"in `?user=&password=`, or in the catalog properties `jdbc.user` and `jdbc.password`); " +
			"for `rest`, the server's URL (e.g. `http://localhost:8181`), which is required; for `hive`, the metastore's Thrift URI " +
			"(e.g. `thrift://localhost:9083`), which is required. Unused by `hadoop` and `glue`.",
	},
	{
		path: "catalog.warehouse", flag: "warehouse", flagArg: "DIR_OR_URL",
		defNote: "none: floe uses `$FLOE_WAREHOUSE`, then `./warehouse`",
		doc:     "Storage root for the data and metadata of tables floe creates, e.g. `s3://bucket/warehouse` or a local directory.",
	},
	{
		path: "catalog.properties", flag: "p", typ: "map of string to string",
		doc: "Extra catalog properties, passed to iceberg-go unchanged: `s3.endpoint`, `s3.region`, `s3.access-key-id`, " +
			"REST `credential` or `token`, `header.NAME` (a REST request header), `sql.dialect`, and so on. A property no catalog reads is " +
			"refused, naming the one most likely meant. Values are strings; quote them if YAML would read a number.",
	},

	{
		path: "source.type", flag: "source-type", def: "files", allowed: []string{"files", "iceberg", "kafka"},
		doc: "Kind of source: `files` reads the files of a landing directory; `iceberg` reads the appends of an Iceberg " +
			"table of the pipeline's catalog, as Spark's Iceberg streaming source does; `kafka` reads Kafka topics, " +
			"configured by `options` with the names of Spark's Kafka source (see docs/kafka.md). The keys below `table` and `options` " +
			"are for `files`, except `format` and `schema`, which `kafka` reads too.",
	},
	{
		path: "source.table", flag: "source-table", flagArg: "TABLE",
		required: `when source.type is "iceberg": the table to read, e.g. "db.events"`,
		doc: "Table to read with `type: iceberg`, in the pipeline's catalog. Each data file appended to it is read once; " +
			"compactions (`replace` snapshots) are skipped, and overwrite or delete snapshots stop the query unless " +
			"`options` says to skip them. Not allowed with `type: files`.",
	},
	{
		path: "source.options", flag: "o", typ: "map of string to string",
		doc: "Read options of `type: iceberg`, with Spark's names and values: `stream-from-timestamp` (epoch milliseconds: " +
			"start at the first snapshot committed at or after it; Flink's `start-snapshot-timestamp` too), Flink's `starting-strategy` " +
			"(`INCREMENTAL_FROM_EARLIEST_SNAPSHOT`, the default, `INCREMENTAL_FROM_LATEST_SNAPSHOT`, `INCREMENTAL_FROM_SNAPSHOT_ID`, " +
			"`INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP`; the start snapshot's own appends are read, and a restarted query goes on from its checkpoint) " +
			"and `start-snapshot-id` (a snapshot of the table's current history), `streaming-max-files-per-micro-batch`, " +
			"`streaming-max-rows-per-micro-batch` (soft: whole files), `streaming-skip-overwrite-snapshots` and " +
			"`streaming-skip-delete-snapshots` (`\"true\"` skips such snapshots instead of failing), " +
			"`streaming-skip-expired-snapshots` (`\"true\"` goes on, with a warning, past snapshots expired before the query read them, instead of failing), " +
			"`async-micro-batch-planning-enabled` (`\"true\"` plans batches ahead in the background), " +
			"`streaming-snapshot-polling-interval-ms` (30000: how often the background planner looks for new snapshots), " +
			"`async-queue-preload-file-limit` (100) and `async-queue-preload-row-limit` (100000: how far it plans ahead). " +
			"`once` triggers ignore the two limits. " +
			"With `type: kafka`, the options of Spark's Kafka source: `kafka.bootstrap.servers`, one of `subscribe`, " +
			"`subscribePattern` and `assign`, `startingOffsets`, `startingTimestamp`, `endingOffsets`, `maxOffsetsPerTrigger`, `maxBytesPerTrigger` (floe's: a batch's byte budget, 268435456 by default, `0` for none), " +
			"`failOnDataLoss`, `includeHeaders`, `kafka.group.id` (with a processing-time trigger, the process becomes a worker " +
			"of a cluster sharing the partitions; `controlTopic` names its control topic, and with a table template `stateTable` the table recording its commits, by default `floe_cluster_<group>` in the template's namespace), `objectNotifications: s3` (the messages are S3 event notifications, and the objects they announce are read as `source.format`; `objectNotifications.dedupMessages`, 100000, is how many earlier messages of a partition a duplicate notification is found among), `deadLetterTopic` (with `on-bad-record: dead-letter`, the topic bad messages go to instead of `sink.dead-letter-table`, with Kafka Connect's `__connect.errors.*` headers) and the client's `kafka.*` settings, and with `format` avro, debezium-avro, protobuf or json-schema " +
			"`schema.registry.url` and `schema.registry.basic.auth.user.info` (`user:password`) (docs/kafka.md). " +
			"Not allowed with `type: files`.",
	},
	{
		path: "source.filter", flag: "filter",
		doc: "Row filter of `type: iceberg`, in SQL-like syntax (`id > 5 AND status = 'ACTIVE'`, see docs/reads.md): only " +
			"matching rows are read. Row groups whose statistics rule the filter out are skipped.",
	},
	{
		path: "source.changelog", flag: "changelog", def: "false",
		doc: "With `type: iceberg`, read the table's row-level changes instead of its appends: every snapshot's inserted, deleted " +
			"and updated rows, whatever wrote them (appends, deletion vectors, equality or position deletes, overwrites), each with " +
			"`_change_type` (`INSERT`, `DELETE`, `UPDATE_BEFORE`, `UPDATE_AFTER`), `_change_ordinal` (the snapshot's sequence number) " +
			"and `_commit_snapshot_id`, as Spark's changelog view gives them; compactions make no changes. A delete and an insert of one " +
			"key in a snapshot are an update by the table's identifier fields. Each snapshot is read once (docs/reads.md).",
	},
	{
		path: "source.keep", typ: "list of column names",
		doc: "Columns of `type: iceberg` to read, nested as `a.b`; the others are not read at all. Exclusive with `drop`.",
	},
	{
		path: "source.drop", typ: "list of column names",
		doc: "Columns of `type: iceberg` to leave out. Exclusive with `keep`.",
	},
	{
		path: "source.path", flag: "source", flagArg: "DIR|URL",
		required: `the directory to read landing files from, e.g. "s3://bucket/landing/events/" or "./landing"`,
		doc: "Directory or object-store prefix that producers drop files into: a local path (or `file://` URL), or an `s3://`, `gs://`, " +
			"`abfs://` or `abfss://` prefix, reached with the same catalog properties (`s3.*`, `gcs.*`, `adls.*`) and environment " +
			"(`AWS_*` variables, instance roles, application-default credentials) as the warehouse. On an object store the prefix is " +
			"listed like a directory (`/` separates the levels), objects are read with ranged requests pinned to the version planned " +
			"(S3's ETag), and an object replaced under its key after it was read is named in a warning, not read again. " +
			"Locally, symbolic links are followed: the directory itself may be one (a mounted volume), and so may the files in it, " +
			"which are read as the files they name; a link that cannot be followed is named in a warning.",
	},
	{
		path: "source.format", flag: "format",
		required: "the format of the landing files: parquet, csv, json, debezium-json or avro",
		allowed:  []string{"parquet", "csv", "json", "debezium-json", "avro"},
		doc: "File format. `json` means newline-delimited JSON: one object per line. " +
			"`debezium-json` means Debezium change events, one a line, as Kafka Connect's JsonConverter writes them " +
			"(with or without the `schema`/`payload` wrapper): each is read as the row image (`after`, or `before` for a delete) " +
			"plus the columns `__op`, `__source_lsn` and `__ts_ms`; tombstones are skipped. " +
			"`avro` means Avro object container files (`*.avro`, what Kafka Connect's S3 sink writes), read with the writer schema in each file's header, " +
			"its types mapped as for Kafka's Avro values. See docs/formats.md. " +
			"With `type: kafka` it is the format of the message values: absent or `kafka` for Spark's columns (`key`, `value`, `topic`, " +
			"`partition`, `offset`, `timestamp`, `timestampType`), `json` for one object a message, `debezium-json` for change events, `avro` for Avro in the Confluent wire format with its " +
			"schema from `options.schema.registry.url`, `debezium-avro` for change events in that format, `protobuf` and `json-schema` for " +
			"Protobuf and JSON Schema in the Confluent wire format (docs/kafka.md). In `sink.mode: upsert` a tombstone (a null value) " +
			"of json, avro, protobuf and json-schema topics deletes its key; Debezium's own tombstones are skipped.",
	},
	{
		path: "source.recursive", flag: "recursive", def: "false",
		doc: "Also read files in subdirectories of `path`, and in directories that symbolic links in it lead to. " +
			"Each real directory is read once: a link to a directory already read, or back to one that holds it (a loop), " +
			"is skipped with a warning. Off by default so that a producer's staging subdirectory is not read by accident. " +
			"A recursive source that holds floe's own `checkpoint` or warehouse is refused, as it would ingest floe's output " +
			"(directories compared after resolving symbolic links; hidden ones, such as `_checkpoint`, are never read and are fine).",
	},
	{
		path: "source.listing", flag: "listing", def: "auto", allowed: []string{"auto", "full"},
		doc: "How each batch finds new files. `auto` starts each run with full listings and, once new files have come in the order " +
			"their paths sort (16 of them, none out of order), lists only paths after the last file handled, as Auto Loader's " +
			"incremental listing does: on S3 a `StartAfter` listing, on a disk the directories that sort before it unread. " +
			"A batch then costs what its new files cost, not every file ever landed. Dated directories, timestamped or " +
			"sequenced names (what most producers write) qualify; random names never do. A full listing still runs once an hour; " +
			"one that finds a file landed late under a path sorting before files read reads it and turns incremental listing off " +
			"for the run, with a warning. A landing directory with symbolic or hard links is always listed in full. " +
			"Each batch's progress record says which listing it used (`metrics.listing`). " +
			"`full` lists everything on every batch.",
	},
	{
		path: "source.max-files-per-trigger", flag: "max-files-per-trigger", def: "0", defNote: "no limit",
		doc: "Most new files one batch takes. Keeps each commit, and the memory it needs, bounded when a backlog builds up; " +
			"with `available-now` the backlog is still processed in full, just in several commits. Must not be negative.",
	},
	{
		path: "source.max-bytes-per-trigger", flag: "max-bytes-per-trigger", def: "0", defNote: "no limit",
		doc: "Most bytes of new files one batch takes, for the same purpose as `max-files-per-trigger`; " +
			"when both are set, whichever is reached first ends the batch. Must not be negative.",
	},
	{
		path: "source.latest-first", flag: "latest-first", def: "false",
		doc: "Take the newest files first instead of the oldest: for catching up on a backlog when fresh data matters more than order.",
	},
	{
		path: "source.compression", flag: "compression", def: "auto", allowed: []string{"auto", "none", "gzip", "zstd", "bzip2"},
		doc: "How csv, json and debezium-json files are compressed. `auto` tells by the file name's extension, as Spark does: " +
			"`.gz`/`.gzip` gzip, `.zst`/`.zstd` zstd, `.bz2` bzip2, anything else plain; `none` reads every file as plain text; " +
			"a codec reads every file with it. A file read as plain text that starts as a compressed file does is refused as a bad file, " +
			"naming its compression. Parquet files compress inside and take no setting.",
	},
	{
		path: "source.path-glob-filter", flag: "path-glob-filter", flagArg: "GLOB",
		doc: "Read only files whose name matches this pattern, e.g. `*.parquet`. " +
			"The syntax is Go's `path.Match`: `*`, `?`, `[a-z]`, and `\\` to escape. It is matched against the file name, " +
			"not the whole path, so it cannot contain `/`.",
	},
	{
		path: "source.max-file-age", flag: "max-file-age", def: "7d", defNote: "`0` turns the limit off", zeroIsValue: true,
		doc: "Ignore files older than this, measured back from the modification time of the newest file seen, as Spark's `maxFileAge` is. " +
			"It is what lets the checkpoint forget files, " +
			"once they are too old to be picked up again; without a limit it remembers every file ever processed. " +
			"The files it ignores are named in a warning.",
	},
	{
		path: "source.min-file-age", flag: "min-file-age", def: "0s", defNote: "files are read as soon as they appear",
		doc: "Skip files modified more recently than this, so that a file still being written by a producer that does not " +
			"write atomically is not read half-finished. Must be less than `max-file-age`. " +
			"An `available-now` run names the files it leaves for a later run in a warning.",
	},
	{
		path: "source.clean-source", flag: "clean-source", def: "off", allowed: []string{"off", "archive", "delete"},
		doc: "What happens to a source file once the batch that read it has committed: `off` leaves it, " +
			"`archive` moves it into `source-archive-dir`, `delete` removes it.",
	},
	{
		path: "source.source-archive-dir", flag: "source-archive-dir", flagArg: "DIR|URL",
		required: `when source.clean-source is "archive": the directory to move processed files into, e.g. "s3://bucket/archive/events/"`,
		doc: "Where `clean-source: archive` moves processed files. Required with `archive` and not allowed otherwise; " +
			"it must be outside `path` (also after resolving symbolic links), or archived files would be read again. " +
			"For a landing prefix on an object store it is a prefix in the same bucket: each object is copied there (keeping its " +
			"landing time in the object's metadata, which `checkpoint rebuild` reads back on S3) and then deleted.",
	},
	{
		path: "source.schema", flag: "schema", flagArg: "'COL TYPE, ...'", typ: "list of columns",
		doc: "Columns of `csv` and `json` files, in file order, instead of deriving them from the data. " +
			"On the command line, in the syntax of Spark's DDL strings: `--schema 'id long, ts timestamp, name string NOT NULL'` " +
			"(Spark's and SQL's type names, such as `bigint` or `varchar`, are taken as the Iceberg type they stand for). " +
			"Not allowed for `parquet`, whose files carry their own schema, nor for `debezium-json`, whose events carry theirs " +
			"(or have it inferred, as `json` is).",
	},
	{path: "source.csv", doc: "Options for `format: csv`."},

	{path: "source.schema[].name", required: "the column name", doc: "Column name, as in the file header and the table. Must be unique."},
	{
		path: "source.schema[].type", typ: "Iceberg type",
		required: `the column's Iceberg type, e.g. "long" or "decimal(10,2)"`,
		allowed:  []string{"boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary", "variant", "decimal(P,S)"},
		doc: "Iceberg primitive type of the column. For `decimal(P,S)`, precision P is 1 to 38 and scale S is 0 to P. " +
			"`timestamp_ns`, `timestamptz_ns` and `variant` (any JSON value, objects and arrays too; `json` only) " +
			"need a format-version 3 table.",
	},
	{
		path: "source.schema[].required", def: "false",
		doc: "Make the column non-nullable in the table; a file with a missing value is then a bad file (see `on-bad-file`).",
	},

	{
		path: "source.csv.delimiter", def: `","`,
		doc: "Field separator: exactly one character, not a quote or line break. Write `\"\\t\"`, in double quotes, for tab.",
	},
	{
		path: "source.csv.header", def: "true",
		doc: "Whether the first line of each file holds column names. Headerless files need `schema`, to name their columns.",
	},

	{
		path: "sink.type", flag: "sink", def: "iceberg", allowed: []string{"iceberg", "console"},
		doc: "`iceberg` writes the table. `console` prints each batch's rows as JSON lines on standard output instead, " +
			"to look at a stream; it writes no table, and a batch that a crash interrupts is printed again on restart.",
	},
	{
		path: "sink.table", flag: "table",
		required: `the Iceberg table to write, e.g. "db.events"`,
		doc:      "Table identifier: namespace and table name separated by dots. Nested namespaces add parts: `analytics.raw.events`.",
	},
	{
		path: "sink.mode", flag: "mode", def: "append", allowed: []string{"append", "complete", "upsert"},
		doc: "`append` adds each batch's rows to the table. `complete` replaces the table's contents with each batch, " +
			"for sources where every file is a full snapshot; a batch of input without rows (a header-only CSV) leaves the table empty, " +
			"as Spark's complete mode does. `upsert` merges each batch into the table by key (`identifier-fields`), " +
			"as `MERGE INTO t USING batch ON key WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *` would, " +
			"deleting keys whose change says so (`cdc.op-column`); see upserts.md.",
	},
	{path: "sink.upsert", doc: "How mode `upsert` orders several changes to one key within a batch."},
	{
		path: "sink.upsert.order-by", flag: "order-by", flagArg: "COLUMN,...", typ: "list of strings",
		doc: "Columns that order the changes to one key within a batch, such as a source LSN or `ts_ms`, compared in turn; " +
			"the greatest wins, and input order (files in planned order, rows in file order) breaks ties. " +
			"Empty: the last change in input order wins, except with `source.format` debezium-json or debezium-avro, which order by `__source_lsn`, then `__ts_ms`. A null sorts first.",
	},
	{
		path: "sink.upsert.key-index-bytes", flag: "key-index-bytes", defNote: "0: 256 MiB", flagArg: "BYTES",
		doc: "Memory for the key index of a table with an integer key: the key column of each data file, sorted with its rows' positions " +
			"(12 bytes a row, and on format-version 3 8 more for the row ids of a file once an update needs them), kept from batch to batch so that a batch finds the rows it replaces without reading the key column again. " +
			"Files that do not fit are read each batch. 256 MiB holds about 22 million rows.",
	},
	{path: "sink.cdc", doc: "Change events for mode `upsert`: which rows delete their key."},
	{
		path: "sink.cdc.op-column", flag: "op-column", flagArg: "COLUMN",
		doc: "Column holding each row's operation code. Debezium's `c`, `r`, `u` and AWS DMS's `I`, `U` upsert the row; " +
			"`d` and `D` delete its key (a delete of an absent key changes nothing). Empty: every row is an upsert, " +
			"except with `source.format` debezium-json or debezium-avro, whose events carry their operation in `__op`, " +
			"and Kafka topics of rows (json, avro, protobuf, json-schema), to whose rows floe adds `__op` so that tombstones delete their keys.",
	},
	{
		path: "sink.cdc.ops", flag: "cdc-op", flagArg: "CODE=OPERATION", typ: "map of string to string",
		doc: "More operation codes, or other meanings for the default ones: code to `upsert` or `delete`, e.g. `{insert: upsert, delete: delete}`.",
	},
	{
		path: "sink.cdc.write-op-column", flag: "write-op-column", def: "false",
		doc: "Write the op column to the table too; by default it only steers the merge.",
	},
	{
		path: "sink.create-table", flag: "create-table", def: "true",
		doc: "Create the table, with the source's schema, if it does not exist. Turn it off where tables are managed elsewhere, " +
			"so that a misspelt `table` fails instead of creating a stray one.",
	},
	{
		path: "sink.table-properties", flag: "p", flagPrefix: "table-default.", typ: "map of string to string",
		doc: "Iceberg table properties set when floe creates the table, e.g. `write.parquet.compression-codec: zstd`. " +
			"On the command line each is the catalog property `table-default.<key>`, as Iceberg's catalogs spell a property " +
			"given to the tables they create: `-p table-default.write.parquet.compression-codec=zstd`, which overrides the file's entry. " +
			"The properties floe's writer reads are checked before anything is created (see writes.md, Table properties).",
	},
	{
		path: "sink.table-overrides", flag: "p", flagPrefix: "table-override.", typ: "map of string to string",
		doc: "Iceberg table properties enforced on every table floe writes: set over `table-properties` when floe creates the table, " +
			"and committed to an existing table whose value differs before floe first writes to it in a run (a warning names each change). " +
			"On the command line each is the catalog property `table-override.<key>`, as Iceberg's catalogs spell it: " +
			"`-p table-override.write.parquet.compression-codec=zstd`; in a Managed I/O config, `catalog_properties` entries " +
			"`table-default.<key>` and `table-override.<key>` fill `table-properties` and this key.",
	},
	{
		path: "sink.snapshot-properties", flag: "o", flagPrefix: "snapshot-property.", typ: "map of string to string",
		doc: "Extra entries for the summary of every snapshot floe commits, e.g. the name of the job that produced it. " +
			"Spark's `snapshot-property.<key>` write option, which may also be written as a sink key (`snapshot-property.job: nightly`) " +
			"and is an option on the command line: `-o snapshot-property.job=nightly`.",
	},
	{
		path: "sink.partition-fields", flag: "partition-fields", flagArg: "TRANSFORM,...", typ: "list of strings",
		doc: "Partition spec of a table floe creates, one Iceberg transform per entry: `col`, `bucket(col, N)`, `truncate(col, W)`, " +
			"`year(col)`, `month(col)`, `day(col)`, `hour(col)` or `void(col)`; nested source columns as `a.b`. " +
			"When the table exists with another spec, the run stops unless `partition-spec-evolution` is on.",
	},
	{
		path: "sink.partition-spec-evolution", flag: "partition-spec-evolution", def: "false",
		doc: "Evolve an existing table's partition spec to `partition-fields` instead of stopping. Files written before keep their spec.",
	},
	{
		path: "sink.identifier-fields", flag: "identifier-fields", flagArg: "COLUMN,...", typ: "list of strings",
		doc: "Identifier (row key) columns of a table floe creates; they are made required. " +
			"In mode `upsert` they are the key, and an existing table's own identifier fields are used when this is empty; " +
			"a table floe creates in mode `upsert` gets a Parquet bloom filter on each (`write.parquet.bloom-filter-enabled.column.<key>`, " +
			"unless `table-properties` set it), which the batches' key lookups read (see writes.md, Bloom filters).",
	},
	{
		path: "sink.format-version", flag: "format-version", defNote: "2; 3 in mode `upsert`", allowed: []string{"1", "2", "3"},
		doc: "Iceberg format version of a table floe creates. In mode `upsert`, 3 writes deletion vectors and 2 equality deletes.",
	},
	{
		path: "sink.column-defaults", flag: "column-default", flagArg: "COLUMN=VALUE", typ: "map of string to string",
		doc: "Default values of top-level columns, written as text in the column's type (`eu`, `0`, `true`, `2024-01-01`), " +
			"for a format-version 3 table: when floe creates the table or schema evolution adds the column, the column gets the value " +
			"as its Iceberg `write-default` and `initial-default`. Rows of input without the column are then written with it " +
			"(floe honours any table's `write-default`), and every reader gives it for rows of files written before the column was added.",
	},
	{
		path: "sink.write-format", flag: "write-format", def: "parquet", allowed: []string{"parquet"},
		doc: "Data file format. Only Parquet is written; `orc` and `avro` are refused with an error.",
	},
	{
		path: "sink.fanout-enabled", flag: "fanout", def: "true",
		doc: "Keep one open file per partition while a batch is written, so rows need no grouping first (Spark's `fanout-enabled`). " +
			"Off, each writer groups its rows by partition and writes one partition at a time (the clustered writer). " +
			"Either way `write.max-open-files` bounds the open files, and so the memory.",
	},
	{
		path: "sink.target-file-size-bytes", flag: "target-file-size-bytes", defNote: "the table's `write.target-file-size-bytes`, else 512 MiB",
		doc: "Roll to a new data file once this many encoded bytes were written (Spark's `target-file-size-bytes`).",
	},
	{
		path: "sink.max-open-files", flag: "max-open-files", defNote: "the table's `write.max-open-files`, else 100",
		doc: "At most this many data files open at once in a batch; the least recently written is closed when another partition needs one.",
	},
	{
		path: "sink.keep", flag: "keep", flagArg: "FIELD,...", typ: "list of strings",
		doc: "Write only these input fields (nested as `a.b`). Mutually exclusive with `drop` and `only`.",
	},
	{
		path: "sink.drop", flag: "drop", flagArg: "FIELD,...", typ: "list of strings",
		doc: "Remove these input fields before writing (nested as `a.b`). Mutually exclusive with `keep` and `only`.",
	},
	{
		path: "sink.only", flag: "only", flagArg: "FIELD",
		doc: "Write the contents of this struct field as the row. Mutually exclusive with `keep` and `drop`.",
	},
	{
		path: "sink.check-nullability", flag: "check-nullability", def: "true",
		doc: "Refuse an input whose column is optional where the table's is required (Spark's `check-nullability`). " +
			"Off, the values are checked instead, and a null in a required column fails its file.",
	},
	{
		path: "sink.check-ordering", flag: "check-ordering", def: "true",
		doc: "Refuse an input whose columns come in another order than the table's (Spark's `check-ordering`). Off, columns are matched by name.",
	},
	{
		path: "sink.schema-evolution", flag: "schema-evolution", def: "none", allowed: []string{"none", "add-columns"},
		doc: "`add-columns` adds input columns the table lacks, as optional columns, and widens int to long and float to double. " +
			"Any other difference is an error naming the column and both types.",
	},
	{
		path: "sink.dead-letter-table", flag: "dead-letter-table", flagArg: "TABLE",
		doc: "The table that receives the records `on-bad-record: dead-letter` sets aside (created when missing, with floe's dead-letter columns). " +
			"With a table template and no `on-bad-record: dead-letter`, the table that receives rows whose template value is null or not a valid name, " +
			"with the reason and the row's source file and position; without it, such a row fails the batch.",
	},
	{
		path: "sink.branch", flag: "branch", flagArg: "BRANCH",
		doc: "Commit every batch to this branch of the table instead of main: main does not change, readers see the batches with `floe scan --branch`, and " +
			"`floe table fast-forward TABLE main BRANCH` publishes them. A branch that does not exist starts from main's current " +
			"snapshot with the first batch. Exactly once holds on the branch as on main. Modes append and complete; " +
			"automatic maintenance still works on main. Spark's spellings work too: the `branch` write option and the " +
			"`spark.wap.branch` setting of write-audit-publish, as sink keys or as `-o branch=audit`.",
	},
}

// examplePipeline opens the reference; a test parses it, so the example
// cannot rot either.
const examplePipeline = `catalog:
  type: sql
  uri: file:${FLOE_HOME:-.}/catalog.db
  warehouse: ${FLOE_HOME:-.}/warehouse
source:
  path: ./landing/events
  format: csv
  max-files-per-trigger: 100
  clean-source: archive
  source-archive-dir: ./archive/events
  schema:
    - {name: id, type: long, required: true}
    - {name: amount, type: "decimal(10,2)"}
    - {name: at, type: timestamptz}
sink:
  table: db.events
trigger: available-now
checkpoint: ./checkpoints/events
`

var specIndex = func() map[string]*fieldSpec {
	m := make(map[string]*fieldSpec, len(specs))
	for i := range specs {
		m[specs[i].path] = &specs[i]
	}
	return m
}()

var (
	listIndexRE = regexp.MustCompile(`\[\d+\]`)
	mapKeyRE    = regexp.MustCompile(`\["(?:[^"\\]|\\.)*"\]$`)
)

// specPath maps a concrete path ("source.schema[2].type",
// `catalog.properties["s3.endpoint"]`) to its spec table entry's path.
func specPath(path string) string {
	return listIndexRE.ReplaceAllString(mapKeyRE.ReplaceAllString(path, ""), "[]")
}

// specFor returns the spec of path; a missing entry is a bug that the
// spec/struct agreement test catches, so it panics rather than limp on.
func specFor(path string) *fieldSpec {
	s, ok := specIndex[specPath(path)]
	if !ok {
		panic("config: no field spec for " + path)
	}
	return s
}

// applyDefaults sets each zero field that has a default by decoding the
// default's YAML spelling into it, so the value used is exactly the one the
// docs show. written reports whether the file gave a key; it is nil when
// there is no file, and then zeroIsValue defaults are skipped.
func applyDefaults(p *Pipeline, written func(path string) bool) {
	root := reflect.ValueOf(p).Elem()
	for i := range specs {
		s := &specs[i]
		if s.def == "" || strings.Contains(s.path, "[]") {
			continue
		}
		if s.zeroIsValue && (written == nil || written(s.path)) {
			continue
		}
		v := fieldByPath(root, s.path)
		if !v.IsZero() {
			continue
		}
		if err := yaml.Unmarshal([]byte(s.def), v.Addr().Interface()); err != nil {
			panic(fmt.Sprintf("config: bad default %q for %s: %v", s.def, s.path, err))
		}
	}
}

// fieldByPath finds the struct field at a dotted path without list parts.
func fieldByPath(v reflect.Value, path string) reflect.Value {
	for part := range strings.SplitSeq(path, ".") {
		f, ok := structFields(v.Type()).byKey(part)
		if !ok {
			panic("config: no field for " + path)
		}
		v = v.FieldByIndex(f.Index)
	}
	return v
}

// docType names a Go field type the way the reference shows it.
func docType(t reflect.Type) string {
	switch t {
	case durationType:
		return "duration"
	case triggerType:
		return "trigger"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return docType(t.Elem())
	case reflect.Struct:
		return "mapping"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	}
	return t.String()
}

// typeAt finds the Go type of the field at a spec path.
func typeAt(path string) reflect.Type {
	t := reflect.TypeFor[Pipeline]()
	for part := range strings.SplitSeq(path, ".") {
		if t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		f, ok := structFields(t).byKey(strings.TrimSuffix(part, "[]"))
		if !ok {
			panic("config: no field for " + path)
		}
		t = f.Type
	}
	return t
}

// Reference renders the Markdown reference of every pipeline key from the
// spec table. docs/config.md is its output, checked by a test, so the docs
// describe exactly what this package accepts.
func Reference() string {
	var b strings.Builder
	b.WriteString(`<!-- Code generated by "go run ./cmd/floe-configdoc > docs/config.md"; DO NOT EDIT. -->

# Pipeline configuration

` + "`floe run PIPELINE.yaml`" + ` runs the pipeline described by one YAML file: it reads new files from a
landing directory, writes them to an Iceberg table, and records its progress in a checkpoint directory.

## Example

` + "```yaml\n" + examplePipeline + "```\n" + `
## How the file is read

- **Unknown keys are errors**, with a suggestion for the key you probably meant: a misspelt key
  would otherwise be silently ignored, and its default used instead.
- **Every problem is reported at once**, each with its line and key path.
- **Environment variables**: ` + "`${VAR}`" + ` is replaced by the variable's value before the file is parsed,
  and ` + "`${VAR:-default}`" + ` by the default when the variable is unset or empty. An unset variable without a
  default is an error. ` + "`$$`" + ` is a literal ` + "`$`" + `; any other ` + "`$`" + ` is kept as it is. References in comments
  are left alone. Values are inserted as they are, so quote a reference whose value may
  contain YAML punctuation such as ` + "`: `" + ` or ` + "` #`" + `.
- **Durations** use Go syntax (` + "`90s`, `15m`, `1h30m`" + `) plus ` + "`d`" + ` for 24 hours and ` + "`w`" + ` for 7 days
  (` + "`7d`, `1d12h`" + `). A number needs a unit, except ` + "`0`" + `.
- **Triggers** are one string: ` + "`available-now`, `once`, `processing-time=<duration>`" + `, or just the duration.
- A key that is present with no value (` + "`mode:`" + `) counts as absent and gets its default.

## Flags

A key's **Flag** is its spelling on the command line: ` + "`floe stream`" + ` takes every key that has one;
` + "`floe run`" + ` takes the catalog flags (` + "`-p`" + ` with ` + "`table-default.KEY=VALUE`" + ` too), ` + "`--trigger`" + `,
` + "`--source`, `--format`, `--checkpoint`, `--fail-on-empty`" + ` and ` + "`--allow-new-query`" + `, to override the file.
A flag takes its value as the key does, except that a boolean is ` + "`--fanout`" + ` or ` + "`--fanout=false`" + `, a
list is given comma-separated (` + "`--keep id,ts`" + `) or by repeating the flag, and a map one ` + "`KEY=VALUE`" + `
entry per flag. The flags, their defaults and their help (` + "`floe stream --help`" + `) are generated from the
same table as this page.
`)
	var groups []string
	byGroup := map[string][]*fieldSpec{}
	for i := range specs {
		s := &specs[i]
		g := parentPath(s.path)
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], s)
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "\n## %s\n", sectionTitle(g))
		for _, s := range byGroup[g] {
			fmt.Fprintf(&b, "\n### `%s`\n\n", s.path)
			typ := s.typ
			if typ == "" {
				typ = docType(typeAt(s.path))
			}
			fmt.Fprintf(&b, "- Type: %s\n", typ)
			switch {
			case s.required != "" && !strings.HasPrefix(s.required, "when "):
				b.WriteString("- Required\n")
			case s.def != "" && s.defNote != "":
				fmt.Fprintf(&b, "- Default: `%s` (%s)\n", s.def, s.defNote)
			case s.def != "":
				fmt.Fprintf(&b, "- Default: `%s`\n", s.def)
			case s.defNote != "":
				fmt.Fprintf(&b, "- Default: %s\n", s.defNote)
			}
			if len(s.allowed) > 0 {
				quoted := make([]string, len(s.allowed))
				for i, a := range s.allowed {
					quoted[i] = "`" + a + "`"
				}
				fmt.Fprintf(&b, "- Allowed: %s\n", strings.Join(quoted, ", "))
			}
			if s.flag != "" {
				fmt.Fprintf(&b, "- Flag: `%s`\n", flagOf(s).Spelling())
			}
			fmt.Fprintf(&b, "\n%s", s.doc)
			for _, sub := range []string{s.path, s.path + "[]"} {
				if _, ok := byGroup[sub]; ok {
					t := sectionTitle(sub)
					fmt.Fprintf(&b, " See [%s](#%s).", t, githubAnchor(t))
				}
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// sectionTitle must not render to the same anchor as a key heading, or
// the "See ..." links would point at the key instead of its section.
func sectionTitle(group string) string {
	if group == "" {
		return "Top-level keys"
	}
	return "Keys in " + group
}

// githubAnchor mimics how GitHub turns a heading into a fragment: lower
// case, punctuation dropped, spaces to hyphens.
func githubAnchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}
