// Package protorows maps Protobuf message types onto Arrow and appends
// Protobuf messages to Arrow rows: the Kafka source's format protobuf,
// whose descriptors come from a schema registry.
package protorows

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	// The well-known types a schema imports without registering them as
	// references: the registry's serializers treat them as built in.
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
)

// Files builds the file descriptors of main and its dependencies deps,
// each a FileDescriptorProto; a dependency neither in deps nor a
// well-known type is an error naming it.
func Files(main *descriptorpb.FileDescriptorProto, deps []*descriptorpb.FileDescriptorProto) (protoreflect.FileDescriptor, error) {
	set := &descriptorpb.FileDescriptorSet{}
	have := map[string]bool{}
	for _, f := range append(deps, main) {
		if !have[f.GetName()] {
			have[f.GetName()] = true
			set.File = append(set.File, f)
		}
	}
	for _, f := range append(deps, main) {
		for _, dep := range f.GetDependency() {
			if have[dep] {
				continue
			}
			known, err := protoregistry.GlobalFiles.FindFileByPath(dep)
			if err != nil {
				return nil, fmt.Errorf("%s imports %s, which is neither a schema reference nor a well-known type", f.GetName(), dep)
			}
			have[dep] = true
			set.File = append([]*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(known)}, set.File...)
		}
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("the Protobuf descriptors do not resolve: %w", err)
	}
	return files.FindFileByPath(main.GetName())
}

// Message is the message type of a Confluent message index: the index of
// a top-level message in fd, then of a nested message in it, and so on.
func Message(fd protoreflect.FileDescriptor, index []int) (protoreflect.MessageDescriptor, error) {
	if len(index) == 0 {
		index = []int{0}
	}
	msgs := fd.Messages()
	var md protoreflect.MessageDescriptor
	for _, i := range index {
		if i < 0 || i >= msgs.Len() {
			return nil, fmt.Errorf("message index %v names no message of %s", index, fd.Path())
		}
		md = msgs.Get(i)
		msgs = md.Messages()
	}
	return md, nil
}

// Schema is one message type and the Arrow columns its messages become.
type Schema struct {
	msg   protoreflect.MessageDescriptor
	arrow *arrow.Schema
}

// New maps a message type onto Arrow: its fields become columns, typed as
// fieldType says.
func New(md protoreflect.MessageDescriptor) (*Schema, error) {
	st, err := structOf(md, nil)
	if err != nil {
		return nil, err
	}
	return &Schema{msg: md, arrow: arrow.NewSchema(st.Fields(), nil)}, nil
}

// Arrow is the Arrow schema of the messages' rows.
func (s *Schema) Arrow() *arrow.Schema { return s.arrow }

// Name is the message type's full name.
func (s *Schema) Name() string { return string(s.msg.FullName()) }

// Append decodes one message into b's next row.
func (s *Schema) Append(b *array.RecordBuilder, body []byte) error {
	m := dynamicpb.NewMessage(s.msg)
	if err := proto.Unmarshal(body, m); err != nil {
		return fmt.Errorf("the Protobuf body does not decode as %s: %w", s.msg.FullName(), err)
	}
	fields := s.msg.Fields()
	for i := range fields.Len() {
		if err := appendField(b.Field(i), fields.Get(i), m); err != nil {
			return err
		}
	}
	return nil
}

const timestampName = "google.protobuf.Timestamp"

// isWrapper tells the well-known wrappers (Int64Value, StringValue, ...),
// read as their value, null when absent.
func isWrapper(md protoreflect.MessageDescriptor) bool {
	return md.ParentFile().Path() == "google/protobuf/wrappers.proto"
}

// structOf maps a message's fields; seen are the messages being mapped,
// which a message may not contain again.
func structOf(md protoreflect.MessageDescriptor, seen []protoreflect.FullName) (*arrow.StructType, error) {
	for _, n := range seen {
		if n == md.FullName() {
			return nil, fmt.Errorf("message %s contains itself, which a table cannot hold", md.FullName())
		}
	}
	seen = append(seen, md.FullName())
	fields := md.Fields()
	out := make([]arrow.Field, fields.Len())
	for i := range fields.Len() {
		fd := fields.Get(i)
		dt, err := fieldType(fd, seen)
		if err != nil {
			return nil, err
		}
		out[i] = arrow.Field{Name: string(fd.Name()), Type: dt, Nullable: nullable(fd)}
	}
	return arrow.StructOf(out...), nil
}

// nullable tells whether a field may be absent: one with presence
// (optional, a message, a oneof member). Others read as their default.
func nullable(fd protoreflect.FieldDescriptor) bool {
	return !fd.IsList() && !fd.IsMap() && fd.HasPresence()
}

