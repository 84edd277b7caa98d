package filter

import (
	"errors"
	"regexp"
	"strings"
)

// likePart is a wildcard (% or _) or a run of literal text.
type likePart struct {
	text string
	wild bool
}

// likeParts splits a LIKE pattern into wildcards and literal runs, with
// escapes resolved.
func likeParts(pat string, esc rune) ([]likePart, error) {
	var parts []likePart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, likePart{lit.String(), false})
			lit.Reset()
		}
	}
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case esc != 0 && r == esc:
			if i+1 == len(rs) || rs[i+1] != '%' && rs[i+1] != '_' && rs[i+1] != esc {
				return nil, errors.New("the escape character must be followed by %, _ or itself")
			}
			i++
			lit.WriteRune(rs[i])
		case r == '%' || r == '_':
			flush()
			parts = append(parts, likePart{string(r), true})
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	return parts, nil
}

// checkPattern lets Parse reject a malformed pattern where it is written.
func checkPattern(pat string, esc rune) error {
	_, err := likeParts(pat, esc)
	return err
}

// likeRegexp compiles the pattern to an anchored regular expression that
// treats the value as a sequence of characters, newlines included.
func likeRegexp(parts []likePart) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	for _, p := range parts {
		switch {
		case !p.wild:
			b.WriteString(regexp.QuoteMeta(p.text))
		case p.text == "%":
			b.WriteString(`.*`)
		default:
			b.WriteString(`.`)
		}
	}
	b.WriteString(`\z`)
	return regexp.MustCompile(b.String())
}

// likeShape classifies a pattern for pushdown: exact is the whole value
// when the pattern has no wildcards; prefix is the literal text before the
// first wildcard, and prefixOnly says the pattern is prefix followed by
// nothing but %, so StartsWith(prefix) is the same condition.
func likeShape(parts []likePart) (exact string, noWild bool, prefix string, prefixOnly bool) {
	if len(parts) == 0 {
		return "", true, "", false
	}
	if len(parts) == 1 && !parts[0].wild {
		return parts[0].text, true, "", false
	}
	rest := parts
	if !parts[0].wild {
		prefix, rest = parts[0].text, parts[1:]
	}
	prefixOnly = true
	for _, p := range rest {
		if !p.wild || p.text != "%" {
			prefixOnly = false
		}
	}
	return "", false, prefix, prefixOnly
}
