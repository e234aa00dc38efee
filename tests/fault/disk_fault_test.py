#!/usr/bin/python3
"""Fault tests of a full disk, a PostgreSQL outage at the held bounds and a
lost quorum (issue 12, docs/RELIABILITY.md "Full disk, database outage and
quorum loss"), on real processes under the project's accounting load:

  full_disk_leader    the leader's data_dir, a small tmpfs of its own, is
                      filled with a filler file until its writes fail with
                      ENOSPC; the filler is then removed
  full_disk_follower  the same on a follower
  pg_outage_bounds    PostgreSQL stopped with small held bounds, long enough
                      for the bound to be reached; then started again
  quorum_lost         two members SIGKILLed for ~10 s, then restarted
  quorum_rebuilt      two members SIGKILLed and their data_dirs wiped for
                      good; the survivor restarted with --recover-alone, the
                      two started empty (bootstrap: false) and added again,
                      with the database step of the procedure between
  quorum_rebuilt_lagging  the same after 2.5 s in which nothing reached the
                      survivor's raft port, so the database holds exports
                      of log indices the survivor never had

Each ends with history.check (tests/fault/history.py). Usage:
disk_fault_test.py RADIUSWARD_BINARY SCENARIO [--keep] [--long]; --long or
RW_FAULT_RANDOM=1 randomises the timing for scripts/fault-campaign."""

import errno
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "support"))
from cluster_fixture import deployment  # noqa: E402
import history  # noqa: E402

RATE = 300  # records per second, steady
RANDOM = "--long" in sys.argv or os.environ.get("RW_FAULT_RANDOM") == "1"


def jitter(low, high):
    """`low` in the short form; a uniform draw in [low, high] when random."""
    return random.uniform(low, high) if RANDOM else low


def log(message):
    print(f"{time.strftime('%H:%M:%S')} {message}", flush=True)


class SmallFileSystems:
    """One tmpfs of `size_mb` per member, mounted on the member's data_dir
    before it starts (root only), so a filler file can exhaust exactly one
    member's disk. Unmounted by close(), whatever happened."""

    def __init__(self, root, names, size_mb):
        self.mounts = []
        for name in names:
            path = os.path.join(root, name)
            os.makedirs(path, exist_ok=True)
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0700", "tmpfs", path],
                           check=True)
            self.mounts.append(path)

    def fill(self, path):
        """Starts a filler that takes every free block of `path`'s file
        system and keeps taking whatever is freed later (libraft truncates
        a closed segment and deletes old ones, which would otherwise give
        the member room again), as a runaway writer beside it would.
        Returns once the file system is full; stop_filling() ends it and
        removes the file."""
        self.filler = os.path.join(path, "filler")
        self.filling = threading.Event()
        self.filling.set()
        full = threading.Event()

        def take():
            with open(self.filler, "wb", buffering=0) as f:
                while self.filling.is_set():
                    for size in (1 << 20, 4096):
                        try:
                            while True:
                                f.write(b"\0" * size)
                        except OSError as error:
                            assert error.errno == errno.ENOSPC, error
                    full.set()
                    time.sleep(0.005)

        self.thread = threading.Thread(target=take, daemon=True)
        self.thread.start()
        assert full.wait(30), f"could not fill {path}"
        return self.filler

    def stop_filling(self):
        self.filling.clear()
        self.thread.join()
        os.unlink(self.filler)

    def free_bytes(self, path):
        stat = os.statvfs(path)
        return stat.f_bavail * stat.f_frsize

    def close(self):
        if getattr(self, "filling", None) is not None and self.filling.is_set():
            self.filling.clear()
            self.thread.join()
        for path in self.mounts:
            subprocess.run(["umount", "-l", path], check=False)
        self.mounts = []


def finish_load(load, report):
    output, _ = load.communicate(timeout=240)
    print(output.strip())
    assert load.returncode == 0, f"load generator failed ({load.returncode})"
    with open(report) as f:
        return json.load(f)


