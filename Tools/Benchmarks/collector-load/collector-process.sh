# Sourced by the collector-load scripts: one collector process at a time, on a free port of
# 127.0.0.1, accepting the write key $key, logging to $work/out. Sets $pid (0 when none runs) and
# $port.
pid=0

# MALLOC=jemalloc runs the collector with jemalloc instead of glibc's malloc (LD_PRELOAD of Debian's
# libjemalloc2, as Docs/Collector.md recommends for production); unset, the system's.
preload=()
if [ "${MALLOC:-}" = jemalloc ]; then
  jemalloc=$(ldconfig -p | awk '/libjemalloc\.so\.2 / {print $NF; exit}')
  [ -n "$jemalloc" ] || { echo "MALLOC=jemalloc: libjemalloc.so.2 is missing (apt-get install libjemalloc2)" >&2; exit 1; }
  preload=(env "LD_PRELOAD=$jemalloc")
fi

start_collector() { # start_collector <binary> <collector args...>
  local binary=$1
  shift
  "${preload[@]}" "$binary" --port 0 --write-keys "bench=$key" --rate-limit 0 "$@" >"$work/out" 2>&1 &
  pid=$!
  for _ in $(seq 300); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$work/out" | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && return
    sleep 0.1
  done
  cat "$work/out" >&2
  exit 1
}

stop_collector() { kill -TERM "$pid"; wait "$pid" || true; pid=0; }

# For an exit trap: ends the collector still running, if any (never `kill 0`: that would signal the
# whole process group).
end_collector() { if [ "$pid" -gt 0 ]; then kill "$pid" 2>/dev/null || true; fi; }
