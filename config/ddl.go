package config

import (
	"fmt"
	"strings"
)

// ParseColumns reads columns in the syntax of Spark's DDL strings, as
// DataFrameReader.schema takes them: "id long, ts timestamp, name string
// NOT NULL". Types are Iceberg's, and the names Spark and SQL give them
// (bigint, integer, varchar) are taken as the Iceberg type they stand for;
// NOT NULL makes a column required.
func ParseColumns(ddl string) ([]Column, error) {
	items := SplitList(ddl)
	if len(items) == 0 {
		return nil, fmt.Errorf("no columns; give them as NAME TYPE, comma-separated, e.g. 'id long, ts timestamp, name string'")
	}
	out := make([]Column, 0, len(items))
	for _, item := range items {
		name, rest, ok := strings.Cut(item, " ")
		rest = strings.TrimSpace(rest)
		if !ok || rest == "" {
			return nil, fmt.Errorf("column %q has no type; give it as NAME TYPE, e.g. '%s long'", item, item)
		}
		name = strings.Trim(name, "`")
		var c Column
		c.Name = name
		typ := rest
		if i := strings.IndexByte(rest, ')'); i >= 0 {
			typ, rest = rest[:i+1], strings.TrimSpace(rest[i+1:])
		} else {
			typ, rest, _ = strings.Cut(rest, " ")
			rest = strings.TrimSpace(rest)
		}
		typ = strings.ToLower(strings.ReplaceAll(typ, " ", ""))
		if alias := typeAliases[typ]; alias != "" {
			typ = alias
		}
		c.Type = typ
		switch strings.ToUpper(strings.Join(strings.Fields(rest), " ")) {
		case "":
		case "NOT NULL":
			c.Required = true
		default:
			return nil, fmt.Errorf("column %s: %q after the type is not understood; only NOT NULL may follow it", name, rest)
		}
		out = append(out, c)
	}
	return out, nil
}
