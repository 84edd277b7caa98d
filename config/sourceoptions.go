package config

import "strings"

// SourceOption is a read option a source type takes in source.options
// (`-o KEY=VALUE` on the command line), with the name Spark gives it.
type SourceOption struct {
	Name string
	// Doc is one or two sentences of plain text, for --help.
	Doc string
}

// SourceOptions are the options a source of type typ ("iceberg" or
// "kafka") reads, in the order docs/config.md and docs/kafka.md give
// them; nil for a type that takes none. Validation checks options against
// the same lists.
func SourceOptions(typ string) []SourceOption {
	switch typ {
	case "iceberg":
		return icebergSourceOptions
	case "kafka":
		return kafkaSourceOptions
	}
	return nil
}

// WriteOptions are the -o options of the sink, with any source: Spark's
// write options, and floe's snapshot properties.
func WriteOptions() []SourceOption {
	return []SourceOption{
		{"branch", "Commit every batch to this branch of the table instead of main (Spark's branch write option; --branch, key sink.branch); " +
			"main does not change, and floe table fast-forward TABLE main BRANCH publishes the batches."},
		{"spark.wap.branch", "The same, by the name of Spark's write-audit-publish setting."},
		{SnapshotPropertyPrefix + "KEY", "An extra entry for the summary of every snapshot floe commits (key sink.snapshot-properties)."},
	}
}

var icebergSourceOptions = []SourceOption{
	{"starting-strategy", "Where a new query starts (Flink's values): INCREMENTAL_FROM_EARLIEST_SNAPSHOT (default), INCREMENTAL_FROM_LATEST_SNAPSHOT, " +
		"INCREMENTAL_FROM_SNAPSHOT_ID or INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP; the start snapshot's own appends are read."},
	{"start-snapshot-id", "Start at this snapshot, its appends included (floe table snapshots TABLE lists them)."},
	{"stream-from-timestamp", "Epoch milliseconds: start at the first snapshot committed at or after it."},
	{"start-snapshot-timestamp", "Flink's name for stream-from-timestamp."},
	{"streaming-max-files-per-micro-batch", "Most data files a batch reads."},
	{"streaming-max-rows-per-micro-batch", "Most rows a batch reads (soft: whole files)."},
	{"streaming-skip-overwrite-snapshots", "true skips overwrite snapshots instead of failing."},
	{"streaming-skip-delete-snapshots", "true skips delete snapshots instead of failing."},
	{"streaming-skip-expired-snapshots", "true goes on, with a warning, past snapshots expired before the query read them."},
	{"async-micro-batch-planning-enabled", "true plans batches ahead in the background."},
	{"streaming-snapshot-polling-interval-ms", "How often the background planner looks for new snapshots (30000)."},
	{"async-queue-preload-file-limit", "How many files the background planner plans ahead (100)."},
	{"async-queue-preload-row-limit", "How many rows the background planner plans ahead (100000)."},
}

// icebergStartingStrategies are the values of the iceberg source's
// starting-strategy.
var icebergStartingStrategies = []string{"INCREMENTAL_FROM_EARLIEST_SNAPSHOT", "INCREMENTAL_FROM_LATEST_SNAPSHOT",
	"INCREMENTAL_FROM_SNAPSHOT_ID", "INCREMENTAL_FROM_SNAPSHOT_TIMESTAMP"}

var kafkaSourceOptions = []SourceOption{
	{"kafka.bootstrap.servers", "Required: the brokers, comma separated."},
	{"subscribe", "A comma list of topics. Exactly one of subscribe, subscribePattern and assign."},
	{"subscribePattern", "A regular expression matched against whole topic names."},
	{"assign", `JSON {"events":[0,1]}: these partitions only.`},
	{"startingOffsets", `Where a new query starts: earliest (default), latest, or JSON {"events":{"0":23}}.`},
	{"startingTimestamp", "Epoch milliseconds: each partition starts at its first message at or after it."},
	{"endingOffsets", "With --trigger available-now: where the run stops, latest (default) or JSON."},
	{"maxOffsetsPerTrigger", "Most messages a batch takes, split across partitions by backlog."},
	{"maxBytesPerTrigger", "floe's: the bytes a batch takes, 268435456 by default, 0 for no limit."},
	{"failOnDataLoss", "true (default) stops at offsets lost to retention; false skips them with a warning."},
	{"includeHeaders", "true adds the headers column to the kafka row shape."},
	{"schema.registry.url", "With --format avro, debezium-avro, protobuf or json-schema, required: the Schema Registry."},
	{"schema.registry.basic.auth.user.info", "user:password for the registry's basic auth."},
	{"kafka.group.id", "With a processing-time trigger, run as a worker of a cluster sharing the partitions."},
	{"controlTopic", "The control topic of a cluster of workers."},
	{"stateTable", "With a table template, the table recording a cluster's commits."},
	{"objectNotifications", "s3: the messages are S3 event notifications; the objects are read as --format."},
	{"objectNotifications.dedupMessages", "How many earlier messages of a partition a duplicate notification is found among (100000)."},
	{"deadLetterTopic", "With --on-bad-record dead-letter, the topic bad messages go to."},
	{"kafka.*", "The client's settings: kafka.security.protocol, kafka.sasl.*, kafka.ssl.*, kafka.client.id (docs/kafka.md)."},
}

// optionNames are the names of opts that a source checks by name: the
// client's kafka.* settings are passed on, not checked.
func optionNames(opts []SourceOption) []string {
	var names []string
	for _, o := range opts {
		if !strings.HasPrefix(o.Name, "kafka.") {
			names = append(names, o.Name)
		}
	}
	return names
}
