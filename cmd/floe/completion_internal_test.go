package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// helpValues are the values a flag's help lists as the fixed few it
// takes: its key's "One of:", alternatives in its spelling or in the
// command's usage (--listing auto|full), and a list after its argument's
// name in its prose ("a FORMAT: table (aligned columns), csv, or jsonl").
func helpValues(usage, spelling, text string) []string {
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if v = strings.TrimSpace(v); literalValue.MatchString(v) && !placeholder.MatchString(v) && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	if m := regexp.MustCompile(`One of: (.*?)\.(?: |$)`).FindStringSubmatch(text); m != nil {
		add(strings.Split(m[1], ", ")...)
	}
	name, arg, _ := strings.Cut(spelling, " ")
	if strings.Contains(arg, "|") {
		add(strings.Split(arg, "|")...)
	}
	for _, m := range regexp.MustCompile(regexp.QuoteMeta(name)+` ((?:[\w.-]+\|)+[\w.-]+)`).FindAllStringSubmatch(usage, -1) {
		add(strings.Split(m[1], "|")...)
	}
	if arg != "" && strings.ToUpper(arg) == arg {
		plain := regexp.MustCompile(`\([^()]*\)`).ReplaceAllString(text, "")
		if m := regexp.MustCompile(`\b` + regexp.QuoteMeta(arg) + `: ([^.;]*)`).FindStringSubmatch(plain); m != nil {
			items := regexp.MustCompile(`\s*,\s*(?:or\s+)?|\s+or\s+`).Split(strings.TrimSpace(m[1]), -1)
			if !slices.ContainsFunc(items, func(v string) bool { return !literalValue.MatchString(v) }) {
				add(items...)
			}
		}
	}
	return out
}

// placeholder is a name standing for a value (--source DIR|URL), not one.
var placeholder = regexp.MustCompile(`^[A-Z]+$`)

// valueProbe is a flag whose value is completed after a command path.
type valueProbe struct{ path, flag string }

func (p valueProbe) label() string { return p.path + " " + p.flag }

// Each flag whose help lists the fixed values it takes gets those
// values completed by bash, zsh and fish, and completion offers no value
// the help does not name: the values come from where the flags are
// defined, and this keeps the help's prose and them in step.
func TestCompletionValues(t *testing.T) {
	bash, _ := runFloe(t, "completion", "bash")
	zsh, _ := runFloe(t, "completion", "zsh")
	fish, _ := runFloe(t, "completion", "fish")

	type flagHelp struct {
		listed  []string
		mention string // the flag's entry and the command's usage
	}
	helpOf := map[valueProbe]flagHelp{}
	var probes []valueProbe
	for _, l := range leaves() {
		fs := l.flags()
		for _, fl := range fs.listed() {
			spelling, doc := fs.flagEntry(fl)
			text := strings.Join(doc, " ")
			p := valueProbe{l.path, dashed(fl.Name)}
			helpOf[p] = flagHelp{helpValues(helps[l.path].usage, spelling, text), spelling + " " + text + " " + helps[l.path].usage}
			if takesValue(fl) {
				probes = append(probes, p)
			}
		}
	}
	// The test reads the values these flags' help lists.
	for _, p := range []valueProbe{{"scan", "--output-format"}, {"run", "--progress"}, {"run", "--log-format"}, {"serve", "--log-format"},
		{"maintain rewrite-data-files", "--strategy"}, {"stream", "--format"}, {"stream", "--mode"}, {"stream", "--trigger"}} {
		if len(helpOf[p].listed) < 2 {
			t.Errorf("floe %s: the help's values are not found: %v", p.label(), helpOf[p])
		}
	}

	shells := map[string]map[string][]string{
		"bash": bashValueCompletions(t, bash, probes),
		"zsh":  zshValueCompletions(zsh, probes),
		"fish": fishValueCompletions(t, fish, probes),
	}
	for shell, got := range shells {
		if got == nil {
			continue
		}
		for _, p := range probes {
			h := helpOf[p]
			offered := got[p.label()]
			for _, v := range h.listed {
				if !slices.Contains(offered, v) {
					t.Errorf("%s completion of floe %s offers %v, not %s, which its help lists", shell, p.label(), offered, v)
				}
			}
			for _, v := range offered {
				if !regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(v) + `($|[^\w-])`).MatchString(h.mention) {
					t.Errorf("%s completion of floe %s offers %s, which its help does not name", shell, p.label(), v)
				}
			}
		}
	}
}

// bashValueCompletions runs the bash script's function with the cursor
// after each probe's flag; nil when there is no bash. A flag whose values
// are not fixed falls through to files (complete -o default), so bash
// offers nothing of its own.
func bashValueCompletions(t *testing.T, script string, probes []valueProbe) map[string][]string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		return nil
	}
	var b strings.Builder
	b.WriteString(script)
	for _, p := range probes {
		fmt.Fprintf(&b, "COMP_WORDS=(floe %s %s ''); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _floe; echo %s'|'\"${COMPREPLY[*]}\"\n",
			p.path, p.flag, shellQuote(p.label()))
	}
	out, err := exec.Command("bash", "-c", b.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("bash completion: %v\n%s", err, out)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		label, list, _ := strings.Cut(line, "|")
		got[label] = strings.Fields(list)
	}
	return got
}

// zshValueCompletions reads the values each flag's _arguments spec in the
// zsh script completes ("--mode[...]:value:(append complete upsert)"),
// which _arguments needs a terminal to run; TestRegistryComplete runs
// the rest of the script.
func zshValueCompletions(script string, probes []valueProbe) map[string][]string {
	got := map[string][]string{}
	for _, p := range probes {
		for _, line := range strings.Split(script, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), shellQuote(p.path)+") ") {
				continue
			}
			m := regexp.MustCompile(`'` + regexp.QuoteMeta(p.flag) + `\[(?:[^\]\\]|\\.)*\]:value:\(([^)]*)\)'`).FindStringSubmatch(line)
			if m != nil {
				got[p.label()] = strings.Fields(m[1])
			}
		}
	}
	return got
}

// fishValueCompletions asks fish what it completes after each probe's
// flag; nil when there is no fish. Values fish offers are files unless
// the script gives the flag its own.
func fishValueCompletions(t *testing.T, script string, probes []valueProbe) map[string][]string {
	t.Helper()
	if _, err := exec.LookPath("fish"); err != nil {
		return nil
	}
	var b strings.Builder
	b.WriteString(script)
	for _, p := range probes {
		fmt.Fprintf(&b, "echo %s\ncomplete -C %s\n", fishQuote("@@"+p.label()), fishQuote("floe "+p.label()+" "))
	}
	return runFishProbe(t, b.String())
}
