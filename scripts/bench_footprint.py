"""The bench's footprint phase (used by scripts/run-bench; docs/benchmarking.md,
"Footprint and start-up"): what a gateway and the members cost when they
carry no traffic, and how long they take to start and to reload.

  gateway   a clients.conf of RW_BENCH_FOOTPRINT_CLIENTS clients and a users
            file of RW_BENCH_FOOTPRINT_USERS users written here in the
            FreeRADIUS formats of docs/users_and_clients.md, and, for
            comparison, the ceiling searches' own small files. Per
            repetition: exec to the first Status-Server answered, VmRSS and
            VmHWM from /proc once idle, then `radiusward ctl reload` of the
            same files a few times (its wall time, and the time between the
            gateway's own log lines of the reload) and VmRSS after them.
  members   three members with TLS, as the accounting searches run them
            (tests/fault/cluster_fixture.py), on empty data folders. Per
            repetition: exec of the first to a leader ready for work (its
            /status), each member's first /status answer, VmRSS once idle.

measure() returns the raw figures (every repetition) as a dict for the run's
JSON ("footprint"); scripts/bench-report takes medians and maxima."""

import base64
import datetime
import hashlib
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))
sys.path.insert(0, os.path.join(ROOT, "tests", "fault"))
import bench_sql  # noqa: E402  (admin_status: the admin API without a process per poll)
import radiusward_fixture as radius  # noqa: E402  (the independent Python RADIUS client)
from cluster_fixture import Cluster  # noqa: E402  (three members, as the accounting searches run them)

POLL_S = 0.01  # Status-Server and /status polls while a process starts.
START_TIMEOUT_S = 120


# ---- the files -------------------------------------------------------------

def md4(data):
    """RFC 1320 MD4 (for NT-Password: MD4 of the UTF-16LE password). Python's
    hashlib has it only with OpenSSL's legacy provider, which Debian 12 does
    not load."""
    def rotl(x, n):
        x &= 0xFFFFFFFF
        return ((x << n) | (x >> (32 - n))) & 0xFFFFFFFF

    message = data + b"\x80" + b"\0" * ((55 - len(data)) % 64) + struct.pack("<Q", len(data) * 8)
    h = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476]
    for offset in range(0, len(message), 64):
        x = struct.unpack("<16I", message[offset:offset + 64])
        a, b, c, d = h
        for i in range(16):
            k, s = i, (3, 7, 11, 19)[i % 4]
            a, b, c, d = d, rotl(a + ((b & c) | (~b & d)) + x[k], s), b, c
        for i in range(16):
            k, s = (i % 4) * 4 + i // 4, (3, 5, 9, 13)[i % 4]
            a, b, c, d = d, rotl(a + ((b & c) | (b & d) | (c & d)) + x[k] + 0x5A827999, s), b, c
        for i in range(16):
            k, s = (0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15)[i], (3, 9, 11, 15)[i % 4]
            a, b, c, d = d, rotl(a + (b ^ c ^ d) + x[k] + 0x6ED9EBA1, s), b, c
        h = [(v + w) & 0xFFFFFFFF for v, w in zip(h, (a, b, c, d))]
    return struct.pack("<4I", *h)


def client_entry(i):
    """The i-th NAS (i >= 1): a kind in turn, each address or network once,
    its own secret and shortname. Returns (kind, text)."""
    name = "nas-%05d" % i
    secret = "s%d-%s" % (i, hashlib.sha256(b"nas %d" % i).hexdigest()[:20])
    kind = ("IPv4 hosts",) * 6 + ("IPv4 /28 networks", "IPv6 hosts", "IPv6 hosts", "IPv6 /64 networks")
    kind = kind[i % 10]
    if kind == "IPv4 hosts":
        address = "ipaddr = 10.%d.%d.%d" % ((i >> 16) & 255, (i >> 8) & 255, i & 255)
    elif kind == "IPv4 /28 networks":
        n = 0xAC100000 + 16 * i  # 172.16.0.0/12, one /28 each
        address = "ipaddr = %s/28" % socket.inet_ntoa(struct.pack("!I", n))
    elif kind == "IPv6 hosts":
        address = "ipv6addr = 2001:db8::%x" % i
    else:
        address = "ipv6addr = 2001:db8:%x::/64" % i
    lines = ["client %s {" % name, "\t" + address, '\tsecret = "%s"' % secret, "\tshortname = sw-%05d" % i,
             "\tnas_type = %s" % ("cisco", "juniper", "other")[i % 3]]
    if i % 7 == 0:
        lines.append("\trequire_message_authenticator = no")
    if i % 11 == 0:
        lines.append("\tresponse_window = 2.5")
    return kind, "\n".join(lines + ["}", ""])


