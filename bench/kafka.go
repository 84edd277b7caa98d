package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	_ "github.com/floe-io/floe/source/kafka" // registers the "kafka" source
)

// KafkaSpec describes the Kafka benchmark's topic: Messages JSON messages
// with ids 0 to Messages-1, message i in partition i mod Partitions.
type KafkaSpec struct {
	Messages   int64
	Partitions int
	Seed       uint64
}

// Kafka1M is the documented setting: 1M messages of about 200 bytes in 8
// partitions.
var Kafka1M = KafkaSpec{Messages: 1_000_000, Partitions: 8, Seed: 11}

// KafkaMessagesEnv shrinks (or grows) the Kafka benchmark's topic.
const KafkaMessagesEnv = "FLOE_BENCH_KAFKA_MESSAGES"

// KafkaSpecFromEnv is Kafka1M with the message count the environment sets.
func KafkaSpecFromEnv() (KafkaSpec, error) {
	s := Kafka1M
	if str := os.Getenv(KafkaMessagesEnv); str != "" {
		n, err := strconv.ParseInt(str, 10, 64)
		if err != nil || n < 1 {
			return s, fmt.Errorf("%s=%q: want a whole number of at least 1", KafkaMessagesEnv, str)
		}
		s.Messages = n
	}
	return s, nil
}

// kafkaTopic is the topic every contender reads.
const kafkaTopic = "events"

// kafkaEpochMs is the first message's timestamp, 2026-01-01 UTC.
const kafkaEpochMs = 1_767_225_600_000

var (
	kafkaEvents    = []string{"view", "click", "add_to_cart", "checkout", "purchase", "search"}
	kafkaCountries = []string{"DE", "FR", "US", "GB", "JP", "BR", "IN", "NL"}
)

// KafkaMessage is message id's value, a function of the seed and the id
// alone: an event of about 200 bytes with an id, a timestamp, strings and
// numbers.
func KafkaMessage(seed uint64, id int64) []byte {
	h := mix64(seed<<40 ^ uint64(id))
	ts := time.UnixMilli(kafkaEpochMs + id*7).UTC().Format("2006-01-02T15:04:05.000Z")
	return fmt.Appendf(make([]byte, 0, 224),
		`{"id":%d,"ts":"%s","user":"user-%06d","event":"%s","page":"/products/%05d","country":"%s","amount":%d.%02d,"qty":%d,"session":"%016x","campaign":"spring-%02d"}`,
		id, ts, h%1_000_000, kafkaEvents[(h>>20)%uint64(len(kafkaEvents))], (h>>24)%100_000,
		kafkaCountries[(h>>41)%uint64(len(kafkaCountries))], (h>>44)%1000, (h>>54)%100, 1+(h>>60), mix64(h), (h>>8)%40)
}

// KafkaTopic is an in-process Kafka cluster (franz-go's kfake) holding the
// benchmark's topic.
type KafkaTopic struct {
	KafkaSpec
	// Bytes is the size of the message values produced.
	Bytes   int64
	cluster *kfake.Cluster
}

// StartKafka starts a cluster and produces the spec's messages into it.
func StartKafka(ctx context.Context, s KafkaSpec) (*KafkaTopic, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(s.Partitions), kafkaTopic))
	if err != nil {
		return nil, err
	}
	k := &KafkaTopic{KafkaSpec: s, cluster: c}
	if err := k.produce(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("produce %d messages: %w", s.Messages, err)
	}
	return k, nil
}

// Addr is the cluster's bootstrap servers' list.
func (k *KafkaTopic) Addr() string { return strings.Join(k.cluster.ListenAddrs(), ",") }

// Close stops the cluster.
func (k *KafkaTopic) Close() { k.cluster.Close() }

func (k *KafkaTopic) produce(ctx context.Context) (err error) {
	k.Bytes, err = ProduceKafka(ctx, k.cluster.ListenAddrs(), kafkaTopic, k.KafkaSpec)
	return err
}

// ProduceKafka produces the spec's messages into topic, round-robin over
// its partitions, and returns the size of their values.
func ProduceKafka(ctx context.Context, addrs []string, topic string, s KafkaSpec) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var mu sync.Mutex
	var first error
	var bytes int64
	for id := range s.Messages {
		v := KafkaMessage(s.Seed, id)
		bytes += int64(len(v))
		cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(id % int64(s.Partitions)), Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				first = firstErr(first, err)
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, err
	}
	return bytes, first
}

