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
// for the table and the source ranges they hold, all of them or none.
type Event struct {
	Worker     string `json:"worker"`
	Generation int32  `json:"generation"`
	Table      string `json:"table"`
	// TableUUID tells the table the files were written for from one
	// created again under its name, which an old event must not reach.
	TableUUID string  `json:"table-uuid,omitempty"`
	Ranges    []Range `json:"ranges"`
	Rows      int64   `json:"rows"`
	// WrittenMs is when the worker published it, for the commit lag.
	WrittenMs int64      `json:"written-ms"`
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
	ev := Event{Table: ingest.JoinIdent(tbl.Identifier()), TableUUID: tbl.Metadata().TableUUID().String(), Ranges: ranges}
	bySpec := map[int32][]iceberg.DataFile{}
	for _, f := range files {
		bySpec[f.File.SpecID()] = append(bySpec[f.File.SpecID()], f.File)
		ev.Rows += f.Rows
	}
	for _, id := range slices.Sorted(maps.Keys(bySpec)) {
		spec := tbl.Metadata().PartitionSpecByID(int(id))
		if spec == nil {
			return Event{}, fmt.Errorf("table %s has no partition spec %d, which its new files were written with", ev.Table, id)
		}
		var snap int64
		entries := make([]iceberg.ManifestEntry, len(bySpec[id]))
		for i, df := range bySpec[id] {
			entries[i] = iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snap, nil, nil, df)
		}
		var buf bytes.Buffer
		if _, err := iceberg.WriteManifest("event", &buf, eventManifestVersion, *spec, tbl.Schema(), snap, entries); err != nil {
			return Event{}, fmt.Errorf("describe the files written for %s: %w", ev.Table, err)
		}
		ev.Manifests = append(ev.Manifests, Manifest{SpecID: id, Avro: buf.Bytes()})
	}
	return ev, nil
}

// Files reads the event's data files back.
func (ev Event) Files() ([]ingest.DataFile, error) {
	var out []ingest.DataFile
	for _, m := range ev.Manifests {
		mf := iceberg.NewManifestFile(eventManifestVersion, "event", int64(len(m.Avro)), m.SpecID, 0).Build()
		entries, err := iceberg.ReadManifest(mf, bytes.NewReader(m.Avro), true)
		if err != nil {
			return nil, fmt.Errorf("read the files of worker %s's event: %w", ev.Worker, err)
		}
		for _, e := range entries {
			df := e.DataFile()
			out = append(out, ingest.DataFile{Table: ev.Table, Path: df.FilePath(), SizeBytes: df.FileSizeBytes(), Rows: df.Count(), File: df})
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