def write_clients(path, count, secret):
    """clients.conf with `count` clients: 127.0.0.1 with the bench's secret
    (the Status-Server polls come from there), then count - 1 NASes."""
    kinds = {"client for 127.0.0.1 (the polls' source)": 1}
    with open(path, "w") as f:
        f.write("# %d clients written by scripts/bench_footprint.py\n" % count)
        f.write("client bench {\n\tipaddr = 127.0.0.1\n\tsecret = %s\n\tshortname = bench\n}\n" % secret)
        for i in range(1, count):
            kind, text = client_entry(i)
            kinds[kind] = kinds.get(kind, 0) + 1
            f.write(text)
    return {"path": path, "clients": count, "bytes": os.path.getsize(path), "kinds": kinds}


def crypt_hashes(passwords):
    """SHA-512 crypt(3) of each password (`openssl passwd -6`, one process
    for all, a fixed salt so that the file is the same on every run)."""
    if not passwords:
        return []
    done = subprocess.run(["openssl", "passwd", "-6", "-salt", "rwbench", "-stdin"], input="\n".join(passwords) + "\n",
                          capture_output=True, text=True, check=True, timeout=600)
    hashes = done.stdout.split()
    assert len(hashes) == len(passwords), done.stderr
    return hashes


def user_form(i):
    """The stored password form of user i (docs/authentication.md), or a MAB
    entry (named after a MAC) or a disabled account."""
    if i % 100 == 0:
        return "Crypt-Password"
    if i % 20 in (1, 2, 3):
        return ("NT-Password", "SSHA-Password", "SSHA2-256-Password")[i % 20 - 1]
    if i % 50 == 4:
        return "MAB"
    if i % 200 == 5:
        return "Auth-Type := Reject"
    return "Cleartext-Password"


def salted(digest, password, i):
    """Base64 of digest(password + salt) + salt, the LDAP {SSHA} layout. An
    octets value that starts with "0x" is read as hex (docs/users_and_clients.md),
    so a salt whose base64 would start so is passed over."""
    for salt in range(i << 8, (i << 8) + 256):
        raw = struct.pack("!Q", salt)
        text = base64.b64encode(digest(password.encode() + raw).digest() + raw).decode()
        if not text.lower().startswith("0x"):
            return text
    raise AssertionError("no salt for user %d" % i)


def user_entry(i, crypt_hash):
    password = "fp-password-%d" % i
    name = "fp-user-%d" % i
    form = user_form(i)
    if form == "Crypt-Password":
        check = "Crypt-Password := '%s'" % crypt_hash
    elif form == "NT-Password":
        check = "NT-Password := %s" % md4(password.encode("utf-16-le")).hex().upper()
    elif form == "SSHA-Password":
        check = 'SSHA-Password := "%s"' % salted(hashlib.sha1, password, i)
    elif form == "SSHA2-256-Password":
        check = 'SSHA2-256-Password := "%s"' % salted(hashlib.sha256, password, i)
    elif form == "MAB":
        name = "02-00-%02X-%02X-%02X-%02X" % ((i >> 24) & 255, (i >> 16) & 255, (i >> 8) & 255, i & 255)
        check = 'Cleartext-Password := "%s"' % name
    elif form == "Auth-Type := Reject":
        check = "Auth-Type := Reject"
    else:
        check = 'Cleartext-Password := "%s"' % password
    if form == "Auth-Type := Reject":
        reply = ['Reply-Message = "Account disabled"']
    elif i % 4 == 0:
        reply = ['Reply-Message = "Hello, %s"' % name, "Tunnel-Type:1 = VLAN", "Tunnel-Medium-Type:1 = IEEE-802",
                 'Tunnel-Private-Group-Id:1 = "%d"' % (100 + i % 400), "Fall-Through = Yes"]
    elif i % 4 == 1:
        reply = ["Session-Timeout = %d" % (3600 + i % 7200)]
    else:
        reply = []
    return form, "%s\t%s\n%s" % (name, check, "".join("\t%s%s\n" % (item, "," if k < len(reply) - 1 else "")
                                                       for k, item in enumerate(reply)))


