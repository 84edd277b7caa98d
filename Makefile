# The test command that README.md and .ci/run name. Long suites are opt-in:
#   go test ./cmd/floe -run TestCrashSafety -crash-kills=300
#   go test ./bench -run '^$' -bench . -benchtime 1x
.PHONY: test build

test:
	go vet ./...
	go test -timeout 20m ./...

build:
	go build -o floe ./cmd/floe
