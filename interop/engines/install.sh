#!/usr/bin/env bash
# Installs the real engines the interoperability tests and benchmarks run
# beside floe: pyspark and PyIceberg in a virtual environment, and the jars
# of spark/, kafka/, zstd/ and connect/ (Iceberg's Spark runtime, the Apache
# Kafka broker and Kafka Connect, the JVM's zstd decoders, Kafka Connect's
# Iceberg sink), all pinned in this directory. They go to
# $FLOE_ENGINES_DIR (default ~/.cache/floe-engines); a second run whose pins
# are unchanged installs nothing. Needs python3, java 17+ and mvn.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${FLOE_ENGINES_DIR:-$HOME/.cache/floe-engines}"
pins="$(cat "$here/install.sh" "$here/requirements.txt" "$here"/*/pom.xml | sha256sum | cut -c1-16)"
if [[ -f "$dir/installed" && "$(cat "$dir/installed")" == "$pins" ]]; then
	exit 0
fi
for tool in python3 java mvn; do
	command -v "$tool" >/dev/null || { echo "interop/engines: $tool is needed on PATH" >&2; exit 1; }
done
mkdir -p "$dir"
rm -f "$dir/installed"
echo "interop/engines: installing into $dir" >&2
[[ -x "$dir/venv/bin/python" ]] || python3 -m venv "$dir/venv"
"$dir/venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
for set in spark kafka zstd connect; do
	rm -rf "$dir/jars/$set"
	mvn -q -B -f "$here/$set/pom.xml" dependency:copy-dependencies \
		-DoutputDirectory="$dir/jars/$set" -DincludeScope=runtime \
		$([[ $set == spark ]] && echo -DexcludeTransitive=true)
done
echo "$pins" >"$dir/installed"