// fieldType maps a field: integers as int32 or int64 (unsigned ones as
// the next wider signed type, uint64 as int64), float and double, bool,
// string, bytes as binary, an enum as its value's name, Timestamp as a
// timestamp, a wrapper as its value, another message as a struct,
// repeated fields as lists, maps as maps.
func fieldType(fd protoreflect.FieldDescriptor, seen []protoreflect.FullName) (arrow.DataType, error) {
	if fd.IsMap() {
		k, err := kindType(fd.MapKey(), seen)
		if err != nil {
			return nil, err
		}
		v, err := kindType(fd.MapValue(), seen)
		if err != nil {
			return nil, err
		}
		mt := arrow.MapOf(k, v)
		mt.SetItemNullable(false)
		return mt, nil
	}
	t, err := kindType(fd, seen)
	if err != nil {
		return nil, err
	}
	if fd.IsList() {
		return arrow.ListOfNonNullable(t), nil
	}
	return t, nil
}

func kindType(fd protoreflect.FieldDescriptor, seen []protoreflect.FullName) (arrow.DataType, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return arrow.FixedWidthTypes.Boolean, nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return arrow.PrimitiveTypes.Int32, nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind,
		protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return arrow.PrimitiveTypes.Int64, nil
	case protoreflect.FloatKind:
		return arrow.PrimitiveTypes.Float32, nil
	case protoreflect.DoubleKind:
		return arrow.PrimitiveTypes.Float64, nil
	case protoreflect.StringKind, protoreflect.EnumKind:
		return arrow.BinaryTypes.String, nil
	case protoreflect.BytesKind:
		return arrow.BinaryTypes.Binary, nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		md := fd.Message()
		switch {
		case md.FullName() == timestampName:
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
		case isWrapper(md):
			return kindType(md.Fields().ByName("value"), seen)
		}
		return structOf(md, seen)
	}
	return nil, fmt.Errorf("field %s has Protobuf kind %s, which floe does not read", fd.FullName(), fd.Kind())
}

func appendField(b array.Builder, fd protoreflect.FieldDescriptor, m protoreflect.Message) error {
	switch {
	case fd.IsMap():
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		var err error
		m.Get(fd).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			if err = appendValue(mb.KeyBuilder(), fd.MapKey(), k.Value()); err == nil {
				err = appendValue(mb.ItemBuilder(), fd.MapValue(), v)
			}
			return err == nil
		})
		return err
	case fd.IsList():
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		l := m.Get(fd).List()
		for i := range l.Len() {
			if err := appendValue(lb.ValueBuilder(), fd, l.Get(i)); err != nil {
				return err
			}
		}
		return nil
	case nullable(fd) && !m.Has(fd):
		b.AppendNull()
		return nil
	}
	return appendValue(b, fd, m.Get(fd))
}

// appendValue appends one value of fd's kind (an element, for a list).
func appendValue(b array.Builder, fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		b.(*array.BooleanBuilder).Append(v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		b.(*array.Int32Builder).Append(int32(v.Int()))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		b.(*array.Int64Builder).Append(v.Int())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		u := v.Uint()
		if u > math.MaxInt64 {
			return fmt.Errorf("field %s: %d is larger than the largest long, %d", fd.FullName(), u, int64(math.MaxInt64))
		}
		b.(*array.Int64Builder).Append(int64(u))
	case protoreflect.FloatKind:
		b.(*array.Float32Builder).Append(float32(v.Float()))
	case protoreflect.DoubleKind:
		b.(*array.Float64Builder).Append(v.Float())
	case protoreflect.StringKind:
		b.(*array.StringBuilder).Append(v.String())
	case protoreflect.EnumKind:
		name := strconv.Itoa(int(v.Enum()))
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			name = string(ev.Name())
		}
		b.(*array.StringBuilder).Append(name)
	case protoreflect.BytesKind:
		b.(*array.BinaryBuilder).Append(v.Bytes())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return appendMessage(b, fd.Message(), v.Message())
	default:
		return fmt.Errorf("field %s has Protobuf kind %s, which floe does not read", fd.FullName(), fd.Kind())
	}
	return nil
}

func appendMessage(b array.Builder, md protoreflect.MessageDescriptor, m protoreflect.Message) error {
	fields := md.Fields()
	switch {
	case md.FullName() == timestampName:
		secs, nanos := m.Get(fields.ByName("seconds")).Int(), m.Get(fields.ByName("nanos")).Int()
		if nanos%1000 != 0 {
			return errors.New("a Timestamp finer than the microseconds an Iceberg timestamptz holds")
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(secs*1_000_000 + nanos/1000))
		return nil
	case isWrapper(md):
		return appendValue(b, fields.ByName("value"), m.Get(fields.ByName("value")))
	}
	sb := b.(*array.StructBuilder)
	sb.Append(true)
	for i := range fields.Len() {
		if err := appendField(sb.FieldBuilder(i), fields.Get(i), m); err != nil {
			return err
		}
	}
	return nil
}
