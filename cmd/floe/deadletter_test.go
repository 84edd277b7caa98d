package main_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/kafkatest"
)

// poisonEvery is how often a message or line is bad: 1 in 100.
const poisonEvery = 100

// poisonValue is record id's value: a good JSON object, or for one id in
// poisonEvery a bad one of three kinds, in turn: malformed JSON, a value
// over its int column's limit, and JSON that is no object.
func poisonValue(id int64) (value string, bad bool) {
	if id%poisonEvery != 37 {
		return fmt.Sprintf(`{"id":%d,"v":"m%d","n":%d}`, id, id, id%1000), false
	}
	switch (id / poisonEvery) % 3 {
	case 0:
		return fmt.Sprintf(`{"id":%d,"v":"cut short`, id), true
	case 1:
		return fmt.Sprintf(`{"id":%d,"v":"too big","n":%d}`, id, int64(1)<<40), true
	}
	return fmt.Sprintf(`[%d]`, id), true
}

// deadLetterPipeline writes a pipeline file reading source (its YAML
// lines) with the poison values' schema into db.events, bad records into
// db.events_dead; it returns the file's path.
func deadLetterPipeline(e *env, onBadRecord, trigger string, source ...string) string {
	e.T.Helper()
	deadLetter := ""
	if onBadRecord == "dead-letter" {
		deadLetter = "  dead-letter-table: db.events_dead\n"
	}
	yaml := fmt.Sprintf(`source:
%s
  schema:
    - {name: id, type: long}
    - {name: v, type: string}
    - {name: n, type: int}
sink:
  table: db.events
%son-bad-record: %s
trigger: %s
checkpoint: %s
`, "  "+strings.Join(source, "\n  "), deadLetter, onBadRecord, trigger, e.Ckpt)
	path := filepath.Join(e.Dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		e.T.Fatal(err)
	}
	return path
}

// checkDeadLetters asserts that every good id first..first+n-1 is in
// db.events once and every bad value in db.events_dead once, read by
// iceberg-go.
func checkDeadLetters(t *testing.T, e *env, n int64, where string) {
	t.Helper()
	ids := e.TableIDs("db.events")
	var wantBad []string
	for id := int64(0); id < n; id++ {
		v, bad := poisonValue(id)
		switch {
		case bad:
			wantBad = append(wantBad, v)
			if ids[id] != 0 {
				t.Fatalf("%s: bad record %d is in the table %d times", where, id, ids[id])
			}
		case ids[id] != 1:
			t.Fatalf("%s: good record %d is in the table %d times, want once", where, id, ids[id])
		}
	}
	if want := n - int64(len(wantBad)); int64(len(ids)) != want {
		t.Fatalf("%s: %d distinct ids in the table, want %d", where, len(ids), want)
	}
	got := dbzRows(t, e, "db.events_dead", "_floe_value")
	for i, v := range got {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			t.Fatalf("%s: dead letter value %q: %v", where, v, err)
		}
		got[i] = string(b)
	}
	slices.Sort(got)
	slices.Sort(wantBad)
	if !slices.Equal(got, wantBad) {
		t.Fatalf("%s: dead letters (%d):\n%s\nwant (%d):\n%s", where, len(got), strings.Join(got, "\n"), len(wantBad), strings.Join(wantBad, "\n"))
	}
}

