package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// runFloe runs floe's main in-process, as the binary would.
func runFloe(t *testing.T, args ...string) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("floe %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// helpFlags are the flags a command's --help lists, as their names
// ("count", "o"), read from the help text itself.
func helpFlags(help string) []string {
	var names []string
	inFlags := false
	for _, line := range strings.Split(help, "\n") {
		if line != "" && line[0] != ' ' {
			inFlags = strings.HasSuffix(line, ":") && strings.Contains(strings.ToLower(line), "flags")
		}
		if inFlags && strings.HasPrefix(line, "  -") {
			name := strings.TrimLeft(strings.Fields(line)[0], "-")
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}

// dispatched are the command paths floe's dispatch runs, found by walking
// the dispatch tables and confirming that each path runs: a command that
// is not in them is not dispatched, and a listed one that does not run
// fails here.
func dispatched(t *testing.T) map[string][]string {
	t.Helper()
	paths := map[string][]string{}
	for _, c := range commands {
		var subs []string
		if c.subs != nil {
			for _, s := range c.subs() {
				subs = append(subs, s.name)
			}
		} else {
			subs = []string{""}
		}
		for _, s := range subs {
			path := strings.TrimSpace(c.name + " " + s)
			help, _ := runFloe(t, append(strings.Fields(path), "--help")...)
			if !strings.HasPrefix(help, "Usage: floe "+path) {
				t.Errorf("floe %s --help does not describe it:\n%s", path, help)
			}
			paths[path] = helpFlags(help)
		}
	}
	return paths
}

// Every command, subcommand and flag that dispatch accepts is in the
// top-level help (commands), its group's help (subcommands), the three
// completion scripts (with --help after each command) and the man page; the bash script parses and
// completes each of them.
func TestRegistryComplete(t *testing.T) {
	paths := dispatched(t)
	if len(paths) < 20 {
		t.Fatalf("found %d command paths: %v", len(paths), paths)
	}
	top, _ := runFloe(t, "--help")
	bash, _ := runFloe(t, "completion", "bash")
	zsh, _ := runFloe(t, "completion", "zsh")
	fish, _ := runFloe(t, "completion", "fish")
	man, _ := runFloe(t, "man")

	// The words each script offers after a command path, and the man
	// page's section of each command.
	bashWords := bashCompletions(t, bash, paths)
	zshWords := zshCompletions(t, zsh, paths)
	fishWords := fishCompletions(t, fish, paths)
	zshCase := func(path string) string {
		for _, line := range strings.Split(zsh, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), shellQuote(path)+") ") {
				return line
			}
		}
		return ""
	}
	manSection := func(path string) string {
		_, rest, ok := strings.Cut(man, ".SS \"floe "+roff(path)+"\"\n")
		if !ok {
			return ""
		}
		section, _, _ := strings.Cut(rest, "\n.SS ")
		return section
	}
	fishCond := func(path string) string {
		if path == "" {
			return "-n " + fishQuote("test (count (commandline -opc)) -eq 1")
		}
		return "-n " + fishQuote("__floe_at "+fishQuote(path))
	}

	for _, c := range commands {
		if !strings.Contains(top, "\n  "+c.name+" ") {
			t.Errorf("floe --help does not list command %s", c.name)
		}
		checkWord(t, "", c.name, bashWords, zshWords, fishWords, zshCase, fish, fishCond)
		if !strings.Contains(man, ".B "+roff(c.name)+"\n") {
			t.Errorf("the man page does not list command %s", c.name)
		}
		if c.subs == nil {
			continue
		}
		checkWord(t, c.name, "--help", bashWords, zshWords, fishWords, zshCase, fish, fishCond)
		groupHelp, _ := runFloe(t, c.name, "--help")
		for _, s := range c.subs() {
			if !strings.Contains(groupHelp, "\n  "+s.name+" ") {
				t.Errorf("floe %s --help does not list subcommand %s", c.name, s.name)
			}
			checkWord(t, c.name, s.name, bashWords, zshWords, fishWords, zshCase, fish, fishCond)
		}
	}
	for path, flags := range paths {
		section := manSection(path)
		if section == "" {
			t.Errorf("the man page has no section for floe %s", path)
		}
		checkWord(t, path, "--help", bashWords, zshWords, fishWords, zshCase, fish, fishCond)
		for _, f := range flags {
			checkWord(t, path, dashed(f), bashWords, zshWords, fishWords, zshCase, fish, fishCond)
			if !strings.Contains(section, `\fB`+roff(dashed(f))) {
				t.Errorf("the man page's floe %s does not describe %s", path, dashed(f))
			}
		}
	}

	// Each shell that is installed parses its script.
	for shell, script := range map[string]string{"bash": bash, "zsh": zsh, "fish": fish} {
		if _, err := exec.LookPath(shell); err != nil {
			continue
		}
		file := filepath.Join(t.TempDir(), "floe."+shell)
		if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(shell, "-n", file).CombinedOutput(); err != nil {
			t.Errorf("%s -n on floe completion %s: %v\n%s", shell, shell, err, out)
		}
	}
}

// checkWord checks that each script completes word after path.
func checkWord(t *testing.T, path, word string, bashWords, zshWords, fishWords map[string][]string, zshCase func(string) string, fish string, fishCond func(string) string) {
	t.Helper()
	if bashWords != nil && !slices.Contains(bashWords[path], word) {
		t.Errorf("bash completion of floe %s offers %v, not %s", path, bashWords[path], word)
	}
	if zshWords != nil && !slices.Contains(zshWords[path], word) {
		t.Errorf("zsh completion of floe %s offers %v, not %s", path, zshWords[path], word)
	}
	if line := zshCase(path); !strings.Contains(line, "'"+word+"[") && !strings.Contains(line, "'"+word+":") {
		t.Errorf("zsh completion of floe %s does not offer %s: %q", path, word, line)
	}
	if fishWords != nil {
		if !slices.Contains(fishWords[path], word) {
			t.Errorf("fish completion of floe %s offers %v, not %s", path, fishWords[path], word)
		}
		return
	}
	fishWord := "-a " + fishQuote(word)
	if strings.HasPrefix(word, "-") {
		name := strings.TrimLeft(word, "-")
		fishWord = "-l " + name
		if len(name) == 1 {
			fishWord = "-o " + name
		}
	}
	if !strings.Contains(fish, fishCond(path)+" "+fishWord+" ") {
		t.Errorf("fish completion of floe %s does not offer %s", path, word)
	}
}

// fishCompletions asks fish what it completes after every command path
// and after floe and each group, as bashCompletions does bash; nil when
// there is no fish.
func fishCompletions(t *testing.T, script string, paths map[string][]string) map[string][]string {
	t.Helper()
	if _, err := exec.LookPath("fish"); err != nil {
		return nil
	}
	var b strings.Builder
	b.WriteString(script)
	for path := range probes(paths) {
		line := strings.TrimSpace("floe "+path) + " "
		fmt.Fprintf(&b, "echo %s\n", fishQuote("@@"+path))
		if _, ok := paths[path]; !ok {
			// fish offers flags only once a dash is typed.
			fmt.Fprintf(&b, "complete -C %s\n", fishQuote(line))
		}
		fmt.Fprintf(&b, "complete -C %s\n", fishQuote(line+"-"))
	}
	return runFishProbe(t, b.String())
}

// runFishProbe runs a fish script that echoes "@@" and a probe's name
// before each `complete -C`, in an empty directory (not the script's) so
// that files offered are none, and returns the words completed for each
// probe.
func runFishProbe(t *testing.T, script string) map[string][]string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "probe.fish")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("fish", "--no-config", file)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fish completion: %v\n%s", err, out)
	}
	words := map[string][]string{}
	var cur string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, ok := strings.CutPrefix(line, "@@"); ok {
			cur = p
			words[cur] = []string{}
			continue
		}
		word, _, _ := strings.Cut(line, "\t")
		words[cur] = append(words[cur], word)
	}
	return words
}

