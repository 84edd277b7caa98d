// Package cluster shares one Kafka-read pipeline among workers of a
// consumer group, with one committer per table (docs/ARCHITECTURE.md,
// "Scale-out"). Each worker writes data files for the partitions the group
// assigns it and publishes an Event on a control topic; the coordinator
// commits the events whose ranges continue exactly where the table's record
// ends (Chain), one snapshot per interval. The table's record, never a
// consumer group or the control topic, says what is committed, so a
// restarted, lagging or zombie worker or coordinator can neither skip nor
// repeat a message. Worker runs one worker's intervals under the engine's
// run loop.
package cluster
