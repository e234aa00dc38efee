#!/usr/bin/python3
"""Fault tests on real processes (issue 3, docs/design.md invariants 1 and 2):
a load generator sends Accounting Start/Interim/Stop of fresh sessions
through two gateways at a steady rate and logs every record it got an
Accounting-Response for, while the members export into a real PostgreSQL
and the test kills processes with SIGKILL:

  leader_kill    the raft leader, restarted a few seconds later
  follower_kill  a follower, restarted a few seconds later
  all_kill       all three members at once, then all restarted
  gateway_kill   one of the two gateways, restarted at once

Afterwards every acknowledged record must be held by every member (the
killed ones after they catch up) or exported, exactly once, and no record
twice (tests/fault/history.py). Records that
were never acknowledged may or may not be held: nothing requires them.
Prints the longest wait the generator saw and its retransmissions.

Usage: accounting_fault_test.py RADIUSWARD_BINARY SCENARIO [--keep]"""

import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_fixture import deployment  # noqa: E402
import history  # noqa: E402

RATE = 400          # records per second, steady
DURATION_S = 12     # of the load
FAULT_AT_S = 4      # into the load
RECOVER_AFTER_S = 3  # a killed member stays down this long


def inject(cluster, scenario):
    """Kills per `scenario`; returns (names killed, delay before restart)."""
    leader = cluster.wait_leader()
    if scenario == "leader_kill":
        victims = [f"member-{leader}"]
    elif scenario == "follower_kill":
        victims = [f"member-{next(i for i in cluster.ids if i != leader)}"]
    elif scenario == "all_kill":
        victims = [f"member-{i}" for i in cluster.ids]
    elif scenario == "gateway_kill":
        victims = [cluster.gateways[0]]
    else:
        raise SystemExit(f"unknown scenario {scenario}")
    for name in victims:
        cluster.kill(name)
    print(f"{time.strftime('%H:%M:%S')} killed {', '.join(victims)} (leader was member-{leader})", flush=True)
    return victims, (0.2 if scenario == "gateway_kill" else RECOVER_AFTER_S)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, scenario = os.path.abspath(sys.argv[1]), sys.argv[2]
    keep = "--keep" in sys.argv
    root = tempfile.mkdtemp(prefix=f"rw-fault-{scenario}-")
    cluster = deployment(binary, root)
    ok = False
    try:
        cluster.start_ready()
        acked_log = os.path.join(root, "acked.log")
        report = os.path.join(root, "load.json")
        load = cluster.load(RATE, DURATION_S, acked_log, report)
        load_started = time.time()
        time.sleep(history.timing(FAULT_AT_S, 2, DURATION_S - 7))
        victims, delay = inject(cluster, scenario)
        time.sleep(history.timing(delay, 0.1, 6) if delay > 1 else delay)
        for name in victims:
            cluster.start(name)
        healed = time.time()
        print(f"{time.strftime('%H:%M:%S')} restarted {', '.join(victims)}", flush=True)
        output, _ = load.communicate(timeout=DURATION_S + 120)
        print(output.strip())
        assert load.returncode == 0, f"load generator failed ({load.returncode})"
        with open(report) as f:
            step = json.load(f)
        history.check(cluster, f"accounting_{scenario}", acked_log, healed_unix=healed, resume_bound_s=15,
                      window_unix=(load_started + 1, load_started + DURATION_S),
                      extra={"sent": step.get("sent"), "retransmissions": step.get("retransmissions")})
        ok = True
    finally:
        cluster.finish(ok, keep)


if __name__ == "__main__":
    main()
