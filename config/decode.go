package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// walker decodes a yaml.Node tree into Go values by reflection over the
// structs' yaml tags, reporting each problem with its path and line and
// carrying on. It exists because yaml.v3's strict decoder speaks Go, not
// config: "field max-file-per-trigger not found in type config.Source",
// "cannot unmarshal !!str `ten` into int", with no key path and no hint of
// the key that was meant.
type walker struct {
	probs problems
	// lines maps each path written in the file to its line, so that
	// validation problems, found later on plain structs, can point into
	// the file too.
	lines map[string]int
	// present holds the paths given a non-null value; Parse needs it to
	// tell an explicit "max-file-age: 0" from an omitted key.
	present map[string]bool
	// bad holds the paths with a decode problem, whose validation
	// problems would be duplicates.
	bad map[string]bool
	// listKeysOf, when set, names the kind of file whose valid keys an
	// unknown key's problem lists even with a suggestion: a Managed I/O
	// read config is told from a write config by its keys, which the
	// list then shows were the ones meant.
	listKeysOf string
}

func newWalker() *walker {
	return &walker{lines: map[string]int{}, present: map[string]bool{}, bad: map[string]bool{}}
}

func reflectValueOf(p *Pipeline) reflect.Value { return reflect.ValueOf(p).Elem() }

// fail records a problem for path and marks it broken.
func (w *walker) fail(path string, line int, format string, args ...any) {
	w.probs.add(path, line, format, args...)
	w.bad[path] = true
}

// broken reports whether path, or a mapping or list containing it, failed
// to decode.
func (w *walker) broken(path string) bool {
	for p := path; ; p = parentPath(p) {
		if w.bad[p] {
			return true
		}
		if p == "" {
			// Checked last: bad[""] means the file is not a mapping,
			// so nothing in it can be validated meaningfully.
			return false
		}
	}
}

// lineOf gives the line of path, or of its nearest written ancestor: for a
// missing required key, the line of the mapping it belongs in is the most
// useful place to point.
func (w *walker) lineOf(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := w.lines[p]; ok {
			return l
		}
	}
	return 0
}

