// Package maintenance keeps Iceberg tables fast to read and cheap to commit
// to: expiring snapshots, compacting data files (and applying their
// deletes), converting equality deletes into deletion vectors, rewriting
// manifests, removing orphan files, reporting a table's health, and
// scheduling all of it between a pipeline's batches.
//
// Every operation that commits does so against freshly loaded metadata and
// retries a lost race (Commit), so it may run beside a streaming writer:
// a compaction validated against the appends and deletes that happened
// meanwhile never loses or duplicates rows, nor brings a deleted one back.
package maintenance
