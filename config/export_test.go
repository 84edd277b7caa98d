package config

import "reflect"

// Internals exposed to the black-box tests in package config_test.

// ExamplePipeline is the example that opens the reference.
const ExamplePipeline = examplePipeline

// ParseEnv is Parse with a fake environment, for tests that must not
// depend on the real one.
func ParseEnv(data []byte, env map[string]string) (*Pipeline, error) {
	return parse(data, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, nil)
}

// WalkDecode decodes data with the diagnostic walker alone, so tests can
// check that it agrees with yaml.v3's strict decoder on valid files.
func WalkDecode(data []byte) (*Pipeline, []Problem) {
	root, probs := parseYAML(data)
	if len(probs) > 0 {
		return nil, probs
	}
	p := new(Pipeline)
	w := newWalker()
	if root != nil {
		w.walk(root, "", reflectValueOf(p))
	}
	return p, w.probs
}

// SpecEntry is the test's view of a fieldSpec.
type SpecEntry struct {
	Path, Default, Required string
	Allowed                 []string
	Doc                     string
}

// Specs lists the spec table.
func Specs() []SpecEntry {
	var out []SpecEntry
	for _, s := range specs {
		out = append(out, SpecEntry{Path: s.path, Default: s.def, Required: s.required, Allowed: s.allowed, Doc: s.doc})
	}
	return out
}

// StructPaths lists every key path the Go types accept, by reflection over
// the yaml tags, in the spec table's "[]" notation.
func StructPaths() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for _, k := range structFields(t).keys {
			f, _ := structFields(t).byKey(k)
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out = append(out, p)
			ft := f.Type
			if ft == durationType || ft == triggerType {
				continue
			}
			switch {
			case ft.Kind() == reflect.Struct:
				walk(ft, p)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), p+"[]")
			}
		}
	}
	walk(reflect.TypeFor[Pipeline](), "")
	return out
}
