#!/usr/bin/env python3
"""Distinct devices from per-hour device sets, measured against the names rollup (a prototype).

Top events counts each event name's distinct devices over a range of hours. The SQL stores answer it
from `rollup_names`, one row per hour, name, device and dimensions: 4.1M rows at 10M events, each
grouped again at read. This script builds the other shape by hand, from a kept report-benchmark
SQLite file: each device numbered once per app, and per app, hour and name one row holding the
events and the set of device numbers (sorted little-endian uint32s). It then times, in turn, in the
same run:
  rollup  the store's query on `rollup_names` (count(DISTINCT device_id) from its index by name);
  sets    reading the set rows of the range, and their union (numpy; Swift would be faster);
and checks that both give the same events and devices per name. With POSTGRES_URL and the kept
schema report_benchmark_<size>, it copies the sets into PostgreSQL and times both queries there.

Usage (kept files from `REPORT_BENCHMARK_KEEP=1 … ReportBenchmark 1000000 10000000`):
  Tools/Benchmarks/device-sets/device-sets.py $TMPDIR/report-benchmark-kept/10000000.sqlite
  POSTGRES_URL=postgres://coretracker:coretracker@127.0.0.1:5432/coretracker \
    Tools/Benchmarks/device-sets/device-sets.py $TMPDIR/report-benchmark-kept/10000000.sqlite
Needs python3-numpy (apt-get install python3-numpy) and, for PostgreSQL, psql.
"""

import array
import collections
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

ROLLUP = """SELECT name, sum(events), count(DISTINCT device_id) FROM rollup_names
  INDEXED BY rollup_names_by_name
  WHERE app = ? AND device_id IS NOT NULL AND hour >= ? AND hour < ? GROUP BY name"""
SETS = "SELECT name, events, devices FROM name_sets WHERE app = ? AND hour >= ? AND hour < ?"
PG_ROLLUP = """SELECT name, sum(e), count(*) FROM (SELECT name, device_id, sum(events) AS e
  FROM {schema}.rollup_names WHERE app = '{app}' AND hour >= {lo} AND hour < {hi}
  GROUP BY name, device_id) g GROUP BY name"""
PG_SETS = "SELECT name, events, devices FROM {schema}.name_sets WHERE app = '{app}' AND hour >= {lo} AND hour < {hi}"


def build(source, target):
    """Numbers the devices and writes one set row per app, hour and name; returns the device count."""
    numbers, sets, events = {}, collections.defaultdict(set), collections.Counter()
    for app, hour, name, device, count in source.execute("SELECT app, hour, name, device_id, events FROM rollup_names"):
        number = numbers.setdefault((app, device), len(numbers))
        sets[app, hour, name].add(number)
        events[app, hour, name] += count
    target.execute("CREATE TABLE name_sets (app TEXT, hour INTEGER, name TEXT, events INTEGER, devices BLOB, "
                   "PRIMARY KEY (app, hour, name)) WITHOUT ROWID")
    target.executemany("INSERT INTO name_sets VALUES (?, ?, ?, ?, ?)",
                       [(*key, events[key], array.array("I", sorted(s)).tobytes()) for key, s in sets.items()])
    target.commit()
    return len(numbers)


def union(rows, devices):
    """Events and distinct devices per name from set rows."""
    import numpy
    seen, events = {}, collections.Counter()
    for name, count, blob in rows:
        if name not in seen:
            seen[name] = numpy.zeros(devices, dtype=bool)
        seen[name][numpy.frombuffer(blob, dtype=numpy.uint32)] = True
        events[name] += count
    return {name: (events[name], int(bits.sum())) for name, bits in seen.items()}


def timed(work):
    start = time.perf_counter()
    result = work()
    return result, (time.perf_counter() - start) * 1000


def psql(url, sql, out=subprocess.DEVNULL):
    subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql], check=True, stdout=out)


def postgres(url, sets_db, app, lo, hi, size):
    schema = f"report_benchmark_{size}"
    with tempfile.NamedTemporaryFile("w", suffix=".csv") as csv:
        for row in sets_db.execute("SELECT app, hour, name, events, hex(devices) FROM name_sets"):
            csv.write(f"{row[0]},{row[1]},{row[2]},{row[3]},\\x{row[4]}\n")
        csv.flush()
        psql(url, f"SET client_min_messages = warning; DROP TABLE IF EXISTS {schema}.name_sets; "
             f"CREATE TABLE {schema}.name_sets (app text, hour bigint, name text, events bigint, "
             "devices bytea, PRIMARY KEY (app, hour, name))")
        subprocess.run(["psql", url, "-qc", f"\\copy {schema}.name_sets FROM '{csv.name}' csv"], check=True)
    psql(url, f"VACUUM ANALYZE {schema}.name_sets")
    for round in (1, 2):
        _, rollup = timed(lambda: psql(url, PG_ROLLUP.format(schema=schema, app=app, lo=lo, hi=hi)))
        _, sets = timed(lambda: psql(url, PG_SETS.format(schema=schema, app=app, lo=lo, hi=hi)))
        print(f"PostgreSQL round {round}: rollup {rollup:.0f} ms, sets read through psql {sets:.0f} ms")
    psql(url, f"DROP TABLE {schema}.name_sets")


def main():
    path = sys.argv[1]
    size = os.path.basename(path).split(".")[0]
    source = sqlite3.connect(path)
    app, lo, hi = source.execute("SELECT app, min(hour), max(hour) + 1 FROM rollup_names").fetchone()
    with tempfile.TemporaryDirectory() as folder:
        sets_db = sqlite3.connect(os.path.join(folder, "sets.sqlite"))
        devices, built = timed(lambda: build(source, sets_db))
        rows = source.execute("SELECT count(*) FROM rollup_names").fetchone()[0]
        count = sets_db.execute("SELECT count(*) FROM name_sets").fetchone()[0]
        print(f"{size}: {rows} rollup rows, {count} set rows, {devices} devices, built in {built:.0f} ms")
        for round in (1, 2, 3):
            expected, rollup = timed(lambda: {n: (e, d) for n, e, d in source.execute(ROLLUP, (app, lo, hi))})
            found, read = timed(lambda: sets_db.execute(SETS, (app, lo, hi)).fetchall())
            answer, merged = timed(lambda: union(found, devices))
            same = "equal" if answer == expected else "DIFFER"
            print(f"SQLite round {round}: rollup {rollup:.0f} ms, sets read {read:.0f} ms "
                  f"+ union {merged:.0f} ms, {same}")
        if os.environ.get("POSTGRES_URL"):
            postgres(os.environ["POSTGRES_URL"], sets_db, app, lo, hi, size)


if __name__ == "__main__":
    main()
