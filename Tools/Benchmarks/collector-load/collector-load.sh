#!/usr/bin/env bash
# Load benchmark of the collector: 100-event native batches over HTTP on 127.0.0.1 with wrk, for
# SQLite, PostgreSQL and ClickHouse, each beside the two ceilings of the same server in the same run:
#   body        — a route that only collects the body
#   jsondecoder — a route that decodes the batch with Foundation's JSONDecoder and discards it
#   ingest      — POST /v1/batch: auth, BatchDecoder, validation, group commit; 200 only when durable
# Usage (from the repository root):  Tools/Benchmarks/collector-load/collector-load.sh [seconds] [connections]
# Needs wrk (apt-get install wrk); for PostgreSQL COLLECTOR_BENCH_POSTGRES_URL or .ci/postgres, for
# ClickHouse COLLECTOR_BENCH_CLICKHOUSE_URL or .ci/clickhouse (its single node).
# STORAGES="sqlite" (or "postgres", "clickhouse", or several) runs those engines only (and starts no
# database server it does not use). ID_STYLE=random sends random UUID-like event ids, PURCHASES=n makes
# every n-th event of a batch a purchase (see batch.lua). SPOOL=1 starts every collector with an
# ingest spool (--spool-directory in the run's temporary directory): the ingest line is then the
# rate of 2xx answers, and the line after it how long the collector took to stop after the load (it
# writes what the spool holds to the store for up to 10 s; the stored count says whether all of it
# got there, what did not stays in the spool for a next start). COLLECTOR_BINARY=<path> runs that
# build instead of building this checkout (to compare two builds in turn). The `cpu` line is the
# collector's own CPU (user + system) from the ingest route's start to its end (with a spool, to the
# collector's exit): ÷ the stored count, what the collector spends per event. MALLOC=jemalloc runs
# the collector with jemalloc (collector-process.sh). The events_per_s of a route counts its 2xx
# answers only (a 503 of a full spool stored nothing); non2xx says how many were refused.
# RETRY_AFTER=1 makes the clients honour a 503's Retry-After (batch.lua), as CoreTracker's do.
set -euo pipefail
cd "$(dirname "$0")/../../.."
duration=${1:-20}
connections=${2:-32}
threads=2
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
if [ -n "${COLLECTOR_BINARY:-}" ]; then
  binary=$COLLECTOR_BINARY
else
  swift build -c release --product collector >&2
  binary=$(swift build -c release --show-bin-path)/collector
fi
work=$(mktemp -d)
key="bench-write-key-0123456789"
source Tools/Benchmarks/collector-load/collector-process.sh
trap 'end_collector; rm -rf "$work"' EXIT

spooled=${SPOOL:-0}
start() { # start <collector args...>
  local spool=()
  [ "$spooled" = 1 ] && spool=(--spool-directory "$work/spool-$storage")
  start_collector "$binary" --benchmark-routes true "${spool[@]}" "$@"
}
stop() { stop_collector; }
rss() { awk '/VmHWM/ {print int($2/1024)}' "/proc/$pid/status"; }
load() { # load <label> <path>
  local result
  result=$(COLLECTOR_KEY=$key RUN_ID="$1-$RANDOM$RANDOM" wrk -t$threads -c"$connections" -d"${duration}s" \
    --latency -s Tools/Benchmarks/collector-load/batch.lua "http://127.0.0.1:$port$2" | grep RESULT)
  printf '%-12s %-14s %s peak_rss_mb=%s\n' "$storage" "$1" "${result#RESULT }" "$(rss)"
}

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null; } # user + system CPU of a process
routes() { # the two ceilings and the ingest route, on the collector just started
  load body /bench/body
  load jsondecoder /bench/jsondecoder
  # The collector's CPU from here to its exit (with a spool, the drain at stop included), read every
  # 0.1 s while it runs: divided by the events stored, its own cost per event.
  local first last watched=$pid
  first=$(ticks "$watched")
  echo "$first" >"$work/ticks"
  (
    while t=$(ticks "$watched") && [ -n "$t" ]; do
      echo "$t" >"$work/ticks.new" && mv "$work/ticks.new" "$work/ticks"
      sleep 0.1
    done
  ) &
  local watcher=$!
  load ingest /v1/batch
  if [ "$spooled" = 1 ]; then
    local started=$(date +%s.%N)
    stop
    printf '%-12s %-14s stopped %.1f s after the load (the spool written to the store for up to 10 s)\n' \
      "$storage" "spool" "$(echo "$(date +%s.%N) - $started" | bc)"
  fi
  kill "$watcher" 2>/dev/null || true
  wait "$watcher" 2>/dev/null || true
  last=$(ticks "$watched" || true) # the collector still runs without a spool; with one, what the watcher saw last
  [ -n "$last" ] || last=$(cat "$work/ticks")
  local until="its end"
  [ "$spooled" = 1 ] && until="its exit"
  printf '%-12s %-14s collector_cpu_s=%.1f from the ingest route to %s\n' "$storage" "cpu" \
    "$(echo "($last - $first) / $(getconf CLK_TCK)" | bc -l)" "$until"
}

echo "collector load: ${duration}s per route, $connections connections, wrk $threads threads, 100 events per batch"
storages=${STORAGES:-sqlite postgres clickhouse}

# Every route against a collector on `storage` (its flags after it), then the collector stopped.
measure() {
  storage=$1
  start "${@:2}"
  routes
  if [ "$pid" -gt 0 ]; then stop; fi
}

# The server of `engine` (postgres, clickhouse) when it is asked for: COLLECTOR_BENCH_<ENGINE>_URL, or
# the test server `.ci/<engine>` starts; empty when the engine is not asked for or there is none.
server_url() {
  local engine=$1 upper url
  upper=$(echo "$engine" | tr '[:lower:]' '[:upper:]')
  [[ " $storages " == *" $engine "* ]] || return 0
  url=$(printenv "COLLECTOR_BENCH_${upper}_URL" || true)
  if [ -z "$url" ] && [ -x ".ci/$engine" ]; then
    eval "$(".ci/$engine")"
    url=$(printenv "COLLECTOR_TEST_${upper}_URL" || true)
  fi
  echo "$url"
}

if [[ " $storages " == *" sqlite "* ]]; then
  measure sqlite --sqlite-path "$work/bench.sqlite"
  stored=$(sqlite3 "$work/bench.sqlite" "SELECT count(*) FROM events" 2>/dev/null || echo "?")
  echo "sqlite       stored events: $stored"
fi

postgres_url=$(server_url postgres)
if [ -n "$postgres_url" ]; then
  schema="bench_$RANDOM$RANDOM"
  measure postgres --postgres-url "$postgres_url" --postgres-schema "$schema"
  stored=$(psql "$postgres_url" -At -c "SELECT count(*) FROM \"$schema\".events" 2>/dev/null || echo "?")
  echo "postgres     stored events: $stored"
  psql "$postgres_url" -q -c "DROP SCHEMA IF EXISTS \"$schema\" CASCADE" >/dev/null 2>&1 || true
fi

clickhouse_url=$(server_url clickhouse)
if [ -n "$clickhouse_url" ]; then
  database="bench_$RANDOM$RANDOM"
  measure clickhouse --clickhouse-url "$clickhouse_url" --clickhouse-database "$database"
  stored=$(curl -fsS "$clickhouse_url/" --data-binary "SELECT count() FROM $database.events FINAL" || echo "?")
  echo "clickhouse   stored events: $stored"
  curl -fsS "$clickhouse_url/" --data-binary "DROP DATABASE IF EXISTS $database" >/dev/null || true
fi