def write_users(path, count):
    """A users file of `count` users in the stored forms of user_form (most
    with Cleartext-Password), a quarter with a VLAN in their reply items,
    and two DEFAULT entries at the end."""
    crypts = iter(crypt_hashes(["fp-password-%d" % i for i in range(count) if user_form(i) == "Crypt-Password"]))
    forms, with_reply = {}, 0
    with open(path, "w") as f:
        f.write("# %d users written by scripts/bench_footprint.py\n" % count)
        for i in range(count):
            form = user_form(i)
            form, text = user_entry(i, next(crypts) if form == "Crypt-Password" else None)
            forms[form] = forms.get(form, 0) + 1
            with_reply += "\n\t" in text
            f.write(text)
        f.write('DEFAULT\tCalling-Station-Id =~ "^02-00-"\n\tTunnel-Type:1 = VLAN,\n\tTunnel-Medium-Type:1 = IEEE-802,\n'
                '\tTunnel-Private-Group-Id:1 = "30"\n')
        f.write("DEFAULT\n\tIdle-Timeout = 600,\n\tSession-Timeout = 3600\n")
    return {"path": path, "users": count, "default_entries": 2, "bytes": os.path.getsize(path), "forms": forms,
            "with_reply_items": with_reply}


def check_counts(binary, config):
    """What `radiusward check` says of a gateway config and its files (exit
    0 required): its one line, e.g. "...: ok (1 listen addresses, ...,
    10000 clients, 100002 users entries, ...)"."""
    done = subprocess.run([binary, "check", "--config", config], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError("radiusward check %s failed:\n%s" % (config, done.stderr[-3000:]))
    line = done.stdout.strip()
    counts = {}
    for key, pattern in (("clients", r"(\d+) clients"), ("users_entries", r"(\d+) users entries")):
        found = re.search(pattern, line)
        counts[key] = int(found.group(1)) if found else None
    return line, counts


def gateway_config(folder, name, users, clients, workers):
    """A gateway config naming `users` and `clients` (docs/configuration.md),
    on free loopback ports, with an admin socket; returns (path, auth port,
    admin socket)."""
    port, acct_port = radius.free_udp_port(), radius.free_udp_port()
    path = os.path.join(folder, name + ".yaml")
    admin = os.path.join(folder, name + ".sock")
    with open(path, "w") as f:
        f.write("listen: [127.0.0.1]\n"
                "auth_port: %d\nacct_port: %d\nworkers: %s\n"
                "users_file: %s\nclients_file: %s\n"
                "admin_socket: %s\n"
                "logging: {level: info}\n" % (port, acct_port, workers, users, clients, admin))
    return path, port, admin


# ---- measuring ------------------------------------------------------------

def memory_kib(pid):
    """VmRSS and VmHWM of `pid` from /proc, in KiB."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    return {"rss_kib": out["VmRSS"], "hwm_kib": out["VmHWM"]}


def wait_status_server(port, secret, process, log_path, started):
    """Seconds from `started` (monotonic) to the first verified answer to a
    Status-Server (RFC 5997), one sent every POLL_S from one socket while
    none is answered; any earlier request's answer counts."""
    sent = {}
    identifier = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.setblocking(False)
        while time.monotonic() - started < START_TIMEOUT_S:
            if process.poll() is not None:
                with open(log_path, errors="replace") as f:
                    raise RuntimeError("gateway exited with %d:\n%s" % (process.returncode, f.read()[-3000:]))
            identifier = (identifier + 1) % 256
            request = radius.build_request(radius.STATUS_SERVER, identifier, [], secret=secret)
            sent[identifier] = request
            s.sendto(request, ("127.0.0.1", port))
            deadline = time.monotonic() + POLL_S
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([s], [], [], left)[0]:
                    break
                try:
                    response = s.recv(4096)
                except OSError:  # ICMP port unreachable before the bind
                    continue
                answered_at = time.monotonic()
                request = sent.get(response[1]) if len(response) >= 20 else None
                if request is None:
                    continue
                try:
                    radius.verify_response(response, request, secret)
                except AssertionError:
                    continue
                return answered_at - started
    raise RuntimeError("no answer to Status-Server within %d s" % START_TIMEOUT_S)


def wait_admin(socket_path, process, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        if bench_sql.admin_status(socket_path) is not None:
            return
        time.sleep(POLL_S)
    raise RuntimeError("no /status on %s" % socket_path)


LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z ")


def logged_reloads(log_path):
    """[(seconds from "reading the configuration" to "accepted", the accepted
    line)] for each accepted reload in a gateway's text log (its UTC
    timestamps have milliseconds, src/io/logging.cc)."""
    out, began = [], None
    with open(log_path, errors="replace") as f:
        for line in f:
            stamp = LOG_TIME.match(line)
            if not stamp or "reload (" not in line:
                continue
            at = datetime.datetime.strptime(stamp.group(1), "%Y-%m-%dT%H:%M:%S.%f")
            if "reading the configuration" in line:
                began = at
            elif "accepted; configuration generation" in line and began is not None:
                out.append(((at - began).total_seconds(), line.split(" ", 3)[3].strip()))
                began = None
    return out


def stop(process, log):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    log.close()


def gateway_once(binary, folder, name, users, clients, setup):
    """One start of a gateway with `users` and `clients`: start-up, idle
    memory, setup.reloads reloads and the memory after them."""
    config, port, admin = gateway_config(folder, name, users, clients, setup.workers)
    log_path = os.path.join(folder, name + ".log")
    log = open(log_path, "w")
    started = time.monotonic()
    process = subprocess.Popen(setup.prefix + [binary, "gateway", "--config", config], stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        setup.own_autogroup(process.pid)
        start_s = wait_status_server(port, setup.secret.encode(), process, log_path, started)
        wait_admin(admin, process)
        time.sleep(setup.settle_s)
        idle = memory_kib(process.pid)
        reloads, after = [], []
        for _ in range(setup.reloads):
            began = time.monotonic()
            done = subprocess.run([binary, "ctl", "--socket", admin, "reload"], capture_output=True, text=True,
                                  timeout=600)
            reloads.append(time.monotonic() - began)
            if done.returncode != 0:
                raise RuntimeError("ctl reload exited with %d: %s%s" % (done.returncode, done.stdout, done.stderr))
            time.sleep(setup.settle_s)
            after.append(memory_kib(process.pid))
    finally:
        stop(process, log)
    logged = logged_reloads(log_path)
    os.remove(log_path)
    return {"start_s": round(start_s, 4), "idle_rss_kib": idle["rss_kib"], "start_hwm_kib": idle["hwm_kib"],
            "reload_s": [round(s, 4) for s in reloads], "reload_logged_s": [round(s, 4) for s, _ in logged],
            "reload_log_line": logged[-1][1] if logged else None,
            "rss_after_each_reload_kib": [m["rss_kib"] for m in after],
            "rss_after_reloads_kib": after[-1]["rss_kib"] if after else None,
            "hwm_after_reloads_kib": after[-1]["hwm_kib"] if after else None}


def members_once(binary, root, setup):
    """One start of three members with TLS on empty data folders."""
    cluster = Cluster(binary, root, gateways=1, secret=setup.secret, users=setup.small_users, workers=setup.workers,
                      log_level="info", prefix=setup.prefix, tls=True)
    sockets = {i: cluster.socket_path("member-%d" % i) for i in cluster.ids}
    try:
        started = time.monotonic()
        for i in cluster.ids:
            cluster.start("member-%d" % i)
        for pid in cluster.pids().values():
            setup.own_autogroup(pid)
        first_answer, ready_s = {}, None
        while ready_s is None:
            if time.monotonic() - started > START_TIMEOUT_S:
                raise RuntimeError("no leader ready within %d s\n%s" % (
                    START_TIMEOUT_S, "\n".join(cluster.log_tail("member-%d" % i) for i in cluster.ids)))
            for i, path in sockets.items():
                if not cluster.running("member-%d" % i):
                    raise RuntimeError("member-%d exited:\n%s" % (i, cluster.log_tail("member-%d" % i)))
                status = bench_sql.admin_status(path)
                if status is None:
                    continue
                first_answer.setdefault(i, time.monotonic() - started)
                if status.get("raft_role") == "leader" and status.get("ready_for_work"):
                    ready_s = time.monotonic() - started
            time.sleep(POLL_S)
        while len(first_answer) < len(sockets):  # A follower that has not answered yet.
            for i, path in sockets.items():
                if i not in first_answer and bench_sql.admin_status(path) is not None:
                    first_answer[i] = time.monotonic() - started
            time.sleep(POLL_S)
        time.sleep(setup.settle_s)
        members = []
        for i in cluster.ids:
            status = bench_sql.admin_status(sockets[i]) or {}
            memory = memory_kib(cluster.processes["member-%d" % i].pid)
            members.append({"name": "member-%d" % i, "raft_role": status.get("raft_role"),
                            "first_status_s": round(first_answer[i], 4), "idle_rss_kib": memory["rss_kib"],
                            "idle_hwm_kib": memory["hwm_kib"]})
        return {"leader_ready_s": round(ready_s, 4), "members": members}
    finally:
        cluster.stop_all()
        shutil.rmtree(root, ignore_errors=True)


class Setup:
    """How the phase runs its processes, from scripts/run-bench: `prefix`
    (taskset and nice), `own_autogroup(pid)`, the gateway's workers, the
    secret of the 127.0.0.1 client, the bench's small users file (for the
    comparison and the members' cluster), and the phase's knobs."""

    def __init__(self, prefix, own_autogroup, workers, secret, small_users, small_clients, clients, users,
                 repetitions, reloads, settle_s):
        self.prefix, self.own_autogroup, self.workers, self.secret = prefix, own_autogroup, workers, secret
        self.small_users, self.small_clients = small_users, small_clients
        self.clients, self.users = clients, users
        self.repetitions, self.reloads, self.settle_s = repetitions, reloads, settle_s


def log(*args):
    print("[run-bench footprint]", *args, file=sys.stderr, flush=True)


def measure(binary, folder, setup, describe_run):
    """The phase: the big files written in `folder/footprint`, then
    setup.repetitions rounds of (gateway with the big files, gateway with
    the small ones, three members). `describe_run()` gives the machine,
    commit and versions (scripts/run-bench's own), stored with the figures
    since the phase may run alone."""
    work = os.path.join(folder, "footprint")
    os.makedirs(work, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    result = dict(describe_run(), started=started.isoformat(timespec="seconds"))
    log("writing %d clients and %d users" % (setup.clients, setup.users))
    clients = write_clients(os.path.join(work, "clients.conf"), setup.clients, setup.secret)
    users = write_users(os.path.join(work, "users"), setup.users)
    big_config, _, _ = gateway_config(work, "check-big", users["path"], clients["path"], setup.workers)
    small_config, _, _ = gateway_config(work, "check-small", setup.small_users, setup.small_clients, setup.workers)
    big_check, big_counts = check_counts(binary, big_config)
    small_check, small_counts = check_counts(binary, small_config)
    with open(setup.small_users) as f:
        small_users = sum(1 for line in f if line.strip() and not line[0].isspace() and not line.startswith("#"))
    result["conditions"] = {
        "repetitions": setup.repetitions, "reloads_per_start": setup.reloads, "settle_s": setup.settle_s,
        "poll_ms": POLL_S * 1000, "gateway_workers": str(setup.workers), "gateway_log_level": "info",
        "prefix": " ".join(setup.prefix) or "none",
    }
    result["files"] = {
        "big": {"clients": {k: v for k, v in clients.items() if k != "path"},
                "users": {k: v for k, v in users.items() if k != "path"},
                "check": big_check.split(": ", 1)[-1], "counts": big_counts},
        "small": {"clients": {"clients": small_counts["clients"], "bytes": os.path.getsize(setup.small_clients)},
                  "users": {"users": small_users, "bytes": os.path.getsize(setup.small_users),
                            "forms": {"Cleartext-Password": small_users}},
                  "check": small_check.split(": ", 1)[-1], "counts": small_counts},
    }
    result["gateway"] = {"big": [], "small": []}
    result["members"] = []
    try:
        for repetition in range(1, setup.repetitions + 1):
            for key, users_path, clients_path in (("big", users["path"], clients["path"]),
                                                  ("small", setup.small_users, setup.small_clients)):
                figures = gateway_once(binary, work, "gateway-%s-%d" % (key, repetition), users_path, clients_path,
                                       setup)
                log("gateway, %s files, repetition %d: %s" % (key, repetition, figures))
                result["gateway"][key].append(figures)
            figures = members_once(binary, os.path.join(work, "members-%d" % repetition), setup)
            log("members, repetition %d: %s" % (repetition, figures))
            result["members"].append(figures)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["load_average_at_end"] = os.getloadavg()
    result["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return result
