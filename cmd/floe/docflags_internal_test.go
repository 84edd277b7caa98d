package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docFiles are the pages a user reads the flags in.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(files, "../../README.md")
}

// docFlag matches a long flag: --name, not the -- of "a -- b" nor a
// longer run of dashes.
var docFlag = regexp.MustCompile(`(?:^|[^-\w])--([a-z][a-z0-9-]*[a-z0-9])`)

// docFlagSpan matches a code span that starts with a long flag, as
// prose names a flag: `--snapshot-id` or `--table-dir DIR`.
var docFlagSpan = regexp.MustCompile("`--([a-z][a-z0-9-]*[a-z0-9])[^`]*`")

// docCommand matches a floe command line: floe (or ./floe) and the words
// after it, up to the end of its code span or line.
var docCommand = regexp.MustCompile("(?:^|[\\s`(/$])floe ([^`\n]*)")

// TestDocFlagsExist checks every flag the docs and the README name: a flag
// in a command line (`floe scan ... --as-of-timestamp T`) must be one the
// command takes, and any other flag one that some command takes, so that
// a renamed or misremembered flag (--as-of for --as-of-timestamp) is not
// left in the docs for a user to copy.
func TestDocFlagsExist(t *testing.T) {
	byCommand := map[string]map[string]bool{}
	all := map[string]bool{"help": true}
	for _, l := range leaves() {
		names := map[string]bool{"help": true}
		if fs := l.flags(); fs != nil {
			fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true; all[f.Name] = true })
		}
		byCommand[l.path] = names
	}
	for _, path := range docFiles(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			n, line := i+1, lines[i]
			// A shell command continued with a backslash is one line.
			for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
				i++
				line = strings.TrimSuffix(line, "\\") + " " + lines[i]
			}
			where := filepath.Base(path) + ": " + strings.TrimSpace(line)
			for _, m := range docCommand.FindAllStringSubmatch(line, -1) {
				words := strings.Fields(m[1])
				if len(words) == 0 {
					continue
				}
				cmd := words[0]
				if _, ok := byCommand[cmd]; !ok && len(words) > 1 {
					cmd += " " + words[1]
				}
				flags, ok := byCommand[cmd]
				if !ok {
					continue // prose ("floe reads ..."), or a group named alone
				}
				// A comment ends the command.
				args := m[1]
				if j := strings.Index(args, " #"); j >= 0 {
					args = args[:j]
				}
				for _, f := range docFlag.FindAllStringSubmatch(args, -1) {
					if !flags[f[1]] {
						t.Errorf("line %d of %s: floe %s has no flag --%s", n, where, cmd, f[1])
					}
				}
			}
			for _, f := range docFlagSpan.FindAllStringSubmatch(line, -1) {
				if !all[f[1]] && !slices.Contains(otherTools, f[1]) {
					t.Errorf("line %d of %s: no floe command has a flag --%s", n, where, f[1])
				}
			}
		}
	}
}

// otherTools are flags of other programs that the docs name in prose: the
// interoperability checkers' (docs/interop.md) and spark-submit's.
var otherTools = []string{"rows", "s3-endpoint", "table-dir", "puffin", "hive-partition-cols", "master"}
