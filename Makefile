# The test command that README.md and .ci/run name. It installs what the
# interoperability tests need first: the pinned npm packages of interop/ and
# the versitygw S3 server, the real engines of interop/engines (pyspark with
# Iceberg's Spark runtime, PyIceberg, the Apache Kafka broker, the JVM's zstd
# decoders; cached under ~/.cache/floe-engines), and ends with a 10-second fuzz run of the filter
# parser. FLOE_ARROWPOOL_POISON makes any use of a record's memory after its
# Release read garbage (internal/arrowpool). Long suites are opt-in:
#   go test ./cmd/floe -run TestCrashSafety -crash-kills=300
#   go test ./cmd/floe -run TestRandomDamage -chaos-steps 250
#   go test ./cmd/floe -run '^TestFault' -fault-rounds 20
#   go test ./interop -run Spark -spark-all
#   go test ./cmd/floe -run Kafka -kafka=apache
#   bench/run.sh
#   go test ./cmd/floe -run TestReleaseBuild -release-build
.PHONY: test test-deps build release

VERSITYGW := github.com/versity/versitygw/cmd/versitygw@v1.8.0

# The packages whose code runs goroutines of its own check, in their
# TestMain, that no goroutine outlives their tests (fixture.RunWithoutLeaks);
# those packages, and only they, run under the race detector. They run at
# the same time as the others, whose longest (cmd/floe, interop) mostly
# wait on other processes and timers, four tests at a time: each test runs
# once, and the race run's output follows the rest.
RACE = $(sort $(dir $(shell grep -rl --include=main_test.go --exclude-dir=node_modules --exclude-dir=.git 'fixture.RunWithoutLeaks' .)))

# Tests of those packages that hold one goroutine's results against a
# reference over many random inputs gain nothing from the race detector,
# which makes them five to ten times slower: they run without it, after
# the race run.
SEQUENTIAL = ^(TestFilterDifferential|TestPartitionerMatchesPartRef|TestPartitionerMultipleFields)$$

test: test-deps
	go vet ./...
	go vet -tags floetest ./cmd/floe
	@log=$$(mktemp); \
	{ FLOE_ARROWPOOL_POISON=1 go test -race -timeout 20m -skip '$(SEQUENTIAL)' $(RACE) && \
	  FLOE_ARROWPOOL_POISON=1 go test -timeout 20m -run '$(SEQUENTIAL)' ./scan ./internal/write; } >$$log 2>&1 & race=$$!; \
	FLOE_ARROWPOOL_POISON=1 go test -timeout 20m -parallel 4 $$(go list ./... | grep -vxF "$$(go list $(RACE))"); plain=$$?; \
	wait $$race; raced=$$?; \
	echo "go test -race $(RACE), then $(SEQUENTIAL) without it"; cat $$log; rm -f $$log; \
	test $$plain -eq 0 && test $$raced -eq 0
	go test ./filter -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 10s

test-deps: interop/node_modules/.package-lock.json
	interop/engines/install.sh
	@command -v versitygw >/dev/null || test -x "$$(go env GOPATH)/bin/versitygw" || go install $(VERSITYGW)

interop/node_modules/.package-lock.json: interop/package-lock.json
	cd interop && npm ci --no-audit --no-fund

# ./floe, carrying the version git describe gives and the commit, as a
# release binary does (go build alone records neither in a worktree or
# under -buildvcs=false).
STAMP := github.com/floe-io/floe/internal/buildinfo
build:
	go build -ldflags "-X $(STAMP).version=$$(git describe --tags --always --dirty 2>/dev/null) -X $(STAMP).revision=$$(git rev-parse HEAD 2>/dev/null)" -o floe ./cmd/floe

# Static, stripped binaries for linux and darwin on amd64 and arm64 in
# dist/, named by git describe, and dist/SHA256SUMS; PLATFORMS=linux/amd64
# builds only that one, VERSION=v1.2.0 names the release otherwise.
release:
	scripts/release.sh
