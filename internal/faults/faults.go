// Package faults holds the points where floe's crash tests and benchmarks
// step into a run: a test build of the binary sets them to exit as a kill
// would, a benchmark to time one phase alone. Nothing sets them in a normal
// build, and they are not part of the library's API.
package faults

// AfterTableCommit, when set, is called after each table commit of a
// batch, before the next table's and before the checkpoint records the
// batch; an error stops the run there. Set it before a pipeline runs.
var AfterTableCommit func(table string, batchID, snapshotID int64) error
