package main_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// Messages whose values infer other types than the table's columns are
// read again as the table's: numbers in a string column keep their JSON
// text, as the first batch's strings made it.
func TestKafkaJSONNumbersIntoStringColumn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 2)
	produceIDs(t, c, c.Name("events"), 2, 0, 100)
	e.OK(kafkaStream(e, c)...)
	recs := make([]*kgo.Record, 100)
	for i := range recs {
		id := 100 + i
		v := fmt.Sprint(id * 10)
		if i%3 == 0 {
			v += ".5"
		}
		recs[i] = &kgo.Record{Topic: c.Name("events"), Partition: int32(id % 2), Value: fmt.Appendf(nil, `{"id":%d,"v":%s}`, id, v)}
	}
	c.Produce(t, recs...)
	e.OK(kafkaStream(e, c)...)
	if msg := fixture.Exact(e.TableIDs("db.events"), 0, 200); msg != "" {
		t.Fatal(msg)
	}
	vs := e.TableKeyed("db.events", "id", "v")
	for id, want := range map[int64]string{5: "m5", 100: "1000.5", 101: "1010", 198: "1980", 199: "1990.5"} {
		if !slices.Equal(vs[id], []string{want}) {
			t.Errorf("id %d: v %q, want %q", id, vs[id], want)
		}
	}
}