// A topic with 1% poison messages (malformed JSON, a value over its
// column's limit, JSON that is no object), streamed with
// on-bad-record: dead-letter while a producer writes and floe is killed
// with SIGKILL 20 times: every good message lands once, every poison one
// is in the dead-letter table once, with its topic, partition and offset.
func TestFaultKafkaDeadLetters(t *testing.T) {
	t.Parallel()
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		e := newEnv(t)
		c := b.Start(t, "events", 4)
		topic := c.Name("events")
		produce := func(first, n int64) {
			recs := make([]*kgo.Record, n)
			for i := range recs {
				id := first + int64(i)
				v, _ := poisonValue(id)
				recs[i] = &kgo.Record{Topic: topic, Partition: int32(id % 4), Key: fmt.Appendf(nil, "k%d", id), Value: []byte(v)}
			}
			c.Produce(t, recs...)
		}
		source := []string{"type: kafka", "format: json", "options:", "  kafka.bootstrap.servers: " + c.Addr(), "  subscribe: " + topic, "  maxOffsetsPerTrigger: 500"}
		streaming := deadLetterPipeline(e, "dead-letter", "processing-time=100ms", source...)
		produced, kills := killWhileFeeding(t, e, rand.New(rand.NewPCG(35, 1)), produce, "run", streaming)
		r := e.OK("run", deadLetterPipeline(e, "dead-letter", "available-now", source...))
		if !strings.Contains(r.Stderr, "bad record") {
			t.Fatalf("the last run reports no bad records set aside:\n%s", r.Stderr)
		}
		checkDeadLetters(t, e, produced, fmt.Sprintf("after %d kills and %d messages", kills, produced))
		// Each dead letter names its message.
		for _, row := range dbzRows(t, e, "db.events_dead", "_floe_topic", "_floe_partition", "_floe_offset", "_floe_key", "_floe_error") {
			f := strings.Split(row, "|")
			if f[0] != topic || f[1] == "null" || f[2] == "null" || f[3] == "null" || f[4] == "" {
				t.Fatalf("dead letter %q does not name its topic, partition, offset, key and error", row)
			}
		}
	})
}

// With on-bad-record: fail (the default) the first poison message stops
// the run, told as a bad message with its topic, partition and offset,
// and nothing of the
// batch is committed.
func TestKafkaBadRecordFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 1)
	topic := c.Name("events")
	var recs []*kgo.Record
	for id := int64(0); id < 50; id++ {
		v, _ := poisonValue(id)
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(v)})
	}
	c.Produce(t, recs...)
	source := []string{"type: kafka", "format: json", "options:", "  kafka.bootstrap.servers: " + c.Addr(), "  subscribe: " + topic}
	r := e.Run("run", deadLetterPipeline(e, "fail", "available-now", source...))
	if r.Code != 1 || !strings.Contains(r.Stderr, fmt.Sprintf("bad message at kafka topic %s partition 0 offset 37: ", topic)) {
		t.Fatalf("want exit 1 naming the poison message's offset, got %s", r)
	}
	if strings.Contains(r.Stderr, "input file") {
		t.Fatalf("a bad Kafka message is told as a file:\n%s", r.Stderr)
	}
	if ids := e.TableIDs("db.events"); len(ids) != 0 {
		t.Fatalf("the failed batch left %d ids in the table", len(ids))
	}
}

// A landing directory whose JSON-lines files hold 1% bad lines, streamed
// with on-bad-record: dead-letter while files land and floe is killed 20
// times: every good line lands once, every bad one is in the dead-letter
// table once, with its file and line.
func TestFaultLandingDeadLetters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	land := func(first, n int64) {
		var b strings.Builder
		for id := first; id < first+n; id++ {
			v, _ := poisonValue(id)
			b.WriteString(v)
			b.WriteByte('\n')
		}
		if err := fixture.Land(filepath.Join(e.Landing, fmt.Sprintf("part-%08d.json", first)), []byte(b.String())); err != nil {
			t.Fatal(err)
		}
	}
	source := []string{"path: " + e.Landing, "format: json", "max-files-per-trigger: 3"}
	streaming := deadLetterPipeline(e, "dead-letter", "processing-time=100ms", source...)
	landed, kills := killWhileFeeding(t, e, rand.New(rand.NewPCG(35, 2)), land, "run", streaming)
	e.OK("run", deadLetterPipeline(e, "dead-letter", "available-now", source...))
	checkDeadLetters(t, e, landed, fmt.Sprintf("after %d kills and %d lines", kills, landed))
	for _, row := range dbzRows(t, e, "db.events_dead", "_floe_source_file", "_floe_source_row", "_floe_topic") {
		f := strings.Split(row, "|")
		if !strings.HasPrefix(f[0], e.Landing) || f[1] == "null" || f[2] != "null" {
			t.Fatalf("dead letter %q does not name its file and line", row)
		}
	}
}