def quorum_lost(cluster, root):
    """Kills the leader and a follower (SIGKILL) under load, keeps them down
    for ~10 s, restarts both.

    What may be answered while quorum is gone: an Accounting-Response leaves
    only after its entry committed on a majority (docs/design.md invariant
    1), and with one member of three alive nothing commits. Entries that
    committed before the second member died may still be answered after it:
    the leader's success callback, the Committed frame to the gateway and
    the datagram to the NAS take milliseconds, more on a loaded machine. So
    from `IN_FLIGHT_S` after the second kill until the restart, the
    generator must have logged no answer at all; answers logged between the
    kill and that margin are counted and reported."""
    in_flight_s = 1.0
    down_s = jitter(10, 14)
    duration_s = 28
    acked_log, report = os.path.join(root, "acked.log"), os.path.join(root, "load.json")
    leader = cluster.start_ready()
    follower = next(i for i in cluster.ids if i != leader)
    load = cluster.load(RATE, duration_s, acked_log, report, timeout_ms=1000, retries=30)
    started = time.time()
    time.sleep(jitter(5, 8))
    victims = [f"member-{leader}", f"member-{follower}"]
    for name in victims:
        cluster.kill(name)
    quorum_gone = time.time()
    survivor = next(f"member-{i}" for i in cluster.ids if i not in (leader, follower))
    log(f"killed {', '.join(victims)} (the leader and a follower); {survivor} alone")
    time.sleep(down_s)
    status = cluster.status(survivor)
    restarted = time.time()
    for name in victims:
        cluster.start(name)
    log(f"restarted {', '.join(victims)}; {survivor} said while alone: "
        f"role {status and status.get('raft_role')}, ready {status and status.get('ready_for_work')}")
    step = finish_load(load, report)
    acks = history.Acknowledged(acked_log)
    in_flight = acks.answered_between(quorum_gone, quorum_gone + in_flight_s)
    while_gone = acks.answered_between(quorum_gone + in_flight_s, restarted)
    assert while_gone == 0, (f"{while_gone} answers between {in_flight_s} s after quorum was lost and the "
                             "restart: acknowledged without a majority")
    assert status is not None and not status.get("ready_for_work"), f"the lone member took work: {status}"
    assert step.get("retransmissions", 0) > 0, f"the NAS never retransmitted: {step}"
    return history.check(cluster, "disk_quorum_lost", acked_log, healed_unix=restarted, resume_bound_s=15,
                         window_unix=(started + 1, started + duration_s),
                         extra={"sent": step.get("sent"), "retransmissions": step.get("retransmissions"),
                                "down_s": round(down_s, 1), "answered_in_flight": in_flight,
                                "answered_while_gone": while_gone})


HELD_RECORDS_MAX = 1500  # small, so a short outage reaches it


def export_order(pg):
    """Checks that the exporter wrote in log order: ordered by (log_index,
    entry_position), the inserting transaction ids (xmin) never go down, so
    no record reached PostgreSQL in a transaction before one of a lower log
    position. Returns the number of transactions seen."""
    out = pg.psql("-c", "SELECT log_index, entry_position, xmin::text::bigint FROM radiusward_accounting_log "
                  "ORDER BY log_index, entry_position")
    rows = [tuple(int(x) for x in line.split("|")) for line in out.splitlines() if line.strip()]
    for before, after in zip(rows, rows[1:]):
        assert after[2] >= before[2], (f"record at log position {after[:2]} was exported in transaction "
                                       f"{after[2]}, before {before[:2]} (transaction {before[2]})")
    return len({row[2] for row in rows})


