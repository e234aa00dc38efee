"""The one history checker of the fault suite (docs/RELIABILITY.md, issue 12).

Every fault scenario ends here, after it has healed the fault and the load
has ended. The checker reads the generator's acknowledged log (one line per
Accounting-Response: `Acct-Session-Id Status UNIX_US WAIT_US`,
docs/benchmarking.md) and asserts, in this order:

  1. something was acknowledged, and the generator never logged the same
     record twice (a NAS sees one answer per record);
  2. the three members converge: the same records (log index and key, in
     order) and the same live sessions on each (docs/design.md invariant 2);
  3. every acknowledged record is held by the members exactly once (with
     PostgreSQL: held, or exported and dropped by a cursor entry), and no
     record is held twice, acknowledged or not (invariant 1);
  4. with PostgreSQL: every acknowledged record is in
     radiusward_accounting_log exactly once, none twice, and radacct has
     one row per session (invariant 3);
  5. answers resumed after the fault healed within the scenario's bound.

It returns the scenario's figures (acknowledged, lost, duplicated, longest
wait, longest unavailability, recovery time) and, when RW_FAULT_RESULTS
names a file, appends them to it as one JSON line: scripts/fault-campaign
aggregates those lines into docs/RELIABILITY.md's table."""

import collections
import json
import os
import random
import time


def timing(default, low, high):
    """A scenario's delay in seconds: `default` in the short form that
    `make test` runs, uniform in [low, high] when the campaign asks for
    random timing (RW_FAULT_RANDOM=1, scripts/fault-campaign)."""
    if os.environ.get("RW_FAULT_RANDOM") == "1":
        value = random.uniform(low, high)
        print(f"random timing: {value:.2f} s (short form {default} s)", flush=True)
        return value
    return default


class Acknowledged:
    """The generator's acknowledged log, parsed."""

    def __init__(self, path):
        self.keys = []        # (Acct-Session-Id, Status), in answer order
        self.times_us = []    # wall clock of each answer
        self.waits_us = []    # first transmission to answer
        try:
            with open(path) as f:
                for line in f:
                    fields = line.split()
                    if len(fields) < 2:
                        continue
                    self.keys.append((fields[0], fields[1]))
                    if len(fields) >= 4:
                        self.times_us.append(int(fields[2]))
                        self.waits_us.append(int(fields[3]))
        except OSError:
            pass

    def __len__(self):
        return len(self.keys)

    def longest_wait_ms(self):
        return max(self.waits_us, default=0) / 1000

    def longest_gap_ms(self, start_unix=None, end_unix=None):
        """The longest time without any answer between `start_unix` and
        `end_unix` (wall clock, seconds; default: the first and last
        answer): how long the service looked unavailable to the NASes."""
        times = sorted(self.times_us)
        if not times:
            return 0.0
        edges = []
        if start_unix is not None:
            edges.append(int(start_unix * 1e6))
        edges += [t for t in times
                  if (start_unix is None or t >= start_unix * 1e6) and (end_unix is None or t <= end_unix * 1e6)]
        if end_unix is not None:
            edges.append(int(end_unix * 1e6))
        return max((b - a for a, b in zip(edges, edges[1:])), default=0) / 1000

    def first_answer_after(self, unix):
        """Seconds from `unix` to the first answer at or after it, or None."""
        later = [t for t in self.times_us if t >= unix * 1e6]
        return (min(later) / 1e6 - unix) if later else None

    def answered_between(self, start_unix, end_unix):
        return sum(1 for t in self.times_us if start_unix * 1e6 <= t < end_unix * 1e6)