// floe killed at each phase of each of a batch's two commits, the
// dead-letter table's and the table's, then run again: every good line is
// in the table once and every bad one in the dead-letter table once.
func TestFaultDeadLettersAtCommitPhases(t *testing.T) {
	t.Parallel()
	for _, phase := range commitPhases {
		for nth := 1; nth <= 3; nth++ {
			t.Run(fmt.Sprintf("%s/%d", phase.name, nth), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				for i := int64(0); i < 3; i++ {
					var b strings.Builder
					for id := i * 200; id < (i+1)*200; id++ {
						v, _ := poisonValue(id)
						b.WriteString(v + "\n")
					}
					if err := fixture.Land(filepath.Join(e.Landing, fmt.Sprintf("part-%d.json", i)), []byte(b.String())); err != nil {
						t.Fatal(err)
					}
				}
				run := deadLetterPipeline(e, "dead-letter", "available-now", "path: "+e.Landing, "format: json", "max-files-per-trigger: 1")
				if r := e.RunEnv(floeBin, []string{fmt.Sprintf("%s=%d", phase.env, nth)}, "run", run); r.Code != 137 {
					t.Fatalf("want the run killed at commit %d, got %s", nth, r)
				}
				e.OK("run", run)
				checkDeadLetters(t, e, 600, fmt.Sprintf("after a kill at %s of commit %d", phase.name, nth))
			})
		}
	}
}

// Avro messages with 1% poison (a schema id the registry does not know,
// a value not in the Confluent wire format, a body cut short) land with
// on-bad-record: dead-letter: the good ones once, each poison one in the
// dead-letter table once, with its offset.
func TestKafkaAvroDeadLetters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "users", 2)
	reg := schemaRegistry(t, userV1)
	topic := c.Name("users")
	var recs []*kgo.Record
	bad := map[int64]bool{}
	for id := int64(0); id < 1000; id++ {
		v := confluentValue(t, 1, userV1, map[string]any{"id": id, "name": fmt.Sprintf("u%d", id)})
		if id%poisonEvery == 37 {
			bad[id] = true
			switch (id / poisonEvery) % 3 {
			case 0:
				v = confluentValue(t, 99, userV1, map[string]any{"id": id, "name": "unknown schema id"})
			case 1:
				v = append([]byte{1}, v[1:]...)
			case 2:
				v = v[:len(v)-2]
			}
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(id % 2), Value: v})
	}
	c.Produce(t, recs...)
	e.OK(kafkaAvroStream(e, c, reg.URL, "--on-bad-record", "dead-letter", "--dead-letter-table", "db.users_dead")...)
	ids := e.TableIDs("db.users")
	for id := int64(0); id < 1000; id++ {
		if want := map[bool]int{true: 0, false: 1}[bad[id]]; ids[id] != want {
			t.Fatalf("id %d is in the table %d times, want %d", id, ids[id], want)
		}
	}
	offsets := map[string]bool{}
	for _, row := range dbzRows(t, e, "db.users_dead", "_floe_partition", "_floe_offset") {
		offsets[row] = true
	}
	if len(offsets) != len(bad) {
		t.Fatalf("%d dead letters, want %d: %v", len(offsets), len(bad), offsets)
	}
	for id := range bad {
		// Partition id%2 holds ids id%2, id%2+2, ...: id's offset is id/2.
		if at := fmt.Sprintf("%d|%d", id%2, id/2); !offsets[at] {
			t.Fatalf("poison message %d (partition|offset %s) is not in the dead-letter table: %v", id, at, offsets)
		}
	}
}

// csvPoisonLine is record id as a CSV line of id,v,n: good, or for one id
// in poisonEvery bad in turn: too few columns, a value n's column cannot
// hold (over, a value over an int column's limit, or text in a long
// column), broken quoting.
func csvPoisonLine(id int64, over string) (line string, bad bool) {
	if id%poisonEvery != 37 {
		return fmt.Sprintf("%d,m%d,%d", id, id, id%1000), false
	}
	switch (id / poisonEvery) % 3 {
	case 0:
		return fmt.Sprintf("%d,cut short", id), true
	case 1:
		return fmt.Sprintf("%d,too big,%s", id, over), true
	}
	return fmt.Sprintf(`%d,"broken"quote,1`, id), true
}

