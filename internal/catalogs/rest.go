package catalogs

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"

	"github.com/floe-io/floe/internal/ingest"
)

// openREST opens a REST catalog as iceberg-go's registry does, with
// floe's transport under its client (restTransport: Idempotency-Keys on
// mutations, resends after a lost answer, timeouts). The properties the
// registry would turn into options are options here too, so that the
// first request (GET /v1/config) is authenticated alike; iceberg-go reads
// all of them again, with the server's configuration, for every later
// request.
func openREST(ctx context.Context, name string, props iceberg.Properties) (catalog.Catalog, error) {
	settings, err := newRESTTransport(props)
	if err != nil {
		return nil, err
	}
	opts, err := restOptions(props)
	if err != nil {
		return nil, err
	}
	cat, err := rest.NewCatalog(ctx, name, props["uri"], append(opts, restTransportFactory(settings))...)
	if err != nil {
		return nil, err
	}
	return cat, nil
}

// restOptions turns the properties iceberg-go's REST registry knows into
// its options, and passes every other property on as it is.
func restOptions(props iceberg.Properties) ([]rest.Option, error) {
	var opts []rest.Option
	other := iceberg.Properties{}
	authURL := ""
	for k, v := range props {
		switch k {
		case "uri", "type":
		case "token":
			opts = append(opts, rest.WithOAuthToken(v))
		case "credential":
			opts = append(opts, rest.WithCredential(v))
		case "scope":
			opts = append(opts, rest.WithScope(v))
		case "audience":
			opts = append(opts, rest.WithAudience(v))
		case "resource":
			opts = append(opts, rest.WithResource(v))
		case "warehouse":
			opts = append(opts, rest.WithWarehouseLocation(v))
		case "metadata_location":
			opts = append(opts, rest.WithMetadataLocation(v))
		case "prefix":
			opts = append(opts, rest.WithPrefix(v))
		case "oauth2-server-uri":
			authURL = v
		case "rest.authorization-url":
			if authURL == "" {
				authURL = v
			}
		case "rest.sigv4-enabled":
			if strings.EqualFold(v, "true") {
				opts = append(opts, rest.WithSigV4RegionSvc(props["rest.signing-region"], props["rest.signing-name"]))
			}
		case "rest.tls.skip-verify":
			opts = append(opts, rest.WithTLSConfig(&tls.Config{InsecureSkipVerify: strings.EqualFold(v, "true")})) //nolint:gosec // the user asked for it
		default:
			other[k] = v
		}
	}
	if authURL != "" {
		u, err := url.Parse(authURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("%w: oauth2-server-uri %q is not a URL (want https://host/path)", ingest.ErrConfig, authURL)
		}
		opts = append(opts, rest.WithAuthURI(u))
	}
	return append(opts, rest.WithAdditionalProps(other)), nil
}
