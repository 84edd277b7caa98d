package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/floe-io/floe/maintenance"
)

func init() {
	helps["table health"] = commandHelp{
		usage: "table health NS.TABLE|TABLE_DIR|METADATA_FILE [flags]",
		about: "Report a table's snapshots, metadata files, manifests, data and delete files (with the rows they delete), partitions and full-scan plan time, " +
			"and recommend the maintenance it needs (docs/maintenance.md).",
		examples: []example{
			{"The report as text.", "floe table health db.events"},
			{"As JSON, for monitoring.", "floe table health db.events --json"},
			{"Also as an HTML page with charts.", "floe table health db.events --html health.html"},
		},
	}
}

// tableHealth reports a table's snapshots, metadata, manifests and files
// and recommends the maintenance it needs.
func tableHealth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("table health", stderr)
	var cf catalogFlags
	cf.register(fs)
	cf.registerPathPrefix(fs)
	asJSON := fs.Bool("json", false, "Print the report as JSON.")
	htmlFile := fs.String("html", "", "Also write the report as a self-contained HTML page with charts to `FILE`.")
	planRuns := fs.Int("plan-runs", 3, "Time this many full-scan plans and report the median (0: do not plan).")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("table health takes one table, e.g. floe table health db.events")
	}
	if *planRuns < 0 {
		return usagef("--plan-runs is %d; use 0 to skip planning or a positive count", *planRuns)
	}
	tbl, err := loadTable(ctx, cf, pos[0])
	if err != nil {
		return err
	}
	opts := maintenance.HealthOptions{PlanRuns: *planRuns}
	if *planRuns == 0 {
		opts.PlanRuns = -1
	}
	r, err := maintenance.Health(ctx, tbl, opts)
	if err != nil {
		return fmt.Errorf("health of %s: %w", pos[0], err)
	}
	if r.Table == "" {
		r.Table = pos[0]
	}
	if *htmlFile != "" {
		var page bytes.Buffer
		if err := maintenance.WriteHTML(&page, r); err != nil {
			return fmt.Errorf("render health page: %w", err)
		}
		if err := os.WriteFile(*htmlFile, page.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write health page: %w", err)
		}
		fmt.Fprintf(stderr, "wrote %s\n", *htmlFile)
	}
	if *asJSON {
		return writeJSON(stdout, r)
	}
	printHealth(stdout, r)
	return nil
}

func printHealth(w io.Writer, r maintenance.Report) {
	fmt.Fprintf(w, "table %s\n", r.Table)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label, format string, args ...any) {
		fmt.Fprintf(tw, "  %s\t"+format+"\n", append([]any{label}, args...)...)
	}
	c := func(n int) string { return maintenance.Count(int64(n)) }
	row("snapshots", "%s", r.SnapshotSpan())
	if r.CurrentSnapshotID != nil {
		row("last commit", "%s ago (snapshot %d)", maintenance.Duration(r.LastCommitAgeMs), *r.CurrentSnapshotID)
	} else {
		row("last commit", "none")
	}
	row("metadata files", "%s, %s", c(r.MetadataFiles), maintenance.Bytes(r.MetadataBytes))
	row("manifests", "%s (%s data, %s delete), %s", c(r.Manifests), c(r.DataManifests), c(r.DeleteManifests), maintenance.Bytes(r.ManifestBytes))
	row("data files", "%s, %s, %s", c(r.DataFiles), maintenance.Bytes(r.DataBytes), maintenance.Counted(r.DataRecords, "record"))
	row("mean data file", "%s (target %s)", maintenance.Bytes(r.MeanDataFileBytes), maintenance.Bytes(r.TargetFileSizeBytes))
	row("small data files", "%s (%.0f%%) below %s", c(r.SmallDataFiles), r.SmallFileShare*100, maintenance.Bytes(r.SmallFileThresholdBytes))
	row("partitions", "%s", r.PartitionSummary())
	row("delete files", "%s, %s (%d position, %d equality, %s)", c(r.DeleteFiles), maintenance.Bytes(r.DeleteBytes),
		r.PositionDeleteFiles, r.EqualityDeleteFiles, maintenance.Counted(r.DeletionVectors, "deletion vector"))
	if r.DeleteFiles > 0 {
		row("deleted rows", "%s by position, %s equality-delete keys; %.2f rows read per live row",
			maintenance.Count(r.DeletedRows), maintenance.Count(r.EqualityDeleteRows), r.RowsReadPerLiveRow)
	}
	if r.PlanMs > 0 || r.PlanTasks > 0 {
		row("full-scan plan", "%.1f ms, %s", r.PlanMs, maintenance.Counted(r.PlanTasks, "task"))
	}
	tw.Flush()
	if len(r.Recommendations) == 0 {
		fmt.Fprintln(w, "\nno recommendation: the table is healthy")
		return
	}
	fmt.Fprintln(w, "\nrecommendations:")
	for _, rec := range r.Recommendations {
		fmt.Fprintf(w, "  - %s\n", rec.Message)
	}
}
