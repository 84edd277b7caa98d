package jsonrows_test

import (
	"bytes"
	"testing"

	"github.com/floe-io/floe/bench"
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
