package floe_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// rootAPI is every name the root package exports: what a library user
// calls to run a pipeline, to read a checkpoint or to commit files written
// elsewhere (a source is written against package source). A mechanism (writing, conforming,
// committing, reading tables) belongs in its own package; adding a name
// here is a decision about the library's API.
var rootAPI = []string{
	// running a pipeline
	"Open", "Options", "Pipeline", "Pipeline.Run", "Pipeline.Stop", "Pipeline.Close", "Pipeline.Progress",
	"Summary",
	"Progress", "Durations", "SourceProgress", "SinkProgress", "TableProgress", "UpsertProgress", "QuarantinedFile", "Backlog",
	"ClusterProgress", "ClusterCommit",
	// maintenance between batches (package maintenance carries it out)
	"MaintenanceRun",
	// reading a checkpoint (package internal/checkpoint keeps it)
	"ReadCheckpoint", "CheckpointStatus", "CheckpointStatus.QuarantineDir",
	// the table as the record: checking a checkpoint against it, rebuilding one from it
	"Pipeline.Verify", "RebuildCheckpoint", "ResumeFromTable", "Rebuilt",
	// committing files written outside a pipeline
	"Committer", "Committer.Commit", "DataFile", "SummaryQueryID", "SummaryBatchID",
	// catalogs
	"OpenCatalog", "ResolveWarehouse", "WarehouseEnv", "ParseIdent",
	// errors
	"ErrConfig", "ErrBadInput", "ErrSchemaMismatch", "ErrCommit", "ErrQueryConflict", "ErrUnstableFile", "ErrTableUnreadable", "ErrTableLost",
	"ErrCheckpointMismatch", "ErrCheckpointInUse", "ErrSourceCannotContinue", "ErrNoInput",
	"BadFileError", "UnstableFileError",
}

func TestRootAPI(t *testing.T) {
	t.Parallel()
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range pkgs["floe"].Files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				name := d.Name.Name
				if d.Recv != nil {
					recv := d.Recv.List[0].Type
					if s, ok := recv.(*ast.StarExpr); ok {
						recv = s.X
					}
					id, ok := recv.(*ast.Ident)
					if !ok || !id.IsExported() {
						continue
					}
					name = id.Name + "." + name
				}
				got = append(got, name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							got = append(got, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								got = append(got, n.Name)
							}
						}
					}
				}
			}
		}
	}
	for _, n := range got {
		if !slices.Contains(rootAPI, n) {
			t.Errorf("the root package exports %s, which is not in its API; unexport it, move it to the package of its mechanism, or add it to rootAPI with a reason", n)
		}
	}
	for _, n := range rootAPI {
		if !slices.Contains(got, n) {
			t.Errorf("rootAPI lists %s, which the root package does not export", n)
		}
	}
}
