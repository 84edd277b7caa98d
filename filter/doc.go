// Package filter parses SQL-like row filters such as
//
//	id > 5 AND status = 'ACTIVE'
//
// (the syntax of Beam Managed I/O's filter option, a subset of Calcite SQL)
// and turns them into two things: an iceberg-go expression that prunes
// files, and an exact row-level matcher over Arrow records.
//
// Parse builds an Expr from text; Bind resolves it against a table schema
// and returns a Bound with the Pushed iceberg expression, the Residual the
// rows must still be checked against, and matchers for both.
//
// Whether iceberg-go filters rows: yes. In iceberg-go v0.7.0,
// table.Scan(table.WithRowFilter(f)).ToArrowRecords prunes manifests, files
// and Parquet row groups with f and then filters every record batch with it
// (arrowScan converts f to Substrait and applies compute.Filter), so rows a
// scan returns satisfy Pushed and the ResidualMatcher finishes the job.
// Readers that use Pushed for planning only (PlanFiles and their own
// Parquet reader) apply Bound.Matcher, the whole filter, instead.
//
// Because the scan runs Pushed through Arrow kernels, Pushed avoids what
// those kernels cannot do in arrow-go v18.8.0: starts_with (LIKE 'abc%'
// becomes a range), is_null on decimals, and predicates on fields inside
// structs (those stay residual).
package filter
