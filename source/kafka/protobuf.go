package kafka

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/floe-io/floe/internal/protorows"
)

// protoFile is a registered Protobuf schema: a file whose messages the
// values name by their message index, each mapped once.
type protoFile struct {
	fd protoreflect.FileDescriptor

	mu   sync.Mutex
	msgs map[string]*protorows.Schema
}

// protobuf is the Protobuf schema registered under id. The registry
// serves it, and the files it imports, as serialized descriptors
// (format=serialized), so that no .proto text is parsed here.
func (r *Registry) protobuf(ctx context.Context, id int) (*protoFile, error) {
	d, err := r.built(ctx, id, "protobuf", "serialized", func(reg registered) (any, error) {
		if err := wantType(reg.schema, sr.TypeProtobuf); err != nil {
			return nil, err
		}
		main, err := descriptor(reg.schema.Schema, fmt.Sprintf("schema-%d.proto", id))
		if err != nil {
			return nil, err
		}
		var deps []*descriptorpb.FileDescriptorProto
		for _, ref := range reg.refs {
			dep, err := descriptor(ref.schema.Schema, ref.name)
			if err != nil {
				return nil, fmt.Errorf("reference %q: %w", ref.name, err)
			}
			// Imports name a file by its reference name.
			dep.Name = proto.String(ref.name)
			deps = append(deps, dep)
		}
		fd, err := protorows.Files(main, deps)
		if err != nil {
			return nil, err
		}
		return &protoFile{fd: fd, msgs: map[string]*protorows.Schema{}}, nil
	})
	if err != nil {
		return nil, err
	}
	return d.(*protoFile), nil
}

// descriptor reads a serialized descriptor, base64 as the registry
// serves it; name is its file name when it has none.
func descriptor(b64, name string) (*descriptorpb.FileDescriptorProto, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("the registry did not serve the schema as a serialized descriptor (base64): %v", err)
	}
	var fdp descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(raw, &fdp); err != nil {
		return nil, fmt.Errorf("the serialized descriptor does not decode: %v", err)
	}
	if fdp.GetName() == "" {
		fdp.Name = proto.String(name)
	}
	return &fdp, nil
}

// message is the message type a value's message index names.
func (f *protoFile) message(index []int) (*protorows.Schema, error) {
	key := fmt.Sprint(index)
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.msgs[key]; ok {
		return s, nil
	}
	md, err := protorows.Message(f.fd, index)
	if err != nil {
		return nil, err
	}
	s, err := protorows.New(md)
	if err != nil {
		return nil, err
	}
	f.msgs[key] = s
	return s, nil
}