// parentPath strips the last ".key" or "[i]" from a path.
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// where names a mapping in messages about its keys.
func where(path string) string {
	if path == "" {
		return "at the top level"
	}
	return "in " + path
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	// Parsed documents never alias an alias, but the bound keeps a
	// hand-built tree from hanging the walker.
	for range 100 {
		if n.Kind != yaml.AliasNode || n.Alias == nil {
			break
		}
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describeKind names what the user wrote, for "cannot use X as Y".
func describeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if v := []rune(n.Value); len(v) > 60 {
			// Enough to recognise the value; a pasted blob would bury
			// the message.
			return fmt.Sprintf("%q...", string(v[:60]))
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "this value"
}

var (
	durationType = reflect.TypeFor[Duration]()
	triggerType  = reflect.TypeFor[Trigger]()
)

// walk decodes n into v, the field at path. Problems point at the value's
// own line, which for a scalar is the key's line too.
func (w *walker) walk(n *yaml.Node, path string, v reflect.Value) {
	n = resolveAlias(n)
	if isNull(n) {
		// "key:" with nothing after it is the same as leaving the key
		// out, which is what yaml.v3 does for non-pointer fields too.
		return
	}
	if path != "" {
		w.present[path] = true
	}
	switch v.Type() {
	case durationType:
		d, err := durationFromNode(n)
		if err != nil {
			w.fail(path, n.Line, "%v", err)
			return
		}
		v.Set(reflect.ValueOf(Duration(d)))
		return
	case triggerType:
		t, err := triggerFromNode(n)
		if err != nil {
			w.fail(path, n.Line, "%v", err)
			return
		}
		v.Set(reflect.ValueOf(t))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		before := len(w.probs)
		w.walk(n, path, elem.Elem())
		if len(w.probs) == before {
			v.Set(elem)
		}
	case reflect.Struct:
		w.mapping(n, path, v)
	case reflect.Slice:
		w.list(n, path, v)
	case reflect.Map:
		w.stringMap(n, path, v)
	default:
		w.scalar(n, path, v)
	}
}

func (w *walker) mapping(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		if path == "" {
			w.fail(path, n.Line, "a pipeline file is a mapping of keys (%s, ...), not %s", strings.Join(structFields(v.Type()).keys[:3], ", "), describeKind(n))
			return
		}
		w.fail(path, n.Line, "cannot use %s as a mapping; %s", describeKind(n), mappingHint(path))
		return
	}
	fields := structFields(v.Type())
	seen := map[string]int{}
	// Merge keys (<<: *defaults) are applied first so that keys written
	// out in this mapping override them, as the YAML merge spec says,
	// wherever the << appears.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			w.merge(n.Content[i+1], path, v)
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolveAlias(n.Content[i]), n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.probs.add(path, k.Line, "keys must be plain names, not %s", describeKind(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			w.fail(joinPath(path, k.Value), k.Line, "duplicate key %q %s, first set at line %d; keep one", k.Value, where(path), first)
			continue
		}
		seen[k.Value] = k.Line
		idx, ok := fields.index[k.Value]
		if !ok {
			w.unknownKey(k, path, fields.keys)
			continue
		}
		kp := joinPath(path, k.Value)
		w.lines[kp] = k.Line
		w.walk(val, kp, v.Field(idx))
	}
}

func (w *walker) merge(n *yaml.Node, path string, v reflect.Value) {
	n = resolveAlias(n)
	switch n.Kind {
	case yaml.MappingNode:
		w.mapping(n, path, v)
	case yaml.SequenceNode:
		// Earlier mappings in a merge list win, so apply them last.
		for _, m := range slices.Backward(n.Content) {
			w.merge(m, path, v)
		}
	default:
		w.probs.add(path, n.Line, "a << merge needs a mapping or a list of mappings, not %s", describeKind(n))
	}
}

func (w *walker) unknownKey(k *yaml.Node, path string, keys []string) {
	msg := fmt.Sprintf("unknown key %q %s", k.Value, where(path))
	if hint := Closest(k.Value, keys); hint != "" {
		msg += fmt.Sprintf("; did you mean %q?", hint)
		// The value was probably meant for hint, so a "required"
		// complaint about hint would only repeat this problem.
		w.bad[joinPath(path, hint)] = true
		if w.listKeysOf != "" {
			msg += fmt.Sprintf(" (the keys of %s are %s)", w.listKeysOf, strings.Join(keys, ", "))
		}
	} else {
		msg += "; valid keys are " + strings.Join(keys, ", ")
	}
	// The path is left empty: an unknown key is not a field, and the
	// message already says where it was found.
	w.probs.add("", k.Line, "%s", msg)
}

func (w *walker) list(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.SequenceNode {
		w.fail(path, n.Line, "cannot use %s as a list; write one item per line starting with \"- \"", describeKind(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		w.lines[ip] = item.Line
		w.walk(item, ip, out.Index(i))
	}
	v.Set(out)
}

func (w *walker) stringMap(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		w.fail(path, n.Line, "cannot use %s as a mapping; write one \"name: value\" per line", describeKind(n))
		return
	}
	out := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	w.fillMap(n, path, out)
	v.Set(out)
}

// fillMap adds a mapping's entries to out, a map[string]string.
func (w *walker) fillMap(n *yaml.Node, path string, out reflect.Value) {
	// As in mapping, merged entries go in first so written ones win.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			w.mergeMap(n.Content[i+1], path, out)
		}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolveAlias(n.Content[i]), resolveAlias(n.Content[i+1])
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.probs.add(path, k.Line, "property names must be strings, not %s", describeKind(k))
			continue
		}
		kp := fmt.Sprintf("%s[%q]", path, k.Value)
		if first, dup := seen[k.Value]; dup {
			w.fail(kp, k.Line, "duplicate key %q, first set at line %d; keep one", k.Value, first)
			continue
		}
		seen[k.Value] = k.Line
		w.lines[kp] = k.Line
		switch {
		case isNull(val):
			out.SetMapIndex(reflect.ValueOf(k.Value), reflect.ValueOf(""))
		case val.Kind != yaml.ScalarNode:
			w.fail(kp, val.Line, "cannot use %s as a property value; values are strings, so quote structured data", describeKind(val))
		default:
			// Any scalar is taken as its text, as iceberg-go wants
			// strings anyway: "s3.path-style-access: true" is fine.
			out.SetMapIndex(reflect.ValueOf(k.Value), reflect.ValueOf(val.Value))
		}
	}
}

