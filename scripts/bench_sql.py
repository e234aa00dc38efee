"""The bench's PostgreSQL side (used by scripts/run-bench; docs/benchmarking.md,
"PostgreSQL"): one PostgreSQL 15 started by tests/support/postgres_fixture.py
holds

  radius            FreeRADIUS's own schema.sql (Debian's freeradius-postgresql)
                    with the bench users in radcheck: FreeRADIUS's rlm_sql
                    writes its accounting here and both servers authenticate
                    from it;
  radiusward_<name> one empty database per replicated deployment, into which
                    the members' exporter writes (it creates its own schema).
                    Fresh each time: the export cursor lives in the database,
                    and a new cluster's log starts again at index 1.

synchronous_commit is set to on for every database (PostgreSQL's default,
stated so that nobody's postgresql.conf changes the durability compared).

It also follows the exporter's lag: LagSampler polls the members' /status
"export" objects while a ceiling search runs, and summarize_lag() turns the
samples into figures per step (pure, tested by
tests/integration/bench_report_test.py)."""

import collections
import json
import os
import socket
import threading
import time

SCHEMA = "/etc/freeradius/3.0/mods-config/sql/main/postgresql/schema.sql"
RADIUS_DB = "radius"
# The bench's server options (appended to the fixture's): more shared
# buffers than the tests' 16 MB, and room for FreeRADIUS's pool of 32
# connections next to the exporter's and the gateway's.
SERVER_OPTIONS = "-c shared_buffers=128MB -c max_connections=100 -c max_wal_size=2GB"


def create_database(pg, name):
    """An empty database `name` (dropped first if present) that commits
    synchronously."""
    pg.psql("-c", 'DROP DATABASE IF EXISTS "%s"' % name)
    pg.psql("-c", 'CREATE DATABASE "%s"' % name)
    pg.psql("-c", 'ALTER DATABASE "%s" SET synchronous_commit = on' % name)


def prepare_radius_database(pg, users):
    """The `radius` database: FreeRADIUS's schema.sql and the bench users
    (bench-user-N / bench-password-N, as run-bench's users file) in
    radcheck as Cleartext-Password, which serves PAP, CHAP and MS-CHAPv2."""
    create_database(pg, RADIUS_DB)
    pg.psql("-f", SCHEMA, database=RADIUS_DB)
    pg.psql("-c", "INSERT INTO radcheck (username, attribute, op, value) "
            "SELECT 'bench-user-' || i, 'Cleartext-Password', ':=', 'bench-password-' || i "
            "FROM generate_series(0, %d) AS i" % (users - 1), database=RADIUS_DB)
    pg.psql("-c", "ANALYZE", database=RADIUS_DB)


def synchronous_commit(pg, database):
    return pg.psql("-c", "SHOW synchronous_commit", database=database).strip()


def freeradius_server(pg, database=RADIUS_DB):
    """freeradius-bench-config's SQL_SERVER argument."""
    return "postgres@127.0.0.1:%d/%s" % (pg.port, database)


def export_section(pg, database):
    """The members' `export:` section (docs/configuration.md)."""
    return "export:\n  postgresql:\n    conninfo: \"%s\"\n" % pg.conninfo(database)


def sql_users_config(pg, folder, name, users_file, clients_file, cache_ttl_s, connections=2):
    """A gateway config whose users come from the `radius` database only
    (users_stores: [sql]); returns its path. The users file stays required
    by the config but is never consulted."""
    path = os.path.join(folder, name + ".yaml")
    with open(path, "w") as f:
        f.write("users_file: %s\nclients_file: %s\nusers_stores: [sql]\n"
                "sql_users:\n  postgresql: \"%s\"\n  connections: %d\n  cache_ttl_s: %d\n" % (
                    users_file, clients_file, pg.conninfo(RADIUS_DB), connections, cache_ttl_s))
    return path


def radacct_rows(pg, database=RADIUS_DB):
    return int(pg.psql("-c", "SELECT count(*) FROM radacct", database=database).strip())


def exported_records(pg, database):
    """(Acct-Session-Id, Acct-Status-Type) of every record the exporter
    wrote to `database`, counted."""
    out = pg.psql("-c", "SELECT attributes->>'Acct-Session-Id', attributes->>'Acct-Status-Type' "
                  "FROM radiusward_accounting_log", database=database)
    return collections.Counter(tuple(line.split("|")) for line in out.splitlines() if line.strip())


# ---- export lag --------------------------------------------------------------

