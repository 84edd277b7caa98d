package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
)

func init() {
	helps["run"] = commandHelp{
		usage: "run PIPELINE.yaml [flags]",
		about: "Run the pipeline a YAML file describes (docs/config.md): read the new input, write it to the table in " +
			"micro-batches, one snapshot per batch, and record progress in the checkpoint, until the trigger ends or " +
			"SIGINT/SIGTERM arrives (the running batch finishes; a second signal abandons it, committing nothing). " +
			"A Beam/Dataflow Managed I/O Iceberg config runs too, with --source and --format naming its input. " +
			"Exits 3 when --fail-on-empty is given and there was no input.",
		keysNote: "they override the file",
		examples: []example{
			{"Land the quickstart's CSV files in db.quickstart of ./warehouse.", "floe run examples/quickstart.yaml"},
			{"A scheduled job: JSON progress lines, and exit 3 when nothing arrived.", "floe run pipeline.yaml --progress=json --fail-on-empty"},
			{"A Managed I/O config, which has no source: name it.", "floe run dataflow-sink.yaml --source landing/ --format json --checkpoint ckpt/dataflow"},
		},
	}
}

// runFlags are shared by `run` and `stream`: how a run reports.
type runFlags struct {
	progress  string
	verbose   bool
	logFormat string
}

// runKeys are the pipeline keys both `run` and `stream` take as flags.
var runKeys = []string{"trigger", "checkpoint", "fail-on-empty", "allow-new-query", "source.path", "source.format", "metrics.listen"}

func (r *runFlags) register(fs *flagSet) {
	fs.key(catalogKeys...)
	fs.key(runKeys...)
	fs.StringVar(&r.progress, "progress", "", "How progress shows on stderr, as `MODE`: json (JSON lines with Spark's StreamingQueryProgress fields), bar, or summary (a line per batch). Default: bar on a terminal, summary otherwise.")
	fs.values("progress", "json", "bar", "summary")
	fs.BoolVar(&r.verbose, "verbose", false, "Log debug detail on stderr.")
	fs.StringVar(&r.logFormat, "log-format", "text", "How log lines show on stderr, as `FORMAT`: text, or json (one JSON object a line, with each batch's progress record as a line of its own, for log collectors).")
	fs.values("log-format", "text", "json")
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, rf, err := fileConfig("run", args, stderr)
	if err != nil {
		return err
	}
	return inFileKeys(runPipeline(ctx, cfg, rf, stdout, stderr), cfg)
}

// fileConfig reads the pipeline file args name, with flags that override
// it, for command name.
func fileConfig(name string, args []string, stderr io.Writer) (*config.Pipeline, runFlags, error) {
	fs := newFlagSet(name, stderr)
	var rf runFlags
	rf.register(fs)
	// -p table-default.KEY=VALUE is a catalog flag like any -p.
	fs.key("sink.table-properties", "sink.table-overrides")
	pos, err := fs.parse(args)
	if err != nil {
		if name != "run" {
			if ferr := fileOnlyFlag(name, fs, args); ferr != nil {
				return nil, rf, ferr
			}
		}
		return nil, rf, err
	}
	if len(pos) != 1 {
		return nil, rf, usagef("%s takes one pipeline file, e.g. floe %s examples/quickstart.yaml", name, name)
	}
	// A malformed flag is reported before the file is read.
	if err := fs.apply(&config.Pipeline{}); err != nil {
		return nil, rf, err
	}
	// The flags fill in the file before it is checked, so that a Managed
	// I/O config, which has no source, is complete once they are given.
	if _, err := os.Stat(pos[0]); errors.Is(err, os.ErrNotExist) {
		return nil, rf, usagef("pipeline file %s does not exist; check the path (floe %s takes a YAML file, e.g. floe %s examples/quickstart.yaml)", pos[0], name, name)
	}
	complete := func(p *config.Pipeline) { _ = fs.apply(p) }
	cfg, err := config.LoadWith(pos[0], complete)
	if err != nil {
		return nil, rf, err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	return cfg, rf, nil
}

// fileOnlyFlag is the error of a flag a command acting on a pipeline takes
// when the pipeline is given as flags, but not with a pipeline file, whose
// keys it would set: its help lists both forms' flags, so "no such flag"
// would contradict it. Nil when args hold no such flag.
func fileOnlyFlag(name string, file *flagSet, args []string) error {
	stream, _ := streamFlags(name, io.Discard)
	for _, a := range args {
		if a == "--" {
			break
		}
		flagName, ok := strings.CutPrefix(a, "-")
		if !ok {
			continue
		}
		flagName, _, _ = strings.Cut(strings.TrimPrefix(flagName, "-"), "=")
		if flagName == "" || file.Lookup(flagName) != nil || stream.Lookup(flagName) == nil {
			continue
		}
		return usagef("%s is set by the pipeline file %s; with a pipeline file, %s takes only the flags of floe run (floe run --help lists them), or give the whole pipeline as flags instead of the file",
			dashed(flagName), args[0], name)
	}
	return nil
}

// pipelineConfig reads a pipeline as `run` does (a file first) or as
// `stream` does (flags only), for commands that act on a pipeline without
// running it.
func pipelineConfig(name string, args []string, stderr io.Writer) (*config.Pipeline, runFlags, error) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return fileConfig(name, args, stderr)
	}
	return streamConfig(name, args, stderr)
}

