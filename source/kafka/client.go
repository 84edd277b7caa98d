package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/floe-io/floe/source"
)

// clientKeys are the kafka.* settings with a franz-go equivalent; the
// others are named in a warning, since Spark passes any of them on and a
// user may expect one to take effect.
var clientKeys = []string{
	"kafka.bootstrap.servers", "kafka.group.id", "kafka.client.id",
	"kafka.security.protocol", "kafka.sasl.mechanism", "kafka.sasl.jaas.config",
	"kafka.ssl.truststore.location", "kafka.ssl.truststore.type",
	"kafka.ssl.keystore.location", "kafka.ssl.keystore.type",
	"kafka.session.timeout.ms", "kafka.heartbeat.interval.ms", "kafka.max.poll.interval.ms",
}

// clientOptions turns the kafka.* options into franz-go's, and lists the
// keys it has no equivalent for.
func clientOptions(opts map[string]string) ([]kgo.Opt, []string, error) {
	var kopts []kgo.Opt
	var unknown []string
	for k := range opts {
		if strings.HasPrefix(k, "kafka.") && !slices.Contains(clientKeys, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	var servers []string
	for s := range strings.SplitSeq(opts["kafka.bootstrap.servers"], ",") {
		if s = strings.TrimSpace(s); s != "" {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		return nil, nil, fmt.Errorf("%w: source.options.kafka.bootstrap.servers is required: the brokers, e.g. \"broker1:9092\"", source.ErrConfig)
	}
	kopts = append(kopts, kgo.SeedBrokers(servers...))
	if id := opts["kafka.client.id"]; id != "" {
		kopts = append(kopts, kgo.ClientID(id))
	}
	proto := strings.ToUpper(strings.TrimSpace(opts["kafka.security.protocol"]))
	switch proto {
	case "", "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
	default:
		return nil, nil, fmt.Errorf("%w: source.options.kafka.security.protocol %q is not known; use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", source.ErrConfig, proto)
	}
	if proto == "SSL" || proto == "SASL_SSL" {
		cfg, err := tlsConfig(opts)
		if err != nil {
			return nil, nil, err
		}
		kopts = append(kopts, kgo.DialTLSConfig(cfg))
	}
	if strings.HasPrefix(proto, "SASL_") {
		m, err := saslMechanism(opts)
		if err != nil {
			return nil, nil, err
		}
		kopts = append(kopts, kgo.SASL(m))
	}
	return kopts, unknown, nil
}

// tlsConfig reads the truststore and keystore as PEM files, Kafka's
// ssl.*.type=PEM; JKS and PKCS12 stores are refused with the way out.
func tlsConfig(opts map[string]string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	for _, k := range []string{"kafka.ssl.truststore.type", "kafka.ssl.keystore.type"} {
		if t := opts[k]; t != "" && !strings.EqualFold(t, "PEM") {
			return nil, fmt.Errorf("%w: source.options.%s %q is not supported; convert the store to PEM (openssl pkcs12 -in store.p12 -out store.pem) and set PEM", source.ErrConfig, k, t)
		}
	}
	if path := opts["kafka.ssl.truststore.location"]; path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%w: source.options.kafka.ssl.truststore.location: %v", source.ErrConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%w: source.options.kafka.ssl.truststore.location %s holds no PEM certificate", source.ErrConfig, path)
		}
		cfg.RootCAs = pool
	}
	if path := opts["kafka.ssl.keystore.location"]; path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%w: source.options.kafka.ssl.keystore.location: %v", source.ErrConfig, err)
		}
		var certs, key []byte
		for blk, rest := pem.Decode(b); blk != nil; blk, rest = pem.Decode(rest) {
			enc := pem.EncodeToMemory(blk)
			if strings.Contains(blk.Type, "PRIVATE KEY") {
				key = enc
			} else {
				certs = append(certs, enc...)
			}
		}
		cert, err := tls.X509KeyPair(certs, key)
		if err != nil {
			return nil, fmt.Errorf("%w: source.options.kafka.ssl.keystore.location %s must hold a PEM certificate and its private key: %v", source.ErrConfig, path, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

var jaasValue = regexp.MustCompile(`(\w+)\s*=\s*"([^"]*)"`)

// saslMechanism reads the user name and password from the JAAS line Spark
// users already have, e.g. org.apache.kafka.common.security.plain.PlainLoginModule
// required username="u" password="p";
func saslMechanism(opts map[string]string) (sasl.Mechanism, error) {
	user, pass := "", ""
	found := false
	for _, m := range jaasValue.FindAllStringSubmatch(opts["kafka.sasl.jaas.config"], -1) {
		switch m[1] {
		case "username":
			user, found = m[2], true
		case "password":
			pass = m[2]
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: source.options.kafka.sasl.jaas.config must give username=\"...\" password=\"...\" (as in Spark's PlainLoginModule or ScramLoginModule line)", source.ErrConfig)
	}
	mech := strings.ToUpper(strings.TrimSpace(opts["kafka.sasl.mechanism"]))
	switch mech {
	case "", "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("%w: source.options.kafka.sasl.mechanism %q is not supported; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", source.ErrConfig, mech)
}
