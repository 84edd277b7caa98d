package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Help that was asked for, in any of its spellings, is the command's
// output: it goes to stdout with exit 0, so that `floe stream --help |
// grep partition` finds the flag. floe help COMMAND [SUBCOMMAND] is the
// command's own help.
func TestHelpOnStdout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const overview = "floe streams landing files"
	for _, c := range []struct{ args, prefix string }{
		{"--help", overview},
		{"-h", overview},
		{"-help", overview},
		{"help", overview},
		{"help --help", overview},
		{"stream --help", "Usage: floe stream "},
		{"stream -h", "Usage: floe stream "},
		{"scan db.events --help", "Usage: floe scan "},
		{"help scan", "Usage: floe scan "},
		{"--help scan", "Usage: floe scan "},
		{"help run", "Usage: floe run "},
		{"completion --help", "Usage: floe completion "},
		{"man -h", "Usage: floe man"},
		{"version --help", "Usage: floe version"},
		{"table --help", "Usage: floe table SUBCOMMAND"},
		{"table -h", "Usage: floe table SUBCOMMAND"},
		{"table help", "Usage: floe table SUBCOMMAND"},
		{"help table", "Usage: floe table SUBCOMMAND"},
		{"checkpoint --help", "Usage: floe checkpoint SUBCOMMAND"},
		{"maintain -h", "Usage: floe maintain SUBCOMMAND"},
		{"table snapshots --help", "Usage: floe table snapshots "},
		{"help table snapshots", "Usage: floe table snapshots "},
		{"table help snapshots", "Usage: floe table snapshots "},
		{"maintain remove-orphan-files -h", "Usage: floe maintain remove-orphan-files "},
		{"help maintain rewrite-data-files", "Usage: floe maintain rewrite-data-files "},
		{"checkpoint verify --help", "Usage: floe checkpoint verify"},
		{"help checkpoint show", "Usage: floe checkpoint show "},
	} {
		r := e.Run(strings.Fields(c.args)...)
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, c.prefix) || r.Stderr != "" {
			t.Errorf("floe %s: want exit 0, stdout starting %q and nothing on stderr, got %s", c.args, c.prefix, r)
		}
	}
	if r := e.OK("stream", "--help"); !strings.Contains(r.Stdout, "--partition-fields") {
		t.Errorf("floe stream --help on stdout does not describe --partition-fields:\n%s", r.Stdout)
	}
}

// Usage printed because of a mistake goes to stderr with exit 2, nothing
// on stdout; a misspelt flag before any command is named as a flag.
func TestUsageMistakesOnStderr(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct{ args, want string }{
		{"", "Usage: floe COMMAND"},
		{"table", "Usage: floe table SUBCOMMAND"},
		{"maintain bogus", `maintain has no subcommand "bogus"`},
		{"scan db.events --bogus", "scan has no flag --bogus"},
		{"scan", "scan takes"},
		{"help sacn", `unknown command "sacn"; did you mean "scan"?`},
		{"help table snapshot", `table has no subcommand "snapshot"; did you mean "snapshots"?`},
		{"--verison", "floe: unknown flag --verison; did you mean --version?"},
		{"-hlep", "floe: unknown flag -hlep; did you mean --help?"},
		{"--warehouse wh table list", "unknown flag --warehouse; before a command floe takes only --help and --version"},
	} {
		r := e.Run(strings.Fields(c.args)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || r.Stdout != "" {
			t.Errorf("floe %s: want exit 2, %q on stderr and nothing on stdout, got %s", c.args, c.want, r)
		}
		if strings.Contains(r.Stderr, "unknown command") && strings.HasPrefix(c.args, "-") {
			t.Errorf("floe %s: a flag called a command: %s", c.args, r.Stderr)
		}
	}
}

// floe man renders without a warning from man at the widths of common
// terminals, and its header carries a date that is the same on every
// run.
func TestManPageRenders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	page := e.OK("man").Stdout
	if again := e.OK("man").Stdout; again != page {
		t.Error("floe man printed two different pages")
	}
	th, _, _ := strings.Cut(page, "\n")
	if fields := strings.Split(th, `"`); len(fields) < 3 || strings.TrimSpace(fields[1]) == "" {
		t.Errorf("floe man's header has no date: %s", th)
	}
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("no man here to render the page")
	}
	file := filepath.Join(t.TempDir(), "floe.1")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, width := range []string{"80", "60", "50"} {
		cmd := exec.Command("man", "-l", file)
		cmd.Env = append(os.Environ(), "MANWIDTH="+width, "MANPAGER=cat", "PAGER=cat")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("MANWIDTH=%s man -l on floe man: %v\n%s", width, err, stderr.String())
		}
	}
	if _, err := exec.LookPath("groff"); err == nil {
		// groff without man's preconv reads only ASCII.
		if out, err := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z", file).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("groff -ww on floe man: %v\n%s", err, out)
		}
	}
}