// testHooks is set only in binaries built with the floetest tag, for the
// end-to-end tests that need floe to die at an exact point. It gets the
// configuration so that it can open the configured catalog and wrap it.
var testHooks func(*config.Pipeline, *floe.Options)

// runPipeline runs a configured pipeline until its trigger ends or a signal
// arrives: the first SIGINT/SIGTERM lets the running batch finish, a second
// one abandons it (nothing is half-committed either way).
func runPipeline(ctx context.Context, cfg *config.Pipeline, rf runFlags, stdout, stderr io.Writer) error {
	level := slog.LevelWarn
	if rf.verbose {
		level = slog.LevelDebug
	}
	var logger *slog.Logger
	switch rf.logFormat {
	case "text":
		logger = newLogger(stderr, level)
	case "json":
		if rf.progress != "" && rf.progress != "json" {
			return usagef("--log-format json writes progress as log lines; drop --progress=%s", rf.progress)
		}
		// Progress lines are at Info, which a text log leaves out.
		logger = setLogger(slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: min(level, slog.LevelInfo)})))
	default:
		return usagef("--log-format=%s is not known; use text or json", rf.logFormat)
	}
	mode := rf.progress
	if rf.logFormat == "json" {
		mode = "log"
	}
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
	case "log":
		out = &logProgress{l: logger}
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
	if cfg.Metrics.Listen != "" {
		stop, err := serveMetrics(cfg.Metrics.Listen, cfg, &opts, out.info)
		if err != nil {
			return err
		}
		defer stop()
	}
	// A stop asked for while the pipeline opens (a pod stopped as it
	// starts) ends the run before its first batch, as cleanly as one
	// asked for between batches; the first signal after it opens stops it
	// after the batch in progress, a second abandons that batch.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var (
		mu    sync.Mutex
		pipe  *floe.Pipeline // once open
		early bool           // stopped before it opened
	)
	go func() {
		n := 0
		for {
			select {
			case <-sigs:
				n++
				mu.Lock()
				switch {
				case pipe == nil:
					early = true
					cancel()
				case n == 1:
					pipe.Stop()
				default:
					cancel()
				}
				mu.Unlock()
			case <-ctx.Done():
				return
			}
		}
	}()
	stoppedEarly := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return early
	}
	rb, resumed, err := floe.ResumeFromTable(ctx, cfg, opts)
	if err != nil {
		if stoppedEarly() {
			out.info("stopped before the first batch")
			return nil
		}
		return err
	}
	if resumed {
		out.warning(fmt.Sprintf("checkpoint %s was missing; query %s resumes from table %s's record of batch %d", cfg.Checkpoint, rb.QueryID, cfg.Sink.Table, rb.BatchID))
	}
	p, err := floe.Open(ctx, cfg, opts)
	if err != nil {
		if stoppedEarly() {
			out.info("stopped before the first batch")
			return nil
		}
		return err
	}
	defer p.Close()
	mu.Lock()
	pipe = p
	mu.Unlock()
	if stoppedEarly() {
		out.info("stopped before the first batch")
		return nil
	}

	sum, err := p.Run(ctx)
	target := cfg.Sink.Table
	switch {
	case cfg.Sink.Console():
		target = "the console"
	case cfg.Sink.Branch != "" && cfg.Sink.Branch != "main":
		// main does not change: the summary says where the rows went.
		target += fmt.Sprintf(" (branch %s)", cfg.Sink.Branch)
	}
	if err != nil {
		// No success-looking summary before the error: main prints the
		// error, then what was committed before it.
		out.failed()
		if sum.Batches > 0 {
			return &partialRun{err: err, committed: fmt.Sprintf("%s, %s committed to %s", plural(sum.Batches, "batch"), plural(sum.Rows, "row"), target)}
		}
		return err
	}
	out.done(sum, target)
	return nil
}

