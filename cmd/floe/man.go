package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/floe-io/floe/internal/buildinfo"
)

func init() {
	helps["man"] = commandHelp{
		usage: "man",
		about: "Print floe's manual page in roff: every command with its usage, description, flags and examples, " +
			"and the exit codes. It is generated from the same list of commands as the help.",
		examples: []example{
			{"Read it.", "floe man | man -l -"},
			{"Install it.", "floe man > /usr/local/share/man/man1/floe.1"},
		},
	}
}

func cmdMan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("man", stderr)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("man takes no arguments, got %q; floe man | man -l - reads the page", pos)
	}
	writeMan(stdout)
	return nil
}

// writeMan writes floe(1): the overview of `floe --help`, then each
// command's help.
func writeMan(w io.Writer) {
	info := buildinfo.Read()
	fmt.Fprintf(w, ".TH FLOE 1 \"%s\" \"floe %s\" \"floe manual\"\n", roff(manDate(info)), roff(info.Version))
	// Left-aligned, as asciidoctor's pages are: flags, paths and URLs are
	// long words that a justified line cannot always fit, which man
	// reports as "cannot adjust line".
	fmt.Fprintf(w, ".ad l\n")
	fmt.Fprintf(w, ".SH NAME\nfloe \\- stream landing files, Iceberg tables and Kafka topics into Apache Iceberg tables exactly once\n")
	fmt.Fprintf(w, ".SH SYNOPSIS\n.B floe\n.I COMMAND\n[\\fISUBCOMMAND\\fR] [\\fIflags\\fR]\n")
	fmt.Fprintf(w, ".SH DESCRIPTION\n%s\n", roff("floe streams landing files (a local directory or an object store), an Iceberg table's appends "+
		"or Kafka topics into Apache Iceberg tables exactly once, and inspects and maintains the tables and checkpoints it writes. "+
		"Every command that opens a catalog takes --warehouse DIR (default $FLOE_WAREHOUSE, else ./warehouse); "+
		"run and stream create it, the other commands need it to exist."))
	fmt.Fprintf(w, ".SH COMMANDS\n")
	for _, c := range commands {
		fmt.Fprintf(w, ".TP\n.B %s\n%s\n", roff(c.name), roff(c.fullSummary()))
	}
	for _, l := range leaves() {
		writeManCommand(w, l)
	}
	fmt.Fprintf(w, ".SH EXIT STATUS\n")
	for _, line := range strings.Split(exitCodes, "\n")[1:] {
		code, text, _ := strings.Cut(strings.TrimSpace(line), "  ")
		if text == "" {
			fmt.Fprintf(w, "%s\n", roff(code))
			continue
		}
		fmt.Fprintf(w, ".TP\n.B %s\n%s\n", code, roff(text))
	}
	fmt.Fprintf(w, ".SH ENVIRONMENT\n.TP\n.B FLOE_WAREHOUSE\nThe warehouse of commands given no \\-\\-warehouse.\n")
	fmt.Fprintf(w, ".SH SEE ALSO\nThe docs directory of floe's source: docs/config.md (every pipeline key), docs/kafka.md, docs/reads.md.\n")
}

// writeManCommand writes a command's help as a subsection.
func writeManCommand(w io.Writer, l leaf) {
	h := helps[l.path]
	fmt.Fprintf(w, ".SS \"floe %s\"\n", roff(l.path))
	usage := h.usage
	if usage == "" {
		usage = l.path
	}
	// A usage's alternatives (parquet|csv|json) may break after a bar.
	fmt.Fprintf(w, "\\fBfloe %s\\fR\n.PP\n", strings.ReplaceAll(roff(usage), "|", `|\:`))
	about := h.about
	if about == "" {
		about = l.summary
	}
	fmt.Fprintf(w, "%s\n", roff(about))
	fs := l.flags()
	if fs == nil {
		return
	}
	for _, sec := range fs.helpSections() {
		fmt.Fprintf(w, ".PP\n%s:\n", roff(sec.title))
		for _, fl := range sec.flags {
			spelling, doc := fs.flagEntry(fl)
			fmt.Fprintf(w, ".TP\n\\fB%s\\fR\n%s\n", roff(spelling), roff(strings.Join(doc, " ")))
		}
	}
	for _, ol := range h.options {
		fmt.Fprintf(w, ".PP\n%s:\n", roff(ol.title))
		for _, o := range ol.options {
			fmt.Fprintf(w, ".TP\n\\fB%s\\fR\n%s\n", roff(o.Name), roff(o.Doc))
		}
	}
	if len(h.examples) > 0 {
		fmt.Fprintf(w, ".PP\nExamples:\n")
		for _, e := range h.examples {
			fmt.Fprintf(w, ".PP\n%s\n.RS\n.nf\n%s\n.fi\n.RE\n", roff(e.what), roff(e.cmd))
		}
	}
}

// manDate is the date the page's header gives: the day of the commit the
// build was made from, else its version (a pseudo-version carries its
// date too). Never the day the page was printed, so that the page is the
// same each time.
func manDate(info buildinfo.Info) string {
	if !info.Time.IsZero() {
		return info.Time.UTC().Format(time.DateOnly)
	}
	return info.Version
}

// roff escapes text for a roff line: backslashes, dashes (which roff may
// turn into hyphens that do not paste), characters beyond ASCII (which
// troff reads only through preconv), and a leading dot or quote, which
// would start a request.
func roff(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	s = nonASCII.ReplaceAllStringFunc(s, func(r string) string { return fmt.Sprintf(`\[u%04X]`, []rune(r)[0]) })
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

var nonASCII = regexp.MustCompile(`[^\x00-\x7f]`)
