// Command floe streams files into Apache Iceberg tables exactly once, and
// inspects the tables and checkpoints it writes.
//
// Exit codes: 0 success; 1 the job failed (bad input, unreachable catalog,
// failed commit); 2 invalid usage or configuration; 3 no input was found
// and --fail-on-empty was given.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
	_ "github.com/floe-io/floe/source/files"   // registers the "files" source
	_ "github.com/floe-io/floe/source/iceberg" // registers the "iceberg" source
)

// Exit codes, documented in the package comment and `floe --help`.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitNoInput = 3
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = []command{
	{"run", "run a pipeline file (the main job)", cmdRun},
	{"stream", "stream a landing directory into a table, configured by flags", cmdStream},
	{"scan", "print or count a table's rows", cmdScan},
	{"table", "list, describe and inspect tables (list, describe, snapshots, files, history)", cmdTable},
	{"maintain", "keep a table fast: expire-snapshots, rewrite-data-files, rewrite-manifests, remove-orphan-files", cmdMaintain},
	{"checkpoint", "inspect a checkpoint (show)", cmdCheckpoint},
	{"version", "print floe's version", cmdVersion},
}

// examples are shown by each command's --help.
var examples = map[string][]string{
	"run": {
		"floe run examples/quickstart.yaml",
		"floe run pipeline.yaml --progress=json --fail-on-empty",
	},
	"stream": {
		"floe stream --source landing/ --format parquet --table db.events --checkpoint ckpt/events --trigger available-now",
		"floe stream --source landing/ --format csv --table db.events --checkpoint ckpt/events --trigger 1m --max-files-per-trigger 100",
		"floe stream ... --warehouse s3://bucket/wh --catalog-uri ./catalog.db -p s3.endpoint=http://127.0.0.1:7070 -p s3.region=us-east-1",
	},
	"scan": {
		"floe scan db.events --count",
		"floe scan db.events --format jsonl --limit 10",
		"floe scan ./path/to/table --path-prefix s3a://bucket/table=./path/to/table",
	},
	"table snapshots": {"floe table snapshots db.events --json"},
	"table describe":  {"floe table describe db.events", "floe table describe path/to/table/metadata/v3.metadata.json --json"},
	"table list":      {"floe table list", "floe table list db --json"},
	"checkpoint show": {"floe checkpoint show ckpt/events --json"},
}

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
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			err := c.run(context.Background(), args[1:], stdout, stderr)
			return report(err, stderr)
		}
	}
	fmt.Fprintf(stderr, "floe: unknown command %q\n\n", args[0])
	printUsage(stderr)
	return exitUsage
}

func report(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "floe: %v\n", err)
	var ue usageError
	var ce *config.Error
	switch {
	case errors.As(err, &ue), errors.As(err, &ce), errors.Is(err, floe.ErrConfig):
		return exitUsage
	case errors.Is(err, floe.ErrNoInput):
		return exitNoInput
	}
	return exitFailed
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "floe streams files into Apache Iceberg tables exactly once.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: floe COMMAND [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Examples:")
	fmt.Fprintln(w, "  floe run examples/quickstart.yaml")
	fmt.Fprintln(w, "  floe stream --source landing/ --format parquet --table db.events --checkpoint ckpt/ --trigger available-now")
	fmt.Fprintln(w, "  floe scan db.events --count")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every command takes --warehouse DIR (default $FLOE_WAREHOUSE, else ./warehouse).")
	fmt.Fprintln(w, "Exit codes: 0 ok, 1 failed, 2 invalid usage or configuration, 3 no input with --fail-on-empty.")
}

// catalogFlags are shared by every command that opens a catalog.
type catalogFlags struct {
	warehouse string
	typ       string
	uri       string
	name      string
	props     propsFlag
	prefixes  prefixFlag
}

func (c *catalogFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.warehouse, "warehouse", "", "warehouse directory or URL (default $FLOE_WAREHOUSE, else ./warehouse)")
	fs.StringVar(&c.typ, "catalog-type", "", "catalog type: sql (default, embedded SQLite), rest, hadoop, glue")
	fs.StringVar(&c.uri, "catalog-uri", "", "catalog URI (REST endpoint, database URI)")
	fs.StringVar(&c.name, "catalog-name", "", "catalog name (default floe)")
	fs.Var(&c.props, "p", "catalog property key=value, passed to iceberg-go (repeatable), e.g. -p s3.endpoint=http://127.0.0.1:9000")
	fs.Var(&c.prefixes, "path-prefix", "for a table given by location: map paths recorded in its metadata, FROM=TO (repeatable), e.g. s3a://bucket/t=/data/t")
}

type prefixFlag []floe.PathPrefix

func (p *prefixFlag) String() string { return fmt.Sprint(*p) }

func (p *prefixFlag) Set(s string) error {
	r, err := floe.ParsePathPrefix(s)
	if err != nil {
		return err
	}
	*p = append(*p, r)
	return nil
}

// check reports a malformed -p without echoing it.
func (c *catalogFlags) check() error {
	if c.props.malformed > 0 {
		return usagef("-p takes key=value (e.g. -p s3.region=us-east-1); %d argument(s) had no '=' and were not shown, as they may hold a secret", c.props.malformed)
	}
	return nil
}

// apply overrides the configuration with the flags that were given.
func (c *catalogFlags) apply(cat *config.Catalog) {
	if c.warehouse != "" {
		cat.Warehouse = c.warehouse
	}
	if c.typ != "" {
		cat.Type = c.typ
	}
	if c.uri != "" {
		cat.URI = c.uri
	}
	if c.name != "" {
		cat.Name = c.name
	}
	if len(c.props.values) > 0 && cat.Properties == nil {
		cat.Properties = map[string]string{}
	}
	for k, v := range c.props.values {
		cat.Properties[k] = v
	}
}

func (c *catalogFlags) config() config.Catalog {
	var cat config.Catalog
	c.apply(&cat)
	return cat
}

// propsFlag collects -p key=value. A malformed argument is remembered, not
// rejected on the spot: the flag package would echo it, and it may hold a
// secret (-p s3.secret-access-key:...).
type propsFlag struct {
	values    map[string]string
	malformed int
}

func (p *propsFlag) String() string {
	keys := make([]string, 0, len(p.values))
	for k := range p.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func (p *propsFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		p.malformed++
		return nil
	}
	if p.values == nil {
		p.values = map[string]string{}
	}
	p.values[k] = v
	return nil
}

// parseInterleaved parses flags that may come before or after positional
// arguments (`floe scan db.t --count` as well as `floe scan --count db.t`),
// which the flag package alone does not allow.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("floe "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: floe %s\n", usage)
		if ex := examples[name]; len(ex) > 0 {
			fmt.Fprintf(stderr, "\nExamples:\n")
			for _, e := range ex {
				fmt.Fprintf(stderr, "  %s\n", e)
			}
		}
		fmt.Fprintf(stderr, "\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}
