#!/usr/bin/env python3
"""Cross-engine report fuzz: the same events into a collector on each engine, then the same random
report requests (hostile parameters included) to each; fails on any 5xx, any request slower than
10 s, and any answer that differs between engines.

    eval "$(.ci/postgres)"; eval "$(.ci/clickhouse)"; swift build --product collector
    Tools/report-fuzz/report-fuzz.py --seed 8 --requests 800

Every engine gets one batch (one clock-skew correction for all its events) of events at whole
seconds plus 500 ms, so the skew's few milliseconds move no event across a bucket or a funnel
window. Answers are compared without `receivedAt` and the `next` cursor (wall-clock times), with
`occurredAt` rounded to the second. Each collector builds its report caches every second, and the
requests start once it has logged a build after the batch, so they read the SQL stores' device sets
and ClickHouse's closed days (the days before yesterday). Talks to 127.0.0.1 only; stops the collectors it starts and
drops what they stored (a run with findings keeps its collectors' folders, logs included).
"""
import argparse, json, os, random, shutil, socket, subprocess, sys, tempfile, time, urllib.error, urllib.parse, urllib.request, uuid

# "ü名" twice: ü as one code point and as u with a combining diaeresis, equal as Unicode text and
# two names to every engine (as are the two spellings of the device "dev-é" below).
NAMES = ["screen_view", "purchase", "add_to_cart", "product_viewed", "refund", "Sign Up", "\u00fc名", "u\u0308名",
         "a" * 40]
DEVICES = [f"dev-{n}" for n in range(30)] + ["dev-\u00e9", "dev-e\u0301"]
VALUES = [1, 0, -1, 2.5, 1e20, 1e-5, 0.30000000000000004, 9223372036854775807, -9223372036854775808,
          "x", "", "ü", True, False, None, [1, "a"], {"k": [1, {"z": 2}]}]
REPORTS = ["overview", "top-events", "events", "timeseries", "active-devices", "retention", "breakdown",
           "parameter-values", "counters", "funnel", "sessions", "revenue", "top-items", "version-adoption",
           "funnel-paths", "funnel-dropped", "retained"]


def events(rnd, now):
    """The batch every engine gets: varied names, parameters of every JSON type, orders and items
    (malformed ones, and one event in ten a well-formed order)."""
    keys = ["price", "product_id", "currency", "value", "transaction_id", "items", "q u", "we\"ird", "€"]
    made = []
    for _ in range(600):
        parameters = {rnd.choice(keys): rnd.choice(VALUES) for _ in range(rnd.randrange(0, 5))}
        if rnd.random() < 0.2:
            parameters["items"] = [
                {"item_id": rnd.choice(["s1", "s2", "", None, 3]), "price": rnd.choice(VALUES),
                 "quantity": rnd.choice([1, 0, -2, 2.5, "3", None]), "item_brand": rnd.choice(["b", "", None])}
                for _ in range(rnd.randrange(0, 3))]
        name = rnd.choice(NAMES)
        if rnd.random() < 0.1:
            # A well-formed order too (a few transaction ids sent again), so that top items has rows.
            name = rnd.choice(["purchase", "purchase", "refund"])
            parameters = {"transaction_id": f"T{rnd.randrange(40)}", "currency": rnd.choice(["TRY", "EUR"]),
                          "value": rnd.randrange(400) / 4,
                          "items": [{"item_id": f"i{rnd.randrange(6)}", "item_name": rnd.choice(["A", "B"]),
                                     "price": rnd.randrange(1, 400) / 4, "quantity": rnd.randrange(1, 4)}
                                    for _ in range(rnd.randrange(1, 3))]}
        made.append({
            "id": str(uuid.UUID(int=rnd.getrandbits(128), version=4)), "name": name,
            "kind": rnd.choice(["event", "screen_view", "action"]),
            "timestamp": now - rnd.randrange(0, 10 * 86400) * 1000 + 500,
            "utcOffsetMinutes": rnd.choice([0, 180, -300, 330]), "parameters": parameters,
            "anonymousId": rnd.choice(DEVICES), "userId": rnd.choice([None, None, f"u{rnd.randrange(10)}"]),
            "sessionId": rnd.choice([None, rnd.randrange(1, 1 << 40)])})
    return made


