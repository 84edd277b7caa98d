#!/bin/sh
# Runs floe's ingest benchmark and commit-latency benchmark and prints their
# tables (Markdown, medians) after Go's benchmark lines.
#
#   bench/run.sh                  # 3 runs of the ingest comparison, 1 latency run
#   COUNT=5 bench/run.sh          # more ingest runs
#   PARTITIONED=1 bench/run.sh    # also the partitioned ingest (about 1 minute more)
#   PARTITIONED=only bench/run.sh # the partitioned ingest alone
#   SCAN=1 bench/run.sh           # also the scan benchmark (about a minute more)
#   SCAN=only bench/run.sh        # the scan benchmark alone
#   PLANNING=1 bench/run.sh       # also the streaming-read planning benchmark (about 2 minutes more)
#   PLANNING=only bench/run.sh    # that benchmark alone
#   LANDING=1 bench/run.sh        # also the landing-directory planning at 10k and 100k files (about 30 seconds)
#   LANDING=only bench/run.sh     # that benchmark alone; FLOE_BENCH_LANDING_FILES=1000000 for a million
#   MAINTAINED=1 bench/run.sh     # also 2,000 one-file batches with and without maintenance (several minutes)
#   MAINTAINED=only bench/run.sh  # that benchmark alone
#   COMPACTION=1 bench/run.sh     # also compaction of 500 small files, floe against raw Parquet (about 2 minutes)
#   COMPACTION=only bench/run.sh  # that benchmark alone
#   UPSERT=1 bench/run.sh         # also the upsert benchmark: 20 batches of 10,000 changes to a 10M-row table (about 10 minutes)
#   UPSERT=only bench/run.sh      # that benchmark alone; FLOE_BENCH_UPSERT_ROWS, _BATCHES, _CHANGES shrink it
#   KAFKA=1 bench/run.sh          # also the Kafka ingest: 1M JSON messages from an in-process cluster (about 3 minutes)
#   KAFKA=only bench/run.sh       # that benchmark alone; FLOE_BENCH_KAFKA_MESSAGES shrinks it
#   FORMATS=1 bench/run.sh        # also the formats benchmark: 2M rows as CSV, JSON lines, and Parquet written
#                                 # by DuckDB and by pyarrow, into zstd-1 Parquet by floe's binary, DuckDB's COPY
#                                 # (1 thread and default threads) and one iceberg-go Append (about 2 minutes a round)
#   FORMATS=only bench/run.sh     # that benchmark alone
#   BATCHES=1 bench/run.sh        # also 10M JSON rows streamed in one batch and in batches of 22 MB, columns declared
#                                 # and inferred (about 1.5 minutes a round; the first run makes 1.4 GB of input)
#   BATCHES=only bench/run.sh     # that benchmark alone
#   SPARK=1 bench/run.sh          # also floe's binary beside Spark Structured Streaming on the same inputs
#                                 # (needs interop/engines/install.sh; about 4 minutes a round)
#   SPARK=only bench/run.sh       # that benchmark alone; FLOE_BENCH_TEXT_FILES sets the CSV/JSON size (10 files)
#
# The scan and formats benchmarks' DuckDB contenders need node and
# @duckdb/node-api (`cd interop && npm ci`), the formats benchmark's
# pyarrow-written input the engines' venv (interop/engines/install.sh);
# without them they are skipped with the reason.
#
# The first run generates the datasets into bench/data/ (or $FLOE_BENCH_DATA):
# about 370 MB of input, kept and reused. Outputs go to a temp dir and are
# removed after each run.
set -eu
cd "$(dirname "$0")/.."
count=${COUNT:-3}
partitioned=${PARTITIONED:-}
scan=${SCAN:-}
planning=${PLANNING:-}
landing=${LANDING:-}
maintained=${MAINTAINED:-}
compaction=${COMPACTION:-}
upsert=${UPSERT:-}
kafka=${KAFKA:-}
spark=${SPARK:-}
formats=${FORMATS:-}
batches=${BATCHES:-}
echo "nproc: $(nproc 2>/dev/null || sysctl -n hw.ncpu)"
go version
# One process per benchmark, so that each prints its own table and the
# latency run stays at one run (500 commits take about a minute).
if [ "$partitioned" != only ] && [ "$scan" != only ] && [ "$planning" != only ] && [ "$landing" != only ] && [ "$maintained" != only ] && [ "$compaction" != only ] && [ "$upsert" != only ] && [ "$kafka" != only ] && [ "$spark" != only ] && [ "$formats" != only ] && [ "$batches" != only ]; then
	go test ./bench -run '^$' -bench '^BenchmarkIngest$' -benchtime 1x -count "$count" -timeout 2h
	go test ./bench -run '^$' -bench '^BenchmarkCommitLatency$' -benchtime 1x -count 1 -timeout 2h
fi
if [ -n "$partitioned" ]; then
	go test ./bench -run '^$' -bench '^BenchmarkIngestPartitioned$' -benchtime 1x -count "$count" -timeout 2h
fi
if [ -n "$scan" ]; then
	# A scan takes milliseconds: ten runs of each contender per round, so
	# that the medians are of 10 × COUNT runs rather than of the noise.
	go test ./bench -run '^$' -bench '^BenchmarkScan$' -benchtime 10x -count "$count" -timeout 2h
fi
if [ -n "$planning" ]; then
	# One set-up (500 commits), then COUNT alternating runs of each mode.
	go test ./bench -run '^$' -bench '^BenchmarkStreamPlanning$' -benchtime "${count}x" -count 1 -timeout 2h
fi
if [ -n "$landing" ]; then
	go test ./bench -run '^$' -bench '^BenchmarkLandingPlanning$' -benchtime 1x -count 1 -timeout 2h
fi
if [ -n "$maintained" ]; then
	go test ./bench -run '^$' -bench '^BenchmarkMaintainedCommits$' -benchtime 1x -count 1 -timeout 2h
fi
if [ -n "$compaction" ]; then
	# One set-up (500 commits), then COUNT rounds of one run of each contender.
	go test ./bench -run '^$' -bench '^BenchmarkCompaction$' -benchtime 1x -count "$count" -timeout 2h
fi
if [ -n "$upsert" ]; then
	# One run: each contender's table is built (not measured), then the batches.
	go test ./bench -run '^$' -bench '^BenchmarkUpsert$' -benchtime 1x -count 1 -timeout 2h
fi
if [ -n "$kafka" ]; then
	# One topic produced (not measured), then COUNT reads of it by each contender.
	go test ./bench -run '^$' -bench '^BenchmarkKafkaIngest$' -benchtime 1x -count "$count" -timeout 2h
fi
if [ -n "$formats" ]; then
	# Inputs made once (not measured), then COUNT rounds of every contender
	# over every input, in an order rotated each round.
	go test ./bench -run '^$' -bench '^BenchmarkFormats$' -benchtime 1x -count "$count" -timeout 2h
fi
if [ -n "$batches" ]; then
	# The input made once (not measured), then COUNT rounds of the four ways,
	# in an order rotated each round.
	go test ./bench -run '^$' -bench '^BenchmarkSmallBatches$' -benchtime 1x -count "$count" -timeout 2h
fi
if [ -n "$spark" ]; then
	# Each round runs every input through both contenders, alternating.
	go test ./bench -run '^$' -bench '^BenchmarkSparkIngest$' -benchtime 1x -count "$count" -timeout 3h
fi