def pg_outage_bounds(cluster, root, pg):
    """Stops PostgreSQL under load with held_records_max = HELD_RECORDS_MAX
    until the bound is reached and acknowledgement has stopped for a while,
    then starts it.

    At the bound every member refuses Submits (`Busy`), so the NAS sees no
    answer: from the moment the leader reports `accepting: false` until
    PostgreSQL is back, the acknowledged count may grow only by records
    already committed (the bound is checked at submission, and entries in
    flight still apply: docs/limits.md), far less than the rate times the
    wait. After PostgreSQL returns, the backlog drains in log order
    (export_order) and answers resume within the bound."""
    acked_log, report = os.path.join(root, "acked.log"), os.path.join(root, "load.json")
    rate = 150
    # At the bound, before PostgreSQL returns; RW_PG_OUTAGE_HELD_S sets it
    # for an outage of minutes (docs/RELIABILITY.md "pg_outage_bounds").
    held_for_s = float(os.environ.get("RW_PG_OUTAGE_HELD_S") or jitter(8, 40))
    duration_s = 60 + (held_for_s - 8)
    cluster.start_ready()
    load = cluster.load(rate, duration_s, acked_log, report, timeout_ms=1000, retries=60)
    started = time.time()
    time.sleep(3)
    pg.stop()
    stopped = time.time()
    before = len(history.Acknowledged(acked_log))
    log(f"PostgreSQL stopped; {before} acknowledged so far")

    def at_bound():
        leader = cluster.leader()
        status = cluster.status(f"member-{leader}") if leader else None
        return status if status and status.get("accepting") is False else None

    bound_status = history.wait_for("the leader did not reach its held bound", at_bound, 60, step=0.2)
    bounded = time.time()
    log(f"leader at the bound after {bounded - stopped:.1f} s: records_held {bound_status.get('records_held')}")
    time.sleep(held_for_s)
    at_end = history.Acknowledged(acked_log)
    during = len(at_end) - before
    after_bound = at_end.answered_between(bounded + 1.0, time.time())
    status = cluster.status(f"member-{cluster.leader()}")
    pg.start()
    healed = time.time()
    log(f"PostgreSQL started; {during} acknowledged during the outage, {after_bound} of them from 1 s "
        f"after the bound; leader then: accepting {status.get('accepting')}, "
        f"records_held {status.get('records_held')}")
    # Records held when the outage began were acknowledged before it; what
    # was acknowledged during it is bounded by the held bound, plus entries
    # committed while the bound was being reached (at most the gateways'
    # in-flight Submits: 32 of up to 4,096 records each, in practice far
    # fewer at this rate).
    assert status.get("accepting") is False, f"accepting again with PostgreSQL down: {status}"
    assert int(status.get("records_held", 0)) <= HELD_RECORDS_MAX + rate, status
    assert during <= HELD_RECORDS_MAX + rate, f"{during} acknowledged during the outage, bound {HELD_RECORDS_MAX}"
    assert after_bound <= rate, f"{after_bound} answers more than 1 s after the bound was reached"
    step = finish_load(load, report)
    figures = history.check(cluster, "disk_pg_outage_bounds", acked_log, pg=pg, healed_unix=healed,
                            resume_bound_s=15, window_unix=(started + 1, started + duration_s),
                            extra={"sent": step.get("sent"), "retransmissions": step.get("retransmissions"),
                                   "held_records_max": HELD_RECORDS_MAX, "acked_during_outage": during,
                                   "acked_after_bound": after_bound,
                                   "bound_reached_s": round(bounded - stopped, 1),
                                   "held_at_bound_s": round(held_for_s, 1)})
    transactions = export_order(pg)
    log(f"export in log order over {transactions} transactions")
    return figures


DISK_MB = 16  # each member's tmpfs
# libraft keeps a few open segments preallocated ahead of need and writes
# into them, so a full disk is noticed only when the next one cannot be
# allocated: 8 MiB segments (the default) take ~40 s of this load each;
# 256 KiB ones about a second (raft.segment_bytes, docs/configuration.md).
SEGMENT_BYTES = 256 << 10


def disk_error_logged(cluster, name, path):
    """The member's log lines that name its data_dir and ENOSPC."""
    text = cluster.log_tail(name, lines=400)
    return [line for line in text.splitlines()
            if path in line and ("No space left on device" in line or "ENOSPC" in line)]


