package files

import (
	"bufio"
	"errors"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/floe-io/floe/internal/debezium"
	"github.com/floe-io/floe/internal/jsonrows"
)

// deriveDebezium reads every event of a debezium-json file once. The rows'
// columns are the union of the row images' columns, typed by the events'
// Connect schemas or, for events written without one, inferred as JSON
// lines are (a column the table has read as its type); the three metadata
// columns follow.
func (p *filePart) deriveDebezium() error {
	dec := debezium.NewDecoder()
	root := jsonrows.NewObject()
	var (
		typed               []arrow.Field
		seenAt              = map[string]int{} // a typed column's index in typed
		withSchema, without int                // the first line of each kind
	)
	err := eachLine(p.entry.Path, func(line int, b []byte) error {
		ev, err := dec.Decode(b)
		if errors.Is(err, debezium.ErrTombstone) {
			return nil
		}
		if err != nil {
			return err
		}
		if ev.Fields == nil {
			if without == 0 {
				without = line
			}
			if withSchema > 0 {
				return mixedSchemas(withSchema)
			}
			var kc *jsonrows.KindConflict
			if err := root.ObserveLine(ev.Row); errors.As(err, &kc) {
				return fmt.Errorf("field %s holds both %s and %s values; write the events with their schema (the converter's schemas.enable=true), which types every column", kc.Path, kc.Was, kc.Is)
			} else if err != nil {
				return err
			}
			return nil
		}
		if withSchema == 0 {
			withSchema = line
		}
		if without > 0 {
			return mixedSchemas(without)
		}
		for _, f := range ev.Fields {
			i, ok := seenAt[f.Name]
			if !ok {
				seenAt[f.Name] = len(typed)
				typed = append(typed, f)
				continue
			}
			if !arrow.TypeEqual(typed[i].Type, f.Type) {
				return fmt.Errorf("column %q is %s here but %s in the schema of earlier events; split the file where its type changes", f.Name, f.Type, typed[i].Type)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fields := typed
	if !root.Empty() {
		var inferred *arrow.Schema
		inferred, p.asText = jsonrows.AsTable(root.Schema(), p.table, true)
		fields = inferred.Fields()
	}
	p.schema = arrow.NewSchema(append(fields, debezium.MetaFields()...), nil)
	return nil
}

func mixedSchemas(other int) error {
	return fmt.Errorf("the events of one file must all come with their schema or all without (line %d differs); write the file with one converter setting (schemas.enable)", other)
}

// openDebezium reads the file's events as flat rows of the columns derive
// found; tombstones hold no row.
func (p *filePart) openDebezium() (array.RecordReader, error) {
	f, err := os.Open(p.entry.Path)
	if err != nil {
		return nil, err
	}
	dec := debezium.NewDecoder()
	br := bufio.NewReaderSize(f, 1<<20)
	skipBOM(br)
	return jsonrows.NewReader(br, f, p.schema, p.asText, func(b []byte) ([]byte, error) {
		ev, err := dec.Decode(b)
		if errors.Is(err, debezium.ErrTombstone) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return ev.Flat(), nil
	}), nil
}
