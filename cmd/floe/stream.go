package main

import (
	"context"
	"io"

	"github.com/floe-io/floe/config"
)

func cmdStream(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("stream", "stream (--source DIR --format parquet|csv|json | --source-table NS.TABLE [-o KEY=VALUE ...]) (--table NS.TABLE | --sink console) --checkpoint DIR --trigger available-now|once|<duration> [flags]", stderr)
	var rf runFlags
	rf.register(fs)
	var cfg config.Pipeline
	var trigger, maxFileAge, minFileAge string
	createTable := true
	fs.StringVar(&cfg.Source.Path, "source", "", "landing directory to read (required)")
	fs.StringVar(&cfg.Source.Format, "format", "", "input format: parquet, csv or json (JSON lines) (required)")
	var readOpts propsFlag
	fs.StringVar(&cfg.Source.Table, "source-table", "", "Iceberg table of the catalog to read instead of --source: each data file appended to it is read once, as Spark's Iceberg streaming source does")
	fs.Var(&readOpts, "o", "KEY=VALUE read option of --source-table, with Spark's names (repeatable): stream-from-timestamp, streaming-max-files-per-micro-batch, streaming-max-rows-per-micro-batch, streaming-skip-overwrite-snapshots, streaming-skip-delete-snapshots, async-micro-batch-planning-enabled, ...")
	fs.StringVar(&cfg.Source.Filter, "filter", "", "with --source-table: read only rows matching this SQL-like filter, e.g. \"id > 5 AND status = 'ACTIVE'\"")
	fs.StringVar(&cfg.Sink.Table, "table", "", "table to write, NAMESPACE.TABLE, or a template such as db.events_{region} that routes each row by its values (required)")
	fs.StringVar(&cfg.Sink.Type, "sink", "", "iceberg (default: write --table) or console (print each batch's rows as JSON lines on stdout, writing no table)")
	fs.StringVar(&cfg.Checkpoint, "checkpoint", "", "checkpoint directory; one per query (required)")
	fs.StringVar(&trigger, "trigger", "available-now", "available-now (drain the backlog, then stop), once (one batch), or an interval such as 1s or processing-time=1m")
	fs.StringVar(&cfg.Sink.Mode, "mode", "append", "output mode: append, or complete (each batch replaces the table's contents)")
	fs.BoolVar(&cfg.Source.Recursive, "recursive", false, "also read files in subdirectories of --source")
	fs.IntVar(&cfg.Source.MaxFilesPerTrigger, "max-files-per-trigger", 0, "at most this many files per batch (0: no limit)")
	fs.Int64Var(&cfg.Source.MaxBytesPerTrigger, "max-bytes-per-trigger", 0, "about this many bytes per batch, at least one file (0: no limit)")
	fs.BoolVar(&cfg.Source.LatestFirst, "latest-first", false, "take the newest files first")
	fs.StringVar(&cfg.Source.PathGlobFilter, "path-glob-filter", "", "only read files whose name matches this glob, e.g. '*.parquet'")
	fs.StringVar(&maxFileAge, "max-file-age", "7d", "ignore files older than this relative to the newest file seen, as Spark does (0 disables)")
	fs.StringVar(&minFileAge, "min-file-age", "", "leave files younger than this for a later batch (default 0)")
	fs.StringVar(&cfg.Source.CleanSource, "clean-source", "", "after a batch commits: off (default), archive (move to --source-archive-dir) or delete its files")
	fs.StringVar(&cfg.Source.ArchiveDir, "source-archive-dir", "", "where clean-source=archive moves committed files")
	fs.StringVar(&cfg.OnBadFile, "on-bad-file", "", "fail (default: stop with an error) or quarantine (move the file to <checkpoint>/quarantine/ and go on)")
	fs.BoolVar(&createTable, "create-table", true, "create the table from the input schema on first write")
	maintain := true
	fs.BoolVar(&maintain, "maintenance", true, "maintain the table between batches (expire snapshots, merge manifests, compact small files, remove orphans; docs/maintenance.md); --maintenance=false leaves it alone")
	var sf sinkFlags
	sf.register(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("stream takes no positional arguments (got %q); see floe stream --help", pos[0])
	}
	cfg.Sink.CreateTable = &createTable
	cfg.Maintenance.Enabled = &maintain
	if err := sf.apply(&cfg.Sink); err != nil {
		return err
	}
	if err := readFlags(&cfg, readOpts); err != nil {
		return err
	}
	cfg.SetDefaults()
	if trigger != "" {
		t, err := config.ParseTrigger(trigger)
		if err != nil {
			return usagef("--trigger: %v", err)
		}
		cfg.Trigger = t
	}
	for _, d := range []struct {
		flag string
		val  string
		dst  *config.Duration
	}{{"max-file-age", maxFileAge, &cfg.Source.MaxFileAge}, {"min-file-age", minFileAge, &cfg.Source.MinFileAge}} {
		if d.val == "" {
			continue
		}
		v, err := config.ParseDuration(d.val)
		if err != nil {
			return usagef("--%s: %v", d.flag, err)
		}
		*d.dst = config.Duration(v)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	return runPipeline(ctx, &cfg, rf, stdout, stderr)
}

// readFlags makes --source-table an iceberg source, with the -o options
// and --filter, and --keep and --drop pushed into the read: columns that
// are not written are not read either. A table template routes rows before
// keep and drop, by columns they may leave out, so with one they stay on
// the sink.
func readFlags(cfg *config.Pipeline, opts propsFlag) error {
	src := &cfg.Source
	if opts.malformed > 0 {
		return usagef("-o takes KEY=VALUE, e.g. -o streaming-max-files-per-micro-batch=10")
	}
	if src.Table == "" {
		if len(opts.values) > 0 || src.Filter != "" {
			return usagef("-o and --filter are read options of --source-table; for a landing directory, see floe stream --help")
		}
		return nil
	}
	if src.Path != "" || src.Format != "" {
		return usagef("give --source-table or --source with --format, not both")
	}
	src.Type, src.Options = "iceberg", opts.values
	if !cfg.Sink.IsTemplate() {
		src.Keep, src.Drop = cfg.Sink.Keep, cfg.Sink.Drop
		cfg.Sink.Keep, cfg.Sink.Drop = nil, nil
	}
	return nil
}
