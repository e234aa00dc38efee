#!/usr/bin/python3
"""Failover as a NAS sees it (issue 15, docs/consensus.md "Failover under
load"): three members exporting into PostgreSQL and two gateways under a
steady accounting load from a generator that retransmits after 1 s, as a
NAS does; the raft leader is killed with SIGKILL, restarted, and the new
leader killed in turn.

  leader_kill  two leader kills under load

Checks:
1. Every acknowledged record is held or exported exactly once
   (tests/fault/history.py).
2. No request was retransmitted: each gateway re-submitted what it held
   to the new leader and answered from its commit before the NAS's 1-s
   timer ran out. The election takes 0.3-0.7 s (docs/consensus.md
   "Timeouts"); a gateway that backed off between attempts (20 ms
   doubling to 1 s) found the new leader up to a second later, and the
   NAS retransmitted.
3. Each gateway accounts for both failovers in /status
   (`submission.last_failover`, counter `failovers`), its last one
   committed again within the 1-s timer.

Usage: failover_fault_test.py RADIUSWARD_BINARY SCENARIO [--keep]"""

import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_fixture import deployment  # noqa: E402
import history  # noqa: E402

RATE = 1000           # records per second, steady
DURATION_S = 14       # of the load
FIRST_KILL_AT_S = 3   # into the load
DOWN_S = 2            # a killed member stays down this long
SETTLE_S = 2          # after a restart, before the next kill
NAS_TIMEOUT_MS = 1000
KILLS = 2


def kill_leader(cluster):
    """Kills the leader, waits for the next one; returns the victim's name."""
    leader = cluster.wait_leader()
    victim = f"member-{leader}"
    killed_at = time.monotonic()
    cluster.kill(victim)
    new_leader = cluster.wait_leader()
    print(f"{time.strftime('%H:%M:%S')} killed {victim}; member-{new_leader} seen leading "
          f"{(time.monotonic() - killed_at) * 1000:.0f} ms later", flush=True)
    return victim


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, scenario = os.path.abspath(sys.argv[1]), sys.argv[2]
    if scenario != "leader_kill":
        sys.exit(f"unknown scenario {scenario}")
    keep = "--keep" in sys.argv
    root = tempfile.mkdtemp(prefix=f"rw-fault-failover-{scenario}-")
    cluster = deployment(binary, root)
    ok = False
    try:
        cluster.start_ready()
        acked_log = os.path.join(root, "acked.log")
        report = os.path.join(root, "load.json")
        load = cluster.load(RATE, DURATION_S, acked_log, report, timeout_ms=NAS_TIMEOUT_MS)
        load_started = time.time()
        time.sleep(FIRST_KILL_AT_S)
        for _ in range(KILLS):
            victim = kill_leader(cluster)
            time.sleep(DOWN_S)
            cluster.start(victim)
            time.sleep(SETTLE_S)
        output, _ = load.communicate(timeout=DURATION_S + 120)
        print(output.strip())
        assert load.returncode == 0, f"load generator failed ({load.returncode})"
        with open(report) as f:
            step = json.load(f)
        figures = history.check(cluster, f"failover_{scenario}", acked_log,
                                window_unix=(load_started + 1, load_started + DURATION_S),
                                extra={"sent": step.get("sent"), "retransmissions": step.get("retransmissions")})
        assert step["lost"] == 0, f"{step['lost']} requests were never answered"
        failovers = {}
        for name in cluster.gateways:
            submission = cluster.status(name)["submission"]
            failovers[name] = submission.get("last_failover")
            print(f"{name}: {submission['counters'].get('failovers')} failover(s), last {failovers[name]}")
            assert submission["counters"].get("failovers", 0) >= KILLS, f"{name} did not account for {KILLS} failovers"
            assert failovers[name]["committed_after_ms"] < NAS_TIMEOUT_MS, (
                f"{name} committed again {failovers[name]['committed_after_ms']} ms after losing the leader")
        assert step["retransmissions"] == 0, (
            f"{step['retransmissions']} retransmissions: some requests waited past the NAS's "
            f"{NAS_TIMEOUT_MS}-ms timer (longest wait {figures['longest_wait_ms']} ms)")
        ok = True
    finally:
        cluster.finish(ok, keep)


if __name__ == "__main__":
    main()
