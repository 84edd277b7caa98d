package main

import (
	"context"
	"flag"
	"io"
	"sort"
)

// leaf is a command that runs: a command of its own (floe scan) or a
// group's subcommand (floe table describe).
type leaf struct {
	path    string // "scan", "table describe"
	summary string
	run     runFunc
}

// leaves are every command that runs, in the order of the help.
func leaves() []leaf {
	var out []leaf
	for _, c := range commands {
		if c.subs == nil {
			out = append(out, leaf{c.name, c.summary, c.run})
			continue
		}
		for _, s := range c.subs() {
			out = append(out, leaf{c.name + " " + s.name, s.summary, s.run})
		}
	}
	return out
}

// flagCollector is the stderr of a command run for its flags: parse hands
// it the flag set instead of printing the help.
type flagCollector struct{ fs *flagSet }

func (c *flagCollector) Write(p []byte) (int, error) { return len(p), nil }

// flags are the flags the command takes, exactly as its run function
// registers them: it runs with --help, which every command parses before
// it acts (its help must not act either), and parse hands over the flag
// set. Nil for a command that registers none.
func (l leaf) flags() *flagSet {
	var c flagCollector
	_ = l.run(context.Background(), []string{"--help"}, io.Discard, &c)
	return c.fs
}

// listed are the flags the help lists (not the deprecated or hidden
// ones), by name.
func (fs *flagSet) listed() []*flag.Flag {
	var out []*flag.Flag
	if fs == nil {
		return nil
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !fs.hidden[f.Name] {
			out = append(out, f)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
