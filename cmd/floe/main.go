// Command floe streams landing files (a local directory or an object
// store), an Iceberg table's appends or Kafka topics into Apache Iceberg
// tables exactly once, and inspects the tables and checkpoints it writes.
//
// Exit codes: 0 success; 1 the job failed (bad input, unreachable catalog,
// failed commit); 2 invalid usage or configuration, including a table
// named on the command line that does not exist, a warehouse, catalog or
// checkpoint that does not exist for a command that only reads it, and a
// checkpoint that does not match its table; 3 no input was found and --fail-on-empty was given.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/catalogs"
	_ "github.com/floe-io/floe/source/files"   // registers the "files" source
	_ "github.com/floe-io/floe/source/iceberg" // registers the "iceberg" source
	_ "github.com/floe-io/floe/source/kafka"   // registers the "kafka" source
)

// Exit codes, documented in the package comment and `floe --help`.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitNoInput = 3
)

// command is one of floe's commands: one that runs, or a group whose
// subcommands run (floe table list). Dispatch, the help, the completion
// scripts and the man page all take the commands from here.
type command struct {
	name    string
	summary string
	run     runFunc
	// subs are a group's subcommands; a group's summary ends with their
	// names.
	subs func() []subcommand
}

type runFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// commands are floe's commands, in the order `floe --help` lists them.
// They are set in init because some of them (completion, man) are
// generated from the list.
var commands []command

func init() {
	commands = []command{
		{name: "run", summary: "run a pipeline file (the main job)", run: cmdRun},
		{name: "stream", summary: "stream landing files, an Iceberg table or Kafka topics into a table, configured by flags", run: cmdStream},
		{name: "scan", summary: "print or count a table's rows", run: cmdScan},
		{name: "table", summary: "inspect and manage tables", subs: func() []subcommand { return tableSubcommands }},
		{name: "maintain", summary: "keep a table fast", subs: maintainSubcommands},
		{name: "serve", summary: "serve the catalog as an Iceberg REST catalog for other engines", run: cmdServe},
		{name: "checkpoint", summary: "inspect and repair a checkpoint", subs: func() []subcommand { return checkpointSubcommands }},
		{name: "version", summary: "print floe's version", run: cmdVersion},
		{name: "completion", summary: "print a shell completion script: bash, zsh or fish", run: cmdCompletion},
		{name: "man", summary: "print floe's manual page (roff), every command and flag", run: cmdMan},
	}
}

// fullSummary is the line `floe --help` gives the command: a group's
// names its subcommands.
func (c command) fullSummary() string {
	if c.subs == nil {
		return c.summary
	}
	var names []string
	for _, s := range c.subs() {
		names = append(names, s.name)
	}
	return c.summary + ": " + strings.Join(names, ", ")
}

// dispatch runs the command, or the group's subcommand args name.
func (c command) dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if c.subs != nil {
		return group(ctx, c.name, c.subs(), args, stdout, stderr)
	}
	return c.run(ctx, args, stdout, stderr)
}

// exitCodes is the table `floe --help` prints; the package comment says
// the same.
const exitCodes = `Exit codes:
  0  success
  1  the job failed: bad input, an unreachable catalog, a failed commit
  2  invalid usage or configuration, including a table named on the
     command line that does not exist, a warehouse, catalog or checkpoint
     that does not exist for a command that only reads it, and a
     checkpoint that does not match its table (the message names the
     repair)
  3  no input was found and --fail-on-empty was given`

// usageError marks a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) (code int) {
	// A panic is a bug in floe, not a usage error: report it as a failure
	// with the stack, instead of Go's exit code 2.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "floe: internal error: %v\n%s\nplease report this with the command line that caused it\n", r, debug.Stack())
			code = exitFailed
		}
	}()
	newLogger(stderr, slog.LevelWarn)
	if len(args) > 0 && isVersion(args[0]) {
		args = append([]string{"version"}, args[1:]...)
	}
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	if isHelp(args[0]) || args[0] == "help" {
		if len(args) == 1 || isHelp(args[1]) || args[1] == "help" {
			printUsage(stdout)
			return exitOK
		}
		// floe help COMMAND [SUBCOMMAND] is floe COMMAND [SUBCOMMAND] --help.
		args = append(slices.Clone(args[1:]), "--help")
	}
	if strings.HasPrefix(args[0], "-") {
		return report(unknownTopFlag(args[0]), stdout, stderr)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return report(c.dispatch(context.Background(), args[1:], stdout, stderr), stdout, stderr)
		}
	}
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	if hint := config.Closest(args[0], names); hint != "" {
		fmt.Fprintf(stderr, "floe: unknown command %q; did you mean %q? (floe --help lists the commands)\n", args[0], hint)
		return exitUsage
	}
	fmt.Fprintf(stderr, "floe: unknown command %q\n\n", args[0])
	printUsage(stderr)
	return exitUsage
}

