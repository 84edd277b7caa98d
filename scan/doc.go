// Package scan reads Iceberg tables: it selects a snapshot (current, by
// id, timestamp, branch or tag), pushes a filter down to iceberg-go's plan
// and applies it exactly to each row, applies deletes, and fixes what
// iceberg-go reads wrong in tables other engines wrote (partition values
// of absent columns, initial defaults, plain fixed UUIDs). Table streams
// rows, Count counts them from metadata where it can, Explain shows the
// plan, and FileReader reads chosen data files (the Iceberg source's
// reader).
package scan
