package kafka

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/floe-io/floe/source"
)

// errUnknownSchema is a schema id the registry does not hold (404).
var errUnknownSchema = errors.New("schema id unknown to the schema registry")

// Registry is a Confluent Schema Registry client, franz-go's sr.Client,
// that fetches value and key schemas by id with the schemas they
// reference, and builds each id's decoder once.
type Registry struct {
	cl  *sr.Client
	url string

	mu   sync.Mutex
	byID map[builtKey]any
}

// builtKey names a decoder: a schema id, and what it was built as (one id
// may serve a value format and a key).
type builtKey struct {
	id   int
	kind string
}

// registered is a schema with the schemas it references, each under the
// name it is referenced by, a reference's own references before it.
type registered struct {
	id     int
	schema sr.Schema
	refs   []namedSchema
}

type namedSchema struct {
	name   string
	schema sr.Schema
}

// NewRegistry reads schema.registry.url and
// schema.registry.basic.auth.user.info (user:password) from the source's
// options.
func NewRegistry(opts map[string]string) (*Registry, error) {
	u := strings.TrimRight(strings.TrimSpace(opts["schema.registry.url"]), "/")
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("%w: source.format avro, debezium-avro, protobuf and json-schema need source.options.schema.registry.url, the registry's http:// or https:// address; got %q", source.ErrConfig, u)
	}
	copts := []sr.ClientOpt{sr.URLs(u), sr.HTTPClient(&http.Client{Timeout: 30 * time.Second}), sr.UserAgent("floe")}
	if info := opts["schema.registry.basic.auth.user.info"]; info != "" {
		user, pass, ok := strings.Cut(info, ":")
		if !ok {
			return nil, fmt.Errorf("%w: source.options.schema.registry.basic.auth.user.info must be user:password", source.ErrConfig)
		}
		copts = append(copts, sr.BasicAuth(user, pass))
	}
	cl, err := sr.NewClient(copts...)
	if err != nil {
		return nil, fmt.Errorf("%w: source.options.schema.registry.url %q: %v", source.ErrConfig, u, err)
	}
	return &Registry{cl: cl, url: u, byID: map[builtKey]any{}}, nil
}

// built is id's decoder of kind, made by build from the registered
// schema, fetched in format (sr.Format; "" for the schema's text), once.
// An id the registry does not hold is errUnknownSchema, a schema build
// refuses source.ErrBadInput: both are the message's fault. Credentials
// refused are a configuration error; any other failure (the registry
// down, a 5xx) is neither, so that the batch fails and is read again.
func (r *Registry) built(ctx context.Context, id int, kind, format string, build func(registered) (any, error)) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := builtKey{id, kind}
	if d, ok := r.byID[k]; ok {
		return d, nil
	}
	if format != "" {
		ctx = sr.WithParams(ctx, sr.Format(format))
	}
	s, err := r.cl.SchemaByID(ctx, id)
	if err != nil {
		return nil, r.failed(err, fmt.Sprintf("schema id %d", id), fmt.Errorf("%w: schema id %d (registry %s)", errUnknownSchema, id, r.url))
	}
	reg := registered{id: id, schema: s}
	if err := r.references(ctx, id, s.References, map[string]bool{}, &reg.refs); err != nil {
		return nil, err
	}
	d, err := build(reg)
	if err != nil {
		return nil, fmt.Errorf("%w: schema id %d: %w", source.ErrBadInput, id, err)
	}
	r.byID[k] = d
	return d, nil
}

// references fetches refs and what they reference in turn, depth first,
// each subject version once.
func (r *Registry) references(ctx context.Context, id int, refs []sr.SchemaReference, seen map[string]bool, out *[]namedSchema) error {
	for _, ref := range refs {
		key := fmt.Sprintf("%s/%d", ref.Subject, ref.Version)
		if seen[key] {
			continue
		}
		seen[key] = true
		ss, err := r.cl.SchemaByVersion(ctx, ref.Subject, ref.Version)
		what := fmt.Sprintf("subject %s version %d, which schema id %d references as %q", ref.Subject, ref.Version, id, ref.Name)
		if err != nil {
			return r.failed(err, what, fmt.Errorf("%w: the registry %s does not hold %s", source.ErrBadInput, r.url, what))
		}
		if err := r.references(ctx, id, ss.References, seen, out); err != nil {
			return err
		}
		*out = append(*out, namedSchema{name: ref.Name, schema: ss.Schema})
	}
	return nil
}

// failed classifies a request's error: notFound for a 404, a
// configuration error for refused credentials, else the registry's
// failure as it is.
func (r *Registry) failed(err error, what string, notFound error) error {
	var re *sr.ResponseError
	if !errors.As(err, &re) {
		return fmt.Errorf("kafka source: schema registry %s unreachable fetching %s (the batch is read again when it answers): %w", r.url, what, err)
	}
	switch re.StatusCode {
	case http.StatusNotFound:
		return notFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%w: schema registry %s refused the request for %s (%d %s); check source.options.schema.registry.basic.auth.user.info",
			source.ErrConfig, r.url, what, re.StatusCode, http.StatusText(re.StatusCode))
	}
	return fmt.Errorf("kafka source: schema registry %s: %s: %d %s: %s (the batch is read again when it answers)", r.url, what, re.StatusCode, http.StatusText(re.StatusCode), re.Error())
}

// wantType refuses a schema of another type than want.
func wantType(s sr.Schema, want sr.SchemaType) error {
	if s.Type != want {
		return fmt.Errorf("it is a %s schema, not %s; choose the source.format of the topic's serializer", s.Type, want)
	}
	return nil
}
