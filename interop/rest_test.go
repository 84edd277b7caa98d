package interop_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// floe serve as clients that share no code with floe or iceberg-go see it:
// rest.mjs drives it with iceberg-js and plain fetch (namespaces, tables,
// staged create, commits and their 409s, ETags, Idempotency-Key replay,
// rename, register, purge) and validates every response body against the
// Iceberg REST OpenAPI document; then again with bearer tokens and an OAuth2
// client required.
func TestRESTServerOutsideClients(t *testing.T) {
	t.Parallel()
	spec := fixture.Shared(t, "fixtures/rest-catalog-open-api.yaml")
	for _, c := range []struct {
		name       string
		serve, run []string
	}{
		{"open", nil, nil},
		{"tokens", []string{"--tokens", "tokens.txt", "--oauth-clients", "clients.txt"},
			[]string{"--token", "static-t0ken", "--oauth-client", "duckdb:s3cret"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			for name, body := range map[string]string{"tokens.txt": "static-t0ken\n", "clients.txt": "duckdb:s3cret\n"} {
				if err := os.WriteFile(filepath.Join(e.Dir, name), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			base, stop := serveFloe(t, e, c.serve...)
			cmd := exec.Command("node", append([]string{"rest.mjs", "--uri", base, "--spec", spec}, c.run...)...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("rest.mjs: %v\n%s", err, errb.String())
			}
			var res struct {
				Validated int      `json:"validated"`
				Checks    []string `json:"checks"`
			}
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatalf("rest.mjs printed %q: %v", out.String(), err)
			}
			if res.Validated < 50 || len(res.Checks) < 30 {
				t.Fatalf("rest.mjs validated %d bodies in %d checks; the scenario did not run: %s", res.Validated, len(res.Checks), out.String())
			}
			t.Logf("%d response bodies valid against the OpenAPI document, %d checks", res.Validated, len(res.Checks))
			if code := stop(); code != 0 {
				t.Fatalf("floe serve exited %d", code)
			}
			// The scenario drops what it made: the catalog is empty again.
			if r := e.OK("table", "list"); strings.TrimSpace(r.Stdout) != "" {
				t.Fatalf("tables left behind:\n%s", r.Stdout)
			}
		})
	}
}

// serveFloe starts floe serve on the env's warehouse and returns its URL
// and a stop that ends it with SIGTERM and returns its exit code.
func serveFloe(t *testing.T, e *env, args ...string) (string, func() int) {
	t.Helper()
	cmd := e.Command(floeBin, nil, append([]string{"serve", "--warehouse", e.Warehouse, "--listen", "127.0.0.1:0"}, args...)...)
	var stderr fixture.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("floe serve's stderr:\n%s", stderr.String())
		}
	})
	uri := regexp.MustCompile(`uri=(http://[0-9.:]+)`)
	var base string
	fixture.WaitFor(t, 20*time.Second, "floe serve's address", func() bool {
		if m := uri.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	return base, func() int {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode()
			}
			return -1
		}
		return 0
	}
}
