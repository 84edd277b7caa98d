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
// Lines whose first non-blank character is # are copied untouched, so that
// commenting out a line that references an unset variable does not turn it
// into an error. Every problem is collected, with its line, rather than
// stopping at the first.
func expandEnv(data []byte, lookup func(string) (string, bool)) ([]byte, problems) {
	var out bytes.Buffer
	out.Grow(len(data))
	var probs problems
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		lineNo := i + 1
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '#' {
			out.Write(line)
			continue
		}
		s := string(line)
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
	}
	return out.Bytes(), probs
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
