package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/internal/catalogs"
	"github.com/floe-io/floe/internal/commit"
)

// tableSubcommands are `floe table`'s subcommands, in the order its help
// lists them.
var tableSubcommands = []subcommand{
	{"list", "list the tables of the catalog, or of one namespace", tableList},
	{"describe", "a table's schema, partition spec, properties and location", tableDescribe},
	{"snapshots", "a table's snapshots with their summaries", tableSnapshots},
	{"files", "the data and delete files of the current snapshot", tableFiles},
	{"history", "the snapshot log: which snapshot was current when", tableHistory},
	{"health", "snapshots, metadata, small files, partitions and plan time, with advice", tableHealth},
	{"register", "add a table to the catalog by its metadata file (Spark's register_table)", tableRegister},
	{"drop", "drop a table from the catalog; --purge deletes its files too", tableDrop},
	{"set-partition-spec", "replace a table's partition spec (Spark's REPLACE PARTITION FIELD)", tableSetPartitionSpec},
	{"refs", "a table's branches and tags", tableRefs},
	{"create-branch", "make a branch at a snapshot", tableCreateRef(table.BranchRef)},
	{"create-tag", "make a tag at a snapshot", tableCreateRef(table.TagRef)},
	{"rollback", "point a branch back at one of its ancestors (Spark's rollback_to_snapshot)", tableMoveBranch("rollback", commit.Rollback)},
	{"set-current", "point a branch at any snapshot (Spark's set_current_snapshot)", tableMoveBranch("set-current", commit.SetCurrent)},
	{"fast-forward", "move a branch to another's snapshot, publishing it (Spark's fast_forward)", tableFastForward},
	{"cherrypick", "commit an append snapshot's files to main (Spark's cherrypick_snapshot)", tableCherrypick},
}

func init() {
	for _, sub := range []struct{ name, about, eg string }{
		{"describe", "Print a table's name, location, format version, current snapshot, partition spec, schema and properties.", "floe table describe db.events"},
		{"snapshots", "Print a table's snapshots, oldest first: id, operation, time, rows added, and the floe batch that made it.", "floe table snapshots db.events"},
		{"files", "Print the data and delete files of a table's current snapshot, with row counts, sizes and partition values.", "floe table files db.events"},
		{"history", "Print a table's snapshot log: when each snapshot became current, and whether it is an ancestor of the current one.", "floe table history db.events"},
	} {
		helps["table "+sub.name] = commandHelp{
			usage: "table " + sub.name + " NS.TABLE|TABLE_DIR|METADATA_FILE [flags]",
			about: sub.about + " The table is a name in the catalog, or a table directory or metadata file (no catalog needed).",
			examples: []example{
				{"As text.", sub.eg},
				{"As JSON, for scripts.", sub.eg + " --json"},
				{"A table by its metadata file, without a catalog.", "floe table " + sub.name + " path/to/table/metadata/v3.metadata.json"},
			},
		}
	}
	helps["table list"] = commandHelp{
		usage: "table list [NAMESPACE] [flags]",
		about: "Print the tables of the catalog, or of one namespace, one NS.TABLE a line.",
		examples: []example{
			{"Every table of the warehouse.", "floe table list"},
			{"The tables of namespace db, as a JSON array.", "floe table list db --json"},
		},
	}
}

// openCatalog opens the catalog the flags name, which must exist: a
// command that only reads would otherwise create an empty one wherever a
// mistyped --warehouse points.
func openCatalog(ctx context.Context, cf catalogFlags) (catalog.Catalog, error) {
	cfg, err := cf.config()
	if err != nil {
		return nil, err
	}
	if err := requireCatalog(cfg); err != nil {
		return nil, err
	}
	return floe.OpenCatalog(ctx, cfg)
}

