package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
)

// runFlags are shared by `run` and `stream`.
type runFlags struct {
	catalog       catalogFlags
	progress      string
	failOnEmpty   bool
	allowNewQuery bool
	verbose       bool
}

func (r *runFlags) register(fs *flag.FlagSet) {
	r.catalog.register(fs)
	fs.StringVar(&r.progress, "progress", "", "progress output on stderr: json (JSON lines, Spark's StreamingQueryProgress fields), bar, or summary; default: bar on a terminal, summary otherwise")
	fs.BoolVar(&r.failOnEmpty, "fail-on-empty", false, "exit with code 3 when the run found no input")
	fs.BoolVar(&r.allowNewQuery, "allow-new-query", false, "allow a new checkpoint to write a table that already holds another query's output from the same source (duplicates its rows)")
	fs.BoolVar(&r.verbose, "verbose", false, "log debug detail on stderr")
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", "run PIPELINE.yaml [flags]", stderr)
	var rf runFlags
	rf.register(fs)
	var src config.Source
	var checkpoint, trigger string
	fs.StringVar(&trigger, "trigger", "", "override the file's trigger: available-now, once, or an interval such as 1m")
	fs.StringVar(&src.Path, "source", "", "landing directory to read, for a file without a source (a Managed I/O config) or to override its source.path")
	fs.StringVar(&src.Format, "format", "", "input format of --source: parquet, csv or json")
	fs.StringVar(&checkpoint, "checkpoint", "", "checkpoint directory, overriding the file's")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("run takes one pipeline file, e.g. floe run examples/quickstart.yaml")
	}
	var trig *config.Trigger
	if trigger != "" {
		t, err := config.ParseTrigger(trigger)
		if err != nil {
			return usagef("--trigger: %v", err)
		}
		trig = &t
	}
	// The flags fill in the file before it is checked, so that a Managed
	// I/O config, which has no source, is complete once they are given.
	complete := func(p *config.Pipeline) {
		if trig != nil {
			p.Trigger = *trig
		}
		if src.Path != "" {
			p.Source.Path = src.Path
		}
		if src.Format != "" {
			p.Source.Format = src.Format
		}
		if checkpoint != "" {
			p.Checkpoint = checkpoint
		}
	}
	cfg, err := config.LoadWith(pos[0], complete)
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	return runPipeline(ctx, cfg, rf, stdout, stderr)
}

// testHooks is set only in binaries built with the floetest tag, for the
// end-to-end tests that need floe to die at an exact point. It gets the
// configuration so that it can open the configured catalog and wrap it.
var testHooks func(*config.Pipeline, *floe.Options)