def requests(rnd, now, count):
    """`count` report paths: a report, its app, and up to six parameters from edge-case values."""
    def day(ms):
        return time.strftime("%Y-%m-%d", time.gmtime(ms / 1000))
    choices = {
        "from": [str(now - 14 * 86400_000), day(now - 20 * 86400_000), "2026-03-29", "1970-01-01", "-1", "0",
                 "2026-11-01T00:00:00+03:00", "9999-12-31", "-9223372036854775808", "2026-02-30"],
        "to": [str(now + 86400_000), day(now + 86400_000), "2026-03-30", "9223372036854775807",
               str(now - 14 * 86400_000), "2026-11-01T00:00:00-05:00", "3000-01-01"],
        "tz": ["Europe/Istanbul", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Pacific/Chatham", "UTC",
               "Etc/GMT+12", "Nope/Zone", "", "America/St_Johns", "Australia/Lord_Howe"],
        "event": NAMES + ["", "(none)"], "parameter": ["price", "items", "q u", "we\"ird", "€", "", "a.b", "$", "'"],
        "by": ["platform", "app-version", "os-version", "app-name", "nope", ""],
        "bucket": ["hour", "day", "week", "minute", ""], "period": ["day", "week", "month", ""],
        "split": ["app-version", "x"],
        "steps": [",".join(rnd.choice(NAMES) for _ in range(k)) for k in (1, 2, 3, 20, 21)]
                 + ["", ",,", "purchase,purchase,purchase"],
        "window": ["30m", "2h", "1d", "0m", "400d", "-1h", "1y", "x"], "unit": ["person", "device", "x"],
        "limit": ["1", "50", "1000000", "0", "-1", "99999999999999999999"], "dropped": ["1", "19", "0", "20"],
        "cohort": [day(now - 5 * 86400_000), "2026-03-29", "x"], "offset": ["0", "3", "400", "401"],
        "startEvent": NAMES, "returnEvent": NAMES, "category": ["", "c"], "brand": ["b", ""],
        "after": ["", "x", "abc:def", "9:9:9"], "format": ["json", "csv"], "platform": ["iOS", "", "x"],
        "appVersion": ["1.0", ""], "environment": ["production", "development", "", "x"],
        "funnelAppVersion": ["1.0", "9"],
    }
    paths = []
    for _ in range(count):
        query = {"app": rnd.choice(["fuzz", "fuzz", "fuzz", "other", ""])}
        for key in rnd.sample(list(choices), rnd.randrange(0, 7)):
            query[key] = rnd.choice(choices[key])
        # A default range ends "now", to the millisecond: each engine's run would see another range,
        # so one request in ten keeps a default and is compared by its status only (no 5xx, and the
        # same status on every engine).
        if rnd.random() >= 0.1:
            query.setdefault("from", str(now - 12 * 86400_000))
            query.setdefault("to", str(now + 3600_000))
        paths.append(f"/v1/reports/{rnd.choice(REPORTS)}?" + urllib.parse.urlencode(query))
    return paths