func (w *walker) mergeMap(n *yaml.Node, path string, out reflect.Value) {
	n = resolveAlias(n)
	switch n.Kind {
	case yaml.MappingNode:
		w.fillMap(n, path, out)
	case yaml.SequenceNode:
		for _, m := range slices.Backward(n.Content) {
			w.mergeMap(m, path, out)
		}
	default:
		w.probs.add(path, n.Line, "a << merge needs a mapping or a list of mappings, not %s", describeKind(n))
	}
}

func (w *walker) scalar(n *yaml.Node, path string, v reflect.Value) {
	want := scalarTypeName(v.Kind())
	if n.Kind != yaml.ScalarNode {
		w.fail(path, n.Line, "cannot use %s as %s", describeKind(n), want)
		return
	}
	// yaml.v3 does the conversion so that its rules (0x10, 1_000,
	// true/false, ...) apply exactly as in the strict decode that follows.
	tmp := reflect.New(v.Type())
	if err := n.Decode(tmp.Interface()); err != nil {
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			plain := *n
			plain.Style, plain.Tag = 0, ""
			if plain.Decode(reflect.New(v.Type()).Interface()) == nil {
				w.fail(path, n.Line, "cannot use the quoted string %q as %s; remove the quotes", n.Value, want)
				return
			}
		}
		w.fail(path, n.Line, "cannot use %q as %s", n.Value, want)
		return
	}
	v.Set(tmp.Elem())
}

func scalarTypeName(k reflect.Kind) string {
	switch k {
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return "a " + k.String()
}

// mappingHint shows what a mapping key expects by naming its first keys,
// which are the ones that matter most because of how the structs are laid
// out.
func mappingHint(path string) string {
	fields := structFieldsAt(path)
	if len(fields) == 0 {
		return "write its keys indented on the following lines"
	}
	return fmt.Sprintf("write its keys (%s, ...) indented on the following lines", strings.Join(fields[:min(2, len(fields))], ", "))
}

// structFieldsAt lists the keys of the struct at a spec path.
func structFieldsAt(path string) []string {
	t := reflect.TypeFor[Pipeline]()
	for part := range strings.SplitSeq(specPath(path), ".") {
		if part == "" {
			break
		}
		f, ok := structFields(t).byKey(strings.TrimSuffix(part, "[]"))
		if !ok {
			return nil
		}
		t = f.Type
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
	}
	return structFields(t).keys
}

type fieldSet struct {
	t     reflect.Type
	keys  []string // in declaration order, for messages and docs
	index map[string]int
}

func (fs fieldSet) byKey(k string) (reflect.StructField, bool) {
	i, ok := fs.index[k]
	if !ok {
		return reflect.StructField{}, false
	}
	return fs.t.Field(i), true
}

var fieldCache sync.Map // reflect.Type -> fieldSet

// structFields reads the yaml tags of t: the struct tags are the one source
// of key names for decoding, suggestions and the docs' type column.
func structFields(t reflect.Type) fieldSet {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(fieldSet)
	}
	fs := fieldSet{t: t, index: map[string]int{}}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		fs.keys = append(fs.keys, name)
		fs.index[name] = i
	}
	fieldCache.Store(t, fs)
	return fs
}