// runPipeline runs a configured pipeline until its trigger ends or a signal
// arrives: the first SIGINT/SIGTERM lets the running batch finish, a second
// one abandons it (nothing is half-committed either way).
func runPipeline(ctx context.Context, cfg *config.Pipeline, rf runFlags, stdout, stderr io.Writer) error {
	if err := rf.catalog.check(); err != nil {
		return err
	}
	rf.catalog.apply(&cfg.Catalog)
	if rf.failOnEmpty {
		cfg.FailOnEmpty = true
	}
	if rf.allowNewQuery {
		cfg.AllowNewQuery = true
	}
	level := slog.LevelWarn
	if rf.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	mode := rf.progress
	if mode == "" {
		mode = "summary"
		if isTerminal(stderr) {
			mode = "bar"
		}
	}
	var out progressPrinter
	switch mode {
	case "json":
		out = &jsonProgress{enc: json.NewEncoder(stderr)}
	case "bar":
		out = &barProgress{w: stderr}
	case "summary":
		out = &summaryProgress{w: stderr}
	default:
		return usagef("--progress=%s is not known; use json, bar or summary", mode)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := floe.Options{
		Stdout:     stdout,
		Logger:     logger,
		OnProgress: out.progress,
		OnWarning:  func(msg string) { out.warning(msg) },
	}
	if testHooks != nil {
		testHooks(cfg, &opts)
	}
	p, err := floe.Open(ctx, cfg, opts)
	if err != nil {
		return err
	}
	defer p.Close()

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for {
			select {
			case <-sigs:
				n++
				if n == 1 {
					p.Stop()
				} else {
					cancel()
				}
			case <-ctx.Done():
				return
			}
		}
	}()

	sum, err := p.Run(ctx)
	target := cfg.Sink.Table
	if cfg.Sink.Console() {
		target = "the console"
	}
	out.done(sum, target)
	return err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

type progressPrinter interface {
	progress(floe.Progress)
	warning(string)
	done(floe.Summary, string)
}

// jsonProgress prints one JSON object per batch, for machines.
type jsonProgress struct{ enc *json.Encoder }

func (j *jsonProgress) progress(p floe.Progress) { _ = j.enc.Encode(p) }
func (j *jsonProgress) warning(msg string) {
	_ = j.enc.Encode(map[string]string{"level": "warning", "message": msg})
}
func (j *jsonProgress) done(floe.Summary, string) {}

// summaryProgress prints one line per batch and one at the end, for logs.
type summaryProgress struct{ w io.Writer }

func (s *summaryProgress) progress(p floe.Progress) {
	snap := "no snapshot (no rows)"
	switch {
	case len(p.Sink.Tables) > 1:
		snap = fmt.Sprintf("%d snapshots in %d tables", len(p.Sink.Tables), len(p.Sink.Tables))
	case len(p.Sink.Tables) == 1:
		snap = fmt.Sprintf("snapshot %d of %s", p.Sink.Tables[0].SnapshotID, p.Sink.Tables[0].Table)
	case p.Sink.SnapshotID != 0:
		snap = fmt.Sprintf("snapshot %d", p.Sink.SnapshotID)
	}
	extra := ""
	if len(p.Quarantined) > 0 {
		extra = fmt.Sprintf(", %d quarantined", len(p.Quarantined))
	}
	fmt.Fprintf(s.w, "batch %d: %d rows, %d files, %s, %d ms%s\n", p.BatchID, p.NumInputRows, p.Sink.DataFiles, snap, p.DurationMs.TriggerExecution, extra)
}
func (s *summaryProgress) warning(msg string) { fmt.Fprintf(s.w, "floe: warning: %s\n", msg) }
func (s *summaryProgress) done(sum floe.Summary, table string) {
	fmt.Fprintf(s.w, "floe: %d batches, %d rows, %d snapshots committed to %s\n", sum.Batches, sum.Rows, sum.Snapshots, table)
}

// barProgress redraws one line on a terminal: a bar over the files of an
// available-now run, the batch and the rows so far.
type barProgress struct {
	w    io.Writer
	rows int64
}

func (b *barProgress) progress(p floe.Progress) {
	b.rows += p.NumInputRows
	line := fmt.Sprintf("batch %d, %d rows", p.BatchID, b.rows)
	if bl := p.Backlog; bl != nil && bl.TotalFiles > 0 {
		const width = 30
		done := bl.TotalFiles - bl.RemainingFiles
		n := done * width / bl.TotalFiles
		line = fmt.Sprintf("[%s%s] %d/%d files, %s", strings.Repeat("#", n), strings.Repeat(".", width-n), done, bl.TotalFiles, line)
	}
	fmt.Fprintf(b.w, "\r\033[K%s", line)
}
func (b *barProgress) warning(msg string) { fmt.Fprintf(b.w, "\r\033[Kfloe: warning: %s\n", msg) }
func (b *barProgress) done(sum floe.Summary, table string) {
	fmt.Fprintf(b.w, "\r\033[Kfloe: %d batches, %d rows, %d snapshots committed to %s\n", sum.Batches, sum.Rows, sum.Snapshots, table)
}