func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// KafkaResult is one contender's read of the whole topic. Messages is
// counted by the contender's output: the rows of floe's table read back,
// the records the bare consumer received.
type KafkaResult struct {
	Contender string
	Messages  int64
	// Bytes is the size of the message values read.
	Bytes int64
	// Files is the number of data files floe wrote; 0 for the consumer.
	Files int
	Cost
}

// MessagesPerSec is the wall-clock throughput.
func (r KafkaResult) MessagesPerSec() float64 { return float64(r.Messages) / r.Wall.Seconds() }

// MessagesPerCPUSec is the throughput per CPU-second.
func (r KafkaResult) MessagesPerCPUSec() float64 { return float64(r.Messages) / r.CPU.Seconds() }

// KafkaContender is one way of reading the topic; Run writes under work,
// a fresh empty directory.
type KafkaContender struct {
	Name string
	Run  func(ctx context.Context, k *KafkaTopic, work string) (KafkaResult, error)
}

// KafkaContenders are measured side by side by BenchmarkKafkaIngest, in
// this order.
var KafkaContenders = []KafkaContender{
	{Name: "floe", Run: FloeKafka},
	{Name: "floe-schema", Run: FloeKafkaSchema},
	{Name: "franz-go consume", Run: BareConsume},
	{Name: "arrow-go consumer", Run: ArrowConsume},
}

// kafkaSchema is the messages' columns as a user would declare them in
// source.schema.
var kafkaSchema = []config.Column{
	{Name: "id", Type: "long"}, {Name: "ts", Type: "timestamptz"}, {Name: "user", Type: "string"},
	{Name: "event", Type: "string"}, {Name: "page", Type: "string"}, {Name: "country", Type: "string"},
	{Name: "amount", Type: "double"}, {Name: "qty", Type: "long"}, {Name: "session", Type: "string"},
	{Name: "campaign", Type: "string"},
}

// kafkaArrowSchema is kafkaSchema as Arrow types, ts a timestamp with a
// zone as floe types a timestamptz.
var kafkaArrowSchema = func() *arrow.Schema {
	types := map[string]arrow.DataType{
		"long": arrow.PrimitiveTypes.Int64, "double": arrow.PrimitiveTypes.Float64, "string": arrow.BinaryTypes.String,
		"timestamptz": &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	}
	fields := make([]arrow.Field, len(kafkaSchema))
	for i, c := range kafkaSchema {
		fields[i] = arrow.Field{Name: c.Name, Type: types[c.Type], Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}()

// kafkaConfig is the pipeline a user would write for the topic: the kafka
// source in json format from the earliest offsets, available-now, a new
// table in the embedded SQLite warehouse, everything else default.
func kafkaConfig(k *KafkaTopic, work string) (*config.Pipeline, error) {
	cfg, err := sourceConfig("", work, 0)
	if err != nil {
		return nil, err
	}
	cfg.Source.Type = "kafka"
	cfg.Source.Format = "json"
	cfg.Source.Options = map[string]string{"kafka.bootstrap.servers": k.Addr(), "subscribe": kafkaTopic}
	return cfg, nil
}

// FloeKafka reads the whole topic into a new table with a floe pipeline
// (library call: Open + Run), then reads the table's ids back with
// iceberg-go's scan: it must hold every message's id exactly once.
func FloeKafka(ctx context.Context, k *KafkaTopic, work string) (KafkaResult, error) {
	return floeKafka(ctx, "floe", k, work, nil)
}

// FloeKafkaSchema is FloeKafka with the columns given in source.schema,
// which shows in the same run what inferring them from the messages costs.
func FloeKafkaSchema(ctx context.Context, k *KafkaTopic, work string) (KafkaResult, error) {
	return floeKafka(ctx, "floe-schema", k, work, kafkaSchema)
}

// floeKafka runs floe over the topic, with the columns of schema when
// given.
func floeKafka(ctx context.Context, name string, k *KafkaTopic, work string, schema []config.Column) (KafkaResult, error) {
	cfg, err := kafkaConfig(k, work)
	if err != nil {
		return KafkaResult{}, err
	}
	cfg.Source.Schema = schema
	var cat catalog.Catalog
	cost, err := timed(ctx, func() (err error) {
		cat, _, err = runFloe(ctx, cfg, nil)
		return err
	})
	if err != nil {
		return KafkaResult{}, fmt.Errorf("%s: %w", name, err)
	}
	defer closeCatalog(cat)
	tr, err := tableResult(ctx, name, cat, cost)
	if err != nil {
		return KafkaResult{}, err
	}
	ids, err := fixture.ReadIDs(ctx, cat, strings.Join(benchTable, "."), "id")
	if err != nil {
		return KafkaResult{}, fmt.Errorf("%s: read the table's ids: %w", name, err)
	}
	if msg := fixture.Exact(ids, 0, k.Messages); msg != "" {
		return KafkaResult{}, fmt.Errorf("%s: the table does not hold each message once: %s", name, msg)
	}
	var rows int64
	for _, n := range ids {
		rows += int64(n)
	}
	if rows != tr.Rows {
		return KafkaResult{}, fmt.Errorf("%s: the scan read %d rows, the manifests count %d", name, rows, tr.Rows)
	}
	return KafkaResult{Contender: name, Messages: rows, Bytes: k.Bytes, Files: tr.Files, Cost: cost}, nil
}

// BareConsume is the limit: one franz-go consumer reading every record of
// the topic from the start and dropping it, counting records and bytes.
func BareConsume(ctx context.Context, k *KafkaTopic, _ string) (KafkaResult, error) {
	res := KafkaResult{Contender: "franz-go consume"}
	cost, err := timed(ctx, func() error {
		return consume(ctx, k, func() bool { return res.Messages < k.Messages }, func(fs kgo.Fetches) error {
			fs.EachRecord(func(r *kgo.Record) {
				res.Messages++
				res.Bytes += int64(len(r.Value))
			})
			return nil
		})
	})
	if err != nil {
		return KafkaResult{}, fmt.Errorf("franz-go consume: %w", err)
	}
	if res.Messages != k.Messages || res.Bytes != k.Bytes {
		return KafkaResult{}, fmt.Errorf("franz-go consume: read %d messages of %d bytes, the topic holds %d of %d", res.Messages, res.Bytes, k.Messages, k.Bytes)
	}
	res.Cost = cost
	return res, nil
}

// consume reads the topic from the start with one franz-go consumer,
// handing each poll to each, while more is wanted.
func consume(ctx context.Context, k *KafkaTopic, more func() bool, each func(kgo.Fetches) error) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.cluster.ListenAddrs()...), kgo.ConsumeTopics(kafkaTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	for more() {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = firstErr(ferr, fmt.Errorf("fetch %s/%d: %w", t, p, err)) })
		if ferr != nil {
			return ferr
		}
		if err := each(fs); err != nil {
			return err
		}
	}
	return nil
}

