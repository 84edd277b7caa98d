package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/floe-io/floe"
)

// readSoFar is what a run has read, told in its source's terms: input
// files for a file source, messages for Kafka. It also keeps the time the
// batches took, for the rate and the elapsed time a terminal shows.
type readSoFar struct {
	files    int
	messages int64
	rows     int64
	began    time.Time // the first batch's start
	ended    time.Time // the last batch's end
	printed  bool      // the console sink printed the rows
}

func (r *readSoFar) add(p floe.Progress) {
	r.files += inputFiles(p)
	r.messages += batchMessages(p)
	r.rows += p.NumInputRows
	r.printed = printedOnly(p)
	if at, err := time.Parse(time.RFC3339Nano, p.Timestamp); err == nil {
		if r.began.IsZero() {
			r.began = at
		}
		r.ended = at.Add(time.Duration(p.DurationMs.TriggerExecution) * time.Millisecond)
	}
}

// elapsed is the time from the first batch's start to the last one's end.
func (r *readSoFar) elapsed() time.Duration { return r.ended.Sub(r.began) }

// rate is the rows a second over the elapsed time, "" before any time
// passed.
func (r *readSoFar) rate() string {
	if secs := r.elapsed().Seconds(); secs > 0 {
		return rowsPerSecond(float64(r.rows) / secs)
	}
	return ""
}

// read is the end summary's count of what the run read.
func (r *readSoFar) read() string {
	if r.messages > 0 {
		return plural(r.messages, "message") + " read"
	}
	return plural(r.files, "input file") + " read"
}

// batchRead says what a batch read: "2 input files read", or for Kafka
// "20000 messages from 4 partitions".
func batchRead(p floe.Progress) string {
	if n := batchMessages(p); n > 0 {
		parts := 0
		for _, s := range p.Sources {
			k, _ := strconv.Atoi(s.Metrics["numPartitions"])
			parts += k
		}
		return fmt.Sprintf("%s from %s", plural(n, "message"), plural(parts, "partition"))
	}
	return plural(inputFiles(p), "input file") + " read"
}

// batchMessages counts the Kafka messages a batch read; 0 for a source of
// files.
func batchMessages(p floe.Progress) int64 {
	var n int64
	for _, s := range p.Sources {
		k, _ := strconv.ParseInt(s.Metrics["numMessages"], 10, 64)
		n += k
	}
	return n
}

// consumerLag is the messages the Kafka partitions hold past the batch's
// end, the lag /metrics reports per partition; ok is false for a source
// that does not report it.
func consumerLag(p floe.Progress) (lag int64, ok bool) {
	for _, s := range p.Sources {
		behind := s.Metrics["offsetsBehindLatest"]
		if behind == "" {
			continue
		}
		var byTopic map[string]map[string]int64
		if json.Unmarshal([]byte(behind), &byTopic) != nil {
			continue
		}
		for _, parts := range byTopic {
			for _, n := range parts {
				lag += n
			}
		}
		ok = true
	}
	return lag, ok
}

// noTable is what the console sink committed: rows printed leave no
// snapshot behind, which is no failure.
const noTable = "nothing committed (the console sink writes no table)"

// printedOnly tells whether the batch's rows were printed by the console
// sink rather than written to a table.
func printedOnly(p floe.Progress) bool { return p.Sink.Description == "ConsoleSink" }

// rowsPerSecond spells a rate: "1234 rows/s".
func rowsPerSecond(r float64) string { return fmt.Sprintf("%.0f rows/s", r) }

// eta is the time left to read the backlog at the pace of the files read
// so far; ok is false until a file was read, once none is left, or when
// the backlog is unknown.
func eta(bl *floe.Backlog, elapsed time.Duration) (left time.Duration, ok bool) {
	if bl == nil || bl.TotalFiles == 0 {
		return 0, false
	}
	done := bl.TotalFiles - bl.RemainingFiles
	if done <= 0 || bl.RemainingFiles == 0 || elapsed <= 0 {
		return 0, false
	}
	return elapsed * time.Duration(bl.RemainingFiles) / time.Duration(done), true
}

// shortDuration rounds a duration for a person: "850ms", "12.3s", "4m10s".
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}
