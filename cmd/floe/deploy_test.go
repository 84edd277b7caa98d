package main_test

import (
	"debug/elf"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
	"github.com/floe-io/floe/internal/s3test"
)

var deployBuild = flag.Bool("deploy-build", false, "TestDeployContainerDefinition also builds the image's static binary (minutes on a cold cache: every package again with cgo off)")

// deployDir holds the container definition and the Kubernetes manifests.
var deployDir = filepath.Join("..", "..", "deploy")

// manifest is one Kubernetes manifest file: its documents, and the
// pipeline file its ConfigMap holds.
type manifest struct {
	name     string
	docs     []map[string]any
	pipeline string
}

func readManifests(t *testing.T) []manifest {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(deployDir, "kubernetes", "*.yaml"))
	if err != nil || len(paths) < 2 {
		t.Fatalf("manifests in %s: %v, %v", deployDir, paths, err)
	}
	var out []manifest
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		m := manifest{name: filepath.Base(p)}
		dec := yaml.NewDecoder(f)
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				if err.Error() == "EOF" {
					break
				}
				t.Fatalf("%s: %v", p, err)
			}
			m.docs = append(m.docs, doc)
			if doc["kind"] == "ConfigMap" {
				m.pipeline, _ = dig(doc, "data", "pipeline.yaml").(string)
			}
		}
		f.Close()
		out = append(out, m)
	}
	return out
}

// dig follows keys (and list indexes) into a decoded YAML document.
func dig(v any, path ...any) any {
	for _, k := range path {
		switch key := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[key]
		case int:
			l, ok := v.([]any)
			if !ok || key >= len(l) {
				return nil
			}
			v = l[key]
		}
	}
	return v
}

// The container definition builds what it says: a static binary (no
// dynamic loader, so it runs on an empty base) from ./cmd/floe with cgo
// off, run as the numeric non-root user the manifests require, on the
// port they probe.
func TestDeployContainerDefinition(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(deployDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{"CGO_ENABLED=0 go build", "./cmd/floe", "FROM scratch", "USER 65532:65532", `ENTRYPOINT ["/floe"]`, "EXPOSE 9249", "ca-certificates.crt", "ARG VERSION", "ARG REVISION"} {
		if !strings.Contains(df, want) {
			t.Errorf("deploy/Dockerfile lacks %q", want)
		}
	}
	goMod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	need := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(goMod)
	have := regexp.MustCompile(`ARG GO_VERSION=(\d+\.\d+)`).FindStringSubmatch(df)
	if need == nil || have == nil || have[1] != string(need[1]) {
		t.Errorf("deploy/Dockerfile builds with Go %v, go.mod wants %s", have, need)
	}
	// The build step, where the machine has no container engine: with cgo
	// off every package of the binary builds (go list names one that
	// needs cgo), and with -deploy-build the binary is built and checked
	// to need no dynamic loader, which an empty base lacks.
	list := exec.Command("go", "list", "-e", "-deps", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}{{if .CgoFiles}}{{.ImportPath}} uses cgo{{end}}", "./cmd/floe")
	list.Dir = filepath.Join("..", "..")
	list.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := list.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("./cmd/floe with cgo off: %v\n%s", err, out)
	}
	if !*deployBuild {
		return
	}
	// The Dockerfile's own linker flags, with the build arguments given
	// as `docker build --build-arg` would.
	ldflags := regexp.MustCompile(`-ldflags="([^"]*)"`).FindStringSubmatch(df)
	if ldflags == nil {
		t.Fatal("deploy/Dockerfile's go build has no -ldflags=\"...\"")
	}
	const version, revision = "v9.8.7-image", "0123456789abcdef0123456789abcdef01234567"
	flags := strings.NewReplacer("${VERSION}", version, "${REVISION}", revision).Replace(ldflags[1])
	bin := filepath.Join(t.TempDir(), "floe")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags="+flags, "-o", bin, "./cmd/floe")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Dockerfile's build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("the image's binary asks for a dynamic loader; it would not start on an empty base")
		}
	}
	out, err = exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("floe version: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), version) || !strings.Contains(string(out), revision) {
		t.Fatalf("the image's floe version does not report --build-arg VERSION=%s REVISION=%s: %s", version, revision, out)
	}
}

