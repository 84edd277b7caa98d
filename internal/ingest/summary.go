package ingest

// Snapshot summary keys floe stamps on the snapshots it commits: a batch
// names its query (and, in package commit, its batch and source), a
// maintenance commit its task. Readers use them to tell snapshots floe
// wrote, whose data files' metrics they can trust.
const (
	SummaryQueryID     = "floe.query-id"
	SummaryMaintenance = "floe.maintenance"
)