// partialRun is a run that failed after committing some batches, which
// stay committed.
type partialRun struct {
	err       error
	committed string
}

func (p *partialRun) Error() string { return p.err.Error() }
func (p *partialRun) Unwrap() error { return p.err }

// plural spells a number with its noun, singular or plural: "1 data file",
// "2 batches".
func plural[N int | int64](n N, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	switch {
	case strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "s"):
		noun += "es"
	default:
		noun += "s"
	}
	return fmt.Sprintf("%d %s", n, noun)
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
	info(string)
	// done ends a run that succeeded, failed one that did not.
	done(floe.Summary, string)
	failed()
}

// jsonProgress prints one JSON object per batch, for machines.
type jsonProgress struct{ enc *json.Encoder }

func (j *jsonProgress) progress(p floe.Progress) { _ = j.enc.Encode(p) }
func (j *jsonProgress) warning(msg string) {
	_ = j.enc.Encode(map[string]string{"level": "warning", "message": msg})
}
func (j *jsonProgress) info(msg string) {
	_ = j.enc.Encode(map[string]string{"level": "info", "message": msg})
}
func (j *jsonProgress) done(floe.Summary, string) {}
func (j *jsonProgress) failed()                   {}

// inputFiles counts the input files of a batch's progress record.
func inputFiles(p floe.Progress) int {
	n := 0
	for _, s := range p.Sources {
		n += s.NumInputFiles
	}
	return n
}

// summaryProgress prints one line per batch and one at the end, for logs.
type summaryProgress struct {
	w    io.Writer
	read readSoFar
}

func (s *summaryProgress) progress(p floe.Progress) {
	if c := p.Cluster; c != nil {
		s.clusterProgress(p, c)
		return
	}
	s.read.add(p)
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
	if p.NumDeadLetters > 0 {
		extra += fmt.Sprintf(", %s set aside", plural(p.NumDeadLetters, "bad record"))
	}
	rows := plural(p.NumInputRows, "row")
	if u := p.Sink.Upsert; u != nil {
		rows = fmt.Sprintf("%s to %s (%d deleting), %s written", plural(u.NumChanges, "change"), plural(u.NumKeys, "key"), u.NumDeletedKeys, plural(p.Sink.NumOutputRows, "row"))
		if u.NumRemovedRows != nil {
			rows += fmt.Sprintf(", %s replaced or deleted", plural(*u.NumRemovedRows, "table row"))
		}
	}
	pace := fmt.Sprintf("%d ms, %s", p.DurationMs.TriggerExecution, rowsPerSecond(p.ProcessedRowsPerSecond))
	if lag, ok := consumerLag(p); ok {
		pace += fmt.Sprintf(", lag %s", plural(lag, "message"))
	}
	written := fmt.Sprintf("%s written, %s", plural(p.Sink.DataFiles, "data file"), snap)
	if printedOnly(p) {
		rows += " printed"
		written = noTable
	}
	fmt.Fprintf(s.w, "batch %d: %s, %s, %s, %s%s\n", p.BatchID, batchRead(p), rows, written, pace, extra)
}

