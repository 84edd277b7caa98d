package config

import "time"

// Maintenance is the table maintenance a pipeline runs between batches, on
// the tables it writes. Each task runs when one of its triggers fires
// (every N commits, an interval, a count over a bound), and the whole run
// stays within Budget so that ingestion latency stays bounded.
type Maintenance struct {
	// Enabled turns automatic maintenance on; it is on by default.
	Enabled *bool `yaml:"enabled"`
	// Budget bounds the time one maintenance run takes between two
	// batches; a task still running at the end is abandoned (a compaction
	// then deletes the files it wrote) and tried again later.
	Budget            Duration            `yaml:"budget"`
	ExpireSnapshots   ExpireMaintenance   `yaml:"expire-snapshots"`
	RewriteDataFiles  RewriteMaintenance  `yaml:"rewrite-data-files"`
	RewriteManifests  ManifestMaintenance `yaml:"rewrite-manifests"`
	RemoveOrphanFiles OrphanMaintenance   `yaml:"remove-orphan-files"`
}

// On tells whether maintenance runs.
func (m *Maintenance) On() bool { return m.Enabled == nil || *m.Enabled }

// ExpireMaintenance expires snapshots.
type ExpireMaintenance struct {
	Enabled *bool `yaml:"enabled"`
	// MaxSnapshots bounds the snapshots the table holds: a commit that
	// reaches it triggers an expiry down to RetainLast.
	MaxSnapshots int `yaml:"max-snapshots"`
	// EveryCommits and Interval trigger it too; 0 is off.
	EveryCommits int      `yaml:"every-commits"`
	Interval     Duration `yaml:"interval"`
	// RetainLast and OlderThan are what the expiry keeps.
	RetainLast int      `yaml:"retain-last"`
	OlderThan  Duration `yaml:"older-than"`
}

// RewriteMaintenance compacts small data files (binpack) and files with
// many rows deleted.
type RewriteMaintenance struct {
	Enabled      *bool    `yaml:"enabled"`
	EveryCommits int      `yaml:"every-commits"`
	Interval     Duration `yaml:"interval"`
	// TargetFileSizeBytes is the output size; 0 takes the table's.
	TargetFileSizeBytes int64 `yaml:"target-file-size-bytes"`
	MinInputFiles       int   `yaml:"min-input-files"`
	// DeleteRatioThreshold triggers a rewrite when this fraction of the
	// table's rows is deleted by position (deletion vectors, position
	// deletes), and picks the files with at least that fraction deleted.
	DeleteRatioThreshold float64 `yaml:"delete-ratio-threshold"`
	// DeleteFileThreshold also picks files that this many delete files
	// apply to; 0 is off.
	DeleteFileThreshold int `yaml:"delete-file-threshold"`
}

// ManifestMaintenance merges manifests.
type ManifestMaintenance struct {
	Enabled *bool `yaml:"enabled"`
	// MaxManifests bounds the current snapshot's manifests: a commit that
	// reaches it triggers a rewrite.
	MaxManifests int      `yaml:"max-manifests"`
	EveryCommits int      `yaml:"every-commits"`
	Interval     Duration `yaml:"interval"`
}

// OrphanMaintenance removes orphan files.
type OrphanMaintenance struct {
	Enabled   *bool    `yaml:"enabled"`
	Interval  Duration `yaml:"interval"`
	OlderThan Duration `yaml:"older-than"`
}

// TaskOn tells whether a task's enabled flag leaves it on (the default).
func TaskOn(enabled *bool) bool { return enabled == nil || *enabled }

func (m *Maintenance) validate(ps *problems) {
	if !m.On() {
		return
	}
	if m.Budget < 0 {
		ps.add("maintenance.budget", 0, "%v is negative; give a positive duration such as 10s", m.Budget)
	}
	nonNegative := func(path string, n int64) {
		if n < 0 {
			ps.add(path, 0, "%d is negative; use a positive number, or 0 for off", n)
		}
	}
	e := m.ExpireSnapshots
	nonNegative("maintenance.expire-snapshots.max-snapshots", int64(e.MaxSnapshots))
	nonNegative("maintenance.expire-snapshots.every-commits", int64(e.EveryCommits))
	nonNegative("maintenance.expire-snapshots.older-than", int64(e.OlderThan))
	if e.RetainLast < 0 {
		ps.add("maintenance.expire-snapshots.retain-last", 0, "%d is negative; keep at least 1 snapshot (the current one)", e.RetainLast)
	}
	if TaskOn(e.Enabled) && e.MaxSnapshots > 0 && e.MaxSnapshots <= e.RetainLast {
		ps.add("maintenance.expire-snapshots.max-snapshots", 0, "%d is not above retain-last %d, so every run would find nothing to expire; make it larger", e.MaxSnapshots, e.RetainLast)
	}
	r := m.RewriteDataFiles
	nonNegative("maintenance.rewrite-data-files.every-commits", int64(r.EveryCommits))
	nonNegative("maintenance.rewrite-data-files.target-file-size-bytes", r.TargetFileSizeBytes)
	nonNegative("maintenance.rewrite-data-files.min-input-files", int64(r.MinInputFiles))
	nonNegative("maintenance.rewrite-data-files.delete-file-threshold", int64(r.DeleteFileThreshold))
	if r.DeleteRatioThreshold < 0 || r.DeleteRatioThreshold > 1 {
		ps.add("maintenance.rewrite-data-files.delete-ratio-threshold", 0, "%g is not a fraction of rows; give one from 0 to 1, such as 0.3", r.DeleteRatioThreshold)
	}
	mf := m.RewriteManifests
	nonNegative("maintenance.rewrite-manifests.max-manifests", int64(mf.MaxManifests))
	nonNegative("maintenance.rewrite-manifests.every-commits", int64(mf.EveryCommits))
	nonNegative("maintenance.remove-orphan-files.older-than", int64(m.RemoveOrphanFiles.OlderThan))
	if TaskOn(m.RemoveOrphanFiles.Enabled) && m.RemoveOrphanFiles.OlderThan > 0 && m.RemoveOrphanFiles.OlderThan < Duration(time.Hour) {
		ps.add("maintenance.remove-orphan-files.older-than", 0, "%v could delete the files of a commit still being written; use 1h or more (Spark's default is 3d)", m.RemoveOrphanFiles.OlderThan)
	}
}