// loadTable opens NS.TABLE from the catalog, or a table by location (its
// directory or a metadata file) without one.
func loadTable(ctx context.Context, cf catalogFlags, name string) (*table.Table, error) {
	cfg, err := cf.config()
	if err != nil {
		return nil, err
	}
	if catalogs.IsTablePath(name) {
		return catalogs.LoadTableAt(ctx, name, iceberg.Properties(cfg.Properties), cf.prefixes)
	}
	ident, err := floe.ParseIdent(name)
	if err != nil {
		if st, serr := os.Stat(name); serr == nil && st.IsDir() {
			return nil, fmt.Errorf("%w; to read the table in directory %s, write ./%s", err, name, name)
		}
		return nil, err
	}
	cat, err := openCatalog(ctx, cf)
	if err != nil {
		return nil, err
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, noSuchTable(ctx, cat, cf, ident)
	}
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", name, err)
	}
	return tbl, nil
}

// tableCommand parses `table SUB NS.TABLE [--json]` and loads the table.
func tableCommand(ctx context.Context, sub string, args []string, stderr io.Writer) (*table.Table, bool, error) {
	fs := newFlagSet("table "+sub, stderr)
	var cf catalogFlags
	cf.register(fs)
	cf.registerPathPrefix(fs)
	asJSON := fs.Bool("json", false, "Print JSON.")
	pos, err := fs.parse(args)
	if err != nil {
		return nil, false, err
	}
	if len(pos) != 1 {
		return nil, false, usagef("table %s takes one table, e.g. floe table %s db.events", sub, sub)
	}
	tbl, err := loadTable(ctx, cf, pos[0])
	return tbl, *asJSON, err
}

func tableList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("table list", stderr)
	var cf catalogFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "Print a JSON array.")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	cat, err := openCatalog(ctx, cf)
	if err != nil {
		return err
	}
	var namespaces []table.Identifier
	if len(pos) > 0 {
		namespaces = append(namespaces, strings.Split(pos[0], "."))
	} else {
		if namespaces, err = cat.ListNamespaces(ctx, nil); err != nil {
			return fmt.Errorf("list namespaces: %w", err)
		}
	}
	names := []string{}
	for _, ns := range namespaces {
		for id, err := range cat.ListTables(ctx, ns) {
			if err != nil {
				return fmt.Errorf("list tables in %s: %w", strings.Join(ns, "."), err)
			}
			names = append(names, strings.Join(id, "."))
		}
	}
	sort.Strings(names)
	if *asJSON {
		return writeJSON(stdout, names)
	}
	for _, n := range names {
		fmt.Fprintln(stdout, n)
	}
	return nil
}

type describeJSON struct {
	Name              string            `json:"name"`
	Location          string            `json:"location"`
	MetadataLocation  string            `json:"metadata_location"`
	FormatVersion     int               `json:"format_version"`
	Schema            *iceberg.Schema   `json:"schema"`
	PartitionSpec     any               `json:"partition_spec"`
	Properties        map[string]string `json:"properties"`
	CurrentSnapshotID *int64            `json:"current_snapshot_id"`
	Snapshots         int               `json:"snapshots"`
}

func tableDescribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	tbl, asJSON, err := tableCommand(ctx, "describe", args, stderr)
	if err != nil {
		return err
	}
	md := tbl.Metadata()
	d := describeJSON{Name: strings.Join(tbl.Identifier(), "."), Location: tbl.Location(), MetadataLocation: tbl.MetadataLocation(),
		FormatVersion: md.Version(), Schema: tbl.Schema(), PartitionSpec: tbl.Spec(), Properties: tbl.Properties(), Snapshots: len(md.Snapshots())}
	if s := tbl.CurrentSnapshot(); s != nil {
		id := s.SnapshotID
		d.CurrentSnapshotID = &id
	}
	if asJSON {
		return writeJSON(stdout, d)
	}
	fmt.Fprintf(stdout, "table:          %s\nlocation:       %s\nmetadata:       %s\nformat version: %d\nsnapshots:      %d\n", d.Name, d.Location, d.MetadataLocation, d.FormatVersion, d.Snapshots)
	if d.CurrentSnapshotID != nil {
		fmt.Fprintf(stdout, "current:        %d\n", *d.CurrentSnapshotID)
	}
	printSpec(stdout, tbl)
	fmt.Fprintln(stdout, "schema:")
	for _, f := range tbl.Schema().Fields() {
		req := "optional"
		if f.Required {
			req = "required"
		}
		fmt.Fprintf(stdout, "  %3d  %-24s %-12s %s\n", f.ID, f.Name, f.Type, req)
	}
	if len(d.Properties) > 0 {
		fmt.Fprintln(stdout, "properties:")
		keys := make([]string, 0, len(d.Properties))
		for k := range d.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(stdout, "  %s=%s\n", k, d.Properties[k])
		}
	}
	return nil
}

