package config

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a pipeline config. Problems are collected
// rather than returned one at a time because a fix-one-rerun loop is the
// most tedious part of writing a config file.
type Problem struct {
	// Path is the dotted YAML path of the offending field, such as
	// "source.schema[2].type" (list indexes count from 0). It is empty
	// when the problem has no field to point at: YAML syntax errors,
	// undefined environment variables, and unknown keys, whose message
	// names the key and where it was found instead.
	Path string
	// Line is the 1-based line in the pipeline file, or 0 when unknown:
	// always for a Pipeline built in Go, and for a missing key whose
	// parent mapping is missing too.
	Line int
	// Message says what is wrong and how to fix it.
	Message string
}

// String renders the problem as Error prints it.
func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error is the error Parse, Load and Validate return for a bad config. It is
// a type, not a string, so that tools (an editor integration, floe's own
// `check` output) can place each problem at its line.
type Error struct {
	// File is the config file's name when known (Load sets it), so that a
	// message from a run with several pipelines says which one is wrong.
	File string
	// Problems are in report order: environment and YAML decoding
	// problems in document order, then validation problems.
	Problems []Problem
}

// Error prints a header and one problem per line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("invalid pipeline config")
	if e.File != "" {
		b.WriteString(" ")
		b.WriteString(e.File)
	}
	b.WriteString(":")
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p.String())
	}
	return b.String()
}

// problems accumulates Problems; its zero value is ready to use.
type problems []Problem

func (ps *problems) add(path string, line int, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Line: line, Message: fmt.Sprintf(format, args...)})
}

// err returns nil for no problems: callers must not get a non-nil error
// interface holding an empty *Error.
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return &Error{Problems: ps}
}
