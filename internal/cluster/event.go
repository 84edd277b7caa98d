package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ingest"
)

// Event is one worker's output of one interval: the data files it wrote
// and the source ranges they hold, all of them or none. A fixed table's
// files are the event's own Output; a template sink's are in Tables, one
// Output per table the ranges' rows went to.
type Event struct {
	Worker     string `json:"worker"`
	Generation int32  `json:"generation"`
	Output
	Tables []Output `json:"tables,omitempty"`
	Ranges []Range  `json:"ranges"`
	Rows   int64    `json:"rows"`
	// WrittenMs is when the worker published it, for the commit lag.
	WrittenMs int64 `json:"written-ms"`
}

// Output is an event's files for one table.
type Output struct {
	Table string `json:"table"`
	// TableUUID tells the table the files were written for from one
	// created again under its name, which an old event must not reach.
	TableUUID string     `json:"table-uuid,omitempty"`
	Manifests []Manifest `json:"manifests,omitempty"`
	// KeySet is the keys the event's upserts changed (upsert.EncodeKeys),
	// or KeySetFile the table file holding them when they are too many
	// for a control record.
	KeySet     []byte `json:"key-set,omitempty"`
	KeySetFile string `json:"key-set-file,omitempty"`
}

// Manifest carries data files as the entries of an Iceberg manifest: the
// spec's own encoding of a data file with its partition values and column
// statistics, which the committer reads back exactly.
type Manifest struct {
	SpecID int32  `json:"spec-id"`
	Avro   []byte `json:"avro"`
}

// eventManifestVersion is the manifest format of events: data files need
// nothing a version 3 manifest adds, and row ids are assigned when the
// coordinator commits them.
const eventManifestVersion = 2

// NewEvent describes files, written for tbl (as it was after the writes,
// so that it knows their schema and specs), covering ranges.
func NewEvent(tbl *table.Table, files []ingest.DataFile, ranges []Range) (Event, error) {
	out, err := newOutput(tbl, files)
	if err != nil {
		return Event{}, err
	}
	ev := Event{Output: out, Ranges: ranges}
	for _, f := range files {
		ev.Rows += f.Rows
	}
	return ev, nil
}

// NewTemplateEvent describes the files of a template sink's interval, each
// written for its table in tables (as it was after the writes), covering
// ranges.
func NewTemplateEvent(tables map[string]*table.Table, files []ingest.DataFile, ranges []Range) (Event, error) {
	byTable := map[string][]ingest.DataFile{}
	for _, f := range files {
		byTable[f.Table] = append(byTable[f.Table], f)
	}
	ev := Event{Ranges: ranges, Tables: []Output{}}
	for _, name := range slices.Sorted(maps.Keys(byTable)) {
		tbl := tables[name]
		if tbl == nil {
			return Event{}, fmt.Errorf("internal: files written for table %s, which the writer did not hand back", name)
		}
		out, err := newOutput(tbl, byTable[name])
		if err != nil {
			return Event{}, err
		}
		ev.Tables = append(ev.Tables, out)
		for _, f := range byTable[name] {
			ev.Rows += f.Rows
		}
	}
	return ev, nil
}

func newOutput(tbl *table.Table, files []ingest.DataFile) (Output, error) {
	out := Output{Table: ingest.JoinIdent(tbl.Identifier()), TableUUID: tbl.Metadata().TableUUID().String()}
	bySpec := map[int32][]iceberg.DataFile{}
	for _, f := range files {
		bySpec[f.File.SpecID()] = append(bySpec[f.File.SpecID()], f.File)
	}
	for _, id := range slices.Sorted(maps.Keys(bySpec)) {
		spec := tbl.Metadata().PartitionSpecByID(int(id))
		if spec == nil {
			return Output{}, fmt.Errorf("table %s has no partition spec %d, which its new files were written with", out.Table, id)
		}
		var snap int64
		entries := make([]iceberg.ManifestEntry, len(bySpec[id]))
		for i, df := range bySpec[id] {
			entries[i] = iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snap, nil, nil, df)
		}
		var buf bytes.Buffer
		if _, err := iceberg.WriteManifest("event", &buf, eventManifestVersion, *spec, tbl.Schema(), snap, entries); err != nil {
			return Output{}, fmt.Errorf("describe the files written for %s: %w", out.Table, err)
		}
		out.Manifests = append(out.Manifests, Manifest{SpecID: id, Avro: buf.Bytes()})
	}
	return out, nil
}

// Outputs are the event's files by table: its own Output for a fixed
// table, Tables for a template sink.
func (ev Event) Outputs() []Output {
	if ev.Table == "" {
		return ev.Tables
	}
	return []Output{ev.Output}
}

// Files reads the output's data files back; worker names the event's
// worker in errors.
func (o Output) Files(worker string) ([]ingest.DataFile, error) {
	var out []ingest.DataFile
	for _, m := range o.Manifests {
		mf := iceberg.NewManifestFile(eventManifestVersion, "event", int64(len(m.Avro)), m.SpecID, 0).Build()
		entries, err := iceberg.ReadManifest(mf, bytes.NewReader(m.Avro), true)
		if err != nil {
			return nil, fmt.Errorf("read the files of worker %s's event for %s: %w", worker, o.Table, err)
		}
		for _, e := range entries {
			df := e.DataFile()
			out = append(out, ingest.DataFile{Table: o.Table, Path: df.FilePath(), SizeBytes: df.FileSizeBytes(), Rows: df.Count(), File: df})
		}
	}
	return out, nil
}

// describe names the event in messages by its worker and partitions.
func (ev Event) describe() string {
	parts := make([]string, len(ev.Ranges))
	for i, r := range ev.Ranges {
		parts[i] = fmt.Sprintf("%s offsets %d to %d", r.TopicPartition, r.From, r.Until-1)
	}
	return fmt.Sprintf("worker %s's changes of %s", ev.Worker, strings.Join(parts, ", "))
}

// Marshal encodes the event for the control topic.
func (ev Event) Marshal() ([]byte, error) { return json.Marshal(ev) }

// UnmarshalEvent decodes a control-topic record.
func UnmarshalEvent(b []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return Event{}, fmt.Errorf("control record is not a floe event: %w", err)
	}
	return ev, nil
}
