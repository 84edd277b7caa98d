package catalogs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/rest"
)

// explainREST completes an error from opening a REST catalog. When the
// OAuth2 token request fails with a response that holds no OAuth2 error
// (an empty body, an HTML page from a proxy), iceberg-go's message stops
// at the catalog request it was making (`Get ".../v1/config": `). The
// token endpoint is then asked once more, as the client asked it, and its
// answer is told: the status, and the start of the body.
func explainREST(ctx context.Context, props iceberg.Properties, err error) error {
	if !errors.Is(err, rest.ErrOAuthError) || !strings.HasSuffix(strings.TrimSpace(err.Error()), ":") {
		return err
	}
	tokenURL := props["oauth2-server-uri"]
	if tokenURL == "" {
		tokenURL = props["rest.authorization-url"]
	}
	if tokenURL == "" {
		tokenURL = strings.TrimSuffix(props["uri"], "/") + "/v1/oauth/tokens"
	}
	id, secret, found := strings.Cut(props["credential"], ":")
	if !found {
		id, secret = "", props["credential"]
	}
	scope := props.Get("scope", "catalog")
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {scope}}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(form.Encode()))
	if rerr != nil {
		return explained(err, fmt.Sprintf("the OAuth2 token request to %s failed (%v); check the credential and oauth2-server-uri", tokenURL, rerr))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, rerr := http.DefaultClient.Do(req)
	if rerr != nil {
		return explained(err, fmt.Sprintf("the OAuth2 token request to %s failed: %v", tokenURL, rerr))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	what := "an empty body"
	if b := strings.Join(strings.Fields(string(body)), " "); b != "" {
		what = fmt.Sprintf("%q", b)
	}
	return explained(err, fmt.Sprintf("the OAuth2 token request to %s was answered %s with %s and no OAuth2 error; check the credential (-p credential=CLIENT_ID:SECRET) and the token endpoint (-p oauth2-server-uri=URL)", tokenURL, resp.Status, what))
}

// explained is err, whose message ends without its cause, completed by
// cause; it still wraps err.
func explained(err error, cause string) error {
	return &explainedError{msg: strings.TrimSpace(err.Error()) + " " + cause, err: err}
}

type explainedError struct {
	msg string
	err error
}

func (e *explainedError) Error() string { return e.msg }
func (e *explainedError) Unwrap() error { return e.err }