// Each manifest's pod runs what the binary takes and serves: its pipeline
// file is valid, its arguments are `run` of the mounted file with flags
// `floe run` has, its probes ask /healthz and /readyz on the port the
// pipeline's metrics.listen serves, its checkpoint is on the pod's volume,
// and it runs as the image's non-root user with time to finish a batch.
func TestDeployManifests(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	help := e.OK("run", "--help").Stdout
	for _, m := range readManifests(t) {
		t.Run(m.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(m.pipeline))
			if err != nil {
				t.Fatalf("the ConfigMap's pipeline.yaml: %v", err)
			}
			_, port, err := net.SplitHostPort(cfg.Metrics.Listen)
			if err != nil {
				t.Fatalf("metrics.listen %q: %v", cfg.Metrics.Listen, err)
			}
			var sts map[string]any
			for _, d := range m.docs {
				if d["kind"] == "StatefulSet" {
					sts = d
				}
			}
			if sts == nil {
				t.Fatal("no StatefulSet")
			}
			pod := dig(sts, "spec", "template", "spec")
			c := dig(pod, "containers", 0)
			if g, _ := dig(pod, "terminationGracePeriodSeconds").(int); g < 60 {
				t.Errorf("terminationGracePeriodSeconds %v: a batch finishing after SIGTERM needs longer", g)
			}
			if dig(pod, "securityContext", "runAsNonRoot") != true || dig(pod, "securityContext", "runAsUser") != 65532 {
				t.Errorf("the pod's securityContext %v is not the image's non-root user 65532", dig(pod, "securityContext"))
			}
			mounts := map[string]string{}
			for i := 0; dig(c, "volumeMounts", i) != nil; i++ {
				mounts[dig(c, "volumeMounts", i, "name").(string)] = dig(c, "volumeMounts", i, "mountPath").(string)
			}
			args, _ := dig(c, "args").([]any)
			if len(args) < 2 || args[0] != "run" || args[1] != mounts["pipeline"]+"/pipeline.yaml" {
				t.Fatalf("args %v: want run <the ConfigMap's mount>/pipeline.yaml", args)
			}
			if dig(pod, "volumes", 0, "configMap", "name") != dig(m.docs[0], "metadata", "name") {
				t.Errorf("the pipeline volume is not the manifest's ConfigMap")
			}
			for _, a := range args[2:] {
				if s := a.(string); strings.HasPrefix(s, "--") && !strings.Contains(help, s+" ") {
					t.Errorf("flag %s is not one of floe run's", s)
				}
			}
			if !strings.HasPrefix(cfg.Checkpoint, mounts["state"]+"/") {
				t.Errorf("checkpoint %s is not on the pod's volume %s", cfg.Checkpoint, mounts["state"])
			}
			if p := dig(c, "ports", 0, "containerPort"); fmt.Sprint(p) != port {
				t.Errorf("containerPort %v, metrics.listen serves %s", p, port)
			}
			for probe, path := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
				if dig(c, probe, "httpGet", "path") != path || dig(c, probe, "httpGet", "port") != dig(c, "ports", 0, "name") {
					t.Errorf("%s asks %v on port %v, want %s on the metrics port", probe, dig(c, probe, "httpGet", "path"), dig(c, probe, "httpGet", "port"), path)
				}
			}
			if dig(c, "securityContext", "readOnlyRootFilesystem") != true || mounts["tmp"] != "/tmp" {
				t.Errorf("want a read-only root with /tmp mounted, got %v and %v", dig(c, "securityContext"), mounts)
			}
		})
	}
}

// The single pipeline's manifest runs as its pod would, with what a user
// replaces (the bucket's endpoint and credentials, the catalog) pointed at
// a local S3 server: the landing prefix's files land, and the probes the
// manifest names answer 200.
func TestDeployPipelineRuns(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the manifest's paths are Linux paths")
	}
	srv := s3test.Start(t)
	if err := srv.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	var m manifest
	for _, x := range readManifests(t) {
		if x.name == "pipeline.yaml" {
			m = x
		}
	}
	cfg := m.pipeline
	cfg = regexp.MustCompile(`(?s)catalog:.*?\nsource:`).ReplaceAllString(cfg, "source:")
	cfg = strings.ReplaceAll(cfg, "/var/lib/floe", e.Dir)
	cfg = strings.ReplaceAll(cfg, `":9249"`, `"127.0.0.1:0"`)
	path := filepath.Join(e.Dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		body := fmt.Appendf(nil, "{\"id\": %d}\n{\"id\": %d}\n", 2*i, 2*i+1)
		if err := srv.PutIn("lake", fmt.Sprintf("landing/events/day=%d/part-0.json", i), body); err != nil {
			t.Fatal(err)
		}
	}
	c := dig(m.docs[2], "spec", "template", "spec", "containers", 0)
	var args []string
	for _, a := range dig(c, "args").([]any) {
		args = append(args, a.(string))
	}
	args[1] = path
	catalog := []string{"--warehouse", "s3://lake/warehouse", "--catalog-uri", filepath.Join(e.Dir, "catalog.db"),
		"-p", "s3.endpoint=" + srv.Endpoint, "-p", "s3.region=" + srv.Region}
	creds := []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey}
	run, base := e.startServing(metricsAddr, append(hermeticAWSEnv(), creds...), append(args, catalog...)...)
	defer run.Process.Kill()
	for _, probe := range []string{"livenessProbe", "readinessProbe"} {
		if code := status(t, base+dig(c, probe, "httpGet", "path").(string)); code != 200 {
			t.Fatalf("%s: %d", probe, code)
		}
	}
	fixture.WaitFor(t, 60*time.Second, "the landing prefix's 6 rows", func() bool {
		r := e.RunEnv(floeBin, append(hermeticAWSEnv(), creds...), append([]string{"scan", "db.events", "--count"}, catalog...)...)
		n, _ := strconv.Atoi(strings.TrimSpace(r.Stdout))
		return r.Code == 0 && n == 6
	})
}
