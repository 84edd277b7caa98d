package filter

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrBind marks a filter that does not fit the table schema: an unknown
// column, or a literal that is not a value of the column's type.
var ErrBind = errors.New("filter does not fit the table")

// SyntaxError reports text that is not a filter. Pos is the byte offset of
// the offending token in Input.
type SyntaxError struct {
	Input string
	Pos   int
	Msg   string
}

// Error renders the message with the input and a caret under Pos, so the
// user sees where the filter went wrong without counting characters. The
// position it prints counts characters from 1.
func (e *SyntaxError) Error() string {
	line := strings.NewReplacer("\n", " ", "\t", " ", "\r", " ").Replace(e.Input)
	col := utf8.RuneCountInString(e.Input[:e.Pos])
	return fmt.Sprintf("filter: %s at position %d\n  %s\n  %s^", e.Msg, col+1, line, strings.Repeat(" ", col))
}
