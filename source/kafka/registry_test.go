package kafka_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/kafka"
)

// The registry is asked once per schema id, with basic auth; an id it does
// not know is bad input, refused credentials a configuration error, and a
// registry that fails or cannot be reached neither: the same id is
// fetched once it answers.
func TestRegistry(t *testing.T) {
	t.Parallel()
	srv := fixture.NewRegistry(t)
	id := srv.Register("r-value", sr.Schema{Schema: `{"type":"record","name":"r","fields":[{"name":"id","type":"long"}]}`})
	auth := fixture.RegistryUser + ":" + fixture.RegistryPass
	reg, err := kafka.NewRegistry(map[string]string{"schema.registry.url": srv.URL + "/", "schema.registry.basic.auth.user.info": auth})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetDown(true)
	_, err = reg.Schema(t.Context(), uint32(id))
	if err == nil || errors.Is(err, source.ErrBadInput) || errors.Is(err, source.ErrConfig) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("registry down: got %v, want an error that is neither bad input nor configuration, naming the status", err)
	}
	srv.SetDown(false)
	before := srv.Hits()
	for range 3 {
		s, err := reg.Schema(t.Context(), uint32(id))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Arrow().String(); !strings.Contains(got, "id: type=int64") {
			t.Fatalf("schema %s", got)
		}
	}
	if n := srv.Hits() - before; n != 1 {
		t.Fatalf("%d requests for one schema id, want 1", n)
	}
	if _, err := reg.Schema(t.Context(), 8); err == nil || !strings.Contains(err.Error(), "schema id 8") || !strings.Contains(err.Error(), "unknown") {
		t.Fatalf("unknown id: got %v", err)
	}
	bad, _ := kafka.NewRegistry(map[string]string{"schema.registry.url": srv.URL, "schema.registry.basic.auth.user.info": "ann:wrong"})
	if _, err := bad.Schema(t.Context(), uint32(id)); !errors.Is(err, source.ErrConfig) || !strings.Contains(err.Error(), "basic.auth.user.info") {
		t.Fatalf("wrong password: got %v", err)
	}
	gone, _ := kafka.NewRegistry(map[string]string{"schema.registry.url": "http://127.0.0.1:1"})
	if _, err := gone.Schema(t.Context(), uint32(id)); err == nil || errors.Is(err, source.ErrBadInput) || errors.Is(err, source.ErrConfig) || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("registry unreachable: got %v, want an error that is neither bad input nor configuration", err)
	}
	for _, opts := range []map[string]string{{}, {"schema.registry.url": "registry:8081"},
		{"schema.registry.url": "http://r", "schema.registry.basic.auth.user.info": "nocolon"}} {
		if _, err := kafka.NewRegistry(opts); !errors.Is(err, source.ErrConfig) {
			t.Errorf("%v: got %v, want a configuration error", opts, err)
		}
	}
}

// An Avro schema using a named type of a referenced subject, itself
// referencing another, is parsed with both.
func TestRegistryAvroReferences(t *testing.T) {
	t.Parallel()
	srv := fixture.NewRegistry(t)
	srv.Register("ex.Money", sr.Schema{Schema: `{"type":"record","name":"Money","namespace":"ex","fields":[{"name":"cents","type":"long"},{"name":"cur","type":"ex.Currency"}]}`,
		References: []sr.SchemaReference{{Name: "ex.Currency", Subject: "ex.Currency", Version: 1}}})
	srv.Register("ex.Currency", sr.Schema{Schema: `{"type":"enum","name":"Currency","namespace":"ex","symbols":["EUR","USD"]}`})
	id := srv.Register("orders-value", sr.Schema{Schema: `{"type":"record","name":"Order","namespace":"ex","fields":[{"name":"id","type":"long"},{"name":"total","type":"ex.Money"}]}`,
		References: []sr.SchemaReference{{Name: "ex.Money", Subject: "ex.Money", Version: 1}}})
	reg, err := kafka.NewRegistry(map[string]string{"schema.registry.url": srv.URL, "schema.registry.basic.auth.user.info": fixture.RegistryUser + ":" + fixture.RegistryPass})
	if err != nil {
		t.Fatal(err)
	}
	s, err := reg.Schema(t.Context(), uint32(id))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Arrow().String(); !strings.Contains(got, "total: type=struct<cents: int64, cur: utf8>") {
		t.Fatalf("schema %s, want total a struct of cents and cur", got)
	}
	missing := srv.Register("broken-value", sr.Schema{Schema: `{"type":"record","name":"B","fields":[{"name":"m","type":"ex.Nope"}]}`,
		References: []sr.SchemaReference{{Name: "ex.Nope", Subject: "ex.Nope", Version: 1}}})
	if _, err := reg.Schema(t.Context(), uint32(missing)); !errors.Is(err, source.ErrBadInput) || !strings.Contains(err.Error(), "subject ex.Nope version 1") {
		t.Fatalf("a missing reference: got %v, want bad input naming it", err)
	}
}
