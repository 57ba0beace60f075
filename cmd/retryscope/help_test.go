package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// flagLine is a flag's first line in --help: its shorthand, if any, and
// its name.
var flagLine = regexp.MustCompile(`^\s+(?:-([a-zA-Z]), )?--([a-z0-9-]+)`)

// helpFlags reads a command's --help: the text of each flag (its help,
// spaces folded), by name, its shorthands, and its example command lines
// (continuation lines joined).
func helpFlags(help string) (flags map[string]string, shorthands map[string]bool, examples []string) {
	flags, shorthands = map[string]string{}, map[string]bool{}
	var current string
	inFlags, inExamples := false, false
	for _, line := range strings.Split(help, "\n") {
		switch {
		case line == "Flags:":
			inFlags = true
			continue
		case line == "Examples:":
			inFlags, inExamples = false, true
			continue
		case line == "":
			inFlags = false
		}
		if inFlags {
			if m := flagLine.FindStringSubmatch(line); m != nil {
				current = m[2]
				if m[1] != "" {
					shorthands[m[1]] = true
				}
				flags[current] = strings.Join(strings.Fields(line)[2:], " ")
			} else if current != "" {
				flags[current] += " " + strings.TrimSpace(line)
			}
		}
		if inExamples {
			trimmed := strings.TrimSpace(line)
			switch {
			case len(examples) > 0 && strings.HasSuffix(examples[len(examples)-1], `\`):
				examples[len(examples)-1] = strings.TrimSuffix(examples[len(examples)-1], `\`) + " " + trimmed
			case strings.Contains(trimmed, "retryscope ") && !strings.HasPrefix(trimmed, "#"):
				examples = append(examples, trimmed)
			}
		}
	}
	return flags, shorthands, examples
}

// TestHelpFitsAndExamplesUseRealFlags runs --help, and help COMMAND, of
// retryscope and of every command with stdout not a terminal: every line
// is at most 80 columns, the two spellings print the same, and every
// flag an example line uses is one of that command's flags.
func TestHelpFitsAndExamplesUseRealFlags(t *testing.T) {
	checkWidth := func(what, out string) {
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 80 {
				t.Errorf("%s: line %d is %d columns, over 80:\n%s", what, i+1, n, line)
			}
		}
	}
	code, top, _ := runCLI(t, "--help")
	if code != exitOK {
		t.Fatalf("--help: exit %d", code)
	}
	checkWidth("retryscope --help", top)
	for _, c := range commands() {
		code, out, stderr := runCLI(t, c.name, "--help")
		if code != exitOK || stderr != "" {
			t.Fatalf("%s --help: exit %d, stderr %q", c.name, code, stderr)
		}
		checkWidth(c.name+" --help", out)
		if _, viaHelp, _ := runCLI(t, "help", c.name); viaHelp != out {
			t.Errorf("retryscope help %s differs from retryscope %s --help", c.name, c.name)
		}
		flags, shorthands, examples := helpFlags(out)
		if len(flags) == 0 || len(examples) == 0 {
			t.Fatalf("%s --help: read %d flags and %d examples from:\n%s", c.name, len(flags), len(examples), out)
		}
		for _, ex := range examples {
			_, args, ok := strings.Cut(ex, "retryscope "+c.name+" ")
			if !ok {
				if strings.HasSuffix(ex, "retryscope "+c.name) {
					continue
				}
				t.Errorf("%s --help: example %q does not run retryscope %s", c.name, ex, c.name)
				continue
			}
			for _, arg := range strings.Fields(args) {
				if arg == "||" || arg == "|" {
					break // the shell's, not retryscope's
				}
				name, isLong := strings.CutPrefix(arg, "--")
				name, _, _ = strings.Cut(name, "=")
				switch {
				case isLong && flags[name] == "":
					t.Errorf("%s --help: example %q uses --%s, which %s does not have", c.name, ex, name, c.name)
				case !isLong && len(arg) == 2 && arg[0] == '-' && !shorthands[arg[1:]]:
					t.Errorf("%s --help: example %q uses %s, which %s does not have", c.name, ex, arg, c.name)
				}
			}
		}
	}
}

// TestSameFlagSameMeaning: a flag name two commands share has the same
// help in both, except those whose help differs only by what the
// command does with the same thing (listed with why).
func TestSameFlagSameMeaning(t *testing.T) {
	sameThing := map[string]string{
		"db":          "run and ingest create the database; report, export and whatif need it",
		"format":      "each command's output format, with the formats it writes",
		"hedge-delay": "the wait before the hedge in both: gen's simulated clients', whatif's policy",
		"output":      "the file each command writes (-o)",
		"parquet":     "the same Parquet directory: export needs it, run writes it when given",
		"seed":        "the seed of each command's random draws",
		"task-key":    "the same attribute, used by the report's tasks and by whatif's --per-task-budget",
		"workers":     "the servers' workers in both; the report estimates them without the flag, the what-if leaves utilisation out",
	}
	seen := map[string]map[string][]string{} // flag -> help -> commands
	for _, c := range commands() {
		_, out, _ := runCLI(t, c.name, "--help")
		flags, _, _ := helpFlags(out)
		for name, help := range flags {
			if seen[name] == nil {
				seen[name] = map[string][]string{}
			}
			seen[name][help] = append(seen[name][help], c.name)
		}
	}
	for name, helps := range seen {
		if len(helps) > 1 && sameThing[name] == "" {
			var lines []string
			for help, cmds := range helps {
				lines = append(lines, strings.Join(cmds, ",")+": "+help)
			}
			slices.Sort(lines)
			t.Errorf("--%s means different things:\n  %s", name, strings.Join(lines, "\n  "))
		}
	}
}
