package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/floe-io/floe/config"
)

// flagSet is one command's flags. Flags that mirror a pipeline key are
// generated from config's spec table (name, value type, default, help), so
// that they agree with docs/config.md; the others are registered with the
// flag package as usual. It also keeps deprecated spellings working, and
// prints the command's help.
type flagSet struct {
	*flag.FlagSet
	name   string
	stderr io.Writer

	// keys holds the generated flags by name; given, the pipeline keys
	// they set, in command-line order.
	keys  map[string]*keyFlag
	given []keyValue
	// routes sends a map flag's PREFIX+KEY=VALUE entries to another key
	// (-p table-default.KEY=VALUE to sink.table-properties).
	routes map[string][]config.Flag

	groups  map[string]string // flag name → help section
	hidden  map[string]bool
	aliases []*aliasFlag

	// choices are the values a flag takes when they are a fixed few,
	// beyond its pipeline key's allowed values, by flag name; notes add a
	// sentence to a flag's description where the command gives it more
	// meaning than its pipeline key says.
	choices map[string][]string
	notes   map[string]string
}

type keyValue struct{ key, value string }

// Help sections, in the order they are printed.
var sections = []string{"Flags", "Query", "Source", "Sink", "Catalog"}

func newFlagSet(name string, stderr io.Writer) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet("floe "+name, flag.ContinueOnError), name: name, stderr: stderr,
		keys: map[string]*keyFlag{}, routes: map[string][]config.Flag{}, groups: map[string]string{}, hidden: map[string]bool{}, choices: map[string][]string{}, notes: map[string]string{}}
	// Errors are returned and printed once, by main; the help only when
	// asked for.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// key registers the generated flag of each pipeline key.
func (fs *flagSet) key(keys ...string) {
	for _, k := range keys {
		f, ok := config.FlagFor(k)
		if !ok {
			panic("floe: pipeline key " + k + " has no flag in config's spec")
		}
		if f.Prefix != "" {
			fs.routes[f.Name] = append(fs.routes[f.Name], f)
			continue
		}
		kf := &keyFlag{fs: fs, f: f}
		fs.keys[f.Name] = kf
		fs.Var(kf, f.Name, f.Doc)
		fs.groups[f.Name] = sectionOf(f.Key)
	}
}

func sectionOf(key string) string {
	top, _, nested := strings.Cut(key, ".")
	switch {
	case !nested || top == "maintenance":
		return "Query"
	case top == "source":
		return "Source"
	case top == "sink":
		return "Sink"
	}
	return "Catalog"
}

// isGiven reports whether the command line set a pipeline key.
func (fs *flagSet) isGiven(key string) bool {
	return slices.ContainsFunc(fs.given, func(kv keyValue) bool { return kv.key == key })
}

// apply sets the pipeline keys the command line gave, in its order, so
// that the last of a repeated flag wins.
func (fs *flagSet) apply(p *config.Pipeline) error {
	for _, kf := range fs.keys {
		if kf.malformed > 0 {
			f := kf.f
			eg := "-p s3.region=us-east-1"
			if f.Name == "o" {
				eg = "-o streaming-max-files-per-micro-batch=10"
			}
			return usagef("%s takes key=value (e.g. %s); %d argument(s) had no '=' and were not shown, as they may hold a secret", dashed(f.Name), eg, kf.malformed)
		}
	}
	for _, kv := range fs.given {
		if err := p.SetKey(kv.key, kv.value); err != nil {
			return usagef("%s: %v", kv.key, err)
		}
	}
	return nil
}

// keyFlag is the flag.Value of a pipeline key. It checks a value as it is
// given, so that the flag package reports a bad one with the flag's name.
type keyFlag struct {
	fs        *flagSet
	f         config.Flag
	last      string
	malformed int
}

func (k *keyFlag) String() string {
	if k == nil {
		return ""
	}
	return k.last
}

func (k *keyFlag) IsBoolFlag() bool { return k.f.Kind == config.FlagBool }

func (k *keyFlag) Set(s string) error {
	key := k.f.Key
	if k.f.Kind == config.FlagMap {
		name, value, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			// Not echoed by the flag package: it may be a secret.
			k.malformed++
			return nil
		}
		for _, r := range k.fs.routes[k.f.Name] {
			if rest, ok := strings.CutPrefix(name, r.Prefix); ok && rest != "" {
				key, s = r.Key, rest+"="+value
				break
			}
		}
		if to, ok := config.SparkSinkOptions[name]; ok && k.f.Name == "o" {
			key, s = to, value
		}
	}
	var scratch config.Pipeline
	if err := scratch.SetKey(key, s); err != nil {
		return err
	}
	k.last = s
	k.fs.given = append(k.fs.given, keyValue{key, s})
	return nil
}

