#!/bin/bash
# How long a write to a PostgreSQL store's names rollup waits while device sets are built.
#
# Every 0.1 s the probe takes the lock an insert into `rollup_names` takes (`ROW EXCLUSIVE`), which a
# device-set build's `SHARE ROW EXCLUSIVE` holds off for its transaction, and times the wait with
# psql's `\timing`. Start it, build (e.g. empty the schema's built tables, then run
# `REPORT_BENCHMARK_REUSE=1 … ReportBenchmark 10000000`, which builds what a kept store lacks), and
# stop it with Ctrl-C or let it end: it prints the probes done and the waits' p50, p99 and longest (ms).
#
# Usage: POSTGRES_URL=postgres://… Tools/Benchmarks/device-sets/write-wait.sh <schema> [seconds, default 300]
# Needs psql. Talks to the given server only, takes no lock longer than a write does, and ends by itself.
set -euo pipefail
schema=${1:?usage: write-wait.sh <schema> [seconds]}
seconds=${2:-300}
: "${POSTGRES_URL:?set POSTGRES_URL}"
[[ $schema =~ ^[a-z_][a-z0-9_]*$ ]] || { echo "write-wait.sh: schema must be a plain lower-case name" >&2; exit 2; }
waits=$(mktemp)
trap 'rm -f "$waits"' EXIT
report() {
  sort -n "$waits" | awk '{ a[NR] = $1 } END {
    if (NR == 0) { print "no probe finished"; exit }
    printf "probes %d, wait p50 %.1f ms, p99 %.1f ms, longest %.1f ms\n", NR, a[int((NR + 1) * 0.5)], a[int((NR - 1) * 0.99) + 1], a[NR] }'
}
trap 'report; rm -f "$waits"; exit 0' INT
{
  echo '\timing on'
  for _ in $(seq $((seconds * 10))); do
    echo "BEGIN; LOCK TABLE \"$schema\".rollup_names IN ROW EXCLUSIVE MODE; COMMIT; SELECT pg_sleep(0.1);"
  done
} | stdbuf -oL psql -q -X "$POSTGRES_URL" -f - 2>&1 | grep --line-buffered '^Time' | awk 'NR % 4 == 2 { print $2; fflush() }' > "$waits" || true
report
