package kafka_test

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/kafkatest"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/kafka"
	"github.com/floe-io/floe/source/sourcetest"
)

// topic is a one-partition topic of JSON messages {"id":N}; with one
// partition, maxOffsetsPerTrigger is the exact row limit the suite checks.
type topic struct {
	c *kafkatest.Cluster
}

func (tp *topic) Open(t *testing.T, stateDir string) source.Source {
	t.Helper()
	src, err := kafka.New(config.Source{Type: "kafka", Format: "json", Options: map[string]string{
		"kafka.bootstrap.servers": tp.c.Addr(), "subscribe": tp.c.Name("events"),
	}}, source.Env{StateDir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func (tp *topic) Append(t *testing.T, first int64, n int) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: tp.c.Name("events"), Value: fmt.Appendf(nil, `{"id":%d}`, first+int64(i))}
	}
	tp.c.Produce(t, recs...)
}

func TestContract(t *testing.T) {
	sourcetest.Run(t, sourcetest.Harness{
		New: func(t *testing.T) sourcetest.Input {
			return &topic{c: kafkatest.Start(t, "events", 1)}
		},
		Limits: sourcetest.Limits{MaxRows: true},
		Claims: sourcetest.Capabilities{MetricsReporter: true, Recorder: true, Resumable: true, SchemaAware: true},
	})
}