// ArrowConsume is the Go consumer a programmer would write to turn the
// topic into Arrow records: franz-go polls from the start, and each poll's
// values, one a line, are decoded by arrow-go's JSON reader into one
// record of the messages' columns (kafkaArrowSchema). It counts the rows
// and sums their ids, and every ts must be set, so that a message lost or
// decoded wrong fails the run.
func ArrowConsume(ctx context.Context, k *KafkaTopic, _ string) (KafkaResult, error) {
	const name = "arrow-go consumer"
	res := KafkaResult{Contender: name}
	var idSum int64
	cost, err := timed(ctx, func() error {
		var lines bytes.Buffer
		return consume(ctx, k, func() bool { return res.Messages < k.Messages }, func(fs kgo.Fetches) error {
			lines.Reset()
			fs.EachRecord(func(r *kgo.Record) {
				lines.Write(r.Value)
				lines.WriteByte('\n')
				res.Bytes += int64(len(r.Value))
			})
			rdr := array.NewJSONReader(bytes.NewReader(lines.Bytes()), kafkaArrowSchema, array.WithChunk(-1))
			for rdr.Next() {
				rec := rdr.RecordBatch()
				if n := rec.Column(1).NullN(); n > 0 {
					rdr.Release()
					return fmt.Errorf("%d messages decoded without their ts", n)
				}
				for _, id := range rec.Column(0).(*array.Int64).Int64Values() {
					idSum += id
				}
				res.Messages += rec.NumRows()
			}
			err := rdr.Err()
			rdr.Release()
			if err != nil {
				return fmt.Errorf("decode: %w", err)
			}
			return nil
		})
	})
	if err != nil {
		return KafkaResult{}, fmt.Errorf("%s: %w", name, err)
	}
	if want := k.Messages * (k.Messages - 1) / 2; res.Messages != k.Messages || res.Bytes != k.Bytes || idSum != want {
		return KafkaResult{}, fmt.Errorf("%s: decoded %d messages of %d bytes, ids summing to %d; the topic holds %d of %d, ids summing to %d",
			name, res.Messages, res.Bytes, idSum, k.Messages, k.Bytes, want)
	}
	res.Cost = cost
	return res, nil
}
