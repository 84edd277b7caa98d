package serve

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Auth is bearer-token authentication: static tokens, and tokens the
// server issues to OAuth2 clients through the client-credentials grant of
// /v1/oauth/tokens (what Spark's, PyIceberg's and iceberg-go's `credential`
// property does). Secrets are kept as SHA-256 digests only.
type Auth struct {
	tokens  map[[32]byte]bool
	clients map[string][32]byte
	ttl     time.Duration

	mu     sync.Mutex
	issued map[[32]byte]time.Time // digest → expiry
}

// LoadAuth reads the static tokens (one a line) and the OAuth2 clients
// (CLIENT_ID:SECRET a line) from their files; either may be "". Blank lines
// and lines starting with # are skipped.
func LoadAuth(tokensFile, clientsFile string) (*Auth, error) {
	a := &Auth{tokens: map[[32]byte]bool{}, clients: map[string][32]byte{}, ttl: time.Hour, issued: map[[32]byte]time.Time{}}
	if tokensFile != "" {
		err := eachLine(tokensFile, func(line string) error {
			a.tokens[sha256.Sum256([]byte(line))] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if clientsFile != "" {
		err := eachLine(clientsFile, func(line string) error {
			id, secret, found := strings.Cut(line, ":")
			if !found || id == "" || secret == "" {
				return fmt.Errorf("a line is not CLIENT_ID:SECRET")
			}
			a.clients[id] = sha256.Sum256([]byte(secret))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(a.tokens) == 0 && len(a.clients) == 0 {
		return nil, fmt.Errorf("no token and no client in %s", strings.Trim(tokensFile+" "+clientsFile, " "))
	}
	return a, nil
}

func eachLine(file string, f func(string) error) error {
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := f(line); err != nil {
			return fmt.Errorf("%s line %d: %w", file, n, err)
		}
	}
	return sc.Err()
}

// require lets a request through only with a valid bearer token; the token
// endpoint itself takes client credentials instead.
func (a *Auth) require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/oauth/tokens" {
			next.ServeHTTP(w, r)
			return
		}
		token, found := bearer(r.Header.Get("Authorization"))
		if !found || !a.valid(token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="floe"`)
			msg := "this catalog needs a bearer token: send Authorization: Bearer TOKEN, or get one from POST /v1/oauth/tokens with your client credentials"
			if found {
				msg = "the bearer token is not valid or has expired"
			}
			write(w, fail(http.StatusUnauthorized, "NotAuthorizedException", "%s", msg))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearer is the token of a Bearer credential; the scheme's case does not
// matter (RFC 7235: bearer, BEARER and Bearer are one scheme).
func bearer(header string) (string, bool) {
	scheme, token, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

func (a *Auth) valid(token string) bool {
	d := sha256.Sum256([]byte(token))
	if a.tokens[d] {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.issued[d]
	if ok && time.Now().After(exp) {
		delete(a.issued, d)
		return false
	}
	return ok
}

// token is the OAuth2 token endpoint, client-credentials grant only.
func (a *Auth) token(w http.ResponseWriter, r *http.Request) {
	oauthErr := func(status int, code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			oauthErr(http.StatusRequestEntityTooLarge, "invalid_request", fmt.Sprintf("the request body is over this server's limit of %d bytes", tooLarge.Limit))
			return
		}
		oauthErr(http.StatusBadRequest, "invalid_request", "the request is not a form: "+err.Error())
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "client_credentials" {
		oauthErr(http.StatusBadRequest, "unsupported_grant_type", fmt.Sprintf("grant_type %q is not supported; use client_credentials", g))
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	want, known := a.clients[id]
	got := sha256.Sum256([]byte(secret))
	if !known || subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
		oauthErr(http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	token := hex.EncodeToString(raw)
	now := time.Now()
	a.mu.Lock()
	for d, exp := range a.issued {
		if now.After(exp) {
			delete(a.issued, d)
		}
	}
	a.issued[sha256.Sum256([]byte(token))] = now.Add(a.ttl)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token":      token,
		"token_type":        "bearer",
		"expires_in":        int(a.ttl / time.Second),
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
	})
}
