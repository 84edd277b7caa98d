package serve

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxNameBytes bounds a namespace level and a table name, as file systems
// bound a file name: the catalogs make directories of them.
const maxNameBytes = 255

// checkName refuses a namespace level or table name that is not a plain
// name: empty, "." or "..", with a path separator or a control character,
// not UTF-8, or longer than maxNameBytes. Catalogs build directory names
// from these, so each could otherwise escape the warehouse or fail deep in
// the file system.
func checkName(what, name string) error {
	var why string
	switch {
	case name == "":
		why = "it is empty"
	case name == "." || name == "..":
		why = "it is a path step"
	case strings.ContainsAny(name, `/\`):
		why = `it contains "/" or "\"`
	case hasControl(name):
		why = "it contains a control character"
	case !utf8.ValidString(name):
		why = "it is not UTF-8"
	case len(name) > maxNameBytes:
		why = fmt.Sprintf("it is %d bytes long", len(name))
	default:
		return nil
	}
	return fmt.Errorf("%s %q is not a valid name: %s; a name is 1 to %d bytes of UTF-8 without \"/\", \"\\\" or control characters, and neither \".\" nor \"..\"",
		what, shown(name), why, maxNameBytes)
}

// checkNamespace checks each level of ns, and the directory name the
// catalogs give it (its levels joined by "." with ".db" added).
func checkNamespace(ns []string) error {
	if len(ns) == 0 {
		return fmt.Errorf("the namespace is empty; give at least one level")
	}
	for _, level := range ns {
		if err := checkName("namespace level", level); err != nil {
			return err
		}
	}
	if dir := strings.Join(ns, ".") + ".db"; len(dir) > maxNameBytes {
		return fmt.Errorf("namespace %q is too long: its directory, %d bytes, would be over %d; use shorter or fewer levels", shown(strings.Join(ns, ".")), len(dir), maxNameBytes)
	}
	return nil
}

// checkIdent checks a table identifier's namespace and name.
func checkIdent(ident []string) error {
	if len(ident) < 2 {
		return fmt.Errorf("table identifier %q has no namespace", shown(strings.Join(ident, ".")))
	}
	if err := checkNamespace(ident[:len(ident)-1]); err != nil {
		return err
	}
	return checkName("table name", ident[len(ident)-1])
}

// shown is a name cut short for a message.
func shown(name string) string {
	const max = 64
	if len(name) <= max {
		return name
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "…"
}