def wait_for(what, predicate, timeout, step=0.05):
    """Polls `predicate` until it returns something true and returns that;
    raises AssertionError "`what`: not within `timeout` s" otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(step)


def exported(pg):
    """(Acct-Session-Id, Acct-Status-Type) of every exported record."""
    out = pg.psql("-c", "SELECT attributes->>'Acct-Session-Id', attributes->>'Acct-Status-Type' "
                  "FROM radiusward_accounting_log")
    return collections.Counter(tuple(line.split("|")) for line in out.splitlines() if line.strip())


def leader_export(cluster):
    leader = cluster.leader()
    status = cluster.status(f"member-{leader}") if leader else None
    return (status or {}).get("export") or {}


def wait_exported(cluster, pg, acked, timeout):
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


def converged(cluster, timeout):
    """Waits until every member holds the same records and the same live
    sessions; returns the records."""
    deadline = time.monotonic() + timeout
    records = cluster.wait_converged(timeout)
    while True:
        listings = [cluster.ctl(f"member-{i}", "sessions") for i in cluster.ids]
        if all(listing is not None for listing in listings):
            parsed = [sorted(json.dumps(session, sort_keys=True) for session in json.loads(listing)["sessions"])
                      for listing in listings]
            if all(p == parsed[0] for p in parsed):
                return records
        if time.monotonic() > deadline:
            raise AssertionError("members' session tables did not converge within %ss" % timeout)
        time.sleep(0.2)
        records = cluster.wait_converged(max(1, deadline - time.monotonic()))


def check(cluster, scenario, acked_log, pg=None, healed_unix=None, resume_bound_s=None,
          window_unix=None, timeout=120, extra=None):
    """Runs checks 1-5 (module docstring); raises AssertionError on the first
    that fails. `healed_unix` is when the fault healed (wall clock) and
    `resume_bound_s` how soon after it an answer must have come;
    `window_unix` = (start, end) of the load, for the longest gap. With
    `pg`, check 3 counts the records in radiusward_accounting_log as held
    too: a member's /records lists only what is not exported yet, so once
    the export drained, the database is where an acknowledged record is
    held. `pg` defaults to the cluster's own (cluster_fixture.deployment).
    Returns the figures and appends them to $RW_FAULT_RESULTS."""
    if pg is None:
        pg = getattr(cluster, "pg", None)
    acks = Acknowledged(acked_log)
    assert len(acks), "nothing was acknowledged at all"
    logged_twice = [k for k, n in collections.Counter(acks.keys).items() if n > 1]
    assert not logged_twice, f"the generator logged acknowledgements twice: {logged_twice[:5]}"

    # With PostgreSQL, a record leaves the members' /records once its export
    # cursor entry applies (docs/accounting.md): an acknowledged record must
    # then be held or exported, so the export is waited for first.
    counts = wait_exported(cluster, pg, acks.keys, timeout) if pg is not None else collections.Counter()
    records = converged(cluster, timeout)
    held = collections.Counter(
        (str(r["attributes"]["Acct-Session-Id"]), str(r["attributes"]["Acct-Status-Type"])) for r in records)
    missing = [k for k in acks.keys if held[k] == 0 and counts[k] == 0]
    twice = [k for k, n in held.items() if n > 1]
    assert not missing, f"{len(missing)} acknowledged records are neither held nor exported, e.g. {missing[:5]}"
    assert not twice, f"{len(twice)} records are held more than once, e.g. {twice[:5]}"

    exported_rows = None
    if pg is not None:
        exported_twice = [k for k, n in counts.items() if n > 1]
        assert not exported_twice, f"{len(exported_twice)} records exported more than once, e.g. {exported_twice[:5]}"
        sessions = {k[0] for k in counts}
        rows = int(pg.psql("-c", "SELECT count(*) FROM radacct").strip())
        distinct = int(pg.psql("-c", "SELECT count(DISTINCT acctuniqueid) FROM radacct").strip())
        assert rows == distinct == len(sessions), f"radacct has {rows} rows for {len(sessions)} sessions"
        exported_rows = sum(counts.values())

    recovery_s = None
    if healed_unix is not None:
        recovery_s = acks.first_answer_after(healed_unix)
        assert recovery_s is not None, "no answer at all after the fault healed"
        if resume_bound_s is not None:
            assert recovery_s <= resume_bound_s, (
                f"the first answer after the fault healed came {recovery_s:.1f} s later (bound {resume_bound_s} s)")

    start, end = window_unix if window_unix else (None, None)
    figures = {
        "scenario": scenario,
        "acknowledged": len(acks),
        "held": len(records),
        "exported": exported_rows,
        "lost": len(missing),
        "duplicated": len(twice),
        "longest_wait_ms": round(acks.longest_wait_ms()),
        "longest_unavailable_ms": round(acks.longest_gap_ms(start, end)),
        "recovery_s": None if recovery_s is None else round(recovery_s, 3),
        "unix": round(time.time()),
    }
    if extra:
        figures.update(extra)
    results = os.environ.get("RW_FAULT_RESULTS")
    if results:
        with open(results, "a") as f:
            f.write(json.dumps(figures) + "\n")
    print(f"{scenario}: " + ", ".join(f"{k} {v}" for k, v in figures.items()
                                       if k not in ("scenario", "unix") and v is not None), flush=True)
    return figures