def full_disk(cluster, root, scenario):
    """Fills one member's data_dir (the leader's or a follower's) under load
    until its writes fail with ENOSPC, then removes the filler, playing the
    supervisor: a member that exited is started again.

    Required: the member stops acknowledging with a clear error (a log line
    naming its data_dir and ENOSPC), nothing acknowledged is lost, the
    cluster goes on with the other two, and once space returns the member
    catches up (history.check: the three converge)."""
    acked_log, report = os.path.join(root, "acked.log"), os.path.join(root, "load.json")
    full_for_s = jitter(5, 15)
    duration_s = 30
    leader = cluster.start_ready()
    victim_id = leader if scenario == "full_disk_leader" else next(i for i in cluster.ids if i != leader)
    victim = f"member-{victim_id}"
    data_dir = os.path.join(root, victim)
    load = cluster.load(RATE, duration_s, acked_log, report, timeout_ms=1000, retries=20)
    started = time.time()
    time.sleep(jitter(4, 8))
    filler = cluster.disks.fill(data_dir)
    filled = time.time()
    log(f"filled {data_dir} ({victim}, {'the leader' if victim_id == leader else 'a follower'}); "
        f"{cluster.disks.free_bytes(data_dir)} bytes free")
    history.wait_for(f"{victim} neither failed nor logged an error",
                     lambda: disk_error_logged(cluster, victim, data_dir) or not cluster.running(victim), 30)
    errors = disk_error_logged(cluster, victim, data_dir)
    assert errors, (f"{victim} ended ({cluster.processes[victim].poll()}) without an error naming {data_dir} "
                    f"and ENOSPC:\n{cluster.log_tail(victim, 10)}")
    noticed = time.time()
    log(f"{victim} after {noticed - filled:.1f} s: {errors[-1].strip()}")
    # libraft stops writing for good after a failed write but keeps its
    # role; the member must exit rather than linger as a silent voter.
    history.wait_for(f"{victim} did not exit after its storage error", lambda: not cluster.running(victim), 10)
    log(f"{victim} exited ({cluster.processes[victim].returncode})")
    # The supervisor restarts it while the disk is still full: it must fail
    # again with a clear error, not corrupt its folder or linger.
    restarts_while_full = 0
    deadline = time.monotonic() + full_for_s
    while time.monotonic() < deadline:
        before = len(disk_error_logged(cluster, victim, data_dir))
        cluster.start(victim)
        restarts_while_full += 1
        history.wait_for(f"{victim} kept running on a full disk", lambda: not cluster.running(victim), 20)
        again = disk_error_logged(cluster, victim, data_dir)
        assert len(again) > before, f"{victim} exited on a full disk without naming it:\n" + \
            cluster.log_tail(victim, 10)
        time.sleep(1)  # a supervisor's restart delay
    log(f"{victim} restarted {restarts_while_full} times on the full disk, each exited "
        f"({cluster.processes[victim].returncode}): {again[-1].strip()}")
    cluster.disks.stop_filling()
    cluster.start(victim)  # the supervisor's next restart
    healed = time.time()
    log(f"removed the filler; restarted {victim}")
    step = finish_load(load, report)
    return history.check(cluster, f"disk_{scenario}", acked_log, healed_unix=healed, resume_bound_s=15,
                         window_unix=(started + 1, started + duration_s),
                         extra={"sent": step.get("sent"), "retransmissions": step.get("retransmissions"),
                                "error_after_s": round(noticed - filled, 1),
                                "restarts_while_full": restarts_while_full,
                                "full_for_s": round(full_for_s, 1)})


class RaftPortDrop:
    """Drops every packet to one member's raft port (nftables, a table of
    this test's own in the root namespace) until close(): the leader's
    appends stop reaching that member, which stays up and lags."""

    def __init__(self, port):
        self.table = f"rwlag{os.getpid()}"
        script = (f"add table inet {self.table}\n"
                  f"add chain inet {self.table} input {{ type filter hook input priority -10; }}\n"
                  f"add rule inet {self.table} input tcp dport {port} drop\n")
        subprocess.run(["nft", "-f", "-"], input=script, text=True, check=True)

    def close(self):
        subprocess.run(["nft", "delete", "table", "inet", self.table], check=False)


def rebase_export(pg, last_log_index):
    """The database step of docs/operations.md "Two disks lost for good",
    as an operator runs it with psql: the rows of log indices above the
    survivor's last log index came from the lost history; they move to the
    negated index (kept, and never in the way of the new history's
    entries), and the cursor comes down to that index."""
    cursor_before = int(pg.psql("-c", "SELECT exported_through FROM radiusward_export_cursor WHERE id = 1").strip())
    # psql runs with ON_ERROR_STOP and check=True: a failed statement raises.
    pg.psql("-c", "BEGIN; "
                  f"UPDATE radiusward_accounting_log SET log_index = -log_index WHERE log_index > {last_log_index}; "
                  "UPDATE radiusward_export_cursor SET exported_through = "
                  f"LEAST(exported_through, {last_log_index}) WHERE id = 1; COMMIT;")
    rows = int(pg.psql("-c", "SELECT count(*) FROM radiusward_accounting_log WHERE log_index < 0").strip())
    return {"cursor_before": cursor_before, "rows_moved": rows}


