package config

import (
	"bytes"
	"strings"
)

// expandEnv substitutes ${VAR} and ${VAR:-default} in the raw file text.
//
// It runs on text rather than on decoded values so that a reference works in
// any position, including numbers and booleans (max-files-per-trigger:
// ${MAX_FILES:-100}), which would otherwise be type errors before expansion
// could happen. The cost is that values are pasted verbatim: a value that
// may contain ": " or " #" belongs in quotes ("${PASSWORD}").
//
// Only the braced form is recognised. A bare $ stays literal, because
// S3 keys, regexes and passwords contain dollars far more often than anyone
// wants $HOME-style expansion, and an unexpanded typo there would be silent.
// $$ is a literal $ for the rare ${ that must survive.
//
// Comments are copied untouched, so that commenting out a line that
// references an unset variable does not turn it into an error. Every
// problem is collected, with its line, rather than stopping at the first.
func expandEnv(data []byte, lookup func(string) (string, bool)) ([]byte, problems) {
	var out bytes.Buffer
	out.Grow(len(data))
	var probs problems
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		lineNo := i + 1
		s, comment := string(line), ""
		if c := commentStart(s); c >= 0 {
			s, comment = s[:c], s[c:]
		}
		for {
			j := strings.IndexByte(s, '$')
			if j < 0 {
				out.WriteString(s)
				break
			}
			out.WriteString(s[:j])
			s = s[j:]
			switch {
			case strings.HasPrefix(s, "$$"):
				out.WriteByte('$')
				s = s[2:]
				continue
			case !strings.HasPrefix(s, "${"):
				out.WriteByte('$')
				s = s[1:]
				continue
			}
			end := strings.IndexByte(s, '}')
			if end < 0 {
				probs.add("", lineNo, "unterminated %s; close it with }, or write $${ for a literal ${", strings.TrimRight(s, "\r\n"))
				out.WriteString(s)
				break
			}
			ref := s[:end+1]
			body := s[2:end]
			s = s[end+1:]
			name, def, hasDef := strings.Cut(body, ":-")
			switch {
			case !validEnvName(name):
				probs.add("", lineNo, "invalid environment variable reference %s; write ${NAME} or ${NAME:-default} with NAME made of letters, digits and _, or $${ for a literal ${", ref)
				continue
			case strings.Contains(def, "${"):
				probs.add("", lineNo, "nested reference in %s is not supported; give a literal default", ref+"}")
				continue
			}
			if v, ok := lookup(name); ok && (v != "" || !hasDef) {
				out.WriteString(v)
			} else if hasDef {
				// Like the shell's :-, an empty variable takes the
				// default too: an exported-but-empty variable is
				// almost always a deployment mistake, not a request
				// for an empty catalog URI.
				out.WriteString(def)
			} else {
				probs.add("", lineNo, "undefined environment variable ${%s}; set it, or give a default with ${%s:-value}", name, name)
			}
		}
		out.WriteString(comment)
	}
	return out.Bytes(), probs
}

// commentStart returns the index of the # that opens a YAML comment on
// line, or -1. It follows YAML's rule (a # at the start or after a blank,
// outside quotes) closely enough for one-line values; the one miss, a #
// line inside a block scalar, only means a reference there stays literal.
func commentStart(line string) int {
	var quote byte // the open quote character, or 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '"':
			if c == '\\' {
				i++ // an escaped character cannot close the string
			} else if c == '"' {
				quote = 0
			}
		case quote == '\'':
			if c == '\'' {
				if i+1 < len(line) && line[i+1] == '\'' {
					i++ // '' is an escaped quote
				} else {
					quote = 0
				}
			}
		case c == '#':
			if i == 0 || line[i-1] == ' ' || line[i-1] == '\t' {
				return i
			}
		case c == '"' || c == '\'':
			// A quote opens a string only where a value can begin, so
			// the apostrophe in a plain "it's" does not.
			if i == 0 || strings.IndexByte(" \t[{,", line[i-1]) >= 0 {
				quote = c
			}
		}
	}
	return -1
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