// aliasFlag is a deprecated spelling: it prints a notice naming the new
// one, once, and sets the flag it stands for.
type aliasFlag struct {
	fs        *flagSet
	old, use  string // "--where", "--filter"
	target    string // the flag set, without dashes
	translate func(string) string
	noticed   bool
}

// alias registers old (without dashes) as a deprecated spelling of the
// flag target: a value v given to old is given to target as translate(v).
// use is the spelling the notice recommends.
func (fs *flagSet) alias(old, target, use string, translate func(string) string) {
	if fs.Lookup(target) == nil {
		panic("floe: alias of unknown flag " + target)
	}
	if translate == nil {
		translate = func(v string) string { return v }
	}
	a := &aliasFlag{fs: fs, old: dashed(old), use: use, target: target, translate: translate}
	fs.aliases = append(fs.aliases, a)
	fs.Var(a, old, "deprecated; "+use)
	fs.hidden[old] = true
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func (a *aliasFlag) String() string { return "" }

func (a *aliasFlag) IsBoolFlag() bool {
	b, ok := a.fs.Lookup(a.target).Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (a *aliasFlag) Set(s string) error {
	if !a.noticed {
		fmt.Fprintf(a.fs.stderr, "floe: %s is deprecated; use %s\n", a.old, a.use)
		a.noticed = true
	}
	return a.fs.Lookup(a.target).Value.Set(a.translate(s))
}

// negate turns a boolean flag's value around, for --no-X spellings.
func negate(s string) string {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return s // the target reports it
	}
	return strconv.FormatBool(!b)
}

// hide keeps flags accepted but out of the help: ones a command takes only
// so that scripts passing them to every command keep working.
func (fs *flagSet) hide(names ...string) {
	for _, n := range names {
		fs.hidden[n] = true
	}
}

// values records the fixed few values a flag takes, for completion to
// offer: a hand-registered flag's, or those a command's key flag takes
// beyond its key's (stream's --format with --source-type kafka).
func (fs *flagSet) values(name string, values ...string) {
	if fs.Lookup(name) == nil {
		panic("floe: values of unknown flag " + name)
	}
	fs.choices[name] = append(fs.choices[name], values...)
}

// note adds a sentence to a flag's description, after its line of prose.
func (fs *flagSet) note(name, text string) {
	if fs.Lookup(name) == nil {
		panic("floe: note on unknown flag " + name)
	}
	fs.notes[name] = text
}

// section puts hand-registered flags under a help section other than
// "Flags".
func (fs *flagSet) section(section string, names ...string) {
	for _, n := range names {
		fs.groups[n] = section
	}
}

// parse parses flags that may come before or after positional arguments
// (`floe scan db.t --count` as well as `floe scan --count db.t`), which the
// flag package alone does not allow. --help returns a helpRequest, which
// main prints.
func (fs *flagSet) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, helpRequest{write: fs.printHelp, fs: fs}
			}
			if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
				return nil, fs.unknownFlag(name)
			}
			// The flag package names flags with one dash; floe's docs and
			// help use two.
			msg := flagNameRE.ReplaceAllString(err.Error(), "$1--$2")
			return nil, usagef("%s; see floe %s --help", msg, fs.name)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// unknownFlag is the error of a flag the command does not take, with the
// listed flag it most likely meant.
func (fs *flagSet) unknownFlag(name string) error {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if !fs.hidden[f.Name] {
			names = append(names, f.Name)
		}
	})
	if hint := config.Closest(name, names); hint != "" {
		return usagef("%s has no flag %s; did you mean %s? (floe %s --help lists the flags)", fs.name, dashed(name), dashed(hint), fs.name)
	}
	return usagef("%s has no flag %s; floe %s --help lists the flags", fs.name, dashed(name), fs.name)
}

var flagNameRE = regexp.MustCompile(`(flag |defined: |argument: |for )-(\w[\w-]+)`)

