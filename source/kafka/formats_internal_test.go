package kafka

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/floe-io/floe/internal/fixture"
)

// decodeOne decodes value with src's format into one row, as JSON.
func decodeOne(t *testing.T, src *Source, value []byte) string {
	t.Helper()
	d, body, err := src.decoder(t.Context(), value)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, d.Arrow())
	defer b.Release()
	if err := d.Append(b, body); err != nil {
		t.Fatal(err)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var out bytes.Buffer
	if err := array.RecordToJSON(rec, &out); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String())
}

func registryOn(t *testing.T, srv *fixture.Registry, format string) *Source {
	t.Helper()
	reg, err := NewRegistry(map[string]string{"schema.registry.url": srv.URL, "schema.registry.basic.auth.user.info": fixture.RegistryUser + ":" + fixture.RegistryPass})
	if err != nil {
		t.Fatal(err)
	}
	return &Source{format: format, registry: reg}
}

func field(name string, n int32, typ descriptorpb.FieldDescriptorProto_Type, typeName string, label descriptorpb.FieldDescriptorProto_Label) *descriptorpb.FieldDescriptorProto {
	f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(n), Type: typ.Enum(), Label: label.Enum(), JsonName: proto.String(name)}
	if typeName != "" {
		f.TypeName = proto.String(typeName)
	}
	return f
}

func serialized(t *testing.T, fdp *descriptorpb.FileDescriptorProto) string {
	t.Helper()
	b, err := proto.Marshal(fdp)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// A Protobuf value names its message by index in a schema that imports a
// referenced subject's file and a well-known type; it is decoded with the
// descriptors the registry serves serialized.
func TestProtobufValues(t *testing.T) {
	t.Parallel()
	opt, rep := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL, descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	money := &descriptorpb.FileDescriptorProto{Name: proto.String("money.proto"), Package: proto.String("ex"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Money"), Field: []*descriptorpb.FieldDescriptorProto{
			field("cents", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64, "", opt),
			field("cur", 2, descriptorpb.FieldDescriptorProto_TYPE_STRING, "", opt)}}}}
	order := &descriptorpb.FileDescriptorProto{Name: proto.String("order.proto"), Package: proto.String("ex"), Syntax: proto.String("proto3"),
		Dependency: []string{"money.proto", "google/protobuf/timestamp.proto"},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Unused")},
			{Name: proto.String("Order"), Field: []*descriptorpb.FieldDescriptorProto{
				field("id", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64, "", opt),
				field("total", 2, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".ex.Money", opt),
				field("at", 3, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".google.protobuf.Timestamp", opt),
				field("tags", 4, descriptorpb.FieldDescriptorProto_TYPE_STRING, "", rep)}}}}
	srv := fixture.NewRegistry(t)
	srv.Register("money.proto", sr.Schema{Type: sr.TypeProtobuf, Schema: serialized(t, money)})
	id := srv.Register("orders-value", sr.Schema{Type: sr.TypeProtobuf, Schema: serialized(t, order),
		References: []sr.SchemaReference{{Name: "money.proto", Subject: "money.proto", Version: 1}}})

	files, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(timestamppb.File_google_protobuf_timestamp_proto), money, order}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := files.FindDescriptorByName("ex.Order")
	if err != nil {
		t.Fatal(err)
	}
	md := d.(protoreflect.MessageDescriptor)
	m := dynamicpb.NewMessage(md)
	m.Set(md.Fields().ByName("id"), protoreflect.ValueOfInt64(7))
	total := m.Mutable(md.Fields().ByName("total")).Message()
	total.Set(total.Descriptor().Fields().ByName("cents"), protoreflect.ValueOfInt64(1250))
	total.Set(total.Descriptor().Fields().ByName("cur"), protoreflect.ValueOfString("EUR"))
	at := timestamppb.New(time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC))
	m.Set(md.Fields().ByName("at"), protoreflect.ValueOfMessage(at.ProtoReflect()))
	tags := m.Mutable(md.Fields().ByName("tags")).List()
	tags.Append(protoreflect.ValueOfString("a"))
	tags.Append(protoreflect.ValueOfString("b"))
	body, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	src := registryOn(t, srv, "protobuf")
	got := decodeOne(t, src, fixture.Wire(id, []int{1}, body))
	want := `{"at":"2024-01-02T03:04:05.000006Z","id":7,"tags":["a","b"],"total":{"cents":1250,"cur":"EUR"}}`
	if got != want {
		t.Fatalf("row %s, want %s", got, want)
	}
	if _, _, err := src.decoder(t.Context(), fixture.Wire(id, []int{5}, body)); !isBad(err) || !strings.Contains(err.Error(), "message index [5]") {
		t.Fatalf("an index naming no message: got %v, want bad input", err)
	}
}

// A JSON Schema value: types, required properties non-null, date-time a
// timestamp, a nested object a struct, an array a list, and a $ref to a
// referenced subject's schema.
func TestJSONSchemaValues(t *testing.T) {
	t.Parallel()
	srv := fixture.NewRegistry(t)
	srv.Register("money.json", sr.Schema{Type: sr.TypeJSON, Schema: `{"type":"object","properties":{"cents":{"type":"integer"},"cur":{"type":"string"}},"required":["cents"]}`})
	id := srv.Register("orders-value", sr.Schema{Type: sr.TypeJSON, References: []sr.SchemaReference{{Name: "money.json", Subject: "money.json", Version: 1}},
		Schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{
			"id":{"type":"integer"},"at":{"type":"string","format":"date-time"},"total":{"$ref":"money.json"},
			"tags":{"type":"array","items":{"type":"string"}},"note":{"oneOf":[{"type":"null"},{"$ref":"#/definitions/note"}]}},
			"required":["id","at"],"definitions":{"note":{"type":"string"}}}`})
	src := registryOn(t, srv, "json-schema")
	d, _, err := src.decoder(t.Context(), fixture.Wire(id, nil, []byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Arrow().String(), "schema:\n  fields: 5\n    - id: type=int64\n    - at: type=timestamp[us, tz=UTC]\n    - total: type=struct<cents: int64, cur: utf8 nullable>, nullable\n    - tags: type=list<element: utf8>, nullable\n    - note: type=utf8, nullable"; got != want {
		t.Fatalf("schema\n%s\nwant\n%s", got, want)
	}
	got := decodeOne(t, src, fixture.Wire(id, nil, []byte(`{"id":3,"at":"2024-01-02T03:04:05.5+01:00","total":{"cents":5,"cur":"USD"},"tags":["x"],"extra":1}`)))
	if want := `{"at":"2024-01-02T02:04:05.5Z","id":3,"note":null,"tags":["x"],"total":{"cents":5,"cur":"USD"}}`; got != want {
		t.Fatalf("row %s, want %s", got, want)
	}
}