// CSV files with 1% bad rows land with on-bad-record: dead-letter, with
// source.schema and with the types inferred (the table's types then
// decide): every good row once, every bad one in the dead-letter table
// once, as written, with its file and line.
func TestLandingCSVDeadLetters(t *testing.T) {
	t.Parallel()
	for _, schema := range []bool{true, false} {
		t.Run(fmt.Sprintf("schema=%v", schema), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			over := fmt.Sprint(int64(1) << 40)
			if !schema {
				over = "n/a"
			}
			land := func(dir string, first, n int64) {
				b := strings.Builder{}
				b.WriteString("id,v,n\n")
				for id := first; id < first+n; id++ {
					l, _ := csvPoisonLine(id, over)
					b.WriteString(l + "\n")
				}
				if err := fixture.Land(filepath.Join(dir, fmt.Sprintf("part-%08d.csv", first)), []byte(b.String())); err != nil {
					t.Fatal(err)
				}
			}
			source := []string{"path: " + e.Landing, "format: csv"}
			run := deadLetterPipeline(e, "dead-letter", "available-now", source...)
			if !schema {
				// Without source.schema the first file makes the table: its
				// rows are all good, so n is an int column from there on.
				yaml, _ := os.ReadFile(run)
				yaml = []byte(strings.Replace(string(yaml), "    - {name: n, type: int}\n", "", 1))
				yaml = []byte(strings.Replace(string(yaml), "  schema:\n    - {name: id, type: long}\n    - {name: v, type: string}\n", "", 1))
				if err := os.WriteFile(run, yaml, 0o644); err != nil {
					t.Fatal(err)
				}
				first := filepath.Join(e.Dir, "first")
				land(first, 2000, 30)
				e.OK("stream", "--source", first, "--format", "csv", "--table", "db.events", "--checkpoint", filepath.Join(e.Dir, "first-ckpt"))
			}
			land(e.Landing, 0, 500)
			land(e.Landing, 500, 500)
			e.OK("run", run)
			ids := e.TableIDs("db.events")
			lines := map[string]bool{}
			for _, row := range dbzRows(t, e, "db.events_dead", "_floe_value", "_floe_source_row") {
				v, at, _ := strings.Cut(row, "|")
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					t.Fatal(err)
				}
				lines[string(b)+"@"+at] = true
			}
			for id := int64(0); id < 1000; id++ {
				l, bad := csvPoisonLine(id, over)
				// Line 1 is the header: id's line is 2 + its place in its file.
				at := fmt.Sprintf("%s@%d", l, id%500+2)
				switch {
				case bad && (ids[id] != 0 || !lines[at]):
					t.Fatalf("bad row %q: %d times in the table, in the dead-letter table as %q: %v; dead letters %v", l, ids[id], at, lines[at], lines)
				case !bad && ids[id] != 1:
					t.Fatalf("good row %q is in the table %d times", l, ids[id])
				}
			}
			if len(lines) != 10 {
				t.Fatalf("%d dead letters, want 10: %v", len(lines), lines)
			}
		})
	}
}

// A cluster worker with on-bad-record: dead-letter is refused with exit 2
// naming the option and kafka.group.id, before it reads anything.
func TestKafkaClusterDeadLettersRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 2)
	produceIDs(t, c, c.Name("events"), 2, 0, 10)
	w := startClusterWorker(e, c, "a", "--on-bad-record", "dead-letter", "--dead-letter-table", "db.events_dead")
	wantRefused(t, e, w, "on-bad-record: dead-letter", "kafka.group.id")
}

