package main

import (
	"context"
	"io"

	"github.com/floe-io/floe/config"
)

func cmdStream(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("stream", "stream --source DIR --format parquet|csv|json --table NS.TABLE --checkpoint DIR --trigger available-now|once|<duration> [flags]", stderr)
	var rf runFlags
	rf.register(fs)
	var cfg config.Pipeline
	var trigger, maxFileAge, minFileAge string
	createTable := true
	fs.StringVar(&cfg.Source.Path, "source", "", "landing directory to read (required)")
	fs.StringVar(&cfg.Source.Format, "format", "", "input format: parquet, csv or json (JSON lines) (required)")
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
	if err := sf.apply(&cfg.Sink); err != nil {
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
