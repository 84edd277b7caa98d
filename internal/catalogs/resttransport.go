package catalogs

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ingest"
)

// The REST client's timeouts, by Iceberg Java's property names: how long
// to wait for a connection, and for the answer to a request once it is
// sent. A catalog that never answers fails the request (an unknown outcome
// for a commit) instead of holding the run forever.
const (
	RESTConnectTimeoutKey = "rest.client.connection-timeout-ms"
	RESTAnswerTimeoutKey  = "rest.client.socket-timeout-ms"

	defaultRESTConnectTimeout = 10 * time.Second
	defaultRESTAnswerTimeout  = 2 * time.Minute
)

// IdempotencyKeyHeader carries the key of a mutation; the REST
// specification asks for a UUIDv7.
const IdempotencyKeyHeader = "Idempotency-Key"

// A mutation whose answer was lost is sent again with its key this many
// times at most, within resendWindow (and the server's key lifetime).
const (
	maxResends   = 3
	resendWindow = 30 * time.Second
)

// restTransport is the HTTP transport under floe's REST catalog client. It
// carries what iceberg-go's client leaves to the transport: the timeouts,
// and Idempotency-Keys. When the server announces idempotency-key-lifetime
// in GET /v1/config, every mutation carries a key, and one whose answer is
// lost (a broken connection, a timeout, a 5xx) is sent again with the same
// key, so that the server answers with the outcome of the first send
// instead of acting twice. Only a success answers a resend: a refusal may
// be the server refusing to repeat what the lost send did, so the lost
// answer's outcome stays unknown, for the committer to resolve against the
// table.
type restTransport struct {
	base http.RoundTripper
	// lifetime is the server's key lifetime, 0 while it announced none;
	// shared by the sessions of one catalog.
	lifetime *atomic.Int64
}

// restSettings are the transport's settings from the catalog's
// properties.
type restSettings struct {
	connect, answer time.Duration
	lifetime        *atomic.Int64
}

func newRESTTransport(props iceberg.Properties) (*restSettings, error) {
	s := &restSettings{connect: defaultRESTConnectTimeout, answer: defaultRESTAnswerTimeout, lifetime: new(atomic.Int64)}
	for key, d := range map[string]*time.Duration{RESTConnectTimeoutKey: &s.connect, RESTAnswerTimeoutKey: &s.answer} {
		v, ok := props[key]
		if !ok {
			continue
		}
		ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("%w: catalog property %s=%q is not a positive number of milliseconds", ingest.ErrConfig, key, v)
		}
		*d = time.Duration(ms) * time.Millisecond
	}
	return s, nil
}

// restTransportFactory gives iceberg-go a transport per session (one for
// GET /v1/config, one for everything after), each floe's restTransport
// over an http.Transport with the session's TLS configuration.
func restTransportFactory(s *restSettings) rest.Option {
	return rest.WithTransportFactory(func(tlsConfig *tls.Config) (http.RoundTripper, func()) {
		base := &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			TLSClientConfig:       tlsConfig,
			DialContext:           (&net.Dialer{Timeout: s.connect, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   s.connect,
			ResponseHeaderTimeout: s.answer,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConnsPerHost:   4,
		}
		return &restTransport{base: base, lifetime: s.lifetime}, base.CloseIdleConnections
	})
}

// resendWait is the pause before resend attempt (from 1): 250 ms
// doubling.
func resendWait(attempt int) time.Duration { return 250 * time.Millisecond << (attempt - 1) }

func (t *restTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/v1/config") {
		return t.config(req)
	}
	lifetime := time.Duration(t.lifetime.Load())
	if lifetime <= 0 || !isMutation(req) {
		return t.base.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	key := req.Header.Get(IdempotencyKeyHeader)
	if key == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return nil, err
		}
		key = id.String()
	}
	deadline := time.Now().Add(min(lifetime, resendWindow))
	var lost *lostAnswer
	for attempt := 0; ; attempt++ {
		resp, err := t.base.RoundTrip(keyed(req, key, body))
		if err == nil && !unknownOutcome(resp.StatusCode) {
			if lost == nil || resp.StatusCode < 300 {
				return resp, nil
			}
			// A refusal of a resend does not refuse the lost send.
			resp.Body.Close()
			return lost.result()
		}
		if err != nil && req.Context().Err() != nil {
			return nil, err
		}
		if lost, err = newLostAnswer(resp, err); err != nil {
			return nil, err
		}
		if attempt == maxResends || time.Now().After(deadline) {
			return lost.result()
		}
		select {
		case <-time.After(resendWait(attempt + 1)):
		case <-req.Context().Done():
			return lost.result()
		}
	}
}

