package kafka

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/avrorows"
	"github.com/floe-io/floe/internal/conform"
	"github.com/floe-io/floe/internal/jsonrows"
	"github.com/floe-io/floe/source"
)

// errUnknownSchema is a schema id the registry does not hold (404).
var errUnknownSchema = errors.New("schema id unknown to the schema registry")

// Registry is a Confluent Schema Registry client that fetches value
// schemas by id, each once.
type Registry struct {
	url        string
	user, pass string
	hc         *http.Client

	mu   sync.Mutex
	byID map[uint32]*avrorows.Schema
}

// NewRegistry reads schema.registry.url and
// schema.registry.basic.auth.user.info (user:password) from the source's
// options.
func NewRegistry(opts map[string]string) (*Registry, error) {
	u := strings.TrimRight(strings.TrimSpace(opts["schema.registry.url"]), "/")
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("%w: source.format avro needs source.options.schema.registry.url, the registry's http:// or https:// address; got %q", source.ErrConfig, u)
	}
	r := &Registry{url: u, hc: &http.Client{Timeout: 30 * time.Second}, byID: map[uint32]*avrorows.Schema{}}
	if info := opts["schema.registry.basic.auth.user.info"]; info != "" {
		var ok bool
		if r.user, r.pass, ok = strings.Cut(info, ":"); !ok {
			return nil, fmt.Errorf("%w: source.options.schema.registry.basic.auth.user.info must be user:password", source.ErrConfig)
		}
	}
	return r, nil
}

// Schema is the schema registered under id; a 404 is errUnknownSchema.
func (r *Registry) Schema(ctx context.Context, id uint32) (*avrorows.Schema, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.byID[id]; ok {
		return s, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/schemas/ids/%d", r.url, id), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/json")
	if r.user != "" {
		req.SetBasicAuth(r.user, r.pass)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("kafka source: schema registry %s: %w", r.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("kafka source: schema registry %s: schema id %d: %w", r.url, id, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%w: schema id %d (registry %s)", errUnknownSchema, id, r.url)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("%w: schema registry %s refused the request (%s); check source.options.schema.registry.basic.auth.user.info", source.ErrConfig, r.url, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("kafka source: schema registry %s: schema id %d: %s %s", r.url, id, resp.Status, strings.TrimSpace(string(body)))
	}
	var got struct {
		Schema     string `json:"schema"`
		SchemaType string `json:"schemaType"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		return nil, fmt.Errorf("kafka source: schema registry %s: schema id %d: the answer is not JSON with a \"schema\": %v", r.url, id, err)
	}
	if got.SchemaType != "" && !strings.EqualFold(got.SchemaType, "AVRO") {
		return nil, fmt.Errorf("%w: schema id %d is a %s schema, not Avro", source.ErrBadInput, id, got.SchemaType)
	}
	s, err := avrorows.Parse(got.Schema)
	if err != nil {
		return nil, fmt.Errorf("%w: schema id %d: %w", source.ErrBadInput, id, err)
	}
	r.byID[id] = s
	return s, nil
}

// avroMessage is one message's place in a part: its offset, schema and
// Avro body.
type avroMessage struct {
	offset int64
	schema *avrorows.Schema
	body   []byte
}

// splitConfluent reads the Confluent wire format: magic byte 0, the
// schema id as 4 big-endian bytes, the Avro body.
func splitConfluent(v []byte) (uint32, []byte, error) {
	if len(v) < 5 || v[0] != 0 {
		return 0, nil, errors.New("the value is not in the Confluent Avro wire format (magic byte 0, a 4-byte schema id, the Avro body); " +
			"was it written by a schema-registry serializer?")
	}
	return binary.BigEndian.Uint32(v[1:5]), v[5:], nil
}

// avroReader builds a record per run of messages of one schema, of at most
// batchRows rows; the reader's schema is the union of the part's.
type avroReader struct {
	p      *part
	msgs   []avroMessage
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
	refs   atomic.Int64
}

func (r *avroReader) Retain() { r.refs.Add(1) }

func (r *avroReader) Release() {
	if r.refs.Add(-1) == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *avroReader) Schema() *arrow.Schema          { return r.schema }
func (r *avroReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *avroReader) Record() arrow.RecordBatch      { return r.cur }
func (r *avroReader) Err() error                     { return r.err }
func (r *avroReader) sameRun(s *avrorows.Schema, n int) bool {
	return n < jsonrows.BatchRows && len(r.msgs) > 0 && r.msgs[0].schema == s
}

func (r *avroReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || len(r.msgs) == 0 {
		return false
	}
	s := r.msgs[0].schema
	b := array.NewRecordBuilder(memory.DefaultAllocator, s.Arrow())
	defer b.Release()
	var dead []int // rows of messages set aside, completed with nulls
	for n := 0; r.sameRun(s, n); n++ {
		m := r.msgs[0]
		if err := s.Append(b, m.body); err != nil {
			if !r.p.src.deadLetters {
				r.err = r.p.bad(m.offset, err)
				return false
			}
			_ = r.p.badAt(m.offset, err)
			if completeRow(b, n) {
				dead = append(dead, n)
			} else {
				n--
			}
		}
		r.msgs = r.msgs[1:]
	}
	if r.cur, r.err = withoutRows(b.NewRecordBatch(), dead); r.err != nil {
		return false
	}
	return true
}

// deriveAvro reads each value's schema id and fetches its schema; the
// part's schema is the union of its messages' schemas. Tombstones (null
// values) hold no row.
func (p *part) deriveAvro(ctx context.Context) error {
	var schemas []*arrow.Schema
	seen := map[*avrorows.Schema]bool{}
	for _, r := range p.records {
		if r.Value == nil {
			continue
		}
		if p.setAside(r) {
			continue
		}
		id, body, err := splitConfluent(r.Value)
		if err != nil {
			if err := p.badRecord(r, err); err != nil {
				return err
			}
			continue
		}
		s, err := p.src.registry.Schema(ctx, id)
		if errors.Is(err, errUnknownSchema) || errors.Is(err, source.ErrBadInput) {
			if err := p.badRecord(r, err); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if !seen[s] {
			seen[s] = true
			schemas = append(schemas, s.Arrow())
		}
		p.avro = append(p.avro, avroMessage{offset: r.Offset, schema: s, body: body})
	}
	if len(schemas) == 0 {
		p.schema = arrow.NewSchema(nil, nil)
		return nil
	}
	u, err := conform.Union(schemas)
	if err != nil {
		return p.bad(p.avro[0].offset, fmt.Errorf("the messages' schema versions disagree: %w", err))
	}
	p.schema = u
	return nil
}
