package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// cdcChange is one change event as produced: where it landed and what it
// does to its key.
type cdcChange struct {
	offset int64
	id     int64
	name   string
	del    bool
}

// cdcProducer writes Debezium change events of a set of keys, each key to
// the partition id % partitions as a producer keying by the primary key
// does, and keeps every change by partition and offset: the oracle.
type cdcProducer struct {
	mu      sync.Mutex
	changes map[int32][]cdcChange
	live    map[int64]string
	lsn     int64
	rng     *rand.Rand
	stop    func()
}

func startCDCProducer(t *testing.T, c *kafkatest.Cluster, partitions int32, keys int64, d time.Duration, n int) *cdcProducer {
	p := &cdcProducer{changes: map[int32][]cdcChange{}, live: map[int64]string{}, rng: rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))}
	p.stop = every(d, func() { p.produce(t, c, partitions, keys, n) })
	return p
}

// produce writes n changes of random keys: a key not live is created, a
// live one updated or, one time in five, deleted.
func (p *cdcProducer) produce(t *testing.T, c *kafkatest.Cluster, partitions int32, keys int64, n int) {
	recs := make([]*kgo.Record, n)
	changes := make([]cdcChange, n)
	for i := range recs {
		id := p.rng.Int64N(keys)
		p.lsn++
		ch := cdcChange{id: id, name: fmt.Sprintf("n%d-%d", id, p.lsn)}
		op := "c"
		if _, ok := p.live[id]; ok {
			op = "u"
			if p.rng.IntN(5) == 0 {
				op, ch.del = "d", true
			}
		}
		if ch.del {
			delete(p.live, id)
		} else {
			p.live[id] = ch.name
		}
		recs[i] = &kgo.Record{Topic: c.Name("events"), Partition: int32(id % int64(partitions)), Key: fmt.Append(nil, id), Value: []byte(pgEvent(op, id, ch.name, p.lsn, false))}
		changes[i] = ch
	}
	c.Produce(t, recs...)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, r := range recs {
		changes[i].offset = r.Offset
		p.changes[r.Partition] = append(p.changes[r.Partition], changes[i])
	}
}

// at is the table the changes before ends make (all of them when ends is
// nil), one "id|name" row per live key, sorted.
func (p *cdcProducer) at(ends map[int32]int64) []string {
	rows, _ := p.known(ends)
	return rows
}

// known is at, and whether the producer has recorded every change before
// ends yet: a commit may read a message before the producer hears that
// it was written.
func (p *cdcProducer) known(ends map[int32]int64) ([]string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	complete := true
	for part, end := range ends {
		chs := p.changes[part]
		if end > 0 && (len(chs) == 0 || chs[len(chs)-1].offset+1 < end) {
			complete = false
		}
	}
	state := map[int64]string{}
	for part, chs := range p.changes {
		for _, ch := range chs {
			if end, ok := ends[part]; ends != nil && (!ok || ch.offset >= end) {
				break
			}
			if ch.del {
				delete(state, ch.id)
			} else {
				state[ch.id] = ch.name
			}
		}
	}
	out := make([]string, 0, len(state))
	for id, name := range state {
		out = append(out, fmt.Sprintf("%d|%s", id, name))
	}
	slices.Sort(out)
	return out, complete
}

// total is the number of changes produced.
func (p *cdcProducer) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, chs := range p.changes {
		n += len(chs)
	}
	return n
}

// Three workers of one consumer group merge Debezium changes keyed by id
// into a table in mode upsert while the coordinator is killed and a worker
// is stopped past its session timeout: after every commit the table,
// read by iceberg-go at that snapshot, is exactly what the changes up to
// the offsets its record names make, and there is at most one commit per
// interval. Maintenance runs as it does by default (compaction of files
// with deleted rows, expiry), so snapshots are checked as they come.
func TestKafkaClusterUpsert(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		e := newEnv(t)
		const partitions = 6
		c := b.Start(t, "events", partitions)
		producer := startCDCProducer(t, c, partitions, 400, 50*time.Millisecond, 40)
		began := time.Now()
		upserts := []string{"--format", "debezium-json", "--mode", "upsert", "--identifier-fields", "id"}
		var workers []*clusterWorker
		for i := range 3 {
			workers = append(workers, startClusterWorker(e, c, fmt.Sprint(i), upserts...))
		}
		fixture.WaitFor(t, 60*time.Second, "the first commit", func() bool {
			r := e.Run("table", "snapshots", "db.events", "--json")
			return r.Code == 0 && strings.Contains(r.Stdout, "snapshot_id")
		})
		check := &snapshotChecker{e: e, name: "db.events", oracle: producer.known, checked: map[int64]bool{}}
		watch := func(d time.Duration) {
			for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
				check.next(t)
			}
		}
		watch(2 * time.Second)

		churn(t, workers, watch)
		producer.stop()

		want := producer.at(nil)
		var last []string
		for deadline := time.Now().Add(90 * time.Second); ; watch(300 * time.Millisecond) {
			if last = dbzRows(t, e, "db.events", "id", "name"); slices.Equal(last, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 90 s the table has %d rows, want %d (%d changes produced)", len(last), len(want), producer.total())
			}
		}
		elapsed := time.Since(began)
		stopWorkers(t, running(workers)...)
		check.next(t)

		commits := 0
		for _, cm := range reportedCommits(workers) {
			if cm.SnapshotID == 0 {
				continue
			}
			commits++
			if !check.checked[cm.SnapshotID] {
				t.Errorf("worker %s committed snapshot %d, which was expired before it was checked", cm.worker, cm.SnapshotID)
			}
		}
		intervals := int(elapsed / clusterInterval)
		if commits > intervals+len(workers) {
			t.Errorf("%d commits in %d intervals: more than one per interval", commits, intervals)
		}
		if d := os.Getenv("FLOE_TEST_DUMP"); d != "" {
			for _, w := range workers {
				_ = os.WriteFile(filepath.Join(d, string(b)+"-worker-"+w.name+".log"), []byte(w.stderr.String()), 0o644)
			}
		}
		t.Logf("%d changes of %d keys; %d commits in %v, each equal to the oracle at its offsets", producer.total(), len(want), commits, elapsed.Round(time.Second))
	})
}