// zshCompletions runs the zsh script's function after every command
// path, as bashCompletions does bash, with _describe and _arguments (the
// completion system's, which needs a terminal) replaced by functions that
// print the words they are given; nil when there is no zsh.
func zshCompletions(t *testing.T, script string, paths map[string][]string) map[string][]string {
	t.Helper()
	if _, err := exec.LookPath("zsh"); err != nil {
		return nil
	}
	var b strings.Builder
	b.WriteString(script)
	b.WriteString("_describe() { print -rl -- \"${(@P)4}\" }\n_arguments() { shift; print -rl -- \"$@\" }\n")
	for path := range probes(paths) {
		cur := "''"
		if _, ok := paths[path]; ok {
			cur = "-"
		}
		fmt.Fprintf(&b, "words=(floe %s %s); CURRENT=${#words}; print -r -- %s; _floe\n", path, cur, shellQuote("@@"+path))
	}
	out, err := exec.Command("zsh", "-f", "-c", b.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("zsh completion: %v\n%s", err, out)
	}
	words := map[string][]string{}
	cur := "\x00"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, ok := strings.CutPrefix(line, "@@"); ok {
			cur = p
			words[cur] = []string{}
			continue
		}
		word := line
		if i := strings.IndexAny(word, "[:"); i > 0 && word[i-1] != '\\' {
			word = word[:i]
		}
		words[cur] = append(words[cur], word)
	}
	return words
}

