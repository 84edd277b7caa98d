#!/usr/bin/env bash
# Counts the calls between floe's source files that one record makes from a
# Parquet file in the landing directory to the table commit, from a real run
# traced with delve (docs/ARCHITECTURE.md, "One batch").
#
#   bench/callpath/trace.sh [CHECKOUT] [OUT]
#
# CHECKOUT is the floe tree to measure (default: this one), so that two
# layouts can be measured the same way. It builds floe without optimisation
# or inlining, writes one 5-row Parquet file, and traces two runs of
# `floe stream`: the first creates the table, the second appends a second
# file to it (the steady state). callpath.py then counts, over floe's own
# code (not cmd/, config/, the standard library or third-party code), the
# calls from one file into another while (*Engine).RunBatch runs.
# Needs delve (go install github.com/go-delve/delve/cmd/dlv@latest) and
# python3.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "${1:-$HERE/../..}" && pwd)
OUT=${2:-$(mktemp -d)}
DLV=${DLV:-$(go env GOPATH)/bin/dlv}
rm -rf "$OUT"; mkdir -p "$OUT/landing"
(cd "$SRC" && go build -gcflags='all=-N -l' -o "$OUT/floe" ./cmd/floe)
(cd "$HERE/../.." && go build -o "$OUT/mkparquet" ./bench/callpath/mkparquet)
cd "$OUT"
args=(stream --source landing --format parquet --table db.t --checkpoint ckpt
      --warehouse wh --trigger available-now --maintenance=false)
for run in 1 2; do
  ./mkparquet "landing/part-000$run.parquet" $(( (run - 1) * 5 )) 5
  "$DLV" trace --exec ./floe --stack 64 '^github.com/floe-io/floe[./]' -- "${args[@]}" \
    >"run$run.stdout" 2>"trace$run.txt"
done
layout=new
[ -f "$SRC/sink.go" ] && layout=old # the layout before internal/write and internal/commit
for run in 1 2; do
  python3 "$HERE/callpath.py" "trace$run.txt" "$SRC" "$layout" --json "run$run.json"
done
python3 "$HERE/edges.py" run1.json run2.json > edges.md
echo "edges of both runs: $OUT/edges.md"
