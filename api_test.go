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
	for _, n := range internalNames(pkgs["floe"]) {
		t.Errorf("the root package's API names %s, a type of an internal package, which a library user cannot name; define the type in the root or in a public package", n)
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

// internalNames lists each internal type the root's exported declarations
// name (in their types, exported fields and signatures). The error types
// are aliases of the stages' own, by design: errors.As holds whichever
// package made them.
func internalNames(pkg *ast.Package) []string {
	var found []string
	for _, f := range pkg.Files {
		internal := map[string]bool{}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if !strings.Contains(path, "/internal/") {
				continue
			}
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			internal[name] = true
		}
		look := func(decl string, n ast.Node) {
			if n == nil || strings.HasSuffix(decl, "Error") {
				return
			}
			ast.Inspect(n, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Field:
					if len(n.Names) > 0 && !n.Names[0].IsExported() {
						return false
					}
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok && internal[id.Name] {
						found = append(found, decl+": "+id.Name+"."+n.Sel.Name)
					}
				}
				return true
			})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() {
					look(d.Name.Name, d.Type)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							look(s.Name.Name, s.Type)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								look(n.Name, s.Type)
							}
						}
					}
				}
			}
		}
	}
	return found
}