// clusterProgress is a worker's line: what it published, and on the
// coordinator what it committed for all.
func (s *summaryProgress) clusterProgress(p floe.Progress, c *floe.ClusterProgress) {
	line := fmt.Sprintf("worker %s, generation %d, %s", c.Worker[:8], c.Generation, plural(int64(c.Partitions), "partition"))
	if c.Published {
		line += fmt.Sprintf(": %s in %s published", plural(p.NumInputRows, "row"), plural(p.Sink.DataFiles, "data file"))
	}
	if k := c.Committed; k != nil && k.SnapshotID != 0 {
		line += fmt.Sprintf("; committed snapshot %d: %s of %s, %s", k.SnapshotID, plural(int64(k.Events), "event"), plural(k.Rows, "row"), plural(int64(k.DataFiles), "data file"))
	}
	if c.Waiting > 0 {
		line += fmt.Sprintf("; %s waiting for a commit (oldest %d ms)", plural(int64(c.Waiting), "range"), c.CommitLagMs)
	}
	fmt.Fprintln(s.w, line)
}

func (s *summaryProgress) warning(msg string) { fmt.Fprintf(s.w, "floe: warning: %s\n", msg) }
func (s *summaryProgress) info(msg string)    { fmt.Fprintf(s.w, "floe: %s\n", msg) }
func (s *summaryProgress) done(sum floe.Summary, table string) {
	fmt.Fprintln(s.w, summaryLine(sum, &s.read, table))
}
func (s *summaryProgress) failed() {}

// summaryLine is the last line of a run that succeeded.
func summaryLine(sum floe.Summary, read *readSoFar, table string) string {
	recovered := ""
	if sum.Recovered > 0 {
		recovered = fmt.Sprintf("; %s the stopped run had committed to %s found there and recorded", plural(sum.Recovered, "batch"), table)
	}
	if sum.Batches == 0 {
		return fmt.Sprintf("floe: no new input; nothing committed to %s%s", table, recovered)
	}
	pace := ""
	if rate := read.rate(); rate != "" {
		pace = fmt.Sprintf(" in %s, %s", shortDuration(read.elapsed()), rate)
	}
	if read.printed {
		return fmt.Sprintf("floe: %s, %s, %s printed to the console%s; %s", plural(sum.Batches, "batch"), read.read(),
			plural(sum.Rows, "row"), pace, noTable)
	}
	return fmt.Sprintf("floe: %s, %s, %s, %s committed to %s%s", plural(sum.Batches, "batch"), read.read(),
		plural(sum.Rows, "row"), plural(sum.Snapshots, "snapshot"), table, pace) + recovered
}

// barProgress redraws one line on a terminal: a bar over the files of an
// available-now run, the batch, the rows so far, their rate and the time
// taken, with the time left when the backlog is known and the consumer
// lag for Kafka.
type barProgress struct {
	w    io.Writer
	read readSoFar
}

func (b *barProgress) progress(p floe.Progress) {
	b.read.add(p)
	line := fmt.Sprintf("batch %d, %s", p.BatchID, plural(b.read.rows, "row"))
	if rate := b.read.rate(); rate != "" {
		line += fmt.Sprintf(", %s, %s elapsed", rate, shortDuration(b.read.elapsed()))
	}
	if lag, ok := consumerLag(p); ok {
		line += fmt.Sprintf(", lag %s", plural(lag, "message"))
	}
	if left, ok := eta(p.Backlog, b.read.elapsed()); ok {
		line += fmt.Sprintf(", ETA %s", shortDuration(left))
	}
	if bl := p.Backlog; bl != nil && bl.TotalFiles > 0 {
		const width = 30
		done := bl.TotalFiles - bl.RemainingFiles
		n := done * width / bl.TotalFiles
		line = fmt.Sprintf("[%s%s] %d/%d files, %s", strings.Repeat("#", n), strings.Repeat(".", width-n), done, bl.TotalFiles, line)
	}
	fmt.Fprintf(b.w, "\r\033[K%s", line)
}
func (b *barProgress) warning(msg string) { fmt.Fprintf(b.w, "\r\033[Kfloe: warning: %s\n", msg) }
func (b *barProgress) info(msg string)    { fmt.Fprintf(b.w, "\r\033[Kfloe: %s\n", msg) }
func (b *barProgress) done(sum floe.Summary, table string) {
	fmt.Fprintf(b.w, "\r\033[K%s\n", summaryLine(sum, &b.read, table))
}
func (b *barProgress) failed() { fmt.Fprint(b.w, "\r\033[K") }