// commandHelp is a command's help besides its flags.
type commandHelp struct {
	// usage follows "floe "; about is a paragraph on what the command does.
	usage, about string
	examples     []example
	// keysNote heads the sections of generated flags, where the command
	// gives them a meaning of its own (floe run: they override the file).
	keysNote string
	// args are the fixed values of the command's argument, which
	// completion offers (floe completion bash).
	args []string
	// options lists the values a map flag takes, such as -o's read
	// options for each source type, after the flags.
	options []optionList
}

// optionList is a help section of the keys a map flag takes.
type optionList struct {
	title   string
	options []config.SourceOption
}

// example is a command line with a comment saying what it does.
type example struct{ what, cmd string }

// helps holds each command's help, by the name `floe NAME --help` takes;
// each command's file fills in its own.
var helps = map[string]commandHelp{}

const helpWidth = 80

// printHelp prints the command's help as litestream's commands do: what
// it does, its usage, each flag with a line of prose, examples.
func (fs *flagSet) printHelp(w io.Writer) {
	h := helps[fs.name]
	fmt.Fprintf(w, "Usage: floe %s\n", h.usage)
	if h.about != "" {
		fmt.Fprintln(w)
		wrap(w, "", h.about)
	}
	for _, sec := range fs.helpSections() {
		fmt.Fprintf(w, "\n%s:\n", sec.title)
		for _, f := range sec.flags {
			fs.printFlag(w, f)
		}
	}
	for _, l := range h.options {
		fmt.Fprintf(w, "\n%s:\n", l.title)
		for _, o := range l.options {
			fmt.Fprintf(w, "  %s\n", o.Name)
			wrap(w, "        ", o.Doc)
		}
	}
	if len(h.examples) > 0 {
		fmt.Fprintf(w, "\nExamples:\n")
		for _, e := range h.examples {
			fmt.Fprintf(w, "\n  # %s\n  %s\n", e.what, e.cmd)
		}
	}
	if len(fs.aliases) > 0 {
		fmt.Fprintf(w, "\nDeprecated spellings, still accepted with a notice on stderr:\n")
		for _, a := range fs.aliases {
			fmt.Fprintf(w, "  %-22s use %s\n", a.old, a.use)
		}
	}
}

// helpSection is a titled list of flags in a command's help.
type helpSection struct {
	title string
	flags []*flag.Flag
}

