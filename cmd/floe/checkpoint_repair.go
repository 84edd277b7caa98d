package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/floe-io/floe"
)

func init() {
	helps["checkpoint verify"] = commandHelp{
		usage: "checkpoint verify (PIPELINE.yaml | stream flags) [flags]",
		about: "Hold a pipeline's checkpoint against the table it writes, as every run does before its first batch " +
			"(docs/format/checkpoint.md), without running: exit 0 when the next run resumes exactly; exit 2 with the " +
			"mismatch and its repair when the checkpoint is behind the table, lost files, or names a table the catalog " +
			"no longer has. The pipeline is given as to floe run (a file) or floe stream (flags). " + pipelineFormsNote,
		examples: []example{
			{"A pipeline file.", "floe checkpoint verify pipeline.yaml"},
			{"A pipeline given as flags.", "floe checkpoint verify --source landing/ --format parquet --table db.events --checkpoint ckpt/events"},
		},
	}
	helps["checkpoint rebuild"] = commandHelp{
		usage: "checkpoint rebuild (PIPELINE.yaml | stream flags) [flags]",
		about: "Remake a lost or damaged checkpoint from the record its table holds of the query: the query id, the " +
			"newest batch and the offset it read up to, and for a landing directory the files read so far, found " +
			"again from the recorded count, digest and watermark. It refuses, saying why and changing nothing, when " +
			"the table does not hold enough to do it exactly. A damaged checkpoint is moved aside (DIR.damaged-TIME), " +
			"its quarantined files moved into the new one; one that already matches its table, as floe checkpoint verify " +
			"holds it, is left as it is. " + pipelineFormsNote,
		examples: []example{
			{"After the checkpoint directory was lost.", "floe checkpoint rebuild --source landing/ --format parquet --table db.events --checkpoint ckpt/events"},
			{"A pipeline file.", "floe checkpoint rebuild pipeline.yaml"},
		},
	}
}

// pipelineFormsNote tells which of the flags listed go with which way of
// giving the pipeline.
const pipelineFormsNote = "With a pipeline file, only the flags floe run takes apply, and they override the file; the " +
	"other flags listed (the source, the sink, --table, --mode and the rest) give the pipeline as flags instead of a file."

func checkpointVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, _, err := pipelineConfig("checkpoint verify", args, stderr)
	if err != nil {
		return err
	}
	// Opening a pipeline creates a missing checkpoint: look first.
	st, err := floe.ReadCheckpoint(cfg.Checkpoint)
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(filepath.Join(cfg.Checkpoint, "offsets")); serr != nil {
			return usagef("no checkpoint at %s; the first run creates it, or floe checkpoint rebuild remakes a lost one from the table", st.Dir)
		}
	}
	p, err := floe.Open(ctx, cfg, floe.Options{Logger: newLogger(stderr, slog.LevelWarn)})
	if err != nil {
		return err
	}
	defer p.Close()
	if err := p.Verify(ctx); err != nil {
		return err
	}
	if st, err = floe.ReadCheckpoint(cfg.Checkpoint); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "checkpoint %s matches %s: ", st.Dir, cfg.Sink.Table)
	switch {
	case st.LatestCommit == nil:
		fmt.Fprintln(stdout, "no batch committed yet")
	default:
		fmt.Fprintf(stdout, "batch %d committed", st.LatestCommit.BatchID)
		if st.PendingBatch != nil {
			fmt.Fprintf(stdout, ", batch %d pending (the next run finishes it)", *st.PendingBatch)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

func checkpointRebuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, _, err := pipelineConfig("checkpoint rebuild", args, stderr)
	if err != nil {
		return err
	}
	r, err := floe.RebuildCheckpoint(ctx, cfg, floe.Options{Logger: newLogger(stderr, slog.LevelWarn)})
	if err != nil {
		return err
	}
	switch {
	case r.Matched:
		fmt.Fprintf(stdout, "checkpoint %s already matches table %s at batch %d; nothing to rebuild\n", cfg.Checkpoint, cfg.Sink.Table, r.BatchID)
	case r.BatchID < 0 && r.QueryID == "":
		fmt.Fprintf(stdout, "rebuilt checkpoint %s: nothing was committed to %s, which does not exist, so the next run starts a new query reading the whole input\n", cfg.Checkpoint, cfg.Sink.Table)
	case r.BatchID < 0:
		fmt.Fprintf(stdout, "rebuilt checkpoint %s: query %s has committed nothing to %s, so the next run reads its whole input\n", cfg.Checkpoint, r.QueryID, cfg.Sink.Table)
	default:
		fmt.Fprintf(stdout, "rebuilt checkpoint %s from %s: query %s, batch %d committed up to offset %s\n", cfg.Checkpoint, cfg.Sink.Table, r.QueryID, r.BatchID, offsetText(r.Offset))
	}
	if r.MovedTo != "" {
		fmt.Fprintf(stdout, "the damaged checkpoint is kept at %s\n", r.MovedTo)
	}
	return nil
}