type snapshotJSON struct {
	SnapshotID  int64             `json:"snapshot_id"`
	ParentID    *int64            `json:"parent_id"`
	TimestampMs int64             `json:"timestamp_ms"`
	Operation   string            `json:"operation"`
	Summary     map[string]string `json:"summary"`
}

func tableSnapshots(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	tbl, asJSON, err := tableCommand(ctx, "snapshots", args, stderr)
	if err != nil {
		return err
	}
	out := []snapshotJSON{}
	for _, s := range tbl.Metadata().Snapshots() {
		sj := snapshotJSON{SnapshotID: s.SnapshotID, ParentID: s.ParentSnapshotID, TimestampMs: s.TimestampMs, Summary: map[string]string{}}
		if s.Summary != nil {
			sj.Operation = string(s.Summary.Operation)
			for k, v := range s.Summary.Properties {
				sj.Summary[k] = v
			}
		}
		out = append(out, sj)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TimestampMs < out[j].TimestampMs })
	if asJSON {
		return writeJSON(stdout, out)
	}
	for _, s := range out {
		fmt.Fprintf(stdout, "%d  %-9s  %s  added-records=%s  %s=%s\n", s.SnapshotID, s.Operation, msTime(s.TimestampMs),
			s.Summary["added-records"], floe.SummaryBatchID, s.Summary[floe.SummaryBatchID])
	}
	return nil
}

type fileJSON struct {
	Path        string `json:"file_path"`
	Format      string `json:"file_format"`
	RecordCount int64  `json:"record_count"`
	SizeBytes   int64  `json:"file_size_in_bytes"`
	Content     string `json:"content"`
	SpecID      int32  `json:"spec_id"`
	// Partition maps the spec's field names to the file's values, in the
	// spec's JSON single-value form (dates and timestamps as ISO text).
	Partition map[string]any `json:"partition"`
}

func tableFiles(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	tbl, asJSON, err := tableCommand(ctx, "files", args, stderr)
	if err != nil {
		return err
	}
	out := []fileJSON{}
	if s := tbl.CurrentSnapshot(); s != nil {
		fs, err := tbl.FS(ctx)
		if err != nil {
			return err
		}
		manifests, err := s.Manifests(fs)
		if err != nil {
			return fmt.Errorf("read manifests: %w", err)
		}
		for _, m := range manifests {
			entries, err := m.FetchEntries(fs, true)
			if err != nil {
				return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			for _, e := range entries {
				df := e.DataFile()
				content := "data"
				switch df.ContentType() {
				case iceberg.EntryContentPosDeletes:
					content = "position_deletes"
				case iceberg.EntryContentEqDeletes:
					content = "equality_deletes"
				}
				out = append(out, fileJSON{Path: df.FilePath(), Format: string(df.FileFormat()), RecordCount: df.Count(), SizeBytes: df.FileSizeBytes(), Content: content,
					SpecID: df.SpecID(), Partition: partitionJSON(tbl, df)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	if asJSON {
		return writeJSON(stdout, out)
	}
	for _, f := range out {
		part := ""
		if len(f.Partition) > 0 {
			keys := slices.Sorted(maps.Keys(f.Partition))
			for i, k := range keys {
				if i > 0 {
					part += ","
				}
				part += fmt.Sprintf("%s=%v", k, f.Partition[k])
			}
			part = "  " + part
		}
		fmt.Fprintf(stdout, "%s  %s  %d rows  %d bytes%s\n", f.Path, f.Content, f.RecordCount, f.SizeBytes, part)
	}
	return nil
}

// partitionJSON renders a file's partition tuple by field name.
func partitionJSON(tbl *table.Table, df iceberg.DataFile) map[string]any {
	out := map[string]any{}
	spec := tbl.Metadata().PartitionSpecByID(int(df.SpecID()))
	if spec == nil {
		return out
	}
	values := df.Partition()
	for _, f := range spec.Fields() {
		v := values[f.FieldID]
		if v == nil {
			out[f.Name] = nil
			continue
		}
		var resultType iceberg.Type
		if src, ok := tbl.Schema().FindFieldByID(f.SourceID()); ok {
			resultType = f.Transform.ResultType(src.Type)
		}
		out[f.Name] = jsonValue(resultType, v)
	}
	return out
}

func jsonValue(t iceberg.Type, v any) any {
	switch t.(type) {
	case iceberg.DateType:
		switch d := v.(type) {
		case iceberg.Date:
			return time.Unix(int64(d)*86400, 0).UTC().Format("2006-01-02")
		case int32:
			return time.Unix(int64(d)*86400, 0).UTC().Format("2006-01-02")
		}
	case iceberg.TimestampType, iceberg.TimestampTzType:
		switch ts := v.(type) {
		case iceberg.Timestamp:
			return time.UnixMicro(int64(ts)).UTC().Format("2006-01-02T15:04:05.999999")
		case int64:
			return time.UnixMicro(ts).UTC().Format("2006-01-02T15:04:05.999999")
		}
	}
	if b, ok := v.([]byte); ok {
		return hex.EncodeToString(b)
	}
	return v
}

type historyJSON struct {
	MadeCurrentAtMs   int64  `json:"made_current_at_ms"`
	SnapshotID        int64  `json:"snapshot_id"`
	ParentID          *int64 `json:"parent_id"`
	IsCurrentAncestor bool   `json:"is_current_ancestor"`
}

func tableHistory(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	tbl, asJSON, err := tableCommand(ctx, "history", args, stderr)
	if err != nil {
		return err
	}
	ancestors := map[int64]bool{}
	if cur := tbl.CurrentSnapshot(); cur != nil {
		for s := cur; s != nil; {
			ancestors[s.SnapshotID] = true
			if s.ParentSnapshotID == nil {
				break
			}
			s = tbl.SnapshotByID(*s.ParentSnapshotID)
		}
	}
	out := []historyJSON{}
	for e := range tbl.Metadata().SnapshotLogs() {
		h := historyJSON{MadeCurrentAtMs: e.TimestampMs, SnapshotID: e.SnapshotID, IsCurrentAncestor: ancestors[e.SnapshotID]}
		if s := tbl.SnapshotByID(e.SnapshotID); s != nil {
			h.ParentID = s.ParentSnapshotID
		}
		out = append(out, h)
	}
	if asJSON {
		return writeJSON(stdout, out)
	}
	for _, h := range out {
		fmt.Fprintf(stdout, "%s  %d  current-ancestor=%v\n", msTime(h.MadeCurrentAtMs), h.SnapshotID, h.IsCurrentAncestor)
	}
	return nil
}

// printSpec prints each partition field as its transform of the columns it
// reads, by name, as Spark's DESCRIBE does: "day(ts)", not "day(2)".
func printSpec(w io.Writer, tbl *table.Table) {
	spec := tbl.Spec()
	if spec.NumFields() == 0 {
		fmt.Fprintln(w, "partition spec: unpartitioned")
		return
	}
	fmt.Fprintln(w, "partition spec:")
	for _, f := range spec.Fields() {
		cols := make([]string, len(f.SourceIDs))
		for i, id := range f.SourceIDs {
			name, ok := tbl.Schema().FindColumnName(id)
			if !ok {
				name = fmt.Sprintf("dropped column %d", id)
			}
			cols[i] = name
		}
		fmt.Fprintf(w, "  %4d  %-24s %s(%s)\n", f.FieldID, f.Name, f.Transform, strings.Join(cols, ", "))
	}
}
