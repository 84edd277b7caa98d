package ingest

import (
	"fmt"
	"strings"
)

// ParseIdent splits "ns.table" (or "a.b.table") into an identifier.
func ParseIdent(s string) ([]string, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return nil, fmt.Errorf("%w: table %q must be NAMESPACE.TABLE, e.g. db.events", ErrConfig, s)
	}
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("%w: table %q has an empty name part; use NAMESPACE.TABLE, e.g. db.events", ErrConfig, s)
		}
	}
	return parts, nil
}

// JoinIdent is an identifier's dotted name.
func JoinIdent(ident []string) string { return strings.Join(ident, ".") }
