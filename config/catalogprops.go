package config

import (
	"fmt"
	"slices"
	"strings"
)

// catalogPropertyNames are the catalog properties iceberg-go's catalogs and
// file IO read, and the few floe reads itself (the REST client's timeouts,
// the SQL catalog's jdbc.user and jdbc.password, and Java's
// s3.path-style-access, which floe turns into iceberg-go's inverse). A
// property outside them would be passed on and ignored, so a misspelt
// s3.endpoint would send writes to AWS instead of the endpoint meant.
var catalogPropertyNames = []string{
	// File IO: S3, GCS, ADLS.
	"s3.region", "s3.session-token", "s3.session-token-expires-at-ms", "s3.secret-access-key", "s3.access-key-id",
	"s3.endpoint", "s3.proxy-uri", "s3.connect-timeout", "s3.signer.uri", "s3.remote-signing-enabled",
	"s3.force-virtual-addressing", "s3.path-style-access", "s3.compat-mode", "client.region",
	"gcs.endpoint", "gcs.service.host", "gcs.keypath", "gcs.jsonkey", "gcs.credtype", "gcs.usejsonapi",
	"gcs.oauth2.token", "gcs.oauth2.token-expires-at", "gcs.no-auth",
	"adls.auth.shared-key.account.name", "adls.auth.shared-key.account.key", "adls.endpoint", "adls.protocol",
	"adls.auth.managed-identity.enabled", "adls.client-id", "adls.sas-token-expires-at-ms",
	// REST.
	"uri", "warehouse", "credential", "token", "scope", "audience", "resource", "prefix",
	"oauth2-server-uri", "rest.authorization-url", "rest.sigv4-enabled", "rest.signing-region", "rest.signing-name",
	"rest.tls.skip-verify", "rest.client.connection-timeout-ms", "rest.client.socket-timeout-ms",
	"rest-metrics-reporting-enabled", "rest.metrics-reporting-enabled", "namespace-separator",
	"view-endpoints-supported", "snapshot-loading-mode",
	// SQL.
	"sql.dialect", "sql.driver", "init_catalog_tables", "jdbc.schema-version", "jdbc.user", "jdbc.password",
	// Glue.
	"glue.id", "glue.skip-archive", "glue.access-key-id", "glue.secret-access-key", "glue.session-token",
	"glue.region", "glue.endpoint", "glue.max-retries", "glue.retry-mode",
	// Hive.
	"iceberg.hive.lock-check-min-wait-ms", "iceberg.hive.lock-check-max-wait-ms",
	"lock-check-min-wait-time", "lock-check-max-wait-time", "lock-check-retries",
}

// catalogPropertyPrefixes open families whose names the user chooses: a
// REST request header, an ADLS account's SAS token or connection string.
var catalogPropertyPrefixes = []string{"header.", "adls.sas-token.", "adls.connection-string."}

// CheckCatalogProperty refuses a catalog property no catalog floe opens
// reads, naming the one most likely meant.
func CheckCatalogProperty(key string) error {
	if slices.Contains(catalogPropertyNames, key) {
		return nil
	}
	for _, p := range catalogPropertyPrefixes {
		if strings.HasPrefix(key, p) && len(key) > len(p) {
			return nil
		}
	}
	if s := Closest(key, append(slices.Clone(catalogPropertyNames), catalogPropertyPrefixes...)); s != "" {
		if strings.HasSuffix(s, ".") {
			s += "NAME"
		}
		return fmt.Errorf("unknown catalog property %q; did you mean %q?", key, s)
	}
	return fmt.Errorf("unknown catalog property %q: no catalog floe opens reads it; the catalog properties are iceberg-go's "+
		"(s3.*, gcs.*, adls.*, REST credential, token, header.NAME, sql.*, jdbc.user, glue.*; see docs/config.md), "+
		"and table properties take the prefix table-default. or table-override.", key)
}