def quorum_rebuilt(cluster, root, lagging=False):
    """Two disks lost for good (docs/operations.md "Two disks lost for
    good"): the leader and a follower are killed and their data_dirs
    removed; the surviving follower is stopped, started once with
    --recover-alone (it becomes the only voter of its log), the two are
    started empty with `bootstrap: false` and added with `ctl members add`.

    What may be lost: records a majority acknowledged without the survivor
    (the two lost members formed that majority). So every acknowledged
    record the survivor held when the others died must be held afterwards;
    an acknowledged record not held must have been answered before the
    loss (plus in-flight margin) and be absent from the survivor's listing.
    Those are counted (`lost_with_two_disks`) and left out of the history
    check; everything else meets it as in every scenario.

    The database step of the procedure runs between the survivor's stop
    and its recovery (`rebase_export`). `lagging`: the survivor is
    stopped (SIGSTOP) for 2.5 s before the loss, so the database holds
    records exported from log indices the survivor never received; without
    the database step, records acknowledged after the recovery land on
    those indices and the exporter, trusting the database's cursor, never
    writes them (seen: docs/RELIABILITY.md "quorum_rebuilt")."""
    acked_log, report = os.path.join(root, "acked.log"), os.path.join(root, "load.json")
    duration_s = 30
    leader = cluster.start_ready()
    follower = next(i for i in cluster.ids if i != leader)
    survivor_id = next(i for i in cluster.ids if i not in (leader, follower))
    survivor = f"member-{survivor_id}"
    load = cluster.load(RATE, duration_s, acked_log, report, timeout_ms=1000, retries=30)
    started = time.time()
    time.sleep(jitter(5, 10))
    if lagging:
        # The survivor receives nothing for a while (a link that stalls)
        # while the other two commit and the exporter exports: the
        # database's cursor is then above the survivor's log.
        before = (cluster.status(f"member-{leader}") or {}).get("commit_index")
        lag = RaftPortDrop(cluster.raft[survivor_id])
    lost = [leader, follower]
    try:
        if lagging:
            time.sleep(2.5)
            after = (cluster.status(f"member-{leader}") or {}).get("commit_index")
            log(f"{survivor} received nothing on its raft port for 2.5 s, the leader's commit index went from "
                f"{before} to {after}; leader export status {json.dumps(history.leader_export(cluster))}")
        for i in lost:
            cluster.kill(f"member-{i}")
    finally:
        # The rule sits in the root namespace: left behind, it would drop
        # packets to this port for whatever binds it next.
        if lagging:
            lag.close()
    gone = time.time()
    held_by_survivor = {(str(r["attributes"]["Acct-Session-Id"]), str(r["attributes"]["Acct-Status-Type"]))
                        for r in cluster.records(survivor)}
    for i in lost:
        shutil.rmtree(os.path.join(root, f"member-{i}"))
        with open(cluster.config_path(f"member-{i}"), "a") as f:
            f.write("bootstrap: false\n")
    log(f"killed member-{leader} and member-{follower}, their data_dirs removed; {survivor} held "
        f"{len(held_by_survivor)} records")
    # Step 2 of the runbook: the survivor's last log index is read from
    # what it stored, not from the running process. A leader killed on a
    # live host leaves its kernel socket retransmitting the appends it
    # had queued (here: held back by the dropped raft port), so a running
    # survivor can still grow its log after the others are gone (seen in
    # the fault campaign: L read at 2605, the log then reached 2661, and
    # the export stopped with the cursor alarm). Stopped and started again,
    # it reads its log from its data_dir, and nothing can reach it.
    running_last = (cluster.status(survivor) or {}).get("last_log_index")
    cluster.stop(survivor)
    cluster.start(survivor)

    def loaded_status():
        # Its log is not empty: it took appends for seconds before the loss.
        status = cluster.status(survivor)
        return status if status and status.get("last_log_index") else None

    survivor_status = history.wait_for(f"{survivor}'s /status with its log loaded", loaded_status, 30)
    survivor_last = survivor_status["last_log_index"]
    assert cluster.stop(survivor) == 0, f"{survivor} did not stop cleanly"
    moved = rebase_export(cluster.pg, survivor_last)
    log(f"{survivor}'s log ended at {survivor_last} (read after a restart; "
        f"{running_last} read from the running process before its stop); "
        f"the database's cursor was "
        f"{moved['cursor_before']}, {moved['rows_moved']} rows above it moved to negative log indices")
    cluster.start(survivor, args=["--recover-alone"])
    assert cluster.wait_leader(30) == survivor_id
    for i in lost:
        cluster.start(f"member-{i}")
    for i in lost:
        result = subprocess.run([cluster.binary, "ctl", "--socket", cluster.socket_path(survivor), "members", "add",
                                 str(i), f"127.0.0.1:{cluster.raft[i]}"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"members add {i}: {result.stdout}{result.stderr}"
    healed = time.time()
    log(f"{survivor} recovered alone and added member-{leader} and member-{follower} again "
        f"{healed - gone:.1f} s after the loss")
    step = finish_load(load, report)
    acks = history.Acknowledged(acked_log)
    # Held: by the members, or exported (a member's /records lists only
    # what is not exported yet) once the export has drained.
    history.wait_for("the export drained", lambda: history.leader_export(cluster).get("lag_records", 1) == 0, 120)
    records = cluster.wait_converged(120)
    held = {(str(r["attributes"]["Acct-Session-Id"]), str(r["attributes"]["Acct-Status-Type"])) for r in records}
    held |= set(history.exported(cluster.pg))
    missing = [(k, t) for k, t in zip(acks.keys, acks.times_us) if k not in held]
    for key, unix_us in missing:
        assert key not in held_by_survivor, f"{key} was held by the survivor and is gone"
        assert unix_us < (gone + 1.0) * 1e6, f"{key} acknowledged after the loss and not held"
    kept_log = os.path.join(root, "acked-kept.log")
    lost_keys = {k for k, _ in missing}
    with open(acked_log) as f, open(kept_log, "w") as out:
        out.writelines(line for line in f if tuple(line.split()[:2]) not in lost_keys)
    scenario = "disk_quorum_rebuilt" + ("_lagging" if lagging else "")
    return history.check(cluster, scenario, kept_log, healed_unix=healed, resume_bound_s=15,
                         window_unix=(started + 1, started + duration_s),
                         extra={"sent": step.get("sent"), "retransmissions": step.get("retransmissions"),
                                "lost_with_two_disks": len(missing), "rebuilt_s": round(healed - gone, 1),
                                "rows_moved": moved["rows_moved"],
                                "cursor_ahead": moved["cursor_before"] - min(moved["cursor_before"], survivor_last)})


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, scenario = os.path.abspath(sys.argv[1]), sys.argv[2]
    keep = "--keep" in sys.argv
    if scenario not in ("full_disk_leader", "full_disk_follower", "pg_outage_bounds", "quorum_lost",
                        "quorum_rebuilt", "quorum_rebuilt_lagging"):
        sys.exit(f"unknown scenario {scenario}")
    # Data under /var/tmp, never /tmp (docs/consensus.md "File systems").
    root = tempfile.mkdtemp(prefix=f"rw-fault-disk-{scenario}-", dir="/var/tmp")
    disks = None
    ok = False
    try:
        if scenario == "pg_outage_bounds":
            extra = f"ledger:\n  held_records_max: {HELD_RECORDS_MAX}\n"
        elif scenario.startswith("full_disk"):
            extra = f"raft:\n  segment_bytes: {SEGMENT_BYTES}\n"
        else:
            extra = ""
        cluster = deployment(binary, root, member_extra=extra)
        pg = cluster.pg
        if scenario.startswith("full_disk"):
            disks = SmallFileSystems(root, [f"member-{i}" for i in cluster.ids], DISK_MB)
        cluster.disks = disks
        try:
            if scenario == "pg_outage_bounds":
                pg_outage_bounds(cluster, root, pg)
            elif scenario == "quorum_lost":
                quorum_lost(cluster, root)
            elif scenario.startswith("quorum_rebuilt"):
                quorum_rebuilt(cluster, root, lagging=scenario == "quorum_rebuilt_lagging")
            else:
                full_disk(cluster, root, scenario)
            ok = True
        finally:
            cluster.finish(ok, keep)
    finally:
        if disks:
            disks.close()  # the mount points are left empty, then removed
            if ok and not keep:
                shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