// unknownTopFlag is the error of a flag given before any command: floe
// itself takes only --help and --version, a command's flags follow it.
func unknownTopFlag(arg string) error {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	if hint := config.Closest(name, []string{"help", "version"}); hint != "" {
		return usagef("unknown flag %s; did you mean --%s?", arg, hint)
	}
	return usagef("unknown flag %s; before a command floe takes only --help and --version, and a command's flags follow it (floe --help lists the commands)", arg)
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// isVersion reports whether arg asks for the version the way most tools
// take it, as a flag rather than as floe's version command.
func isVersion(arg string) bool { return arg == "-version" || arg == "--version" }

// helpRequest is the error of a command line that asks for help: report
// prints the help on stdout, where the output asked for goes, and exits 0.
// Usage printed because of a mistake goes to stderr instead.
type helpRequest struct {
	write func(io.Writer)
	// fs is the command's flags, nil for a group's list of subcommands.
	fs *flagSet
}

func (helpRequest) Error() string { return "help requested" }

func report(err error, stdout, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var help helpRequest
	if errors.As(err, &help) {
		help.write(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "floe: %v\n", err)
	var pr *partialRun
	if errors.As(err, &pr) {
		fmt.Fprintf(stderr, "floe: before the failure, %s; the next run goes on after them\n", pr.committed)
	}
	var ue usageError
	var ce *config.Error
	switch {
	case errors.As(err, &ue), errors.As(err, &ce), errors.Is(err, floe.ErrConfig),
		errors.Is(err, floe.ErrCheckpointMismatch), errors.Is(err, floe.ErrQueryConflict), errors.Is(err, floe.ErrTableLost):
		// A checkpoint that does not match its table or pipeline, like a
		// wrong configuration, fails the same way until a person repairs it.
		return exitUsage
	case errors.Is(err, floe.ErrNoInput):
		return exitNoInput
	}
	return exitFailed
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "floe streams landing files (a local directory or an object store), an Iceberg")
	fmt.Fprintln(w, "table's appends or Kafka topics into Apache Iceberg tables exactly once.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: floe COMMAND [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		listEntry(w, width, c.name, c.fullSummary())
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Examples:")
	fmt.Fprintln(w, "  floe run examples/quickstart.yaml")
	fmt.Fprintln(w, "  floe stream --source landing/ --format parquet --table db.events --checkpoint ckpt/ --trigger available-now")
	fmt.Fprintln(w, "  floe scan db.events --count")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every command that opens a catalog takes --warehouse DIR (default $FLOE_WAREHOUSE,")
	fmt.Fprintln(w, "else ./warehouse); run and stream create it, the other commands need it to exist.")
	fmt.Fprintln(w, "`floe COMMAND --help`, or `floe help COMMAND`, describes a command, its flags and examples.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, exitCodes)
}

// group dispatches a command that has subcommands (floe table list): with
// --help it lists them on stdout, with none or an unknown one on stderr.
func group(ctx context.Context, name string, subs []subcommand, args []string, stdout, stderr io.Writer) error {
	if len(args) > 1 && args[0] == "help" && !isHelp(args[1]) {
		// floe table help snapshots is floe table snapshots --help.
		args = append(slices.Clone(args[1:]), "--help")
	}
	if len(args) > 0 {
		for _, s := range subs {
			if s.name == args[0] {
				return s.run(ctx, args[1:], stdout, stderr)
			}
		}
	}
	if len(args) > 0 && !isHelp(args[0]) && args[0] != "help" {
		names := make([]string, len(subs))
		for i, s := range subs {
			names[i] = s.name
		}
		if hint := config.Closest(args[0], names); hint != "" {
			return usagef("%s has no subcommand %q; did you mean %q? (floe %s --help lists them)", name, args[0], hint, name)
		}
	}
	if len(args) > 0 && (isHelp(args[0]) || args[0] == "help") {
		return helpRequest{write: func(w io.Writer) { printGroup(w, name, subs) }}
	}
	printGroup(stderr, name, subs)
	switch {
	case len(args) == 0:
		return usagef("%s needs a subcommand", name)
	}
	return usagef("%s has no subcommand %q", name, args[0])
}

// subcommand is one of a group command's subcommands.
type subcommand struct {
	name, summary string
	run           runFunc
}

func printGroup(w io.Writer, name string, subs []subcommand) {
	fmt.Fprintf(w, "Usage: floe %s SUBCOMMAND [flags]\n\nSubcommands:\n", name)
	width := 0
	for _, s := range subs {
		width = max(width, len(s.name))
	}
	for _, s := range subs {
		listEntry(w, width, s.name, s.summary)
	}
	fmt.Fprintf(w, "\n`floe %s SUBCOMMAND --help` describes a subcommand, its flags and examples.\n", name)
}

// listEntry prints a name and its summary in a list whose names take width
// columns, the summary wrapped under itself.
func listEntry(w io.Writer, width int, name, summary string) {
	indent := strings.Repeat(" ", 2+width+2)
	var b strings.Builder
	wrap(&b, indent, summary)
	fmt.Fprintf(w, "  %-*s  %s", width, name, strings.TrimPrefix(b.String(), indent))
}

// newLogger makes floe's logger on stderr and routes what libraries log
// through it: iceberg-go warns with the standard log package (an SQL
// catalog on its legacy schema, a hadoop catalog meeting an unreadable
// path) and with slog's default logger (the REST catalog), which would
// otherwise reach stderr in formats of their own.
func newLogger(stderr io.Writer, level slog.Level) *slog.Logger {
	return setLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))
}

// setLogger makes l the logger of the process and of the libraries in it.
func setLogger(l *slog.Logger) *slog.Logger {
	slog.SetDefault(l)
	// After SetDefault, which points the log package at l at Info level:
	// the log package's lines are warnings, and must pass a Warn level.
	log.SetFlags(0)
	log.SetOutput(libraryLog{l})
	return l
}

// libraryLog turns the standard log package's lines into warnings.
type libraryLog struct{ l *slog.Logger }

func (w libraryLog) Write(p []byte) (int, error) {
	for line := range strings.SplitSeq(strings.TrimRight(string(p), "\n"), "\n") {
		w.l.Warn(strings.TrimPrefix(line, "WARNING: "))
	}
	return len(p), nil
}

// catalogKeys are the pipeline keys of the catalog flags, which every
// command that opens a catalog takes.
var catalogKeys = []string{"catalog.warehouse", "catalog.type", "catalog.uri", "catalog.name", "catalog.properties"}

// catalogFlags are the catalog flags of a command that only reads.
type catalogFlags struct {
	fs       *flagSet
	prefixes prefixFlag
}

func (c *catalogFlags) register(fs *flagSet) {
	c.fs = fs
	fs.key(catalogKeys...)
}

// registerPathPrefix adds --path-prefix, for commands that read a table by
// location.
func (c *catalogFlags) registerPathPrefix(fs *flagSet) {
	fs.Var(&c.prefixes, "path-prefix", "For a table given by location: map the paths its metadata records, `FROM=TO` (repeatable), e.g. s3a://bucket/t=/data/t.")
	fs.section("Catalog", "path-prefix")
}

// config is the catalog the flags describe.
func (c *catalogFlags) config() (config.Catalog, error) {
	return c.override(config.Catalog{})
}

// override returns cat with the flags that were given applied to it.
func (c *catalogFlags) override(cat config.Catalog) (config.Catalog, error) {
	p := config.Pipeline{Catalog: cat}
	if err := c.fs.apply(&p); err != nil {
		return config.Catalog{}, err
	}
	for _, k := range slices.Sorted(maps.Keys(p.Catalog.Properties)) {
		if err := config.CheckCatalogProperty(k); err != nil {
			return config.Catalog{}, usagef("-p: %v", err)
		}
	}
	return p.Catalog, nil
}

type prefixFlag []catalogs.PathPrefix

func (p *prefixFlag) String() string {
	if p == nil || len(*p) == 0 {
		return ""
	}
	return fmt.Sprint(*p)
}

func (p *prefixFlag) Set(s string) error {
	r, err := catalogs.ParsePathPrefix(s)
	if err != nil {
		return err
	}
	*p = append(*p, r)
	return nil
}

// catalogFlagNames are the names of the catalog flags, and of
// --path-prefix, which came with them.
func catalogFlagNames() []string {
	names := []string{"path-prefix"}
	for _, k := range catalogKeys {
		f, _ := config.FlagFor(k)
		names = append(names, f.Name)
	}
	return names
}
