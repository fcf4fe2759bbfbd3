#!/usr/bin/env bash
# ClickHouse ingest on a full day: each collector binary given gets a database of its own holding the
# same day of events (the fullest day of a kept report-benchmark database, moved to today under
# random ids, app "bench"), then the binaries take turns under the load of collector-load.sh with
# random event ids (ID_STYLE=random), ROUNDS times each. Prints events/s per binary and round, checks
# each database holds every event once, and drops the databases.
# Usage (from the repository root, ClickHouse started by .ci/clickhouse):
#   Tools/Benchmarks/collector-load/full-day.sh <collector binary> [<collector binary> ...]
# SOURCE (default report_benchmark_100000000: REPORT_BENCHMARK_KEEP=1 … ReportBenchmark 100000000
# keeps it), ROUNDS (3), DURATION (12 s), CONNECTIONS (32), CLICKHOUSE_URL (http://127.0.0.1:18123).
set -euo pipefail
cd "$(dirname "$0")/../../.."
[ $# -ge 1 ] || { sed -n 2,11p "$0" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
ch=${CLICKHOUSE_URL:-http://127.0.0.1:18123}
source_db=${SOURCE:-report_benchmark_100000000}
rounds=${ROUNDS:-3}
duration=${DURATION:-12}
connections=${CONNECTIONS:-32}
key="bench-write-key-0123456789"
work=$(mktemp -d)
databases=()
source Tools/Benchmarks/collector-load/collector-process.sh
cleanup() {
  end_collector
  for database in "${databases[@]}"; do curl -fsS "$ch/" --data-binary "DROP DATABASE IF EXISTS $database" >/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
query() { curl -fsS "$ch/" --data-binary "$1"; }

start() { start_collector "$1" --clickhouse-url "$ch" --clickhouse-database "$2"; }  # start <binary> <database>
stop() { stop_collector; }

day=$(query "SELECT day FROM $source_db.events GROUP BY day ORDER BY count() DESC LIMIT 1")
today=$(date -u +%Y-%m-%d)
columns="name, kind, utc_offset_minutes, received_at, device_id, user_id, session_id, app_name, app_version, app_build,
  os_name, os_version, platform, device_model, locale, library, parameters, param_keys, param_values, time_zone,
  library_name, library_version, environment"
for index in $(seq $#); do
  binary=${!index}
  database="full_day_${index}_$RANDOM"
  databases+=("$database")
  start "$binary" "$database"  # its migrations make the tables
  stop
  query "INSERT INTO $database.events (app, event_id, occurred_at, day, $columns)
    SELECT 'bench', toString(generateUUIDv4()),
      occurred_at - toInt64(toUInt32(toDateTime(day))) * 1000 + toInt64(toUInt32(toDateTime(toDate('$today')))) * 1000,
      toDate('$today'), $columns
    FROM $source_db.events WHERE day = '$day'"
  echo "$binary: $database holds $(query "SELECT count() FROM $database.events") events of $today (from $day)"
done

for round in $(seq "$rounds"); do
  for index in $(seq $#); do
    binary=${!index}
    start "$binary" "${databases[$((index - 1))]}"
    result=$(COLLECTOR_KEY=$key ID_STYLE=random RUN_ID="full-$RANDOM$RANDOM" wrk -t2 -c"$connections" -d"${duration}s" \
      --latency -s Tools/Benchmarks/collector-load/batch.lua "http://127.0.0.1:$port/v1/batch" | grep RESULT)
    printf 'round %s  %-40s %s\n' "$round" "$binary" "${result#RESULT }"
    stop
  done
done
for database in "${databases[@]}"; do
  echo "$database: $(query "SELECT count(), uniqExact(event_id) FROM $database.events") (events, distinct ids)"
done
