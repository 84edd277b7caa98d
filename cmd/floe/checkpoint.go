package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/source"
)

func init() {
	helps["checkpoint show"] = commandHelp{
		usage: "checkpoint show DIR [flags]",
		about: "Print what a checkpoint records (docs/format/checkpoint.md): the query it belongs to, its newest batch " +
			"planned and committed with the snapshot each table got, a batch that started and did not commit, and " +
			"quarantined files. It reads the checkpoint without locking it, so it works beside a running query.",
		examples: []example{
			{"As text.", "floe checkpoint show ckpt/events"},
			{"As JSON, for scripts.", "floe checkpoint show ckpt/events --json"},
		},
	}
}

var checkpointSubcommands = []subcommand{
	{"show", "what a checkpoint records: query, latest batches, pending batch", checkpointShow},
	{"verify", "check a pipeline's checkpoint against its table, without running", checkpointVerify},
	{"rebuild", "remake a lost or damaged checkpoint from its table's record", checkpointRebuild},
}

func checkpointShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("checkpoint show", stderr)
	asJSON := fs.Bool("json", false, "Print JSON.")
	// A checkpoint needs no catalog; the catalog flags are still accepted,
	// unlisted, for scripts that pass them to every command.
	var cf catalogFlags
	cf.register(fs)
	cf.registerPathPrefix(fs)
	fs.hide(catalogFlagNames()...)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("checkpoint show takes one directory, e.g. floe checkpoint show ckpt/events")
	}
	st, err := floe.ReadCheckpoint(pos[0])
	if errors.Is(err, os.ErrNotExist) {
		return usagef("no checkpoint at %s (no metadata file); check the directory", st.Dir)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, st)
	}
	printCheckpoint(stdout, st)
	return nil
}

// printCheckpoint lists a checkpoint's status for people.
func printCheckpoint(w io.Writer, st floe.CheckpointStatus) {
	m := st.Metadata
	fmt.Fprintf(w, "checkpoint: %s\nquery id:   %s\ncreated:    %s\nsink:       %s\nsource:     %s\n", st.Dir, m.ID, m.Created.Format(time.RFC3339), m.Sink, m.Source)
	if o := st.LatestOffsets; o != nil {
		fmt.Fprintf(w, "latest batch planned:   %d at %s, up to offset %s\n", o.BatchID, msTime(o.TimestampMs), offsetText(o.End))
	} else {
		fmt.Fprintln(w, "latest batch planned:   none")
	}
	if c := st.LatestCommit; c != nil {
		fmt.Fprintf(w, "latest batch committed: %d at %s, %s\n", c.BatchID, msTime(c.TimestampMs), plural(c.Rows, "row"))
		for _, t := range slices.Sorted(maps.Keys(c.Snapshots)) {
			fmt.Fprintf(w, "  %s: snapshot %d\n", t, c.Snapshots[t])
		}
		if len(c.Snapshots) == 0 {
			fmt.Fprintln(w, "  no snapshot (the batch had no rows)")
		}
	} else {
		fmt.Fprintln(w, "latest batch committed: none")
	}
	if st.PendingBatch != nil {
		fmt.Fprintf(w, "pending batch:          %d (started, not committed; the next run re-runs it)\n", *st.PendingBatch)
	}
	if st.QuarantinedFiles > 0 {
		fmt.Fprintf(w, "quarantined files:      %d in %s\n", st.QuarantinedFiles, st.QuarantineDir())
	}
}

// offsetText shows a source's offset, a JSON object of the source's own,
// as key=value pairs: {"logOffset":4} as logOffset=4.
func offsetText(o source.Offset) string {
	var fields map[string]any
	if err := json.Unmarshal(o, &fields); err != nil || len(fields) == 0 {
		return string(o)
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		v, _ := json.Marshal(fields[k])
		parts = append(parts, k+"="+string(v))
	}
	return strings.Join(parts, " ")
}

func msTime(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }
