#!/usr/bin/env bash
# Builds floe's release binaries into dist/: static (cgo off), stripped
# (-s -w) and with the build's paths trimmed, each stamped with the version
# `git describe --tags --always --dirty` gives and the commit, which
# `floe version` and floe_build_info report; then dist/SHA256SUMS over the
# binaries built. `make release` runs it.
#
#   scripts/release.sh                                 # the four platforms below
#   PLATFORMS="linux/amd64" scripts/release.sh         # some of them (GOOS/GOARCH)
#   VERSION=v1.2.0 DIST=/tmp/floe-dist scripts/release.sh
set -euo pipefail
cd "$(dirname "$0")/.."

platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
dist=${DIST:-dist}
version=${VERSION:-$(git describe --tags --always --dirty)}
revision=$(git rev-parse HEAD)
stamp=github.com/floe-io/floe/internal/buildinfo

if [[ ! $version =~ ^[A-Za-z0-9][A-Za-z0-9._+-]*$ ]]; then
	echo "release: VERSION=$version is not a version; give letters, digits and . _ + - only, e.g. v1.2.0" >&2
	exit 2
fi

for platform in $platforms; do
	if [[ ! $platform =~ ^[a-z0-9]+/[a-z0-9]+$ ]]; then
		echo "release: platform $platform is not GOOS/GOARCH, e.g. linux/amd64 (go tool dist list names them)" >&2
		exit 2
	fi
done

mkdir -p "$dist"
built=()
for platform in $platforms; do
	os=${platform%/*} arch=${platform#*/}
	name=floe-$version-$os-$arch
	echo "release: $dist/$name" >&2
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
		-ldflags "-s -w -X $stamp.version=$version -X $stamp.revision=$revision" \
		-o "$dist/$name" ./cmd/floe
	built+=("$name")
done

# Only this run's binaries, so that an older release left in dist/ is not
# vouched for.
if command -v sha256sum >/dev/null; then
	sum=(sha256sum)
else
	sum=(shasum -a 256) # macOS
fi
(cd "$dist" && "${sum[@]}" "${built[@]}" >SHA256SUMS)
echo "release: $dist/SHA256SUMS" >&2