def admin_get(socket_path, target, timeout=2.0):
    """The body (bytes) of GET `target` on a process's admin socket
    (docs/admin_api.md), read straight from the socket; None when it does
    not answer 200."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(socket_path)
            s.sendall(b"GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" % target.encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    head, _, body = data.partition(b"\r\n\r\n")
    return body if head.startswith(b"HTTP/1.1 200") else None


def admin_status(socket_path, timeout=2.0):
    """GET /status on a process's admin socket as a dict, without starting a
    process per sample as `radiusward ctl` would; None when it does not
    answer."""
    body = admin_get(socket_path, "/status", timeout)
    try:
        return json.loads(body) if body is not None else None
    except ValueError:
        return None


def export_of(statuses):
    """The exporting member's "export" object from the members' /status
    bodies (dicts, None for a member that did not answer), with that
    member's records_held, held_bytes and sessions beside it; None when no
    member is exporting."""
    for status in statuses:
        export = (status or {}).get("export")
        if export and export.get("active"):
            return dict(export, **{k: status.get(k) for k in ("records_held", "held_bytes", "sessions")})
    return None


def summarize_lag(samples, marks):
    """samples: [(t, export object or None)] in time order; marks: [t] at
    which step 1, 2, .. ended (the generator's progress lines). Returns one
    dict per step: the largest lag (records, seconds) seen during it, the
    lag when it ended, records exported during it and whether the exporter
    was reachable throughout."""
    steps = []
    start = float("-inf")
    previous_exported = None
    for index, end in enumerate(marks, 1):
        inside = [e for t, e in samples if start < t <= end]
        seen = [e for e in inside if e is not None]
        last = seen[-1] if seen else None
        exported = last["records_exported"] if last else None
        steps.append({
            "index": index,
            "samples": len(inside),
            "lag_records_max": max((e["lag_records"] for e in seen), default=None),
            "lag_seconds_max": max((e["lag_seconds"] for e in seen), default=None),
            "lag_records_end": last["lag_records"] if last else None,
            "lag_seconds_end": last["lag_seconds"] if last else None,
            # Counted per process: a smaller figure means another member
            # took over the export (leadership moved); no delta then.
            "exported_in_step": (exported - previous_exported)
            if exported is not None and previous_exported is not None and exported >= previous_exported else None,
            "exporter_moved": exported is not None and previous_exported is not None and exported < previous_exported,
            "connected": bool(seen) and all(e.get("connected") for e in seen) and len(seen) == len(inside),
            "records_held_max": max((e.get("records_held") or 0 for e in seen), default=None),
            "sessions_end": last.get("sessions") if last else None,
        })
        if exported is not None:
            previous_exported = exported
        start = end
    return steps


def answers_by_second(lines, slow_ms=500):
    """A hold step's acknowledged accounting answers second by second, from
    the lines of `bench run --acked-log` ("SESSION STATUS WALL_US WAIT_US",
    docs/benchmarking.md), by the second each request was scheduled in
    (answer time minus wait), counted from the step's first: where in the
    step the slow answers were. The first and last seconds are partial.
    {"seconds", "slow_seconds": how many had a p99 above `slow_ms`,
    "first_slow": the first of them (None), "worst": {"second", "answered",
    "p99_ms"}}, or None without lines."""
    waits = {}
    for line in lines:
        fields = line.split()
        if len(fields) < 4:
            continue
        wall_us, wait_us = int(fields[2]), int(fields[3])
        waits.setdefault((wall_us - wait_us) // 1000000, []).append(wait_us)
    if not waits:
        return None
    first = min(waits)
    seconds = []
    for second in sorted(waits):
        w = sorted(waits[second])
        seconds.append({"second": second - first, "answered": len(w),
                        "p99_ms": round(w[min(len(w) - 1, int(len(w) * 0.99))] / 1000.0, 1)})
    slow = [s["second"] for s in seconds if s["p99_ms"] > slow_ms]
    return {"seconds": len(seconds), "slow_seconds": len(slow), "first_slow": slow[0] if slow else None,
            "worst": max(seconds, key=lambda s: s["p99_ms"])}


def kept_up(step_lag, rate, step_s, slack_s=2.0):
    """Whether the exporter kept up during a step at `rate`: it stayed
    connected, its oldest unexported record was never more than `slack_s`
    old, and at the end of the step fewer than `slack_s` seconds of
    records were waiting. None without samples."""
    if not step_lag or step_lag.get("lag_seconds_max") is None:
        return None
    return bool(step_lag["connected"] and step_lag["lag_seconds_max"] <= slack_s
                and step_lag["lag_records_end"] <= rate * slack_s)


class LagSampler:
    """Polls `poll()` (the members' /status bodies) every `interval` s on a
    thread; mark() notes the end of a step; drain() waits, after the load,
    until nothing is left to export."""

    def __init__(self, poll, interval=0.5):
        self.poll = poll
        self.interval = interval
        self.samples = []
        self.marks = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _sample(self):
        try:
            export = export_of(self.poll())
        except Exception:  # noqa: BLE001 - a member mid-restart; a gap, not an error
            export = None
        self.samples.append((time.monotonic(), export))
        return export

    def _run(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def mark(self):
        self._sample()
        self.marks.append(time.monotonic())

    def stop(self):
        self._stop.set()
        self._thread.join()

    def drain(self, timeout=120):
        """Seconds until the exporter reported no lag after the load, or
        None if it still lagged after `timeout`."""
        began = time.monotonic()
        while time.monotonic() - began < timeout:
            export = self._sample()
            if export is not None and export.get("lag_records") == 0:
                return round(time.monotonic() - began, 2)
            time.sleep(0.25)
        return None

    def summary(self, steps, step_s):
        """The figures run-bench stores per ceiling search."""
        per_step = summarize_lag(self.samples, self.marks)
        for lag, step in zip(per_step, steps):
            lag["target_rate"] = step["target_rate"]
            lag["kept_up"] = kept_up(lag, step["target_rate"], step_s)
        last = next((e for _, e in reversed(self.samples) if e is not None), None)
        return {"steps": per_step, "records_exported": last["records_exported"] if last else None,
                "failures": last["failures"] if last else None}
