package pqgo

import (
	"reflect"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// Group is a Parquet group that keeps its fields in the given order:
// parquet-go's Group is a map and sorts them by name, but a data file's
// columns should follow the table's schema. Rows are map[string]any.
type Group []pq.Field

func (g Group) ID() int                     { return 0 }
func (g Group) String() string              { return "message table " + g.describe() }
func (g Group) Type() pq.Type               { return pq.Group{}.Type() }
func (g Group) Optional() bool              { return false }
func (g Group) Repeated() bool              { return false }
func (g Group) Required() bool              { return true }
func (g Group) Leaf() bool                  { return false }
func (g Group) Fields() []pq.Field          { return g }
func (g Group) Encoding() encoding.Encoding { return nil }
func (g Group) Compression() compress.Codec { return nil }
func (g Group) GoType() reflect.Type        { return reflect.TypeOf(map[string]any{}) }

func (g Group) describe() string {
	names := make([]string, len(g))
	for i, f := range g {
		names[i] = f.Name()
	}
	return "{" + strings.Join(names, ", ") + "}"
}

// Field names node as a field of a Group.
func Field(node pq.Node, name string) pq.Field { return namedField{Node: node, name: name} }

type namedField struct {
	pq.Node
	name string
}

func (f namedField) Name() string { return f.name }
func (f namedField) Value(base reflect.Value) reflect.Value {
	return base.MapIndex(reflect.ValueOf(f.name))
}
