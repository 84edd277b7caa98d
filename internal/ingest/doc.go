// Package ingest holds what the stages of ingestion hand each other: the
// Part a source gives the writer, the DataFile the writer gives the
// committer, and the sentinel errors that classify every failure. It is a
// leaf: the root package re-exports these names by alias, so errors.Is
// and type assertions hold whichever package a caller names them through.
package ingest
