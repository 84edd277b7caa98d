package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// FlagKind is the kind of value a flag takes, from the Go type of its key.
type FlagKind int

// The kinds of flag values.
const (
	FlagString   FlagKind = iota
	FlagBool              // --name or --name=false
	FlagInt               // a whole number
	FlagDuration          // 90s, 15m, 7d: ParseDuration's syntax
	FlagTrigger           // ParseTrigger's syntax
	FlagList              // repeatable, and comma-separated outside parentheses
	FlagMap               // repeatable KEY=VALUE
)

// Flag is a pipeline key's spelling on the command line. It comes from the
// same table as SetDefaults, Validate and docs/config.md, so that the
// command line, its --help and the reference cannot disagree.
type Flag struct {
	// Name is the flag without dashes: "table", "fanout", "p".
	Name string
	// Prefix, when set, means the key has no flag of its own: each of its
	// entries is an argument PREFIX+KEY=VALUE of the map flag Name, as
	// Iceberg and Spark spell them ("-p table-default.KEY=VALUE").
	Prefix string
	// Key is the pipeline key, e.g. "sink.fanout-enabled".
	Key  string
	Kind FlagKind
	// Arg names the value in help and docs: "N", "DURATION", "a|b".
	Arg string
	// Default is the key's default in YAML spelling, empty for none;
	// DefaultNote explains it or stands for it.
	Default, DefaultNote string
	Allowed              []string
	// Doc is the key's description, in Markdown.
	Doc string
}

// Spelling is the flag as a user types it: "--max-file-age DURATION",
// "--fanout", "-p table-default.KEY=VALUE".
func (f Flag) Spelling() string {
	dash := "--"
	if len(f.Name) == 1 {
		dash = "-"
	}
	switch {
	case f.Prefix != "":
		return dash + f.Name + " " + f.Prefix + "KEY=VALUE"
	case f.Kind == FlagBool:
		return dash + f.Name
	}
	return dash + f.Name + " " + f.Arg
}

// Flags lists every key that has a command-line flag, in the order of the
// reference.
func Flags() []Flag {
	var out []Flag
	for i := range specs {
		if specs[i].flag != "" {
			out = append(out, flagOf(&specs[i]))
		}
	}
	return out
}

// FlagFor returns the flag of a key; ok is false when it has none.
func FlagFor(key string) (f Flag, ok bool) {
	s, found := specIndex[key]
	if !found || s.flag == "" {
		return Flag{}, false
	}
	return flagOf(s), true
}

func flagOf(s *fieldSpec) Flag {
	f := Flag{Name: s.flag, Prefix: s.flagPrefix, Key: s.path, Kind: kindOf(typeAt(s.path)),
		Default: s.def, DefaultNote: s.defNote, Allowed: s.allowed, Doc: s.doc, Arg: s.flagArg}
	if f.Arg == "" {
		f.Arg = flagArg(f, s.path)
	}
	return f
}

func kindOf(t reflect.Type) FlagKind {
	switch t {
	case durationType:
		return FlagDuration
	case triggerType:
		return FlagTrigger
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return FlagBool
	case reflect.Int, reflect.Int64:
		return FlagInt
	case reflect.Slice:
		return FlagList
	case reflect.Map:
		return FlagMap
	}
	return FlagString
}

// flagArg names a flag's value when the spec does not.
func flagArg(f Flag, path string) string {
	switch f.Kind {
	case FlagInt:
		return "N"
	case FlagDuration:
		return "DURATION"
	case FlagTrigger:
		return "TRIGGER"
	case FlagMap:
		return "KEY=VALUE"
	case FlagList:
		return "A,B"
	}
	if len(f.Allowed) > 0 && len(f.Allowed) <= 4 {
		return strings.Join(f.Allowed, "|")
	}
	return strings.ToUpper(path[strings.LastIndexByte(path, '.')+1:])
}

// SetKey sets the key to a value spelt as on the command line, converted
// by the key's type: a list key gets the value's comma-separated items
// appended, a map key the entry KEY=VALUE. An error names the problem
// but never repeats a map entry, which may hold a secret.
func (p *Pipeline) SetKey(key, value string) error {
	s, ok := specIndex[key]
	if !ok || strings.Contains(key, "[]") {
		return fmt.Errorf("no pipeline key %s", key)
	}
	v := fieldByPath(reflect.ValueOf(p).Elem(), s.path)
	switch v.Type() {
	case durationType:
		d, err := ParseDuration(value)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(Duration(d)))
		return nil
	case triggerType:
		t, err := ParseTrigger(value)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(t))
		return nil
	}
	if v.Kind() == reflect.Pointer {
		v.Set(reflect.New(v.Type().Elem()))
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(value)
	case reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%q is not a boolean; use true or false", value)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", value)
		}
		v.SetInt(n)
	case reflect.Slice:
		if v.Type().Elem() == columnType {
			cols, err := ParseColumns(value)
			if err != nil {
				return err
			}
			v.Set(reflect.AppendSlice(v, reflect.ValueOf(cols)))
			return nil
		}
		if v.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("key %s cannot be set from the command line", key)
		}
		for _, item := range SplitList(value) {
			v.Set(reflect.Append(v, reflect.ValueOf(item)))
		}
	case reflect.Map:
		if v.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("key %s cannot be set from the command line", key)
		}
		k, val, ok := strings.Cut(value, "=")
		if !ok || k == "" {
			return fmt.Errorf("takes KEY=VALUE")
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		v.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(val))
	default:
		return fmt.Errorf("key %s cannot be set from the command line", key)
	}
	return nil
}

var columnType = reflect.TypeFor[Column]()

// SplitList splits a list value at the commas outside parentheses, so that
// "id, bucket(id, 16)" gives two items; items are trimmed, empty ones
// dropped.
func SplitList(s string) []string {
	var out []string
	depth, start := 0, 0
	add := func(item string) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return out
}

// SetFlagDefaults is SetDefaults for a Pipeline built from flags: given
// reports the keys the command line set, so that a default whose zero
// value means something else (max-file-age: 0 is "no limit") still
// applies to a key that was not given, as Parse does for an omitted key.
func (p *Pipeline) SetFlagDefaults(given func(key string) bool) {
	if given == nil {
		given = func(string) bool { return false }
	}
	applyDefaults(p, given)
}
