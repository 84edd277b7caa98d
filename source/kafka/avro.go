package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/floe-io/floe/internal/avrorows"
)

// Schema is the Avro schema registered under id, with the named types of
// the schemas it references; a 404 is errUnknownSchema.
func (r *Registry) Schema(ctx context.Context, id uint32) (*avrorows.Schema, error) {
	d, err := r.built(ctx, int(id), "avro", "", func(reg registered) (any, error) {
		if err := wantType(reg.schema, sr.TypeAvro); err != nil {
			return nil, err
		}
		return avrorows.ParseWithReferences(reg.schema.Schema, refTexts(reg))
	})
	if err != nil {
		return nil, err
	}
	return d.(*avrorows.Schema), nil
}

// envelope is the Debezium envelope schema registered under id.
func (r *Registry) envelope(ctx context.Context, id int) (*avrorows.Envelope, error) {
	d, err := r.built(ctx, id, "debezium-avro", "", func(reg registered) (any, error) {
		if err := wantType(reg.schema, sr.TypeAvro); err != nil {
			return nil, err
		}
		return avrorows.ParseDebezium(reg.schema.Schema, refTexts(reg))
	})
	if err != nil {
		return nil, err
	}
	return d.(*avrorows.Envelope), nil
}

// refTexts are the texts of the schemas reg references, each after those
// it references.
func refTexts(reg registered) []string {
	out := make([]string, len(reg.refs))
	for i, r := range reg.refs {
		out[i] = r.schema.Schema
	}
	return out
}
