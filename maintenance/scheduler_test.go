package maintenance_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/floe-io/floe"
	"github.com/floe-io/floe/config"
)

// TestSchedulerBoundsAStream: a pipeline of 40 one-file batches with
// maintenance keeps its snapshots and manifests under their bounds,
// compacts its files, and holds every row once; without it, they pile up.
func TestSchedulerBoundsAStream(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, m config.Maintenance) *rwEnv {
		e := newRWEnv(t)
		for i := range int64(40) {
			e.land(idRange(i*10, i*10+10))
		}
		cfg := e.pipeline(config.Trigger{})
		cfg.Maintenance = m
		cfg.SetDefaults()
		ctx := context.Background()
		p, err := floe.Open(ctx, cfg, floe.Options{Catalog: e.cat})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := p.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if got := e.ids(); !slices.Equal(got, idRange(0, 400)) {
			t.Fatalf("%d ids, want 400", len(got))
		}
		return e
	}
	off := false
	e := run(t, config.Maintenance{Enabled: &off})
	if n := len(e.table().Metadata().Snapshots()); n != 40 {
		t.Fatalf("without maintenance: %d snapshots, want 40", n)
	}
	e = run(t, config.Maintenance{
		ExpireSnapshots:  config.ExpireMaintenance{MaxSnapshots: 10, RetainLast: 5},
		RewriteManifests: config.ManifestMaintenance{MaxManifests: 5},
		RewriteDataFiles: config.RewriteMaintenance{EveryCommits: 10, MinInputFiles: 3},
		Budget:           config.Duration(time.Minute),
	})
	tbl := e.table()
	if n := len(tbl.Metadata().Snapshots()); n > 10 {
		t.Fatalf("with maintenance: %d snapshots, want at most 10", n)
	}
	if n := len(e.dataFiles()); n > 12 {
		t.Fatalf("with maintenance: %d data files, want compaction to have merged them", n)
	}
	ctx := context.Background()
	fs, _ := tbl.FS(ctx)
	ms, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) > 5 {
		t.Fatalf("with maintenance: %d manifests, want at most 5", len(ms))
	}
}
