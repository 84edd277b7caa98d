package filter

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokQuotedIdent
	tokNumber
	tokString
	tokBinary
	tokOp
	tokLParen
	tokRParen
	tokComma
	tokDot
	tokMinus
)

// token is one lexeme; text is the unquoted value for strings and quoted
// identifiers and the source text otherwise. pos is its byte offset.
type token struct {
	kind tokKind
	text string
	pos  int
}

// describe names the token for error messages.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of filter"
	case tokString:
		return "string " + quote(t.text, '\'')
	case tokBinary:
		return "X" + quote(t.text, '\'')
	case tokQuotedIdent:
		return quote(t.text, '"')
	}
	return "'" + t.text + "'"
}

// keywords are reserved: a column with one of these names must be quoted.
// DATE, TIMESTAMP and TIME are not, since they only start a literal when a
// string follows, and columns named date are common.
var keywords = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "IN": true, "BETWEEN": true,
	"IS": true, "NULL": true, "LIKE": true, "TRUE": true, "FALSE": true,
}

func isKeyword(s string) bool { return keywords[strings.ToUpper(s)] }

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool  { return isIdentStart(r) || unicode.IsDigit(r) || r == '$' }

func isPlainIdent(s string) bool {
	for i, r := range s {
		if i == 0 && !isIdentStart(r) || !isIdentPart(r) {
			return false
		}
	}
	return s != ""
}

// lex splits the whole input into tokens up front; filters are short and
// the parser then looks ahead freely.
func lex(in string) ([]token, error) {
	var toks []token
	for i := 0; i < len(in); {
		r, size := utf8.DecodeRuneInString(in[i:])
		start := i
		switch {
		case unicode.IsSpace(r):
			i += size
			continue
		case (r == 'X' || r == 'x') && i+1 < len(in) && in[i+1] == '\'':
			// X'0102' is a binary literal (SQL, Calcite): hex digits, two
			// per byte.
			text, end, ok := lexQuoted(in, i+1)
			if !ok {
				return nil, &SyntaxError{in, start, "unterminated binary literal"}
			}
			if msg := checkHex(text); msg != "" {
				return nil, &SyntaxError{in, start, "binary literal X" + quote(text, '\'') + " " + msg}
			}
			toks = append(toks, token{tokBinary, text, start})
			i = end
			continue
		case isIdentStart(r):
			for i < len(in) {
				r, size := utf8.DecodeRuneInString(in[i:])
				if !isIdentPart(r) {
					break
				}
				i += size
			}
			toks = append(toks, token{tokIdent, in[start:i], start})
			continue
		case r >= '0' && r <= '9' || r == '.' && i+1 < len(in) && isDigit(in[i+1]):
			end, err := lexNumber(in, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tokNumber, in[start:end], start})
			i = end
			continue
		case r == '\'' || r == '"':
			text, end, ok := lexQuoted(in, i)
			if !ok {
				what := "string"
				if r == '"' {
					what = "quoted name"
				}
				return nil, &SyntaxError{in, start, "unterminated " + what}
			}
			kind := tokString
			if r == '"' {
				if text == "" {
					return nil, &SyntaxError{in, start, "empty quoted name"}
				}
				kind = tokQuotedIdent
			}
			toks = append(toks, token{kind, text, start})
			i = end
			continue
		}
		kind, n := lexPunct(in[i:])
		if n == 0 {
			return nil, &SyntaxError{in, start, "unexpected character " + quote(string(r), '\'')}
		}
		toks = append(toks, token{kind, in[i : i+n], start})
		i += n
	}
	return append(toks, token{tokEOF, "", len(in)}), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// checkHex says what is wrong with the digits of a binary literal, "" when
// nothing is.
func checkHex(s string) string {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return "has " + quote(string(r), '\'') + ", which is not a hex digit (0-9, A-F)"
		}
	}
	if len(s)%2 != 0 {
		return "has an odd number of hex digits; each byte takes two"
	}
	return ""
}

// lexNumber scans digits, an optional fraction and an optional exponent.
func lexNumber(in string, i int) (int, error) {
	start := i
	for i < len(in) && isDigit(in[i]) {
		i++
	}
	if i < len(in) && in[i] == '.' {
		i++
		for i < len(in) && isDigit(in[i]) {
			i++
		}
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		j := i + 1
		if j < len(in) && (in[j] == '+' || in[j] == '-') {
			j++
		}
		if j == len(in) || !isDigit(in[j]) {
			return 0, &SyntaxError{in, start, "malformed number: exponent without digits"}
		}
		for i = j; i < len(in) && isDigit(in[i]); i++ {
		}
	}
	if i < len(in) {
		if r, _ := utf8.DecodeRuneInString(in[i:]); isIdentPart(r) {
			return 0, &SyntaxError{in, start, "malformed number"}
		}
	}
	return i, nil
}

// lexQuoted reads text enclosed in the quote at in[i], where a doubled
// quote stands for one.
func lexQuoted(in string, i int) (text string, end int, ok bool) {
	q := in[i]
	var b strings.Builder
	for j := i + 1; j < len(in); j++ {
		if in[j] != q {
			b.WriteByte(in[j])
			continue
		}
		if j+1 < len(in) && in[j+1] == q {
			b.WriteByte(q)
			j++
			continue
		}
		return b.String(), j + 1, true
	}
	return "", 0, false
}

func lexPunct(s string) (tokKind, int) {
	for _, op := range []string{"<=", ">=", "<>", "!=", "=", "<", ">"} {
		if strings.HasPrefix(s, op) {
			return tokOp, len(op)
		}
	}
	switch s[0] {
	case '(':
		return tokLParen, 1
	case ')':
		return tokRParen, 1
	case ',':
		return tokComma, 1
	case '.':
		return tokDot, 1
	case '-':
		return tokMinus, 1
	}
	return tokEOF, 0
}