// reportedCommit is one commit a worker's progress reports.
type reportedCommit struct {
	worker     string
	SnapshotID int64 `json:"snapshotId"`
	Events     int   `json:"events"`
}

// reportedCommits are the commits the workers' progress records report.
func reportedCommits(workers []*clusterWorker) []reportedCommit {
	var out []reportedCommit
	for _, w := range workers {
		for _, line := range strings.Split(w.stderr.String(), "\n") {
			var pr struct {
				Cluster *struct {
					Committed *reportedCommit `json:"committed"`
				} `json:"cluster"`
			}
			if json.Unmarshal([]byte(line), &pr) != nil || pr.Cluster == nil || pr.Cluster.Committed == nil {
				continue
			}
			cm := *pr.Cluster.Committed
			cm.worker = w.name
			out = append(out, cm)
		}
	}
	return out
}

// snapshotChecker reads each new commit of a table with iceberg-go at its
// snapshot and compares its rows with what the oracle makes of the
// offsets the snapshot's record names.
type snapshotChecker struct {
	e       *env
	name    string
	oracle  func(ends map[int32]int64) (rows []string, known bool)
	checked map[int64]bool
}

func (c *snapshotChecker) next(t *testing.T) {
	t.Helper()
	cat, _ := fixture.CatalogAt(t, c.e.Warehouse)
	tbl := c.e.loadTable(context.Background(), cat, c.name)
	for _, s := range tbl.Metadata().Snapshots() {
		if c.checked[s.SnapshotID] || s.Summary == nil {
			continue
		}
		off, ok := s.Summary.Properties["floe.offset"]
		if !ok {
			// Maintenance rewrites files and keeps the rows; the next
			// commit's check covers what it did.
			continue
		}
		var offsets map[string]map[string]int64
		if err := json.Unmarshal([]byte(off), &offsets); err != nil {
			t.Fatalf("snapshot %d: floe.offset %q: %v", s.SnapshotID, off, err)
		}
		ends := map[int32]int64{}
		for _, parts := range offsets {
			for p, n := range parts {
				part, err := strconv.ParseInt(p, 10, 32)
				if err != nil {
					t.Fatalf("snapshot %d: floe.offset %q: %v", s.SnapshotID, off, err)
				}
				ends[int32(part)] = n
			}
		}
		want, known := c.oracle(ends)
		if !known {
			continue
		}
		got := rowsAt(t, tbl, s.SnapshotID, "id", "name")
		if !slices.Equal(got, want) {
			t.Fatalf("snapshot %d (offsets %v): %d rows, want %d; first differences: %s", s.SnapshotID, ends, len(got), len(want), firstDiff(got, want))
		}
		c.checked[s.SnapshotID] = true
	}
}

// rowsAt reads columns of tbl at a snapshot through iceberg-go's scan, as
// dbzRows does.
func rowsAt(t *testing.T, tbl *table.Table, snapshot int64, cols ...string) []string {
	t.Helper()
	_, recs, err := tbl.Scan(table.WithSnapshotID(snapshot), table.WithSelectedFields(cols...)).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatalf("scan snapshot %d: %v", snapshot, err)
	}
	var out []string
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			vals := make([]string, len(cols))
			for c := range cols {
				vals[c] = rec.Column(c).ValueStr(i)
			}
			out = append(out, strings.Join(vals, "|"))
		}
		rec.Release()
	}
	slices.Sort(out)
	return out
}

// firstDiff names up to five rows in one list and not the other.
func firstDiff(got, want []string) string {
	var d []string
	for _, r := range got {
		if _, ok := slices.BinarySearch(want, r); !ok && len(d) < 5 {
			d = append(d, "extra "+r)
		}
	}
	for _, r := range want {
		if _, ok := slices.BinarySearch(got, r); !ok && len(d) < 10 {
			d = append(d, "missing "+r)
		}
	}
	return strings.Join(d, ", ")
}
