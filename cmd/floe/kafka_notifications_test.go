package main_test

import (
	"crypto/md5"
	"encoding/hex"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
	"github.com/floe-io/floe/internal/s3test"
)

var notifiedObjects = flag.Int("notified-objects", 3000, "objects TestKafkaClusterObjectNotifications announces (the acceptance run uses 100000)")

// announce is an S3 event notification of an object created, as S3 sends
// it to SQS (and MinIO and Ceph RGW publish it), keyed by bucket/key as
// MinIO keys it; the partition is the key's hash.
func announce(srv *s3test.Server, topic string, partitions int32, key string, body []byte, seq int) *kgo.Record {
	sum := md5.Sum(body)
	v := fmt.Sprintf(`{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":%q},"object":{"key":%q,"size":%d,"eTag":%q,"sequencer":"%016X"}}}]}`,
		srv.Bucket, key, len(body), hex.EncodeToString(sum[:]), seq)
	h := fnv.New32a()
	h.Write([]byte(srv.Bucket + "/" + key))
	return &kgo.Record{Topic: topic, Partition: int32(h.Sum32() % uint32(partitions)), Key: []byte(srv.Bucket + "/" + key), Value: []byte(v)}
}

// putAnnounced uploads n objects of one JSON row each (ids first..), 16
// at a time, and returns their notifications in upload order, a tenth of
// them announced twice (the second a few notifications later, as an
// at-least-once notifier repeats one), shuffled within each partition by
// nothing: the topic keeps each partition's order.
func putAnnounced(t *testing.T, srv *s3test.Server, topic string, partitions int32, first, n int) []*kgo.Record {
	t.Helper()
	bodies := make([][]byte, n)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	sem := make(chan struct{}, 16)
	for i := range n {
		bodies[i] = fmt.Appendf(nil, "{\"id\":%d,\"v\":\"object %d\"}\n", first+i, first+i)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := srv.Put(fmt.Sprintf("landing/%08d.json", first+i), bodies[i]); err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(first), 9))
	var recs []*kgo.Record
	var again []*kgo.Record
	for i := range n {
		r := announce(srv, topic, partitions, fmt.Sprintf("landing/%08d.json", first+i), bodies[i], first+i)
		recs = append(recs, r)
		if rng.IntN(10) == 0 {
			dup := *r
			again = append(again, &dup)
		}
		if len(again) > 0 && rng.IntN(3) == 0 {
			recs = append(recs, again[0])
			again = again[1:]
		}
	}
	return append(recs, again...)
}

// s3Props are the catalog properties that reach the server, as flags.
func s3Props(srv *s3test.Server) []string {
	var out []string
	for k, v := range srv.Properties() {
		out = append(out, "-p", k+"="+v)
	}
	return out
}

// A topic of S3 event notifications (duplicates among them, one on another
// partition, an S3 test event, a removal, a notification of an object
// since deleted) is read as
// the objects it announces: every object's rows land once, read back by
// iceberg-go; a second run adds nothing.
func TestKafkaObjectNotifications(t *testing.T) {
	t.Parallel()
	s := newS3Env(t)
	c := kafkatest.Start(t, "notes", 3)
	topic := c.Name("notes")
	recs := putAnnounced(t, s.srv, topic, 3, 0, 200)
	// The same notification on another partition, in the same batch.
	moved := *recs[0]
	moved.Partition = (moved.Partition + 1) % 3
	recs = append(recs, &moved,
		&kgo.Record{Topic: topic, Partition: 0, Value: []byte(`{"Service":"Amazon S3","Event":"s3:TestEvent","Bucket":"b"}`)},
		&kgo.Record{Topic: topic, Partition: 1, Value: []byte(`{"Records":[{"eventName":"ObjectRemoved:Delete","s3":{"bucket":{"name":"b"},"object":{"key":"landing/00000001.json"}}}]}`)},
		announce(s.srv, topic, 3, "landing/gone.json", []byte("{}\n"), 999))
	c.Produce(t, recs...)
	args := append([]string{"stream", "--source-type", "kafka", "-o", "kafka.bootstrap.servers=" + c.Addr(), "-o", "subscribe=" + topic, "-o", "objectNotifications=s3",
		"--format", "json", "--table", "db.events", "--checkpoint", s.Ckpt, "--trigger", "available-now"}, s3Props(s.srv)...)
	r := s.OK(args...)
	if !strings.Contains(r.Stderr, "landing/gone.json, announced, is gone") {
		t.Errorf("no warning names the announced object that is gone:\n%s", r.Stderr)
	}
	ids := s.TableIDs("db.events")
	if msg := fixture.Exact(ids, 0, 200); msg != "" {
		t.Fatalf("%d notifications of 200 objects: %s", len(recs), msg)
	}
	s.OK(args...)
	if msg := fixture.Exact(s.TableIDs("db.events"), 0, 200); msg != "" || len(s.Snapshots("db.events")) != 1 {
		t.Fatalf("after a second run: %s, %d snapshots", msg, len(s.Snapshots("db.events")))
	}
}

// Three workers of one consumer group share a topic of S3 event
// notifications, a tenth of them duplicates, announcing objects on an S3
// server as they are uploaded: each object lands once. Run with
// -notified-objects 100000 for the full size.
func TestKafkaClusterObjectNotifications(t *testing.T) {
	t.Parallel()
	s := newS3Env(t)
	const partitions = 6
	c := kafkatest.Start(t, "events", partitions)
	topic := c.Name("events")
	n := *notifiedObjects
	extra := append([]string{"-o", "objectNotifications=s3", "--trigger", "processing-time=1s"}, s3Props(s.srv)...)
	began := time.Now()
	var workers []*clusterWorker
	for i := range 3 {
		workers = append(workers, startClusterWorker(s.env, c, fmt.Sprint(i), extra...))
	}
	const waves = 5
	announced := 0
	for w := range waves {
		first, count := w*n/waves, (w+1)*n/waves-w*n/waves
		recs := putAnnounced(t, s.srv, topic, partitions, first, count)
		c.Produce(t, recs...)
		announced += len(recs)
	}
	fixture.WaitFor(t, 20*time.Minute, "every object in the table", func() bool { return len(s.TableIDs("db.events")) >= n })
	elapsed := time.Since(began)
	stopWorkers(t, running(workers)...)
	if msg := fixture.Exact(s.TableIDs("db.events"), 0, int64(n)); msg != "" {
		t.Fatalf("%d notifications of %d objects: %s", announced, n, msg)
	}
	t.Logf("%d objects, %d notifications (%d duplicates), 3 workers: all in the table once after %v", n, announced, announced-n, elapsed.Round(time.Second))
}
