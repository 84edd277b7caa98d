package files

import (
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/floe-io/floe/internal/jsonrows"
)

// deriveDebezium reads every event of a debezium-json file once for its
// columns (jsonrows.DebeziumSchema).
func (p *filePart) deriveDebezium() error {
	events := func(fn func(at int64, b []byte) error) error {
		return eachLine(p.text, asideLines(p.lineAside(), false, func(line int, b []byte) error { return fn(int64(line), b) }))
	}
	schema, asText, err := jsonrows.DebeziumSchema(events, p.table, "line")
	if err != nil {
		return err
	}
	p.schema, p.asText = schema, asText
	return nil
}

// openDebezium reads the file's events as flat rows of the columns derive
// found; tombstones hold no row.
func (p *filePart) openDebezium() (array.RecordReader, error) {
	br, f, err := p.text()
	if err != nil {
		return nil, err
	}
	r := jsonrows.NewReader(br, f, p.schema, p.asText, jsonrows.DebeziumRow())
	if aside := p.lineAside(); aside != nil {
		r.SetAside(aside, p.lineSetAside)
	}
	return r, nil
}
