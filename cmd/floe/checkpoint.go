package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/floe-io/floe"
)

type checkpointJSON struct {
	Dir          string                  `json:"dir"`
	Metadata     floe.CheckpointMetadata `json:"metadata"`
	LatestOffset *floe.OffsetEntry       `json:"latestOffsets"`
	LatestCommit *floe.CommitEntry       `json:"latestCommit"`
	// Pending is the batch that started and did not commit; the next run
	// re-runs it with the same offsets.
	Pending     *int64 `json:"pendingBatch"`
	Quarantined int    `json:"quarantinedFiles"`
}

func cmdCheckpoint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "show" {
		return usagef("checkpoint needs a subcommand: show DIR [--json]")
	}
	fs := newFlagSet("checkpoint show", "checkpoint show DIR [--json]", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	var cf catalogFlags
	cf.register(fs) // accepted like everywhere; a checkpoint needs no catalog
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("checkpoint show takes one directory")
	}
	dir, _ := filepath.Abs(pos[0])
	data, err := os.ReadFile(filepath.Join(dir, "metadata"))
	if err != nil {
		return fmt.Errorf("%s is not a floe checkpoint (no readable metadata file: %v)", dir, err)
	}
	ck := &floe.Checkpoint{Dir: dir}
	if err := json.Unmarshal(data, &ck.Metadata); err != nil {
		return fmt.Errorf("checkpoint %s: metadata is not valid JSON: %w", dir, err)
	}
	out := checkpointJSON{Dir: dir, Metadata: ck.Metadata}
	lastOff, err := ck.LatestOffsets()
	if err != nil {
		return err
	}
	if lastOff >= 0 {
		e, err := ck.Offsets(lastOff)
		if err != nil {
			return err
		}
		out.LatestOffset = &e
	}
	lastCommit, err := ck.LatestCommit()
	if err != nil {
		return err
	}
	if lastCommit >= 0 {
		e, err := ck.Commit(lastCommit)
		if err != nil {
			return err
		}
		out.LatestCommit = &e
	}
	if lastOff > lastCommit {
		out.Pending = &lastOff
	}
	if q, err := os.ReadDir(ck.QuarantineDir()); err == nil {
		out.Quarantined = len(q)
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "checkpoint: %s\nquery id:   %s\ncreated:    %s\nsink:       %s\nsource:     %s\n", dir, out.Metadata.ID, out.Metadata.Created.Format(time.RFC3339), out.Metadata.Sink, out.Metadata.Source)
	if out.LatestOffset != nil {
		fmt.Fprintf(stdout, "latest batch planned:   %d  (end offset %s)\n", out.LatestOffset.BatchID, string(out.LatestOffset.End))
	} else {
		fmt.Fprintln(stdout, "latest batch planned:   none")
	}
	if out.LatestCommit != nil {
		fmt.Fprintf(stdout, "latest batch committed: %d  (%d rows, snapshots %v)\n", out.LatestCommit.BatchID, out.LatestCommit.Rows, out.LatestCommit.Snapshots)
	} else {
		fmt.Fprintln(stdout, "latest batch committed: none")
	}
	if out.Pending != nil {
		fmt.Fprintf(stdout, "pending batch:          %d (started, not committed; the next run re-runs it)\n", *out.Pending)
	}
	if out.Quarantined > 0 {
		fmt.Fprintf(stdout, "quarantined files:      %d in %s\n", out.Quarantined, ck.QuarantineDir())
	}
	return nil
}

func msTime(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }
