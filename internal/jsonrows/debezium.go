package jsonrows

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/internal/debezium"
)

// DebeziumEvents calls fn with every event of an input and where it is
// (a file's line, a partition's offset), naming the place in fn's error.
type DebeziumEvents func(fn func(at int64, b []byte) error) error

// DebeziumSchema reads every event once. The rows' columns are the union
// of the row images' columns, typed by the events' Connect schemas or, for
// events written without one, inferred as JSON lines are (a column the
// table has read as its type, the columns returned for NewReader's
// asText); the three metadata columns follow. unit names a place in the
// errors ("line", "offset").
func DebeziumSchema(events DebeziumEvents, table *arrow.Schema, unit string) (*arrow.Schema, []string, error) {
	dec := debezium.NewDecoder()
	root := NewObject()
	var (
		typed               []arrow.Field
		seenAt                    = map[string]int{} // a typed column's index in typed
		withSchema, without int64 = -1, -1           // where the first event of each kind is
	)
	mixed := func(other int64) error {
		return fmt.Errorf("the events of one input must all come with their schema or all without (%s %d differs); write them with one converter setting (schemas.enable)", unit, other)
	}
	err := events(func(at int64, b []byte) error {
		ev, err := dec.Decode(b)
		if errors.Is(err, debezium.ErrTombstone) {
			return nil
		}
		if err != nil {
			return err
		}
		if ev.Fields == nil {
			if without < 0 {
				without = at
			}
			if withSchema >= 0 {
				return mixed(withSchema)
			}
			var kc *KindConflict
			if err := root.ObserveLine(ev.Row); errors.As(err, &kc) {
				return fmt.Errorf("field %s holds both %s and %s values; write the events with their schema (the converter's schemas.enable=true), which types every column", kc.Path, kc.Was, kc.Is)
			} else if err != nil {
				return err
			}
			return nil
		}
		if withSchema < 0 {
			withSchema = at
		}
		if without >= 0 {
			return mixed(without)
		}
		for _, f := range ev.Fields {
			i, ok := seenAt[f.Name]
			if !ok {
				seenAt[f.Name] = len(typed)
				typed = append(typed, f)
				continue
			}
			if !arrow.TypeEqual(typed[i].Type, f.Type) {
				return fmt.Errorf("column %q is %s here but %s in the schema of earlier events; split the input where its type changes", f.Name, f.Type, typed[i].Type)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	fields := typed
	var asText []string
	if !root.Empty() {
		var inferred *arrow.Schema
		inferred, asText = AsTable(root.Schema(), table, true)
		fields = inferred.Fields()
	}
	return arrow.NewSchema(append(fields, debezium.MetaFields()...), nil), asText, nil
}

// DebeziumRow is NewReader's row function for Debezium events: the flat
// row of an event, nil for a tombstone.
func DebeziumRow() func([]byte) ([]byte, error) {
	dec := debezium.NewDecoder()
	return func(b []byte) ([]byte, error) {
		ev, err := dec.Decode(b)
		if errors.Is(err, debezium.ErrTombstone) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return ev.Flat(), nil
	}
}
