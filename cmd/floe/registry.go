package main

import (
	"context"
	"errors"
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

// flags are the flags the command takes, exactly as its run function
// registers them: it runs with --help, which every command parses before
// it acts (its help must not act either), and the help request carries
// the flag set. Nil for a command that registers none.
func (l leaf) flags() *flagSet {
	var help helpRequest
	if errors.As(l.run(context.Background(), []string{"--help"}, io.Discard, io.Discard), &help) {
		return help.fs
	}
	return nil
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
