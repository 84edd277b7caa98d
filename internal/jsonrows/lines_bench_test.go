package jsonrows_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/floe-io/floe/bench"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/jsonrows"
)

// BenchmarkJSONLines is the file source's JSON-lines path on the Kafka
// benchmark's messages: the columns inferred over the whole input, then
// the rows read.
func BenchmarkJSONLines(b *testing.B) {
	var in bytes.Buffer
	for id := range int64(200_000) {
		in.Write(bench.KafkaMessage(1, id))
		in.WriteByte('\n')
	}
	b.SetBytes(int64(in.Len()))
	for b.Loop() {
		root := jsonrows.NewObject()
		for line := range bytes.Lines(in.Bytes()) {
			if err := root.ObserveLine(bytes.TrimSpace(line)); err != nil {
				b.Fatal(err)
			}
		}
		r := jsonrows.NewReader(bytes.NewReader(in.Bytes()), nil, root.Schema(), nil, nil)
		rows := 0
		for r.Next() {
			rows += int(r.RecordBatch().NumRows())
		}
		if r.Err() != nil || rows != 200_000 {
			b.Fatal(r.Err(), rows)
		}
		r.Release()
	}
}

// BenchmarkJSONLinesTyped reads lines of the events shape with the
// columns declared, the timestamp typed: the read of a landing file with
// source.schema.
func BenchmarkJSONLinesTyped(b *testing.B) {
	var in bytes.Buffer
	for id := range 200_000 {
		fmt.Fprintf(&in, `{"id":%d,"ts":"2024-01-01T%02d:%02d:%02d.%06d","category":"cat-%d","v":%v,"payload":"%040d"}`+"\n",
			id, id/3600%24, id/60%60, id%60, id*7%1_000_000, id*31%100, float64(id)/7, id*1_000_003)
	}
	schema, err := jsonrows.Explicit([]config.Column{{Name: "id", Type: "long"}, {Name: "ts", Type: "timestamp"},
		{Name: "category", Type: "string"}, {Name: "v", Type: "double"}, {Name: "payload", Type: "string"}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(in.Len()))
	for b.Loop() {
		r := jsonrows.NewReader(bytes.NewReader(in.Bytes()), nil, schema, nil, nil)
		rows := 0
		for r.Next() {
			rows += int(r.RecordBatch().NumRows())
		}
		if r.Err() != nil || rows != 200_000 {
			b.Fatal(r.Err(), rows)
		}
		r.Release()
	}
}