// keyed is req to send with its key, its body from the bytes kept for
// resends. GetBody stays unset: net/http replays a keyed request on a
// connection that broke by itself, which must not happen behind this
// transport's back (it decides what a resend's answer means).
func keyed(req *http.Request, key string, body []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Header.Set(IdempotencyKeyHeader, key)
	r.Body, r.GetBody, r.ContentLength = io.NopCloser(bytes.NewReader(body)), nil, int64(len(body))
	if body == nil {
		r.Body = nil
	}
	return r
}

// unknownOutcome tells the statuses after which a mutation may or may not
// have happened: the server failed (500), or a gateway could not tell
// (502, 503, 504).
func unknownOutcome(status int) bool {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// isMutation tells the requests that change the catalog, which carry an
// Idempotency-Key: every POST and DELETE but the OAuth2 token request and
// the reports and scan plans, which are not mutations.
func isMutation(req *http.Request) bool {
	if req.Method != http.MethodPost && req.Method != http.MethodDelete {
		return false
	}
	p := strings.TrimSuffix(req.URL.Path, "/")
	for _, s := range []string{"/oauth/tokens", "/metrics", "/plan"} {
		if strings.HasSuffix(p, s) {
			return false
		}
	}
	return !strings.Contains(p, "/plan/") && !strings.HasSuffix(p, "/tasks")
}

// lostAnswer is the outcome of a send whose answer was lost: a transport
// error, or a 5xx whose body is kept to be returned.
type lostAnswer struct {
	resp *http.Response
	body []byte
	err  error
}

func newLostAnswer(resp *http.Response, err error) (*lostAnswer, error) {
	if err != nil {
		return &lostAnswer{err: err}, nil
	}
	defer resp.Body.Close()
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if rerr != nil {
		return &lostAnswer{err: fmt.Errorf("%s: read the answer: %w", resp.Status, rerr)}, nil
	}
	return &lostAnswer{resp: resp, body: body}, nil
}

func (l *lostAnswer) result() (*http.Response, error) {
	if l.err != nil {
		return nil, l.err
	}
	r := *l.resp
	r.Body = io.NopCloser(bytes.NewReader(l.body))
	r.ContentLength = int64(len(l.body))
	return &r, nil
}

// config sends GET /v1/config and learns from its answer whether the
// server keeps Idempotency-Keys, and for how long.
func (t *restTransport) config(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var cfg struct {
		Lifetime string `json:"idempotency-key-lifetime"`
	}
	if json.Unmarshal(body, &cfg) == nil {
		if d, ok := isoDuration(cfg.Lifetime); ok {
			t.lifetime.Store(int64(d))
		}
	}
	return resp, nil
}

var isoDurationRE = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// isoDuration parses the ISO-8601 durations the REST specification uses
// for idempotency-key-lifetime (PT30M, PT24H, P1D).
func isoDuration(s string) (time.Duration, bool) {
	m := isoDurationRE.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(s)))
	if m == nil || s == "P" || strings.HasSuffix(strings.ToUpper(s), "T") {
		return 0, false
	}
	var d time.Duration
	for i, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute} {
		if m[i+1] != "" {
			n, _ := strconv.ParseInt(m[i+1], 10, 64)
			d += time.Duration(n) * unit
		}
	}
	if m[4] != "" {
		f, _ := strconv.ParseFloat(m[4], 64)
		d += time.Duration(f * float64(time.Second))
	}
	return d, d > 0
}
