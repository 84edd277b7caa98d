package main

import (
	"flag"
	"strings"

	"github.com/floe-io/floe/config"
)

// sinkFlags are the write options of `floe stream`, spelt as the pipeline
// file's sink keys.
type sinkFlags struct {
	partitionFields  listFlag
	tableProps       propsFlag
	snapshotProps    propsFlag
	fanout, noFanout bool
	targetFileSize   int64
	maxOpenFiles     int
	keep, drop       string
	only             string
	schemaEvolution  string
	deadLetter       string
	partitionEvolve  bool
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func (f *sinkFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.partitionFields, "partition-field", "partition the created table by this transform; repeat for more: col, bucket(col, N), truncate(col, W), year|month|day|hour(col), void(col)")
	fs.Var(&f.tableProps, "table-property", "KEY=VALUE table property for a table floe creates (repeatable), e.g. write.target-file-size-bytes=134217728")
	fs.Var(&f.snapshotProps, "snapshot-property", "KEY=VALUE added to every commit's snapshot summary (repeatable)")
	fs.BoolVar(&f.fanout, "fanout", false, "keep one open file per partition (the default)")
	fs.BoolVar(&f.noFanout, "no-fanout", false, "group rows by partition first and write one partition at a time (the clustered writer)")
	fs.Int64Var(&f.targetFileSize, "target-file-size-bytes", 0, "roll data files at this many encoded bytes (default: the table's write.target-file-size-bytes, else 512 MiB)")
	fs.IntVar(&f.maxOpenFiles, "max-open-files", 0, "at most this many data files open at once (default: the table's write.max-open-files, else 100)")
	fs.StringVar(&f.keep, "keep", "", "comma-separated input fields to write, all others dropped (nested as a.b)")
	fs.StringVar(&f.drop, "drop", "", "comma-separated input fields to leave out (nested as a.b)")
	fs.StringVar(&f.only, "only", "", "write the contents of this struct field as the row")
	fs.StringVar(&f.schemaEvolution, "schema-evolution", "", "none (default) or add-columns: add new input columns to the table and widen int to long, float to double")
	fs.StringVar(&f.deadLetter, "dead-letter-table", "", "with a --table template, the table for rows whose template value is null or not a valid name")
	fs.BoolVar(&f.partitionEvolve, "partition-spec-evolution", false, "evolve an existing table's partition spec to the --partition-field list instead of stopping")
}

func (f *sinkFlags) apply(s *config.Sink) error {
	if f.tableProps.malformed > 0 || f.snapshotProps.malformed > 0 {
		return usagef("--table-property and --snapshot-property take KEY=VALUE")
	}
	if f.fanout && f.noFanout {
		return usagef("--fanout and --no-fanout contradict each other; give one")
	}
	s.PartitionFields = f.partitionFields
	s.TableProperties = f.tableProps.values
	s.SnapshotProperties = f.snapshotProps.values
	if f.noFanout {
		off := false
		s.FanoutEnabled = &off
	}
	s.TargetFileSizeBytes = f.targetFileSize
	s.MaxOpenFiles = f.maxOpenFiles
	s.Keep = splitList(f.keep)
	s.Drop = splitList(f.drop)
	s.Only = f.only
	s.SchemaEvolution = f.schemaEvolution
	s.DeadLetterTable = f.deadLetter
	s.PartitionSpecEvolution = f.partitionEvolve
	return nil
}

func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