// probes are the command paths completion is asked about: floe itself,
// each group and each command path.
func probes(paths map[string][]string) map[string]bool {
	out := map[string]bool{"": true}
	for path := range paths {
		out[path] = true
		if g, _, ok := strings.Cut(path, " "); ok {
			out[g] = true
		}
	}
	return out
}

// bashCompletions runs the bash script's completion function after every
// command path, and after floe and each group, with the word being
// completed a dash for commands (their flags) and empty for the others;
// nil when there is no bash.
func bashCompletions(t *testing.T, script string, paths map[string][]string) map[string][]string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		return nil
	}
	var b strings.Builder
	b.WriteString(script)
	for path := range probes(paths) {
		cur := "''"
		if _, ok := paths[path]; ok {
			cur = "-"
		}
		fmt.Fprintf(&b, "COMP_WORDS=(floe %s %s); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _floe; echo %s'|'\"${COMPREPLY[*]}\"\n",
			path, cur, shellQuote(path))
	}
	out, err := exec.Command("bash", "-c", b.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("bash completion: %v\n%s", err, out)
	}
	words := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, list, ok := strings.Cut(line, "|")
		if !ok {
			t.Fatalf("bash completion printed %q", line)
		}
		words[path] = strings.Fields(list)
	}
	return words
}

var defaultRE = regexp.MustCompile(`(?i)\bdefault\b:`)

// No flag's help states a default twice, or states one the generator
// does not write from the flag itself: the help, the man page and the
// completion descriptions all take the entry from flagEntry.
func TestHelpStatesDefaultsOnce(t *testing.T) {
	for _, l := range leaves() {
		fs := l.flags()
		for _, sec := range fs.helpSections() {
			for _, fl := range sec.flags {
				spelling, doc := fs.flagEntry(fl)
				text := strings.Join(doc, " ")
				if n := len(defaultRE.FindAllString(text, -1)); n > 1 {
					t.Errorf("floe %s %s states a default %d times: %q", l.path, spelling, n, text)
				}
				d := flagDefault(fl)
				if kf, ok := fl.Value.(*keyFlag); ok && kf.f.Default != "false" {
					d = kf.f.Default
				}
				if d != "" && strings.Count(text, "Default: "+d) != 1 {
					t.Errorf("floe %s %s: want its default %s stated once, got %q", l.path, spelling, d, text)
				}
			}
		}
	}
}
