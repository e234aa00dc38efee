#!/usr/bin/python3
"""libraft 0.15.0 turns a member RAFT_UNAVAILABLE for good when it cannot
write its term, vote or entries (docs/consensus.md "Known library problems
seen in tests"); the member process must then exit non-zero with a clear
log line, so that its supervisor restarts it, and nothing acknowledged may
be lost. Under steady accounting load:

  unavailable_exit  a follower's data folder is moved away (a volume that
                    vanished under the process), then the leader is killed:
                    the third member's election needs the follower's vote, the
                    follower cannot persist the new term, libraft turns it
                    unavailable, and the member must exit 1 saying so within
                    EXIT_BOUND_S. Then, as supervisors do, the leader is
                    restarted (after leader_down_s at the earliest) and the
                    follower too, on its folder moved back; history.check
                    runs as for every scenario.

`--long` or RW_FAULT_RANDOM=1 randomises when the fault strikes and how long
the leader stays down (scripts/fault-campaign).

Usage: libraft_fault_test.py RADIUSWARD_BINARY SCENARIO [--keep] [--long]"""

import json
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_fixture import deployment  # noqa: E402
import history  # noqa: E402

RATE = 300           # records per second, steady
DURATION_S = 14      # of the load
EXIT_BOUND_S = 10    # from the leader's kill to the unavailable follower's exit
MESSAGE = "the raft node is unavailable"


def timing(randomised):
    """(seconds into the load when the fault strikes, seconds the killed
    leader stays down)."""
    if randomised:
        return random.uniform(2, 6), random.uniform(0.5, 4)
    return 4, 2


def wait_exit(cluster, name, until):
    """The exit code of `name` once it exited, or None at `until`
    (time.monotonic())."""
    process = cluster.processes[name]
    while time.monotonic() < until:
        if process.poll() is not None:
            return process.returncode
        time.sleep(0.02)
    return process.poll()


def unavailable_exit(cluster, fault_at_s, leader_down_s):
    """Runs the fault; returns when both members were restarted (wall
    clock) and how long after the kill the follower exited."""
    time.sleep(fault_at_s)
    leader = cluster.wait_leader()
    follower = next(i for i in cluster.ids if i != leader)
    victim = f"member-{follower}"
    folder = os.path.join(cluster.root, victim)
    os.rename(folder, folder + ".away")
    cluster.kill(f"member-{leader}")
    killed = time.monotonic()
    print(f"{time.strftime('%H:%M:%S')} moved {victim}'s data folder away, killed member-{leader} (the leader)",
          flush=True)
    # The third member's election needs the follower's vote, which the
    # follower cannot persist: it turns unavailable with the leader down.
    code = wait_exit(cluster, victim, killed + EXIT_BOUND_S)
    exited_s = None if code is None else time.monotonic() - killed
    log = cluster.log_tail(victim, 200)
    assert code is not None, f"{victim} still runs {EXIT_BOUND_S} s after the leader's kill\n{log}"
    assert code == 1, f"{victim} exited {code}, not 1\n{log}"
    assert MESSAGE in log, f"{victim}'s log does not say why it exited\n{log}"
    print(f"{time.strftime('%H:%M:%S')} {victim} exited 1 {exited_s:.1f} s after the kill: "
          + next(line for line in log.splitlines() if MESSAGE in line).strip(), flush=True)
    # The supervisors restart both, the follower on its folder back in place.
    time.sleep(max(0.0, killed + leader_down_s - time.monotonic()))
    os.rename(folder + ".away", folder)
    cluster.start(f"member-{leader}")
    cluster.start(victim)
    print(f"{time.strftime('%H:%M:%S')} restarted member-{leader} and {victim} (on its own folder)", flush=True)
    return time.time(), exited_s


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, scenario = os.path.abspath(sys.argv[1]), sys.argv[2]
    keep = "--keep" in sys.argv
    randomised = "--long" in sys.argv or os.environ.get("RW_FAULT_RANDOM") == "1"
    if scenario != "unavailable_exit":
        sys.exit(f"unknown scenario {scenario}")
    fault_at_s, leader_down_s = timing(randomised)
    root = tempfile.mkdtemp(prefix=f"rw-fault-{scenario}-", dir="/var/tmp")
    cluster = deployment(binary, root)
    ok = False
    try:
        cluster.start_ready()
        acked_log = os.path.join(root, "acked.log")
        report = os.path.join(root, "load.json")
        load = cluster.load(RATE, DURATION_S, acked_log, report)
        load_started = time.time()
        healed, exited_s = unavailable_exit(cluster, fault_at_s, leader_down_s)
        output, _ = load.communicate(timeout=DURATION_S + 120)
        print(output.strip())
        assert load.returncode == 0, f"load generator failed ({load.returncode})"
        with open(report) as f:
            step = json.load(f)
        history.check(cluster, f"libraft_{scenario}", acked_log, healed_unix=healed, resume_bound_s=15,
                      window_unix=(load_started + 1, load_started + DURATION_S),
                      extra={"sent": step.get("sent"), "retransmissions": step.get("retransmissions"),
                             "unavailable_exit_s": round(exited_s, 2), "fault_at_s": round(fault_at_s, 2),
                             "leader_down_s": round(leader_down_s, 2)})
        ok = True
    finally:
        cluster.finish(ok, keep)


if __name__ == "__main__":
    main()
