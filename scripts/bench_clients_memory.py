#!/usr/bin/env python3
"""What a gateway's clients.conf costs in resident memory, and what its
NAS's traffic adds (issue 15; docs/benchmarking.md "Gateway memory by
client").

  scripts/bench_clients_memory.py BINARY [BINARY ...]

For each binary, alternated RW_REPEAT (2) times: a gateway with WORKERS
(RW_WORKERS, 4) workers and no accounting, once with a clients.conf of one client
(127.0.0.1) and once with one of RW_CLIENTS (10,000): 127.0.0.1, then
RW_SENDERS (100) NAS on 127.0.1.x, then the NAS of scripts/bench_footprint.py.
VmRSS is read 2 s after each of: the first Status-Server answered (from
127.0.0.1), RW_PACKETS (20) Status-Servers from each of the senders (each
from its own socket, so that the workers' SO_REUSEPORT hash spreads them),
a GET /metrics, and a reload of the same files. Prints one JSON line per
gateway.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))
import bench_footprint as footprint  # noqa: E402  (the clients file's NAS, the gateway config, VmRSS)
import bench_sql  # noqa: E402  (admin_get)
import radiusward_fixture as radius  # noqa: E402

SECRET = "testing123"
CLIENTS = int(os.environ.get("RW_CLIENTS", "10000"))
SENDERS = int(os.environ.get("RW_SENDERS", "100"))
PACKETS = int(os.environ.get("RW_PACKETS", "20"))
REPEAT = int(os.environ.get("RW_REPEAT", "2"))
WORKERS = int(os.environ.get("RW_WORKERS", "4"))
# A wrapper for the gateway, e.g. "heaptrack -o FILE" (its VmRSS is then the wrapper's).
PREFIX = os.environ.get("RW_PREFIX", "").split()
# 1: also read VmRSS after gdb made the idle gateway call malloc_trim(0):
# what the allocator kept free of the load's peak, apart from what is live.
GDB_TRIM = os.environ.get("RW_GDB_TRIM") == "1"
SETTLE_S = 2


def sender_secret(i):
    return "sender-%d-secret" % i


def write_clients(path, count):
    with open(path, "w") as f:
        f.write("client bench {\n\tipaddr = 127.0.0.1\n\tsecret = %s\n\tshortname = bench\n}\n" % SECRET)
        senders = min(SENDERS, count - 1)
        for i in range(1, senders + 1):
            f.write("client sender-%03d {\n\tipaddr = 127.0.1.%d\n\tsecret = \"%s\"\n\tshortname = sender-%03d\n"
                    "\tnas_type = other\n}\n" % (i, i, sender_secret(i), i))
        for i in range(senders + 1, count):
            f.write(footprint.client_entry(i)[1])


def status_servers(port, senders):
    """PACKETS Status-Servers from each sender's address; returns how many were answered."""
    answered = 0
    for i in range(1, senders + 1):
        for n in range(PACKETS):
            request = radius.build_request(radius.STATUS_SERVER, n % 256, [], secret=sender_secret(i).encode())
            if radius.exchange(port, request, source="127.0.1.%d" % i, timeout=1.0) is not None:
                answered += 1
    return answered


def one_gateway(binary, folder, clients_path, count, users):
    config, port, admin = footprint.gateway_config(folder, "gw", users, clients_path, WORKERS)
    log_path = os.path.join(folder, "gw.log")
    log = open(log_path, "w")
    started = time.monotonic()
    process = subprocess.Popen(PREFIX + [binary, "gateway", "--config", config], stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    out = {"binary": binary, "clients": count, "workers": WORKERS}
    try:
        footprint.wait_status_server(port, SECRET.encode(), process, log_path, started)
        footprint.wait_admin(admin, process)
        time.sleep(SETTLE_S)
        out["one_source_kib"] = footprint.memory_kib(process.pid)["rss_kib"]
        if GDB_TRIM:
            gdb = ["gdb", "--readnever", "-nx", "-p", str(process.pid), "-batch"]
            subprocess.run(gdb + ["-ex", "call (int) malloc_trim(0)"], capture_output=True, timeout=300)
            out["gdb_trimmed_kib"] = footprint.memory_kib(process.pid)["rss_kib"]
        senders = min(SENDERS, count - 1)
        if senders > 0:
            out["answered"] = status_servers(port, senders)
            time.sleep(SETTLE_S)
            out["senders"] = senders
            out["senders_kib"] = footprint.memory_kib(process.pid)["rss_kib"]
        metrics = bench_sql.admin_get(admin, "/metrics", timeout=30)
        out["metrics_bytes"] = len(metrics or b"")
        time.sleep(SETTLE_S)
        out["after_metrics_kib"] = footprint.memory_kib(process.pid)["rss_kib"]
        done = subprocess.run([binary, "ctl", "--socket", admin, "reload"], capture_output=True, text=True,
                              timeout=600)
        if done.returncode != 0:
            raise RuntimeError("ctl reload: %s%s" % (done.stdout, done.stderr))
        time.sleep(SETTLE_S)
        memory = footprint.memory_kib(process.pid)
        out["after_reload_kib"], out["hwm_kib"] = memory["rss_kib"], memory["hwm_kib"]
    finally:
        footprint.stop(process, log)
    return out


def main():
    binaries = sys.argv[1:]
    if not binaries:
        sys.exit(__doc__)
    folder = tempfile.mkdtemp(prefix="rw-clients-memory-")
    try:
        users = os.path.join(folder, "users")
        with open(users, "w") as f:
            f.write('alice Cleartext-Password := "wonderland"\n')
        files = []
        for count in (1, CLIENTS):
            path = os.path.join(folder, "clients-%d.conf" % count)
            write_clients(path, count)
            files.append((path, count))
        for _ in range(REPEAT):
            for binary in binaries:
                for path, count in files:
                    print(json.dumps(one_gateway(os.path.abspath(binary), folder, path, count, users)), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
