#!/usr/bin/python3
"""End-to-end export to a real PostgreSQL 15 (issue 4, docs/design.md invariant
3): three `radiusward member` processes exporting to a PostgreSQL started by
tests/support/postgres_fixture.py, one gateway, and the load generator
sending Accounting Start/Interim/Stop of fresh sessions, logging every
record it got an Accounting-Response for. Scenarios:

  leader_kill  the leader (the exporting member) is killed with SIGKILL mid-run
               and restarted; the exporter moves to the new leader
  pg_outage    PostgreSQL is stopped for 30 s under load, then started:
               acknowledgements must continue during the outage

Afterwards every acknowledged record is in radiusward_accounting_log exactly
once, no record is there twice, and radacct has one row per session.
pg_outage prints the records acknowledged during the outage and the time
the exporter took to catch up once PostgreSQL was back.

Usage: export_fault_test.py RADIUSWARD_BINARY SCENARIO [--keep]"""

import collections
import json
import os
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "support"))
from cluster_fixture import Cluster  # noqa: E402
from postgres_fixture import PostgresServer  # noqa: E402

RATE = 300  # records per second, steady
OUTAGE_S = 30


def lines(path):
    try:
        with open(path) as f:
            return [tuple(line.split()) for line in f if line.strip()]
    except OSError:
        return []


def exported(pg):
    """(Acct-Session-Id, Acct-Status-Type) of every exported record."""
    out = pg.psql("-c", "SELECT attributes->>'Acct-Session-Id', attributes->>'Acct-Status-Type' "
                  "FROM radiusward_accounting_log")
    return collections.Counter(tuple(line.split("|")) for line in out.splitlines() if line.strip())


def leader_export(cluster):
    leader = cluster.leader()
    status = cluster.status(f"member-{leader}") if leader else None
    return (status or {}).get("export") or {}


def wait_exported(cluster, pg, acked, timeout=120):
    """Waits until every acknowledged record is in PostgreSQL and the
    leader's exporter has nothing left; returns the exported counter."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            counts = exported(pg)
        except Exception:  # noqa: BLE001 - the tables may not exist yet
            counts = collections.Counter()
        missing = [k for k in acked if counts[k] == 0]
        export = leader_export(cluster)
        if not missing and export.get("lag_records", 1) == 0:
            return counts
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(missing)} acknowledged records not exported within {timeout}s, "
                                 f"e.g. {missing[:5]}; leader export status {export}")
        time.sleep(0.5)


def check(cluster, pg, acked_log):
    acked = lines(acked_log)
    assert acked, "nothing was acknowledged at all"
    counts = wait_exported(cluster, pg, acked)
    twice = [k for k, n in counts.items() if n > 1]
    assert not twice, f"{len(twice)} records exported more than once, e.g. {twice[:5]}"
    sessions = {k[0] for k in counts}
    rows = int(pg.psql("-c", "SELECT count(*) FROM radacct").strip())
    distinct = int(pg.psql("-c", "SELECT count(DISTINCT acctuniqueid) FROM radacct").strip())
    assert rows == distinct == len(sessions), f"radacct has {rows} rows for {len(sessions)} sessions"
    return len(acked), sum(counts.values())


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, scenario = os.path.abspath(sys.argv[1]), sys.argv[2]
    keep = "--keep" in sys.argv
    root = tempfile.mkdtemp(prefix=f"rw-export-{scenario}-")
    pg = PostgresServer()
    export = (f"export:\n  postgresql:\n    conninfo: \"{pg.conninfo()}\"\n"
              "  retry_initial_ms: 50\n  retry_max_ms: 1000\n")
    cluster = Cluster(binary, root, member_extra=export)
    ok = False
    try:
        cluster.start_ready()
        acked_log = os.path.join(root, "acked.log")
        report = os.path.join(root, "load.json")
        if scenario == "leader_kill":
            load = cluster.load(RATE, 12, acked_log, report)
            time.sleep(4)
            leader = cluster.wait_leader()
            cluster.kill(f"member-{leader}")
            print(f"{time.strftime('%H:%M:%S')} killed member-{leader}, the exporting leader", flush=True)
            time.sleep(3)
            cluster.start(f"member-{leader}")
            extra = ""
        elif scenario == "pg_outage":
            load = cluster.load(RATE, OUTAGE_S + 12, acked_log, report)
            time.sleep(5)
            pg.stop()
            before = len(lines(acked_log))
            print(f"{time.strftime('%H:%M:%S')} PostgreSQL stopped", flush=True)
            time.sleep(OUTAGE_S)
            during = len(lines(acked_log)) - before
            status = leader_export(cluster)
            pg.start()
            started = time.monotonic()
            print(f"{time.strftime('%H:%M:%S')} PostgreSQL started; leader export status then: "
                  f"{json.dumps(status)}", flush=True)
            assert during > RATE * OUTAGE_S * 0.5, f"only {during} records acknowledged during the outage"
            assert status.get("lag_records", 0) > 0 and not status.get("connected", True), status
            # Caught up: the exporter has reached what was held when it came back.
            while True:
                now = leader_export(cluster)
                if now.get("connected") and now.get("lag_seconds", 99) < 1.0:
                    break
                assert time.monotonic() - started < 120, f"no catch-up within 120 s: {now}"
                time.sleep(0.1)
            catch_up = time.monotonic() - started
            extra = (f"; {during} records acknowledged during the {OUTAGE_S} s outage, "
                     f"caught up {catch_up:.1f} s after PostgreSQL started")
        else:
            raise SystemExit(f"unknown scenario {scenario}")
        output, _ = load.communicate(timeout=180)
        print(output.strip())
        assert load.returncode == 0, f"load generator failed ({load.returncode})"
        with open(report) as f:
            step = json.load(f)
        acked, rows = check(cluster, pg, acked_log)
        print(f"export {scenario}: sent {step.get('sent')} acknowledged {acked} lost {step.get('lost')}; "
              f"PostgreSQL holds {rows} records, every acknowledged one exactly once{extra}", flush=True)
        ok = True
    finally:
        cluster.finish(ok, keep)
        pg.close()


if __name__ == "__main__":
    main()