def defaulted(path):
    """Whether `path` leaves the range's start or end to the collector's default (now)."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query, keep_blank_values=True)
    return "from" not in query or "to" not in query


def call(base, key, method, path, body=None, timeout=30):
    request = urllib.request.Request(base + path, method=method, data=body, headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


def run(engine, args, batch, paths):
    """Starts a collector on `engine`, sends the batch, asks every path; the answers and the findings."""
    write, admin, tag = "w" + uuid.uuid4().hex, "a" + uuid.uuid4().hex, uuid.uuid4().hex[:10]
    with socket.socket() as probe:  # a port free now, not a random one that may be taken
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The report caches (device sets, ClickHouse's closed days) built every second, so that the
    # requests read them: the batch's days before yesterday are built before the first request.
    command = [args.collector, "--port", str(port), "--write-keys", f"fuzz={write}", "--admin-keys", admin,
               "--report-cache-interval", "1"]
    if engine == "postgres":
        command += ["--postgres-url", os.environ["COLLECTOR_TEST_POSTGRES_URL"], "--postgres-schema", f"fuzz_{tag}"]
    if engine == "clickhouse":
        command += ["--clickhouse-url", os.environ["COLLECTOR_TEST_CLICKHOUSE_URL"],
                    "--clickhouse-database", f"fuzz_{tag}"]
    folder = tempfile.mkdtemp(prefix="report-fuzz-")
    with open(os.path.join(folder, "collector.log"), "w") as log:
        process = subprocess.Popen(command, cwd=folder, stdout=log, stderr=log)
    base, findings, answers = f"http://127.0.0.1:{port}", [], []
    try:
        # A debug build migrating a fresh store on a busy 2-core machine may take a minute or more.
        deadline, healthy = time.time() + 300, False
        while not healthy and time.time() < deadline and process.poll() is None:
            try:
                healthy = call(base, admin, "GET", "/health", timeout=2)[0] == 200
            except OSError:
                pass
            if not healthy:
                time.sleep(0.5)
        if not healthy:
            state = f"exited ({process.returncode})" if process.poll() is not None else "still starting after 300 s"
            findings.append(f"{engine}: the collector never answered /health: {state}; log in {folder}")
            return [], findings
        batch["sentAt"] = int(time.time() * 1000)
        try:
            status, body = call(base, write, "POST", "/v1/batch", json.dumps(batch).encode())
        except OSError as error:
            status, body = -1, str(error)
        if status != 200:
            findings.append(f"{engine}: the batch answered {status}: {body[:300]}")
        elif not built(os.path.join(folder, "collector.log"), process, time.time() + 120):
            findings.append(f"{engine}: no report cache was built within 120 s of the batch; log in {folder}")
        for path in paths:
            started = time.time()
            try:
                status, body = call(base, admin, "GET", path)
            except OSError as error:
                status, body = -1, str(error)
            if status >= 500 or status < 0 or time.time() - started > 10:
                findings.append(f"{engine}: {status} after {time.time() - started:.1f} s: {path} {body[:300]}")
            answers.append((status, body))
        if process.poll() is not None:
            findings.append(f"{engine}: the collector exited ({process.returncode}); log in {folder}")
    finally:
        process.terminate()
        process.wait(timeout=30)
        remove(engine, tag, folder, keep=bool(findings))
    return answers, findings


def built(log, process, deadline):
    """Whether the collector logs a build of its report caches (the first after the batch: the one
    at start found an empty store) before `deadline`."""
    while time.time() < deadline and process.poll() is None:
        with open(log, encoding="utf-8", errors="replace") as text:
            if "report caches built" in text.read():
                return True
        time.sleep(0.2)
    return False


def remove(engine, tag, folder, keep):
    """Drops the run's PostgreSQL schema or ClickHouse database and its folder (kept after a finding)."""
    if keep:
        print(f"{engine}: the collector's folder is kept: {folder}")
        return
    shutil.rmtree(folder, ignore_errors=True)
    if engine == "postgres" and shutil.which("psql"):
        subprocess.run(["psql", os.environ["COLLECTOR_TEST_POSTGRES_URL"], "-qc", f"DROP SCHEMA fuzz_{tag} CASCADE"],
                       capture_output=True)
    if engine == "clickhouse":
        drop = urllib.request.Request(os.environ["COLLECTOR_TEST_CLICKHOUSE_URL"], method="POST",
                                      data=f"DROP DATABASE IF EXISTS fuzz_{tag}".encode())
        try:
            urllib.request.urlopen(drop, timeout=30).read()
        except OSError:
            pass


def comparable(body):
    def walk(value):
        if isinstance(value, dict):
            return {key: (round(item / 1000) if key == "occurredAt" else walk(item))
                    for key, item in value.items() if key not in ("receivedAt", "next")}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value
    try:
        return walk(json.loads(body))
    except ValueError:
        return body


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--requests", type=int, default=400)
    configured = ["sqlite"] + [engine for engine, variable in (("postgres", "COLLECTOR_TEST_POSTGRES_URL"),
                               ("clickhouse", "COLLECTOR_TEST_CLICKHOUSE_URL")) if os.environ.get(variable)]
    parser.add_argument("--engines", default=",".join(configured), help="default: SQLite and the servers set")
    parser.add_argument("--collector", default=os.path.join(os.path.dirname(__file__), "../../.build/debug/collector"))
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    now = int(time.time()) // 3600 * 3600 * 1000
    context = {"appName": "Shop", "appVersion": "2.0", "appBuild": "1", "osName": "iOS", "osVersion": "17",
               "platform": "iOS", "deviceModel": "", "locale": "tr_TR", "timeZone": "Europe/Istanbul",
               "libraryName": "report-fuzz", "libraryVersion": "1", "environment": ""}
    batch = {"context": context, "events": events(rnd, now)}
    paths = requests(rnd, now, args.requests)
    engines = args.engines.split(",")
    results = {engine: run(engine, args, dict(batch), paths) for engine in engines}
    findings = [finding for _, found in results.values() for finding in found]
    if any(not answers for answers, _ in results.values()):
        print("\n".join(findings))
        sys.exit(1)
    first = engines[0]
    for index, path in enumerate(paths):
        status, body = results[first][0][index]
        for engine in engines[1:]:
            other_status, other_body = results[engine][0][index]
            same = status == other_status if defaulted(path) else (status, comparable(body)) == (
                other_status, comparable(other_body))
            if not same:
                findings.append(f"{engine} differs from {first}: {path}\n  {first}: {status} {body[:400]}\n"
                                f"  {engine}: {other_status} {other_body[:400]}")
    statuses = {}
    for status, _ in results[first][0]:
        statuses[status] = statuses.get(status, 0) + 1
    print("\n".join(findings))
    print(f"report fuzz, seed {args.seed}: {len(paths)} requests on {', '.join(engines)}; "
          f"statuses {sorted(statuses.items())}; {len(findings)} findings")
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