// helpSections are the flags the help lists, by section: the listed
// flags, and a map flag's prefixed forms (-p table-default.KEY=VALUE).
func (fs *flagSet) helpSections() []helpSection {
	bySection := map[string][]*flag.Flag{}
	for _, f := range fs.listed() {
		s := fs.groups[f.Name]
		if s == "" {
			s = "Flags"
		}
		bySection[s] = append(bySection[s], f)
	}
	for carrier, r := range fs.routes {
		if fs.Lookup(carrier) == nil {
			continue
		}
		for _, f := range r {
			s := sectionOf(f.Key)
			bySection[s] = append(bySection[s], &flag.Flag{Name: f.Name + " " + f.Prefix, Value: &keyFlag{f: f}})
		}
	}
	var out []helpSection
	for _, s := range sections {
		flags := bySection[s]
		if len(flags) == 0 {
			continue
		}
		sort.SliceStable(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
		out = append(out, helpSection{sectionTitle(s, helps[fs.name]), flags})
	}
	return out
}

func sectionTitle(s string, h commandHelp) string {
	title := map[string]string{
		"Flags":   "Flags",
		"Query":   "Query flags (pipeline keys, docs/config.md)",
		"Source":  "Source flags (keys source.*)",
		"Sink":    "Sink flags (keys sink.*)",
		"Catalog": "Catalog flags (keys catalog.*)",
	}[s]
	if s != "Flags" && h.keysNote != "" {
		title += "; " + h.keysNote
	}
	return title
}

func (fs *flagSet) printFlag(w io.Writer, fl *flag.Flag) {
	spelling, paragraphs := fs.flagEntry(fl)
	fmt.Fprintf(w, "  %s\n", spelling)
	for _, p := range paragraphs {
		wrap(w, "        ", p)
	}
}

// flagEntry is flagEntry with the command's note on the flag.
func (fs *flagSet) flagEntry(fl *flag.Flag) (string, []string) {
	spelling, paragraphs := flagEntry(fl)
	if note := fs.notes[fl.Name]; note != "" {
		// After the line of prose: a key's flag ends with its key.
		paragraphs = slices.Insert(paragraphs, 1, note)
	}
	return spelling, paragraphs
}

// flagEntry is a flag as the help shows it: its spelling with its
// argument ("--max-file-age DURATION"), and its description, a line of
// prose then, for a pipeline key's flag, its default, values and key.
func flagEntry(fl *flag.Flag) (string, []string) {
	if kf, ok := fl.Value.(*keyFlag); ok {
		f := kf.f
		var more []string
		switch {
		case f.Default != "" && f.DefaultNote != "":
			more = append(more, fmt.Sprintf("Default: %s (%s).", f.Default, unmark(f.DefaultNote)))
		case f.Default != "" && !(f.Kind == config.FlagBool && f.Default == "false"):
			more = append(more, fmt.Sprintf("Default: %s.", f.Default))
		case f.DefaultNote != "":
			more = append(more, fmt.Sprintf("Default: %s.", unmark(f.DefaultNote)))
		}
		if f.Kind == config.FlagBool && f.Default == "true" {
			more = append(more, fmt.Sprintf("--%s=false turns it off.", f.Name))
		}
		if len(f.Allowed) > 1 && !strings.Contains(f.Arg, "|") {
			more = append(more, "One of: "+strings.Join(f.Allowed, ", ")+".")
		}
		switch f.Kind {
		case config.FlagList:
			more = append(more, "Comma-separated, or repeat the flag.")
		case config.FlagMap:
			if f.Prefix == "" {
				more = append(more, "Repeatable.")
			}
		}
		more = append(more, "Key: "+f.Key+".")
		return f.Spelling(), []string{prose(f.Doc), strings.Join(more, " ")}
	}
	arg, usage := flag.UnquoteUsage(fl)
	if arg != "" {
		arg = " " + strings.ToUpper(arg)
	}
	switch v := fl.Value.(type) {
	case durationFlag:
		arg = " DURATION"
	case interface{ IsBoolFlag() bool }:
		if v.IsBoolFlag() {
			arg = ""
		}
	}
	// The default is written here only, from the flag's own, so that a
	// usage text never states it too, nor a stale one.
	if d := flagDefault(fl); d != "" {
		usage += " Default: " + d + "."
	}
	return dashed(fl.Name) + arg, []string{usage}
}

// flagValues are the values a flag takes when they are a fixed few, for
// completing them: the words of its key's allowed values, without forms
// such as processing-time=<duration>, which only describe a value, and
// those the command gave it.
func (fs *flagSet) flagValues(fl *flag.Flag) []string {
	var vs []string
	if kf, ok := fl.Value.(*keyFlag); ok && len(kf.f.Allowed) > 1 {
		for _, v := range kf.f.Allowed {
			if literalValue.MatchString(v) {
				vs = append(vs, v)
			}
		}
	}
	for _, v := range fs.choices[fl.Name] {
		if !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return vs
}

var literalValue = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// takesValue reports whether a flag is followed by a value, as completion
// needs to know.
func takesValue(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// prose is the line of help a key's description gives a flag: its first
// sentence, or two when the first is short, without Markdown.
func prose(doc string) string {
	end := 0
	for end < 60 {
		i := sentenceEnd(doc[end:])
		if i < 0 {
			return unmark(doc)
		}
		end += i
	}
	return unmark(doc[:end])
}

// sentenceEnd is the index just after the first full stop that ends a
// sentence: one followed by a space and a capital letter or a `code`
// word, as the spec's descriptions are written; -1 if there is none.
func sentenceEnd(s string) int {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '.' && s[i+1] == ' ' && (s[i+2] >= 'A' && s[i+2] <= 'Z' || s[i+2] == '`') &&
			!strings.HasSuffix(s[:i+1], "e.g.") && !strings.HasSuffix(s[:i+1], "i.e.") {
			return i + 1
		}
	}
	return -1
}

func unmark(s string) string { return strings.ReplaceAll(s, "`", "") }

// wrap prints text as lines of at most helpWidth columns after indent.
func wrap(w io.Writer, indent, text string) {
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > helpWidth {
			fmt.Fprintln(w, line)
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	if len(line) > len(indent) {
		fmt.Fprintln(w, line)
	}
}

// flagDefault is the default a hand-registered flag's help states: its
// value when not given, unless that is the zero value, which means none.
func flagDefault(fl *flag.Flag) string {
	switch fl.DefValue {
	case "", "0", "false":
		return ""
	}
	return fl.DefValue
}