// With source.options.deadLetterTopic the poison messages go to a topic
// instead, each with its key and value and Kafka Connect's error headers;
// a run killed after sending them and before the table commit is finished
// by the next, which sends none twice.
func TestKafkaDeadLetterTopic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := kafkatest.Start(t, "events", 2)
	topic, dlq := c.Name("events"), c.Name("events-dlq")
	c.CreateTopic(t, dlq, 1)
	var recs []*kgo.Record
	for id := int64(0); id < 600; id++ {
		v, _ := poisonValue(id)
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(id % 2), Key: fmt.Appendf(nil, "k%d", id), Value: []byte(v)})
	}
	c.Produce(t, recs...)
	args := kafkaStream(e, c, "--on-bad-record", "dead-letter", "-o", "deadLetterTopic="+dlq, "-o", "maxOffsetsPerTrigger=200")
	// The first catalog commit, batch 0's, dies before the catalog sees it:
	// its dead letters are sent.
	if r := e.RunEnv(floeBin, []string{"FLOE_TEST_CRASH_IN_CATALOG_COMMIT=1"}, args...); r.Code != 137 {
		t.Fatalf("want the run killed in its first commit, got %s", r)
	}
	if n := len(c.Consume(t, dlq)); n == 0 {
		t.Fatal("the killed run sent no dead letters before its commit")
	}
	r := e.OK(args...)
	if !strings.Contains(r.Stderr, "bad record") {
		t.Fatalf("no bad records reported:\n%s", r.Stderr)
	}
	ids := e.TableIDs("db.events")
	want := map[string]bool{}
	for id := int64(0); id < 600; id++ {
		v, bad := poisonValue(id)
		// Without source.schema n is a long column, which holds 2^40.
		bad = bad && (id/poisonEvery)%3 != 1
		if bad {
			want[v] = true
		}
		if n := ids[id]; bad && n != 0 || !bad && n != 1 {
			t.Fatalf("id %d is in the table %d times", id, n)
		}
	}
	got := map[string]int{}
	for _, m := range c.Consume(t, dlq) {
		got[string(m.Value)]++
		h := map[string]string{}
		for _, x := range m.Headers {
			h[x.Key] = string(x.Value)
		}
		if h["__connect.errors.topic"] != topic || h["__connect.errors.offset"] == "" || h["__connect.errors.exception.message"] == "" || !strings.HasPrefix(string(m.Key), "k") {
			t.Fatalf("dead letter %q lacks its key or headers: %v", m.Value, h)
		}
	}
	for v := range want {
		if got[v] != 1 {
			t.Fatalf("poison message %q is in the dead-letter topic %d times", v, got[v])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d distinct dead letters, want %d", len(got), len(want))
	}
}

// With a table template, bad lines and rows the template cannot route
// (a null region) share the dead-letter table as bad records, the rows
// as JSON; the routed rows land in their tables.
func TestTemplateDeadLetters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	lines := []string{
		`{"id":1,"region":"eu","v":"a"}`,
		`{"id":2,"region":"us","v":"b"}`,
		`{"id":3,"region":null,"v":"c"}`,
		`{"id":4,"region":"eu","v":"d`,
		`{"id":5,"region":"us","v":"e"}`,
	}
	landLines(t, filepath.Join(e.Landing, "a.json"), lines...)
	e.OK("stream", "--source", e.Landing, "--format", "json", "--table", "db.events_{region}", "--checkpoint", e.Ckpt,
		"--on-bad-record", "dead-letter", "--dead-letter-table", "db.events_dead")
	for table, want := range map[string][]string{"db.events_eu": {"1|a"}, "db.events_us": {"2|b", "5|e"}} {
		if got := dbzRows(t, e, table, "id", "v"); !slices.Equal(got, want) {
			t.Fatalf("%s: %v, want %v", table, got, want)
		}
	}
	got := dbzRows(t, e, "db.events_dead", "_floe_source_row", "_floe_value", "_floe_error")
	if len(got) != 2 {
		t.Fatalf("dead letters %v, want lines 3 and 4", got)
	}
	for i, line := range []int{3, 4} {
		f := strings.SplitN(got[i], "|", 3)
		v, _ := base64.StdEncoding.DecodeString(f[1])
		if f[0] != fmt.Sprint(line) || f[2] == "" {
			t.Fatalf("dead letter %q: want line %d with an error", got[i], line)
		}
		var row map[string]any
		if line == 3 && (json.Unmarshal(v, &row) != nil || row["id"] != float64(3) || row["region"] != nil) {
			t.Fatalf("the unroutable row is held as %s, want its row as JSON", v)
		}
		if line == 4 && string(v) != lines[3] {
			t.Fatalf("the bad line is held as %s, want it as written", v)
		}
	}
}
